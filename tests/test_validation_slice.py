"""ResourceSlice strategy and validation beyond the conformance scenarios: update rules, path
rendering of long keys, limits, gated-field dropping and the newest fields."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_dra.validation.field import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    REQUIRED,
    TOO_MANY,
    FieldError,
)
from kubectl_dra.validation.schema import decode_errors
from kubectl_dra.validation.resourceslice import (
    prepare_resource_slice,
    validate_resource_slice,
    warnings_resource_slice,
)

ALL = (
    "DRADeviceTaints", "DRAPartitionableDevices", "DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus",
    "DRAConsumableCapacity", "DRAListTypeAttributes", "DRAOptionalNodeOperations", "DRADeviceCompatibilityGroups",
    "DRANodeAllocatableResources", "DRAFractionalCapacityRange", "DRAResourcePoolStatus",
)


class Gates:
    def __init__(self, *on: str) -> None:
        self.on = set(on)

    def enabled(self, name: str) -> bool:
        return name in self.on


def slice_(*devices: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A valid slice on node-1 with the given devices and extra spec fields."""
    body: dict[str, Any] = {
        "driver": "dra.example.com",
        "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
    }
    if devices:
        body["devices"] = list(devices)
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": body}


def run(obj: dict[str, Any], old: dict[str, Any] | None = None, gates: Any = None) -> tuple[dict, list[FieldError]]:
    """Decode, then prepare a copy and validate it, as the API server does (decode errors end it,
    the object left as submitted)."""
    gates = gates if gates is not None else Gates(*ALL)
    undecodable = decode_errors(obj, "ResourceSlice") + (decode_errors(old, "ResourceSlice") if old is not None else [])
    if undecodable:
        return copy.deepcopy(obj), undecodable
    submitted = copy.deepcopy(obj)
    new, _ = prepare_resource_slice(submitted, copy.deepcopy(old), gates)
    assert submitted == obj  # the strategy copies what it changes
    return new, validate_resource_slice(new, old, gates)


def kinds(errs: list[FieldError]) -> set[tuple[str, str]]:
    return {(e.type, e.field) for e in errs}


def test_minimal_slice_is_valid() -> None:
    assert run(slice_({"name": "d"}))[1] == []


# ---------------------------------------------------------------------------
# Update rules


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda s: s["metadata"].update(name="other"), "metadata.name"),
        (lambda s: s["spec"].update(driver="other.example.com"), "spec.driver"),
        (lambda s: s["spec"]["pool"].update(name="other"), "spec.pool.name"),
        (lambda s: s["spec"].update(nodeName="node-2"), "spec.nodeName"),
    ],
)
def test_immutable_fields(change: Any, field: str) -> None:
    old = slice_({"name": "d"})
    new = copy.deepcopy(old)
    change(new)
    assert kinds(run(new, old)[1]) == {(INVALID, field)}


def test_node_name_unset_to_set_is_immutable_but_selector_is_not() -> None:
    old = slice_({"name": "d"})
    del old["spec"]["nodeName"]
    old["spec"]["allNodes"] = True
    new = copy.deepcopy(old)
    new["spec"]["allNodes"] = None
    new["spec"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]}
    assert run(new, old)[1] == []


def test_unchanged_taints_are_not_revalidated_but_changed_ones_are() -> None:
    bad = {"name": "d", "taints": [{"key": "k", "effect": "Bogus"}]}
    old = slice_(bad)
    assert run(old, old)[1] == []
    new = copy.deepcopy(old)
    new["spec"]["devices"][0]["taints"].append({"key": "k2", "effect": "NoSchedule"})
    assert kinds(run(new, old)[1]) == {("FieldValueNotSupported", "spec.devices[0].taints[0].effect")}


def test_unchanged_capacity_with_bad_key_is_accepted_on_update() -> None:
    old = slice_({"name": "d", "capacity": {"bad-name": {"value": "1"}}})
    assert kinds(run(old)[1]) == {(INVALID, "spec.devices[0].capacity")}
    assert run(old, old)[1] == []
    # a renamed device is a new device: its capacity is checked
    new = copy.deepcopy(old)
    new["spec"]["devices"][0]["name"] = "e"
    assert kinds(run(new, old)[1]) == {(INVALID, "spec.devices[0].capacity")}


# ---------------------------------------------------------------------------
# Paths, limits


