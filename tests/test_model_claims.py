"""The parsed claim model (kubectl_dra.model.claims): what every reader of a claim's requests sees."""

from __future__ import annotations

from kubectl_dra.model.claims import Config, Constraint, parse_claim, read_count


def _claim(requests: list, **devices: list) -> dict:
    return {"metadata": {"name": "c"}, "spec": {"devices": {"requests": requests, **devices}}}


def test_prioritized_lists_expand_into_subrequests_in_order() -> None:
    claim = _claim([
        {"name": "a", "firstAvailable": [{"name": "big", "deviceClassName": "x", "count": 2},
                                         {"name": "small", "deviceClassName": "y"}]},
        {"name": "b", "exactly": {"deviceClassName": "z", "allocationMode": "All", "adminAccess": True}}])
    requests = parse_claim(claim).all_requests
    assert [(r.name, r.request, r.subrequest, r.parent, r.device_class, r.mode, r.count, r.admin_access)
            for r in requests] == [
        ("a/big", "a", "big", "a", "x", "ExactCount", 2, None),
        ("a/small", "a", "small", "a", "y", "ExactCount", 1, None),
        ("b", "b", None, None, "z", "All", 1, True),
    ]
    assert [(r.index, r.sub_index) for r in requests] == [(0, 0), (0, 1), (1, 0)]


def test_count_as_the_search_reads_it() -> None:
    """Absent is one device, 0 is none (explain once read 0 as 1), a non-number is flagged."""
    assert read_count({}) == 1
    assert read_count({"count": None}) == 1
    assert read_count({"count": 0}) == 0
    assert read_count({"count": 3}) == 3
    assert read_count({"count": "two"}) is None
    zero, absent, bad = parse_claim(_claim([
        {"name": "z", "exactly": {"deviceClassName": "x", "count": 0}},
        {"name": "a", "exactly": {"deviceClassName": "x"}},
        {"name": "b", "exactly": {"deviceClassName": "x", "count": "two"}}])).all_requests
    assert (zero.count, zero.count_is_number) == (0, True)
    assert (absent.count, absent.count_is_number) == (1, True)
    assert (bad.count, bad.count_is_number) == (1, False)


def test_selectors_capacity_tolerations_and_derived_attributes() -> None:
    toleration = {"key": "k", "operator": "Exists"}
    (request,) = parse_claim(_claim([{"name": "r", "exactly": {
        "deviceClassName": "x",
        "selectors": [{"cel": {"expression": "device.driver == 'd'"}}, {}, {"cel": {"expression": ""}}],
        "tolerations": [toleration],
        "capacity": {"requests": {"memory": "1Gi"}},
        "derivedAttributes": [{"name": "n", "expression": "1"}]}}])).all_requests
    assert request.selectors == ("device.driver == 'd'", None, "")
    assert request.expressions == ("device.driver == 'd'",)
    assert request.tolerations == (toleration,)
    assert request.capacity_requests == {"memory": "1Gi"}
    assert request.derived_attributes == (("n", "1"),)
    (plain,) = parse_claim(_claim([{"name": "p", "exactly": {"deviceClassName": "x"}}])).all_requests
    assert plain.capacity_requests is None and plain.selectors == () and plain.tolerations == ()


def test_constraints_and_config() -> None:
    devices = parse_claim(_claim(
        [{"name": "r", "exactly": {"deviceClassName": "x"}}],
        constraints=[{"requests": ["r"], "matchAttribute": "a"}, {"distinctAttribute": "b"}],
        config=[{"requests": ["r"], "opaque": {"driver": "d", "parameters": {}}}, {"opaque": None}]))
    assert devices.constraints == (Constraint(("r",), "a", None), Constraint((), None, "b"))
    assert devices.config == (Config(("r",), {"driver": "d", "parameters": {}}), Config((), None))


def test_malformed_parts_read_as_absent() -> None:
    """Values of the wrong type never raise: the loader and admission refuse them earlier."""
    assert parse_claim({}).requests == ()
    assert parse_claim({"spec": {"devices": {"requests": "x"}}}).requests == ()
    (request,) = parse_claim(_claim([{"name": "r", "exactly": "x"}])).all_requests
    assert (request.name, request.device_class, request.count) == ("r", "", 1)


# -- the search reads requests through the model ------------------------------------------


def _allocate(*claims: dict):
    from tests.test_allocation_rules import NODE, allocator, gpu_class, gpu_slice

    return allocator(gpu_class(), gpu_slice(2)).allocate(NODE, list(claims))


def test_search_refuses_what_the_model_flags() -> None:
    import pytest

    from kubectl_dra.errors import AllocationError
    from tests.test_allocation_rules import claim

    bad_count = claim("c", None)
    bad_count["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    with pytest.raises(AllocationError, match=r"claim default/c, request gpus: count 'two' is not a number"):
        _allocate(bad_count)
    no_expression = claim("c")
    no_expression["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{}]
    with pytest.raises(AllocationError, match=r"request gpus, selector #0: CEL expression empty"):
        _allocate(no_expression)


def test_search_counts_as_the_model_reads() -> None:
    from tests.test_allocation_rules import claim

    def devices(outcome) -> int:
        return len(outcome.results[0]["devices"]["results"])

    assert devices(_allocate(claim("absent", None))) == 1
    assert devices(_allocate(claim("two", 2))) == 2
    assert not _allocate(claim("three", 3)).allocated
