"""Focused tests of allocator pieces: pools, counters, capacity rounding, constraints, tracing."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_dra.allocation import Allocator, NullTracer, Rejection, RejectionCode
from kubectl_dra.allocation.capacity import check_capacity, consumed_amount, violates_policy
from kubectl_dra.allocation.constraints import DistinctAttribute, MatchAttribute
from kubectl_dra.allocation.pools import gather_pools
from kubectl_dra.errors import AllocationError
from kubectl_dra.gates import FeatureGates
from kubectl_dra.model.attributes import attribute_value
from kubectl_dra.model.devices import Capacity, slice_view
from kubectl_dra.model.nodes import node_selector_matches
from kubectl_dra.quantity import Quantity
from kubectl_dra.state import ClusterState

NODE = {"metadata": {"name": "node-1", "labels": {"zone": "a", "rank": "5"}}}


def Q(text: str) -> Quantity:
    return Quantity.parse(text)


def slice_obj(name: str, pool: str = "pool-1", *, gen: int = 1, count: int = 1, node: str | None = "node-1",
              devices: list[dict[str, Any]] | None = None, driver: str = "driver-a", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
                            "devices": devices if devices is not None else [{"name": "dev-0"}]}
    if node is not None:
        body["nodeName"] = node
    body.update(spec)
    return {"kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def pools_of(*slices: dict[str, Any], partitionable: bool = True, compat: bool = True):
    views = [slice_view(s, i) for i, s in enumerate(slices)]
    by_pool: dict[tuple[str, str], list] = {}
    for v in views:
        by_pool.setdefault(v.pool_id, []).append(v)
    return gather_pools(views, by_pool, NODE, partitionable=partitionable, compat_groups=compat)


# -- pools ---------------------------------------------------------------------------------


def test_pools_sorted_by_name_and_newest_generation_wins() -> None:
    pools = pools_of(slice_obj("s-b", "pool-b"), slice_obj("s-a-old", "pool-a", gen=1),
                     slice_obj("s-a-new", "pool-a", gen=2, devices=[{"name": "new"}]))
    assert [p.name for p in pools] == ["pool-a", "pool-b"]
    assert [d.name for d in pools[0].slices[0].devices] == ["new"]


def test_pool_missing_a_slice_is_incomplete() -> None:
    (pool,) = pools_of(slice_obj("s-1", count=2))
    assert pool.incomplete and not pool.slices


def test_pool_with_slice_on_other_node_is_complete() -> None:
    (pool,) = pools_of(slice_obj("s-1", count=2, devices=[{"name": "a"}]),
                       slice_obj("s-2", count=2, node="node-2", devices=[{"name": "b"}]))
    assert not pool.incomplete
    assert [s.name for s in pool.slices] == ["s-1"]


def test_pool_obsolete_when_newer_generation_elsewhere() -> None:
    assert pools_of(slice_obj("s-1", count=2), slice_obj("s-2", gen=2, count=2, node="node-2")) == []


def test_duplicate_device_names_make_pool_invalid() -> None:
    (pool,) = pools_of(slice_obj("s-1", count=2), slice_obj("s-2", count=2))
    assert pool.invalid and "duplicate device name dev-0" in pool.invalid_reason


def test_unknown_counter_set_makes_pool_invalid() -> None:
    dev = {"name": "p", "consumesCounters": [{"counterSet": "nope", "counters": {"c": {"value": "1"}}}]}
    (pool,) = pools_of(slice_obj("s-1", devices=[dev]))
    assert pool.invalid and "counter set nope not found" in pool.invalid_reason


def test_grouped_devices_make_pool_incomplete_without_the_gate() -> None:
    dev = {"name": "p", "consumesCounters": [{"counterSet": "cs", "counters": {}, "compatibilityGroups": ["mig"]}]}
    counters = slice_obj("s-0", count=2, devices=[], sharedCounters=[{"name": "cs", "counters": {"c": {"value": "1"}}}])
    (pool,) = pools_of(counters, slice_obj("s-1", count=2, devices=[dev]), compat=False)
    assert pool.incomplete
    (pool,) = pools_of(counters, slice_obj("s-1", count=2, devices=[dev]), compat=True)
    assert not pool.incomplete and not pool.invalid


def test_node_selector_operators() -> None:
    def sel(*reqs: dict[str, Any]) -> dict[str, Any]:
        return {"nodeSelectorTerms": [{"matchExpressions": list(reqs)}]}

    assert node_selector_matches(sel({"key": "zone", "operator": "In", "values": ["a"]}), NODE)
    assert not node_selector_matches(sel({"key": "zone", "operator": "NotIn", "values": ["a"]}), NODE)
    assert node_selector_matches(sel({"key": "rank", "operator": "Gt", "values": ["4"]}), NODE)
    assert not node_selector_matches(sel({"key": "rank", "operator": "Lt", "values": ["4"]}), NODE)
    assert node_selector_matches(sel({"key": "gpu", "operator": "DoesNotExist"}), NODE)
    assert not node_selector_matches({"nodeSelectorTerms": [{}]}, NODE)


# -- capacity ------------------------------------------------------------------------------


def cap(value: str, policy: dict[str, Any] | None = None) -> Capacity:
    return Capacity("bw", Q(value), policy)


@pytest.mark.parametrize("requested,policy,expected", [
    (None, None, "10"),
    (None, {"default": "2"}, "2"),
    ("3", None, "3"),
    ("3", {"validRange": {"min": "2", "step": "2"}}, "4"),
    ("1", {"validRange": {"min": "2", "step": "2"}}, "2"),
    ("5", {"validRange": {"min": "2"}}, "5"),
    ("3", {"validValues": ["1", "4", "8"]}, "4"),
    ("9", {"validValues": ["1", "4", "8"]}, "9"),
    ("1500m", {"validRange": {"min": "1", "step": "500m"}}, "1500m"),
])
def test_consumed_amount_rounding(requested: str | None, policy: dict[str, Any] | None, expected: str) -> None:
    got = consumed_amount(Q(requested) if requested else None, cap("10", policy), fractional=True)
    assert got == Q(expected)


@pytest.mark.parametrize("requested,policy,expected", [
    # upstream roundUpRange's integer path: every quantity read with Value() (rounded up)
    ("300m", {"validRange": {"min": "200m", "max": "1", "step": "100m"}}, "1"),
    ("1500m", {"validRange": {"min": "1", "step": "500m"}}, "2"),
    ("3", {"validRange": {"min": "2", "step": "2"}}, "4"),
    ("100m", {"validRange": {"min": "200m", "step": "100m"}}, "200m"),  # below min: min itself
])
def test_consumed_amount_rounding_without_fractional_ranges(requested: str, policy: dict[str, Any],
                                                            expected: str) -> None:
    """With DRAFractionalCapacityRange off a valid range rounds in integers."""
    assert consumed_amount(Q(requested), cap("10", policy), fractional=False) == Q(expected)


def test_rounding_a_request_finer_than_milli_is_an_error_with_fractional_ranges() -> None:
    """Upstream roundUpRange refuses a request it cannot read in thousandths (the allocation aborts)."""
    with pytest.raises(AllocationError):
        consumed_amount(Q("1500001u"), cap("10", {"validRange": {"min": "1", "step": "500m"}}), fractional=True)


@pytest.mark.parametrize("fractional", [True, False])
def test_policy_violations(fractional: bool) -> None:
    assert violates_policy(Q("12"), {"validRange": {"min": "2", "max": "10", "step": "2"}}, fractional=fractional)
    assert not violates_policy(Q("10"), {"validRange": {"min": "2", "max": "10", "step": "2"}}, fractional=fractional)
    assert violates_policy(Q("9"), {"validValues": ["1", "4", "8"]}, fractional=fractional)
    assert not violates_policy(Q("7"), {"default": "7", "validValues": ["1"]}, fractional=fractional)


def test_policy_step_is_checked_in_integers_without_fractional_ranges() -> None:
    """400m is off a 200m step from 100m in thousandths; read as integers (1, 1, 1) it is on the step."""
    policy = {"validRange": {"min": "100m", "max": "1", "step": "200m"}}
    assert violates_policy(Q("400m"), policy, fractional=True)
    assert not violates_policy(Q("400m"), policy, fractional=False)


def _device(capacity: dict[str, Any], multi: bool = True):
    sv = slice_view(slice_obj("s", devices=[{"name": "d", "allowMultipleAllocations": multi, "capacity": capacity}]), 0)
    return sv.devices[0]


def test_capacity_fits_beside_existing_shares() -> None:
    dev = _device({"bandwidth": {"value": "10G"}})
    amounts, short = check_capacity({"bandwidth": Q("4G")}, dev, {"driver-a/bandwidth": Q("5G")}, None, fractional=True)
    assert short is None and amounts == {"driver-a/bandwidth": Q("4G")}
    amounts, short = check_capacity({"bandwidth": Q("4G")}, dev, {"driver-a/bandwidth": Q("5G")}, {"driver-a/bandwidth": Q("2G")},
                                   fractional=True)
    assert amounts is None and short is not None
    assert short.needed == Q("4G") and short.left == Q("3G")


def test_capacity_request_for_missing_capacity_does_not_fit() -> None:
    dev = _device({"bandwidth": {"value": "10G"}})
    amounts, short = check_capacity({"memory": Q("1")}, dev, None, None, fractional=True)
    assert amounts is None and short is not None and short.missing


def test_capacity_named_twice_is_an_error() -> None:
    dev = _device({"bandwidth": {"value": "10G"}})
    with pytest.raises(AllocationError):
        check_capacity({"bandwidth": Q("1"), "driver-a/bandwidth": Q("1")}, dev, None, None, fractional=True)


# -- constraints ---------------------------------------------------------------------------


def val(attr: dict[str, Any]):
    return attribute_value(attr)


def test_match_attribute_list_intersection_narrows_and_restores() -> None:
    m = MatchAttribute("a", [], list_types=True)
    first = m.check(val({"strings": ["x", "y"]}))
    m.push(first)
    second = m.check(val({"string": "x"}))
    assert second == frozenset({("string", "x")})
    m.push(second)
    assert m.check(val({"string": "y"})) is None
    m.pop()
    assert m.check(val({"string": "y"})) == frozenset({("string", "y")})


def test_match_attribute_scalar_needs_equal_type_and_value() -> None:
    m = MatchAttribute("a", [], list_types=False)
    m.push(m.check(val({"int": 1})))
    assert m.check(val({"int": 1})) is not None
    assert m.check(val({"bool": True})) is None
    assert m.check(val({"ints": [1]})) is None  # lists are unusable without the gate


def test_distinct_attribute_pairwise_disjoint() -> None:
    d = DistinctAttribute("a", [], list_types=True)
    d.push(d.check(val({"ints": [1, 2]})))
    assert d.check(val({"int": 2})) is None
    assert d.check(val({"ints": [3, 4]})) is not None


def test_constraint_scoping_to_subrequests() -> None:
    m = MatchAttribute("a", ["req-0/sub-1"], list_types=False)
    assert m.applies("sub-1", "req-0") and not m.applies("sub-0", "req-0") and not m.applies("req-1", None)


# -- whole allocations ---------------------------------------------------------------------


def _state(*objs: dict[str, Any]) -> ClusterState:
    st = ClusterState()
    st.extend(objs)
    return st


CLASS = {"kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {}}


def _claim(name: str, count: int = 1, **exactly: Any) -> dict[str, Any]:
    return {"kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c", "count": count, **exactly}}]}}}


COUNTERS = slice_obj("s-0", count=2, devices=[], sharedCounters=[{"name": "gpu", "counters": {"mem": {"value": "8Gi"}}}])


def _part(name: str, mem: str) -> dict[str, Any]:
    return {"name": name, "consumesCounters": [{"counterSet": "gpu", "counters": {"mem": {"value": mem}}}]}


def test_counters_limit_partitions_and_are_released_on_backtrack() -> None:
    parts = slice_obj("s-1", count=2, devices=[_part("big", "6Gi"), _part("small-1", "4Gi"), _part("small-2", "4Gi")])
    st = _state(CLASS, COUNTERS, parts)
    alloc = Allocator(st, FeatureGates.only(["DRAPartitionableDevices"]))
    out = alloc.allocate(NODE, [_claim("two", count=2)])
    assert out.allocated
    assert [r["device"] for r in out.results[0]["devices"]["results"]] == ["small-1", "small-2"]
    assert not alloc.allocate(NODE, [_claim("three", count=3)]).allocated


class Recorder(NullTracer):
    def __init__(self) -> None:
        self.rejections: list[tuple[str, Rejection]] = []
        self.selected: list[str] = []

    def device_rejected(self, claim: dict, request: str, driver: str, pool: str, device: str, rejection: Rejection) -> None:
        self.rejections.append((device, rejection))

    def device_selected(self, claim: dict, request: str, driver: str, pool: str, device: str) -> None:
        self.selected.append(device)


def test_tracer_reports_counter_numbers_and_in_use_owner() -> None:
    parts = slice_obj("s-1", count=2, devices=[_part("big", "6Gi"), _part("small-1", "4Gi")])
    used = _claim("holder")
    used["status"] = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "driver-a", "pool": "pool-1", "device": "small-1"}]}}}
    st = _state(CLASS, COUNTERS, parts, used)
    rec = Recorder()
    out = Allocator(st, FeatureGates.only(["DRAPartitionableDevices"])).allocate(NODE, [_claim("new")], tracer=rec)
    assert not out.allocated
    by_device = dict(rec.rejections)
    assert by_device["small-1"].code is RejectionCode.IN_USE
    assert by_device["small-1"].details["claim"] == "default/holder"
    big = by_device["big"]
    assert big.code is RejectionCode.COUNTERS_EXHAUSTED
    assert big.details == {"counterSet": "gpu", "counter": "mem", "needed": "6Gi", "left": "4Gi"}


def test_reallocating_a_claim_frees_its_own_devices() -> None:
    st_claim = _claim("mine")
    st_claim["status"] = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "driver-a", "pool": "pool-1", "device": "dev-0"}]}}}
    st = _state(CLASS, slice_obj("s-1"), st_claim)
    alloc = Allocator(st, FeatureGates.only([]))
    assert not alloc.allocate(NODE, [_claim("other")]).allocated
    assert alloc.allocate(NODE, [st_claim]).allocated


def test_score_prefers_earlier_subrequests() -> None:
    claim = {"kind": "ResourceClaim", "metadata": {"name": "p", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
                 {"name": "big", "deviceClassName": "c", "count": 2},
                 {"name": "one", "deviceClassName": "c", "count": 1}]}]}}}
    one = _state(CLASS, slice_obj("s-1"))
    two = _state(CLASS, slice_obj("s-1", devices=[{"name": "a"}, {"name": "b"}]))
    gates = FeatureGates.only(["DRAPrioritizedList"])
    low = Allocator(one, gates).allocate(NODE, [claim])
    high = Allocator(two, gates).allocate(NODE, [claim])
    assert low.allocated and high.allocated
    assert high.score > low.score


def test_shares_count_as_exclusive_without_consumable_capacity() -> None:
    shared = _claim("sharer")
    shared["status"] = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "driver-a", "pool": "pool-1", "device": "dev-0", "shareID": "u-1"}]}}}
    st = _state(CLASS, slice_obj("s-1", devices=[{"name": "dev-0", "allowMultipleAllocations": True}]), shared)
    assert Allocator(st, FeatureGates.only(["DRAConsumableCapacity"])).allocate(NODE, [_claim("new")]).allocated
    assert not Allocator(st, FeatureGates.only([])).allocate(NODE, [_claim("new")]).allocated


def test_same_claims_on_several_nodes_and_repeated_calls() -> None:
    node2 = {"metadata": {"name": "node-2", "labels": {}}}
    st = _state(CLASS, slice_obj("s-1", devices=[{"name": "a"}]),
                slice_obj("s-2", "pool-2", node="node-2", devices=[{"name": "b", "attributes": {"x": {"int": 1}}},
                                                                  {"name": "c", "attributes": {"x": {"int": 2}}}]))
    claim = {"kind": "ResourceClaim", "metadata": {"name": "m", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c", "count": 2}}],
                                  "constraints": [{"distinctAttribute": "driver-a/x"}]}}}
    alloc = Allocator(st, FeatureGates.only([]))
    for _ in range(2):  # the second round reuses validated requests; constraints must start empty
        assert not alloc.allocate(NODE, [claim]).allocated
        assert alloc.allocate(node2, [claim]).allocated
    plain = _claim("p", count=2)
    for _ in range(2):
        assert not alloc.allocate(NODE, [plain]).allocated
        out = alloc.allocate(node2, [plain])
        assert [r["device"] for r in out.results[0]["devices"]["results"]] == ["b", "c"]


def test_compatibility_conflict_names_the_device_already_there() -> None:
    def grouped(name: str, group: str) -> dict[str, Any]:
        return {"name": name, "consumesCounters": [{"counterSet": "gpu", "counters": {"mem": {"value": "1Gi"}},
                                                    "compatibilityGroups": [group]}]}
    parts = slice_obj("s-1", count=2, devices=[grouped("mig-0", "mig"), grouped("vgpu-0", "vgpu")])
    used = _claim("holder")
    used["status"] = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "driver-a", "pool": "pool-1", "device": "mig-0"}]}}}
    st = _state(CLASS, COUNTERS, parts, used)
    rec = Recorder()
    gates = FeatureGates.only(["DRAPartitionableDevices", "DRADeviceCompatibilityGroups"])
    assert not Allocator(st, gates).allocate(NODE, [_claim("new")], tracer=rec).allocated
    conflict = dict(rec.rejections)["vgpu-0"]
    assert conflict.code is RejectionCode.COMPATIBILITY_CONFLICT
    assert conflict.details["with"] == "driver-a/pool-1/mig-0"
    assert conflict.details["existing"] == ["mig"]


def test_node_selector_of_network_devices_is_merged_into_one_term() -> None:
    zone = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    rank = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rank", "operator": "Exists"}],
                                   "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]}]}
    st = _state(CLASS,
                slice_obj("s-1", "pool-1", node=None, devices=[{"name": "a"}], nodeSelector=zone),
                slice_obj("s-2", "pool-2", node=None, devices=[{"name": "b"}], nodeSelector=rank),
                slice_obj("s-3", "pool-3", node=None, devices=[{"name": "c"}], nodeSelector=zone),
                slice_obj("s-4", "pool-4", node=None, devices=[{"name": "d"}], allNodes=True))
    out = Allocator(st, FeatureGates.only([])).allocate(NODE, [_claim("net", count=4)])
    assert out.allocated
    (term,) = out.results[0]["nodeSelector"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": "zone", "operator": "In", "values": ["a"]},
                                        {"key": "rank", "operator": "Exists"}]
    assert term["matchFields"] == [{"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]
    only_all = Allocator(_state(CLASS, slice_obj("s", node=None, allNodes=True)), FeatureGates.only([]))
    assert "nodeSelector" not in only_all.allocate(NODE, [_claim("x")]).results[0]


def test_per_device_node_selection_needs_the_gate_and_a_matching_device() -> None:
    devices = [{"name": "elsewhere", "nodeName": "node-9"}, {"name": "here", "nodeName": "node-1"},
               {"name": "everywhere", "allNodes": True}]
    st = _state(CLASS, slice_obj("s", node=None, devices=devices, perDeviceNodeSelection=True))
    out = Allocator(st, FeatureGates.only(["DRAPartitionableDevices"])).allocate(NODE, [_claim("x", count=2)])
    assert [r["device"] for r in out.results[0]["devices"]["results"]] == ["here", "everywhere"]
    assert out.results[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node-1"]
    assert not Allocator(st, FeatureGates.only([])).allocate(NODE, [_claim("x")]).allocated


def test_class_config_once_per_class_then_claim_config() -> None:
    klass = {"kind": "DeviceClass", "metadata": {"name": "c"},
             "spec": {"config": [{"opaque": {"driver": "driver-a", "parameters": {"k": 1}}}]}}
    claim = {"kind": "ResourceClaim", "metadata": {"name": "cfg", "namespace": "default"},
             "spec": {"devices": {
                 "requests": [{"name": "a", "exactly": {"deviceClassName": "c"}},
                              {"name": "b", "exactly": {"deviceClassName": "c"}},
                              {"name": "other", "exactly": {"deviceClassName": "c2"}}],
                 "config": [{"requests": ["b"], "opaque": {"driver": "driver-a", "parameters": {"mine": True}}},
                            {"requests": ["nope"], "opaque": {"driver": "driver-a", "parameters": {}}}]}}}
    other = {"kind": "DeviceClass", "metadata": {"name": "c2"}, "spec": {}}
    st = _state(klass, other, slice_obj("s", devices=[{"name": "x"}, {"name": "y"}, {"name": "z"}]))
    out = Allocator(st, FeatureGates.only([])).allocate(NODE, [claim])
    assert out.results[0]["devices"]["config"] == [
        {"source": "FromClass", "requests": ["a", "b"], "opaque": {"driver": "driver-a", "parameters": {"k": 1}}},
        {"source": "FromClaim", "requests": ["b"], "opaque": {"driver": "driver-a", "parameters": {"mine": True}}},
    ]