def test_long_attribute_key_is_middle_truncated_in_value_paths() -> None:
    domain = "d" * 63
    key = f"{domain}/{'a' * 32}"  # 96 chars: not truncated
    long_key = f"{domain}/{'a' * 40}"  # 104 chars: key error on the map, value error under a truncated key
    device = {"name": "d", "attributes": {key: {}, long_key: {}}}
    errs = run(slice_(device))[1]
    shortened = long_key[:47] + "..." + long_key[-46:]
    assert kinds(errs) == {
        (INVALID, f"spec.devices[0].attributes[{key}]"),
        (INVALID, f"spec.devices[0].attributes[{shortened}]"),
        ("FieldValueTooLong", "spec.devices[0].attributes"),
    }


def test_attribute_and_capacity_limits() -> None:
    attrs = {f"a{i}": {"int": i} for i in range(20)}
    caps = {f"c{i}": {"value": "1"} for i in range(13)}
    errs = run(slice_({"name": "d", "attributes": attrs, "capacity": caps}))[1]
    assert kinds(errs) == {(INVALID, "spec.devices[0]")}
    lists = {f"l{i}": {"ints": list(range(7))} for i in range(7)}  # 49 values
    errs = run(slice_({"name": "d", "attributes": lists}))[1]
    assert kinds(errs) == {(INVALID, "spec.devices[0]")}


def test_too_many_devices_short_circuits_duplicates() -> None:
    devices = [{"name": "same"} for _ in range(129)]
    assert kinds(run(slice_(*devices))[1]) == {(TOO_MANY, "spec.devices")}
    assert kinds(run(slice_(*devices[:3]))[1]) == {(DUPLICATE, "spec.devices[1]"), (DUPLICATE, "spec.devices[2]")}


def test_devices_with_taints_lower_the_limit() -> None:
    devices = [{"name": f"d{i}"} for i in range(65)]
    assert run(slice_(*devices))[1] == []
    devices[64]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    assert kinds(run(slice_(*devices))[1]) == {(TOO_MANY, "spec.devices")}
    # with the gate off the taints are dropped first, so the limit stays 128
    assert run(slice_(*devices), gates=Gates())[1] == []


def test_long_counter_name_path() -> None:
    name = "c" * 70
    spec_counters = [{"name": "set", "counters": {name: {"value": "1"}}}]
    errs = run(slice_(sharedCounters=spec_counters))[1]
    assert kinds(errs) == {(INVALID, "spec.sharedCounters[0].counters")}


def test_request_policy_compares_quantities_by_value() -> None:
    device = {
        "name": "d",
        "allowMultipleAllocations": True,
        "capacity": {"mem": {"value": "1Ki", "requestPolicy": {"default": "512", "validValues": ["512", "1Ki"]}}},
    }
    assert run(slice_(device))[1] == []
    device["capacity"]["mem"]["requestPolicy"]["validValues"] = ["512", "1024", "1Ki"]
    errs = run(slice_(device))[1]
    assert kinds(errs) == {(DUPLICATE, "spec.devices[0].capacity[mem].requestPolicy.validValues[2]")}


def test_request_policy_without_allow_multiple_is_forbidden() -> None:
    device = {"name": "d", "capacity": {"mem": {"value": "1", "requestPolicy": {"default": "1"}}}}
    assert kinds(run(slice_(device))[1]) == {(FORBIDDEN, "spec.devices[0].capacity[mem].requestPolicy")}


# ---------------------------------------------------------------------------
# Strategy


def test_namespace_cleared_and_generation_untouched() -> None:
    obj = slice_({"name": "d"})
    obj["metadata"]["namespace"] = "default"
    new, errs = run(obj)
    assert errs == [] and "namespace" not in new["metadata"] and "generation" not in new["metadata"]


