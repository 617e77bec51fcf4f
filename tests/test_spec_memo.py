"""SpecMemo: a new device-claim spec's preparation (defaults, dropped fields and their warnings)
and errors remembered by its JSON, per path and gates, bounded, and never changing a decision
(the whole admission corpus is checked through one memo in test_admission_review_contract.py)."""

from __future__ import annotations

import copy
from typing import Any

from kubectl_dra.gates import FeatureGates
from kubectl_dra.validation.admission import review
from kubectl_dra.validation.resourceclaim import CLAIM_DEVICES_PATH, prepare_new_devices
from kubectl_dra.validation.specmemo import SpecMemo

GATES = FeatureGates.default()


def claim(name: str, request: str = "gpu", count: Any = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"devices": {"requests": [{"name": request, "exactly": {
                "deviceClassName": "gpu.example.com", "count": count,
                "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}]}}}


def template(name: str, request: str = "gpu") -> dict[str, Any]:
    spec = claim("x", request)["spec"]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "ml"}, "spec": {"spec": spec}}


def errors_of(obj: dict[str, Any], memo: SpecMemo | None) -> list[str]:
    return [str(e) for e in review(copy.deepcopy(obj), gates=GATES, namespace_labels={}, memo=memo).errors]


def test_claims_made_from_one_template_validate_their_spec_once() -> None:
    memo = SpecMemo()
    for i in range(5):
        assert errors_of(claim(f"pod-{i}-gpu"), memo) == []
    assert (memo.misses, memo.hits) == (1, 4)


def test_metadata_is_checked_for_every_claim_whatever_the_memo_holds() -> None:
    memo = SpecMemo()
    errors_of(claim("fine"), memo)
    assert errors_of(claim("Not_A_Name"), memo) == errors_of(claim("Not_A_Name"), None) != []
    assert memo.hits == 1


def test_a_remembered_error_is_reported_at_the_path_of_its_kind() -> None:
    memo = SpecMemo()
    bad_claim, bad_template = claim("c", request="Bad_Name"), template("t", request="Bad_Name")
    first = errors_of(bad_claim, memo)
    assert first and first[0].startswith("spec.devices.requests[0].name")
    assert errors_of(bad_template, memo) == errors_of(bad_template, None)
    assert errors_of(bad_template, None)[0].startswith("spec.spec.devices.requests[0].name")
    assert errors_of(bad_claim, memo) == first
    assert memo.misses == 2 and memo.hits == 1


def test_feature_gates_are_part_of_what_is_remembered() -> None:
    memo = SpecMemo()
    off = GATES.with_overrides("DRAPrioritizedList=false")
    obj = claim("c")
    obj["spec"]["devices"]["requests"] = [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com"}]}]
    on_errors = [str(e) for e in review(copy.deepcopy(obj), gates=GATES, namespace_labels={}, memo=memo).errors]
    off_errors = [str(e) for e in review(copy.deepcopy(obj), gates=off, namespace_labels={}, memo=memo).errors]
    assert on_errors == []
    assert off_errors == [str(e) for e in review(copy.deepcopy(obj), gates=off, namespace_labels={}).errors] != []
    assert memo.misses == 2


def test_the_memo_is_bounded_in_entries_and_in_spec_size() -> None:
    memo = SpecMemo(max_entries=3, max_spec_bytes=400)
    for i in range(10):
        errors_of(claim("c", request=f"r{i}"), memo)
    assert len(memo) == 3 and memo.misses == 10
    big = claim("c")
    big["spec"]["devices"]["requests"][0]["exactly"]["selectors"] *= 8  # > 400 bytes of JSON
    errors_of(big, memo)
    errors_of(big, memo)
    assert memo.hits == 0 and len(memo) == 3


def test_a_spec_json_cannot_write_exactly_is_validated_every_time() -> None:
    memo = SpecMemo()
    huge = claim("c")  # opaque parameters may hold any JSON: here an integer beyond 64 bits
    huge["spec"]["devices"]["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": {"n": 2**70}}}]
    assert errors_of(huge, memo) == errors_of(huge, None) == []
    assert errors_of(huge, memo) == []
    assert len(memo) == 0 and memo.hits == memo.misses == 0


def test_nan_and_null_are_not_one_remembered_spec() -> None:
    """orjson writes NaN as ``null``: a spec holding either is validated every time, never
    answered from the other's entry."""
    def with_parameters(value: float | None) -> dict[str, Any]:
        obj = claim("c")
        obj["spec"]["devices"]["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": {"n": value}}}]
        return obj

    nan, null = with_parameters(float("nan")), with_parameters(None)
    for first, second in ((nan, null), (null, nan)):
        memo = SpecMemo()
        assert errors_of(first, memo) == errors_of(first, None)
        assert errors_of(second, memo) == errors_of(second, None)
        assert len(memo) == 0


def test_each_decision_gets_its_own_prepared_spec() -> None:
    """A remembered spec is handed out as a new copy: changing one decision's object changes
    neither the memo nor the next decision; defaults and drop warnings are those of a memo-less review."""
    memo = SpecMemo()
    gates = GATES.with_overrides("DRADeviceTaints=false")
    obj = claim("c")
    del obj["spec"]["devices"]["requests"][0]["exactly"]["count"]  # defaulted to 1
    obj["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    alone = review(copy.deepcopy(obj), gates=gates, namespace_labels={})
    first = review(copy.deepcopy(obj), gates=gates, namespace_labels={}, memo=memo)
    first.object["spec"]["devices"]["requests"][0]["exactly"]["count"] = 99
    second = review(copy.deepcopy(obj), gates=gates, namespace_labels={}, memo=memo)
    assert (memo.misses, memo.hits) == (1, 1)
    assert second.to_dict() == alone.to_dict()
    assert second.object["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.example.com", "count": 1, "allocationMode": "ExactCount",
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}
    assert second.warnings == alone.warnings != []


def test_a_spec_of_values_json_writes_as_others_is_not_remembered() -> None:
    """A library caller's spec holding a tuple reads as JSON like a list: on a miss the memo sees
    that its copy differs, prepares a copy of the spec itself and keeps nothing."""
    memo = SpecMemo()
    devices = claim("c")["spec"]["devices"]
    devices["requests"] = tuple(devices["requests"])  # as a list it would be the spec's requests

    def prepare(copy: dict[str, Any]) -> Any:
        return prepare_new_devices(copy, CLAIM_DEVICES_PATH, GATES)

    prepared, warnings, errors = memo.new_spec(devices, CLAIM_DEVICES_PATH, GATES, prepare)
    assert prepared is not devices and isinstance(prepared["requests"], tuple)
    assert len(memo) == 0 and memo.misses == 1
    memo.new_spec(devices, CLAIM_DEVICES_PATH, GATES, prepare)
    assert len(memo) == 0 and (memo.misses, memo.hits) == (2, 0)
    assert [str(e) for e in errors] == [str(e) for e in prepare_new_devices(
        {**devices}, CLAIM_DEVICES_PATH, GATES)[2]]
