"""review() checks a ResourceSlice's or DeviceClass's JSON types in one pass (decode schema and
handler shape together); its decisions must equal those of the three separate passes."""

from __future__ import annotations

import copy
from typing import Any, Iterator

import pytest

from kubectl_dra.gates import FeatureGates
from kubectl_dra.validation import admission, deviceclass, resourceslice
from kubectl_dra.validation.admission import decode_errors, review

GATES = FeatureGates.default()

#: values put in place of each member in turn: every JSON type, an out-of-range integer,
#: a string that is no quantity, a float, and null
WRONG_VALUES: tuple[Any, ...] = (1, "x", True, [], {}, 2**70, "12zz", 1.5, None, ["x"], {"k": "v"})


def rich_slice() -> dict[str, Any]:
    """A ResourceSlice that uses most fields of both the decode schema and the handler shape."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "s", "labels": {"a": "b"}, "generation": 1, "finalizers": ["f"]},
        "spec": {
            "driver": "gpu.example.com", "nodeName": "node-1", "partitionTypeAttribute": "gpu.example.com/t",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{
                "name": "d0",
                "attributes": {"gpu.example.com/i": {"int": 3}, "gpu.example.com/l": {"ints": [1, 2]},
                               "gpu.example.com/s": {"string": "a"}, "gpu.example.com/v": {"version": "1.0.0"}},
                "capacity": {"gpu.example.com/m": {"value": "1Gi", "requestPolicy": {
                    "default": "1Gi", "validRange": {"min": "1Gi", "max": "2Gi", "step": "1Gi"}}}},
                "taints": [{"key": "k", "value": "v", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00Z"}],
                "consumesCounters": [{"counterSet": "c", "counters": {"x": {"value": "1"}}}],
                "bindingConditions": ["a"], "allowMultipleAllocations": True,
            }],
        },
    }


def rich_class() -> dict[str, Any]:
    """A DeviceClass with selectors, config and an extended resource name."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c", "labels": {"a": "b"}},
        "spec": {"selectors": [{"cel": {"expression": "true"}}],
                 "config": [{"opaque": {"driver": "d.example.com", "parameters": {"a": 1}}}],
                 "extendedResourceName": "example.com/gpu"},
    }


def mutations(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, replacement) for every member and item of ``value``, with each wrong value."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        here = path + (key,)
        for wrong in WRONG_VALUES:
            yield here, wrong
        yield from mutations(child, here)


def mutated(obj: dict[str, Any], path: tuple, wrong: Any) -> dict[str, Any]:
    """A copy of ``obj`` with the member at ``path`` replaced."""
    out = copy.deepcopy(obj)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = copy.deepcopy(wrong)
    return out


def separate_passes(monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> dict[str, Any]:
    """review() with the single pass switched off: decode, then the handlers' own shape checks."""
    with monkeypatch.context() as m:
        m.setattr(admission, "_HANDLER_SHAPES", {})
        m.setattr(admission, "_BOTH_CHECKERS", {})
        return review(gates=GATES, **kwargs).to_dict()


CASES = [(rich_slice(), resourceslice), (rich_class(), deviceclass)]


@pytest.mark.parametrize(("base", "module"), CASES, ids=["ResourceSlice", "DeviceClass"])
def test_single_pass_is_true_exactly_when_both_checks_find_nothing(base: dict[str, Any], module: Any) -> None:
    kind = base["kind"]
    check = admission._both_checker(kind, module)
    assert check is not None and check(base)
    disagreements = []
    for path, wrong in mutations(base):
        obj = mutated(base, path, wrong)
        expected = not decode_errors(obj, kind) and not module.shape_errors(obj)
        if check(obj) != expected:
            disagreements.append((path, wrong))
    assert disagreements == []


@pytest.mark.parametrize(("base", "module"), CASES, ids=["ResourceSlice", "DeviceClass"])
def test_review_decisions_equal_those_of_separate_passes(
    base: dict[str, Any], module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures = 0
    for path, wrong in list(mutations(base))[::3]:
        obj = mutated(base, path, wrong)
        for op, old in (("CREATE", None), ("UPDATE", base), ("UPDATE", obj)):
            new = base if op == "UPDATE" and old is obj else obj
            got = review(copy.deepcopy(new), operation=op, old=copy.deepcopy(old), gates=GATES).to_dict()
            want = separate_passes(monkeypatch, obj=copy.deepcopy(new), operation=op, old=copy.deepcopy(old))
            assert got == want, (path, wrong, op)
            failures += not got["allowed"]
    assert failures > 0  # the mutations do reach the type checks


def test_malformed_device_reports_shape_error_once_through_review() -> None:
    obj = rich_slice()
    obj["spec"]["devices"][0]["attributes"]["gpu.example.com/i"]["int"] = 2**70
    decision = review(obj, gates=GATES)
    assert not decision.allowed
    fields = [e.field for e in decision.errors]
    assert fields == ["spec.devices[0].attributes[gpu.example.com/i].int"]


def test_direct_callers_still_get_shape_errors() -> None:
    obj = rich_slice()
    obj["spec"]["pool"]["name"] = 5
    prepared, _ = resourceslice.prepare_resource_slice(copy.deepcopy(obj), None, GATES)
    assert prepared == obj  # undecodable: left untouched
    errs = resourceslice.validate_resource_slice(prepared, None, GATES)
    assert [e.field for e in errs] == ["spec.pool.name"]
    cls = rich_class()
    cls["spec"]["extendedResourceName"] = 7
    assert [e.field for e in deviceclass.validate_device_class(cls, None, GATES)] == ["spec.extendedResourceName"]


@pytest.mark.parametrize(
    ("member", "value", "field"),
    [
        ("taints", [{"key": "k", "effect": "Bogus"}], "spec.devices[0].taints[0].effect"),
        ("consumesCounters", [{"counterSet": "", "counters": {}}], "spec.devices[0].consumesCounters[0].counterSet"),
        ("bindingFailureConditions", ["x"], "spec.devices[0].bindingConditions"),
        ("nodeAllocatableResources", {"bogus": {}}, "spec.devices[0].nodeAllocatableResources[bogus]"),
    ],
)
def test_features_a_device_uses_are_still_validated(member: str, value: Any, field: str) -> None:
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
           "spec": {"driver": "d.example.com", "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
                    "devices": [{"name": "d0", member: value}]}}
    gates = FeatureGates.default().with_overrides({"DRADeviceTaints": True, "DRAPartitionableDevices": True,
                                                   "DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": True})
    errs = resourceslice.validate_resource_slice(obj, None, gates)
    assert field in [e.field for e in errs]