def test_gate_off_drops_only_when_old_does_not_use_feature() -> None:
    device = {"name": "d", "consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]}
    new, _ = run(slice_(copy.deepcopy(device)), gates=Gates())
    assert "consumesCounters" not in new["spec"]["devices"][0]
    old = slice_({"name": "d0", "allNodes": None})  # a null field is not "in use"
    new, _ = run(slice_(copy.deepcopy(device)), old, gates=Gates())
    assert "consumesCounters" not in new["spec"]["devices"][0]
    old = slice_({"name": "d0"}, perDeviceNodeSelection=False)  # present, even false, is in use
    del old["spec"]["nodeName"]
    new, _ = run(slice_(copy.deepcopy(device)), old, gates=Gates())
    assert new["spec"]["devices"][0]["consumesCounters"] == device["consumesCounters"]


def test_binding_conditions_need_both_gates() -> None:
    device = {"name": "d", "bindingConditions": ["a"], "bindingFailureConditions": ["b"], "bindsToNode": True}
    new, _ = run(slice_(copy.deepcopy(device)), gates=Gates("DRADeviceBindingConditions"))
    assert new["spec"]["devices"][0] == {"name": "d"}
    new, _ = run(
        slice_(copy.deepcopy(device)), gates=Gates("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
    )
    assert new["spec"]["devices"][0] == device


def test_list_attributes_dropped_leave_attribute_without_value() -> None:
    device = {"name": "d", "attributes": {"models": {"strings": ["a"]}}}
    new, errs = run(slice_(device), gates=Gates())
    assert new["spec"]["devices"][0]["attributes"] == {"models": {}}
    assert kinds(errs) == {(INVALID, "spec.devices[0].attributes[models]")}


def test_skip_node_operations_and_node_allocatable_dropped_when_off() -> None:
    obj = slice_(
        {"name": "d", "nodeAllocatableResources": {"cpu": {"overhead": {"perPod": "1"}}}},
        skipNodeOperations=["Bogus"],
    )
    new, errs = run(obj, gates=Gates())
    assert errs == [] and "skipNodeOperations" not in new["spec"]
    assert "nodeAllocatableResources" not in new["spec"]["devices"][0]


def test_uppercase_driver_warns_but_is_valid() -> None:
    obj = slice_({"name": "d"})
    obj["spec"]["driver"] = "DRA.Example.com"
    _, errs = run(obj)
    assert errs == []
    assert warnings_resource_slice(obj) and "lowercase" in warnings_resource_slice(obj)[0]
    assert prepare_resource_slice(copy.deepcopy(obj), None, Gates())[1] == warnings_resource_slice(obj)


# ---------------------------------------------------------------------------
# Newest fields (no conformance scenarios)


def test_node_allocatable_resources() -> None:
    device = {
        "name": "d",
        "capacity": {"mem": {"value": "1Gi"}},
        "nodeAllocatableResources": {
            "memory": {"mapping": {"capacityKey": "mem", "capacityMultiplier": "1"}},
            "cpu": {"overhead": {"perPod": "100m"}},
            "ephemeral-storage": {},
            "hugepages-2Mi": {"mapping": {"capacityKey": "missing", "capacityMultiplier": "0"}},
        },
    }
    p = "spec.devices[0].nodeAllocatableResources"
    assert kinds(run(slice_(device))[1]) == {
        (INVALID, f"{p}[ephemeral-storage]"),
        (REQUIRED, f"{p}[ephemeral-storage]"),
        ("FieldValueNotFound", f"{p}[hugepages-2Mi].mapping.capacityKey"),
        (INVALID, f"{p}[hugepages-2Mi].mapping.capacityMultiplier"),
    }


def test_partition_type_attribute() -> None:
    consuming = {"name": "p", "consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]}
    tagged = dict(consuming, name="q", attributes={"type": {"string": "mig"}})
    obj = slice_(tagged, consuming, partitionTypeAttribute="dra.example.com/type")
    assert kinds(run(obj)[1]) == {(REQUIRED, "spec.devices[1].attributes[dra.example.com/type]")}
    obj = slice_({"name": "plain"}, partitionTypeAttribute="dra.example.com/type")
    assert kinds(run(obj)[1]) == {(INVALID, "spec.partitionTypeAttribute")}


# ---------------------------------------------------------------------------
# Undecodable requests


def test_wrong_json_types_are_reported_before_validation() -> None:
    obj = slice_({"name": "d", "capacity": {"mem": {"value": "1 Gi"}}, "attributes": {"a": {"int": "1"}}})
    obj["spec"]["pool"]["resourceSliceCount"] = "1"
    obj["metadata"]["namespace"] = "ns"
    submitted = copy.deepcopy(obj)
    new, errs = run(obj)
    assert new == submitted  # nothing dropped or cleared from an undecodable request
    assert kinds(errs) == {
        ("FieldValueTypeInvalid", "spec.pool.resourceSliceCount"),
        ("FieldValueTypeInvalid", "spec.devices[0].capacity[mem].value"),
        ("FieldValueTypeInvalid", "spec.devices[0].attributes[a].int"),
    }


_JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _slots(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every (container path) position in a JSON document."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(prefix + (k,))
            out.extend(_slots(v, prefix + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append(prefix + (i,))
            out.extend(_slots(v, prefix + (i,)))
    return out


_RICH = slice_(
    {
        "name": "d",
        "allowMultipleAllocations": True,
        "attributes": {"a": {"int": 1}, "b": {"strings": ["x"]}},
        "capacity": {"c": {"value": "10", "requestPolicy": {"default": "1", "validRange": {"min": "1", "step": "1"}}}},
        "consumesCounters": [{"counterSet": "s", "counters": {"k": {"value": "1"}}, "compatibilityGroups": ["g"]}],
        "taints": [{"key": "k", "effect": "NoSchedule"}],
        "bindingConditions": ["a"],
        "bindingFailureConditions": ["b"],
        "nodeAllocatableResources": {"cpu": {"overhead": {"perPod": "1"}}},
    },
    nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}]},
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_malformed_slices_never_crash(data: st.DataObject) -> None:
    obj = copy.deepcopy(_RICH)
    slot = data.draw(st.sampled_from(_slots(obj)))
    parent = obj
    for part in slot[:-1]:
        parent = parent[part]
    parent[slot[-1]] = data.draw(_JUNK)
    old = copy.deepcopy(_RICH) if data.draw(st.booleans()) else None
    new, errs = run(obj, old)
    assert all(isinstance(e, FieldError) for e in errs)


def test_capacity_rewritten_in_other_units_counts_as_unchanged() -> None:
    old = slice_({"name": "d", "capacity": {"bad-name": {"value": "1Gi"}}})
    new = copy.deepcopy(old)
    new["spec"]["devices"][0]["capacity"]["bad-name"]["value"] = "1024Mi"
    assert run(new, old)[1] == []
    new["spec"]["devices"][0]["capacity"]["bad-name"]["value"] = "2Gi"
    assert kinds(run(new, old)[1]) == {(INVALID, "spec.devices[0].capacity")}


# ---------------------------------------------------------------------------
# Decoding through review(): a value of the wrong JSON type anywhere ends the request


def _rich_for_review() -> dict[str, Any]:
    """A ResourceSlice that uses most fields of its decode schema."""
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


#: values put in place of each member in turn: every JSON type, an out-of-range integer,
#: a string that is no quantity, a float, and null
_WRONG_VALUES: tuple[Any, ...] = (1, "x", True, [], {}, 2**70, "12zz", 1.5, None, ["x"], {"k": "v"})


def _mutations(value: Any, path: tuple = ()) -> Any:
    """(path, replacement) for every member and item of ``value``, with each wrong value."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        here = path + (key,)
        for wrong in _WRONG_VALUES:
            yield here, wrong
        yield from _mutations(child, here)


def _mutated(obj: dict[str, Any], path: tuple, wrong: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = copy.deepcopy(wrong)
    return out


def test_review_denies_exactly_the_undecodable_mutations_with_their_decode_errors() -> None:
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.validation.admission import review

    gates = FeatureGates.default()
    base = _rich_for_review()
    undecodable = 0
    for path, wrong in list(_mutations(base))[::2]:
        obj = _mutated(base, path, wrong)
        for op, old in (("CREATE", None), ("UPDATE", base)):
            decision = review(copy.deepcopy(obj), operation=op, old=copy.deepcopy(old), gates=gates)
            decode = decode_errors(obj, "ResourceSlice")
            if decode:
                undecodable += 1
                assert not decision.allowed and decision.errors == decode, (path, wrong, op)
                assert decision.object == obj and decision.patch == []  # left as submitted
            else:
                assert all(e.type != "FieldValueTypeInvalid" for e in decision.errors), (path, wrong, op)
    assert undecodable > 100  # the mutations do reach the type checks


def test_malformed_device_reports_its_type_error_once_through_review() -> None:
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.validation.admission import review

    obj = _rich_for_review()
    obj["spec"]["devices"][0]["attributes"]["gpu.example.com/i"]["int"] = 2**70
    decision = review(obj, gates=FeatureGates.default())
    assert not decision.allowed
    assert [e.field for e in decision.errors] == ["spec.devices[0].attributes[gpu.example.com/i].int"]


@pytest.mark.parametrize(
    ("member", "value", "field"),
    [
        ("taints", [{"key": "k", "effect": "Bogus"}], "spec.devices[0].taints[0].effect"),
        ("consumesCounters", [{"counterSet": "", "counters": {}}], "spec.devices[0].consumesCounters[0].counterSet"),
        ("bindingFailureConditions", ["x"], "spec.devices[0].bindingConditions"),
        ("nodeAllocatableResources", {"bogus": {}}, "spec.devices[0].nodeAllocatableResources[bogus]"),
    ],
)
def test_features_a_device_uses_are_validated(member: str, value: Any, field: str) -> None:
    obj = slice_({"name": "d0", member: value})
    gates = Gates("DRADeviceTaints", "DRAPartitionableDevices", "DRADeviceBindingConditions",
                  "DRAResourceClaimDeviceStatus", "DRANodeAllocatableResources")
    assert field in [e.field for e in run(obj, gates=gates)[1]]
