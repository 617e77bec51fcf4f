"""ResourceSlice (``resource.k8s.io/v1``): the API server's create/update strategy and validation.

``prepare_resource_slice`` is the registry strategy (PrepareForCreate/PrepareForUpdate plus the
generic create/update path): it clears the namespace of this cluster-scoped kind and drops the
fields of disabled feature gates unless the stored object already uses them.
``validate_resource_slice`` returns the field errors of ``ValidateResourceSlice`` (create) or
``ValidateResourceSliceUpdate`` (update). ``metadata.generation`` is left alone: the API server
owns it and the conformance objects do not show it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable

from kubectl_dra.gates import Gate, GateReader

from .binding import validate_binding_conditions, validate_skip_node_operations
from .deviceattributes import (
    LIST_ATTRIBUTE_FIELD_SET,
    MAX_ATTRIBUTE_VALUES_PER_DEVICE,
    count_attribute_values,
    scalar_attribute_ok,
    scalar_attributes_ok,
    validate_device_attribute,
)
from .devicecapacity import (
    plain_capacity_ok,
    validate_multi_capacity,
    validate_node_allocatable,
    validate_single_capacity,
)
from .devicecounters import (
    MAX_COUNTER_CONSUMPTIONS_PER_DEVICE,
    MAX_COUNTER_SETS,
    validate_counter_consumption,
    validate_counter_set,
)
from .field import FieldError, Path, duplicate, immutable, invalid, required, too_many
from ..nameformats import dns1123_label_ok
from .gating import gate_enabled
from .lists import validate_list, validate_map
from .names import (
    is_valid_qualified_name,
    validate_device_name,
    validate_driver_name,
    validate_fully_qualified_name,
    validate_node_name,
    validate_pool_name,
    validate_qualified_name,
)
from .nodeselector import validate_node_selector
from .objectmeta import validate_object_meta, validate_object_meta_update
from .taints import validate_device_taint
from .values import present, semantic_equal

__all__ = [
    "prepare_resource_slice",
    "validate_resource_slice",
    "warnings_resource_slice",
]

# k8s.io/api resource/v1 limits
MAX_DEVICES = 128
MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
ATTRIBUTE_KEY_TRUNCATE = 63 + 1 + 32
MAX_TAINTS_PER_DEVICE = 16
NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes")

# ---------------------------------------------------------------------------
# Strategy: drop the fields of disabled gates


def _spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    """The spec dict of an object (empty when missing)."""
    if not obj:
        return {}
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _devices(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The device dicts of a slice spec (non-dict entries skipped)."""
    return [d for d in (spec.get("devices") or []) if isinstance(d, dict)]


def _taints_in_use(spec: dict[str, Any]) -> bool:
    """Any device with a non-empty taints list (DRADeviceTaints in use)."""
    return any(d.get("taints") for d in _devices(spec))


def _partitionable_in_use(spec: dict[str, Any]) -> bool:
    """Counter sets, per-device node selection (even false) or partitionable device fields present."""
    if spec.get("sharedCounters") or present(spec, "perDeviceNodeSelection"):
        return True
    return any(d.get("consumesCounters") or any(present(d, f) for f in NODE_FIELDS) for d in _devices(spec))


def _binding_in_use(spec: dict[str, Any]) -> bool:
    """Any device with binding conditions, binding failure conditions or bindsToNode."""
    return any(
        d.get("bindingConditions") or d.get("bindingFailureConditions") or present(d, "bindsToNode")
        for d in _devices(spec)
    )


def _consumable_in_use(spec: dict[str, Any]) -> bool:
    """Any device with allowMultipleAllocations (even false) or a capacity request policy."""
    for d in _devices(spec):
        if present(d, "allowMultipleAllocations"):
            return True
        for cap in (d.get("capacity") or {}).values():
            if isinstance(cap, dict) and present(cap, "requestPolicy"):
                return True
    return False


def _node_allocatable_in_use(spec: dict[str, Any]) -> bool:
    """Any device with a non-empty nodeAllocatableResources map."""
    return any(d.get("nodeAllocatableResources") for d in _devices(spec))


def _list_attributes_in_use(spec: dict[str, Any]) -> bool:
    """Any attribute with a list value present (even empty)."""
    for d in _devices(spec):
        for attr in (d.get("attributes") or {}).values():
            if isinstance(attr, dict):
                for f, value in attr.items():  # usually one member: cheaper than four lookups
                    if value is not None and f in LIST_ATTRIBUTE_FIELD_SET:
                        return True
    return False


def _compat_groups_in_use(spec: dict[str, Any]) -> bool:
    """Any counter consumption with a non-empty compatibilityGroups list."""
    for d in _devices(spec):
        for cc in d.get("consumesCounters") or []:
            if isinstance(cc, dict) and cc.get("compatibilityGroups"):
                return True
    return False


@dataclass(frozen=True)
class _Dropped:
    """What the strategy removes from a slice: fields of the spec, of each device, and of each
    object in a member of a device (``nested``: member name -> the fields each of its objects loses)."""

    spec_fields: frozenset[str]
    device_fields: frozenset[str]
    nested: tuple[tuple[str, frozenset[str]], ...]


def _dropped_fields(old_spec: dict[str, Any] | None, gates: GateReader | None) -> _Dropped:
    """The fields of disabled gates, except those of features the stored spec already uses."""
    old = old_spec if old_spec is not None else {}
    spec_fields: set[str] = set()
    device_fields: set[str] = set()
    nested: list[tuple[str, frozenset[str]]] = []
    if not gate_enabled(gates, Gate.DEVICE_TAINTS) and not _taints_in_use(old):
        device_fields.add("taints")
    if not gate_enabled(gates, Gate.PARTITIONABLE_DEVICES) and not _partitionable_in_use(old):
        spec_fields.update(("sharedCounters", "perDeviceNodeSelection"))
        device_fields.update(("consumesCounters", *NODE_FIELDS))
    binding_on = gate_enabled(gates, Gate.DEVICE_BINDING_CONDITIONS) and gate_enabled(gates, Gate.RESOURCE_CLAIM_DEVICE_STATUS)
    if not binding_on and not _binding_in_use(old):
        device_fields.update(("bindingConditions", "bindingFailureConditions", "bindsToNode"))
    if not gate_enabled(gates, Gate.CONSUMABLE_CAPACITY) and not _consumable_in_use(old):
        device_fields.add("allowMultipleAllocations")
        nested.append(("capacity", frozenset({"requestPolicy"})))
    if not gate_enabled(gates, Gate.NODE_ALLOCATABLE_RESOURCES) and not _node_allocatable_in_use(old):
        device_fields.add("nodeAllocatableResources")
    if not gate_enabled(gates, Gate.LIST_TYPE_ATTRIBUTES) and not _list_attributes_in_use(old):
        nested.append(("attributes", LIST_ATTRIBUTE_FIELD_SET))
    if not gate_enabled(gates, Gate.DEVICE_COMPATIBILITY_GROUPS) and not _compat_groups_in_use(old):
        nested.append(("consumesCounters", frozenset({"compatibilityGroups"})))
    if not gate_enabled(gates, Gate.OPTIONAL_NODE_OPERATIONS) and not old.get("skipNodeOperations"):
        spec_fields.add("skipNodeOperations")
    pool_status_on = gate_enabled(gates, Gate.RESOURCE_POOL_STATUS) or gate_enabled(gates, Gate.PARTITIONABLE_DEVICES_TYPE)
    if not pool_status_on and not present(old, "partitionTypeAttribute"):
        spec_fields.add("partitionTypeAttribute")
    return _Dropped(frozenset(spec_fields), frozenset(device_fields), tuple(nested))


def _without(d: dict[str, Any], fields: frozenset[str]) -> dict[str, Any]:
    """``d`` itself when it has none of ``fields``, else a shallow copy without them."""
    if fields.isdisjoint(d):
        return d
    return {k: v for k, v in d.items() if k not in fields}


def _each_without(items: Any, fields: frozenset[str]) -> Any:
    """The list or map ``items`` with ``fields`` removed from each object in it: the same
    container when no object has any of them, else a shallow copy holding the changed objects."""
    values = items.values() if isinstance(items, dict) else items if isinstance(items, list) else ()
    try:
        if all(map(fields.isdisjoint, values)):  # the common case: nothing to remove, nothing built
            return items
    except TypeError:  # a member that is no object: look at the objects alone
        if all(fields.isdisjoint(value) for value in values if isinstance(value, dict)):
            return items
    if isinstance(items, dict):
        return {k: _without(v, fields) if isinstance(v, dict) else v for k, v in items.items()}
    return [_without(v, fields) if isinstance(v, dict) else v for v in items]


def _device_without(device: dict[str, Any], dropped: _Dropped) -> dict[str, Any]:
    """One device without the dropped fields (``device`` itself when none is there)."""
    out = _without(device, dropped.device_fields)
    for name, fields in dropped.nested:
        items = out.get(name)
        if items:
            kept = _each_without(items, fields)
            if kept is not items:
                out = {**out, name: kept}
    return out


def _spec_without(spec: dict[str, Any], dropped: _Dropped) -> dict[str, Any]:
    """The spec without the dropped fields: ``spec`` itself when none is there, else a copy
    of the parts that change, sharing the rest (the submitted object is never written to)."""
    out = _without(spec, dropped.spec_fields)
    devices = out.get("devices")
    if isinstance(devices, list) and not _nothing_to_drop([d for d in devices if isinstance(d, dict)], dropped):
        new_devices = [_device_without(d, dropped) if isinstance(d, dict) else d for d in devices]
        if any(new is not old for new, old in zip(new_devices, devices)):
            out = {**out, "devices": new_devices}
    return out


def _nothing_to_drop(devices: list[dict[str, Any]], dropped: _Dropped) -> bool:
    """True when no device has a dropped field, nor an object in its members a dropped nested
    field: the common case, each test run over the whole slice at once. False: look per device."""
    if not all(map(dropped.device_fields.isdisjoint, devices)):
        return False
    for name, fields in dropped.nested:
        members = [m for d in devices if (m := d.get(name))]
        objects = chain.from_iterable(m.values() if isinstance(m, dict) else m for m in members)
        try:
            if not all(map(fields.isdisjoint, objects)):
                return False
        except TypeError:  # a member or an entry that is no container: the per-device walk sorts it out
            return False
    return True


def prepare_resource_slice(
    obj: dict[str, Any], old: dict[str, Any] | None, gates: GateReader | None
) -> tuple[dict[str, Any], list[str]]:
    """Apply the create (``old`` None) or update strategy: clear the namespace (cluster-scoped
    kind) and drop fields of disabled gates unless ``old`` uses them. Returns ``(prepared,
    warnings)``: ``obj`` is not written to; ``prepared`` is ``obj`` itself when nothing changes,
    else a copy of the changed parts that shares the rest with ``obj``.
    Both objects fit the ResourceSlice decode schema (:mod:`.schema`)."""
    prepared = obj
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "namespace" in meta:
        prepared = {**prepared, "metadata": {k: v for k, v in meta.items() if k != "namespace"}}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        new_spec = _spec_without(spec, _dropped_fields(_spec(old) if old is not None else None, gates))
        if new_spec is not spec:
            prepared = {**prepared, "spec": new_spec}
    return prepared, warnings_resource_slice(obj, old)


def warnings_resource_slice(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    """Warnings the API server returns with an accepted slice (upper-case driver name)."""
    driver = _spec(obj).get("driver") or ""
    if isinstance(driver, str) and driver != driver.lower():
        quoted = json.dumps(driver, ensure_ascii=False)  # Go's %q
        return [f"spec.driver: driver names should be lowercase; {quoted} contains uppercase characters"]
    return []

# ---------------------------------------------------------------------------
# Validation


def validate_resource_slice(
    obj: dict[str, Any], old: dict[str, Any] | None, gates: GateReader | None
) -> list[FieldError]:
    """Field errors for creating (``old`` None) or updating a ResourceSlice, after preparation;
    both objects fit the ResourceSlice decode schema (:mod:`.schema`)."""
    meta_path = Path.root("metadata")
    if old is None:
        errs = validate_object_meta(obj.get("metadata"), False, meta_path)
    else:
        errs = validate_object_meta_update(obj.get("metadata"), old.get("metadata"), meta_path)
    old_spec = _spec(old) if old is not None else None
    errs.extend(_validate_spec(_spec(obj), old_spec, Path.root("spec"), gates))
    return errs


def _validate_spec(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: Path, gates: GateReader | None
) -> list[FieldError]:
    """ResourceSliceSpec: driver, pool, node selection, devices, counter sets, skipNodeOperations."""
    errs = validate_driver_name(spec.get("driver"), path.child("driver"))
    errs.extend(_validate_pool(spec.get("pool") or {}, path.child("pool")))
    if old_spec is not None:
        old_pool = old_spec.get("pool") or {}
        pool = spec.get("pool") or {}
        if (pool.get("name") or "") != (old_pool.get("name") or ""):
            errs.append(immutable(path.child("pool", "name"), pool.get("name") or ""))
        if (spec.get("driver") or "") != (old_spec.get("driver") or ""):
            errs.append(immutable(path.child("driver"), spec.get("driver") or ""))
        if spec.get("nodeName") != old_spec.get("nodeName"):
            errs.append(immutable(path.child("nodeName"), spec.get("nodeName")))
    errs.extend(_validate_node_selection(spec, path))

    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        errs.append(invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))

    errs.extend(_validate_devices(spec, old_spec, path.child("devices"), gates))
    errs.extend(
        validate_list(
            spec.get("sharedCounters") or [],
            path.child("sharedCounters"),
            MAX_COUNTER_SETS,
            validate_counter_set,
            key=lambda s: (s or {}).get("name") or "",
        )
    )
    if spec.get("partitionTypeAttribute") is not None:
        errs.extend(_validate_partition_type_attribute(spec, path))
    if spec.get("skipNodeOperations") is not None:
        errs.extend(validate_skip_node_operations(spec.get("skipNodeOperations"), path.child("skipNodeOperations")))
    return errs


def _validate_devices(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: Path, gates: GateReader | None
) -> list[FieldError]:
    """The device list as upstream's ``validateSlice``: TooMany short-circuits; each device
    (compared with the stored device of the same name), then a Duplicate for a repeated name.
    A device :func:`_plain_device_ok` accepts has no errors: no path is built for it."""
    devices = spec.get("devices") or []
    if len(devices) > MAX_DEVICES_WITH_ADVANCED_FEATURES:  # (up to that many, either limit holds)
        max_devices = MAX_DEVICES
        if _taints_in_use(spec) or _has_consumes_counters(spec) or _list_attributes_in_use(spec):
            max_devices = MAX_DEVICES_WITH_ADVANCED_FEATURES
        if len(devices) > max_devices:
            return [too_many(path, len(devices), max_devices)]
    per_device = spec.get("perDeviceNodeSelection")
    old_devices: dict[str, dict[str, Any]] = {}
    for old_device in _devices(old_spec) if old_spec is not None else []:
        old_devices.setdefault(old_device.get("name") or "", old_device)  # the first one, as upstream
    errs: list[FieldError] = []
    seen: set[Any] = set()
    valid_keys: set[str] = set()
    for i, device in enumerate(devices):
        if per_device is True or not _plain_device_ok(device, valid_keys):
            device = device if isinstance(device, dict) else {}
            errs.extend(_validate_device(device, old_devices.get(device.get("name") or ""), path.index(i), per_device, gates))
        name = device.get("name") or ""
        key = json.dumps(name, sort_keys=True) if isinstance(name, (dict, list)) else name
        if key in seen:
            errs.append(duplicate(path.index(i), name))
        seen.add(key)
    return errs


def _has_consumes_counters(spec: dict[str, Any]) -> bool:
    """Any device consumes counters (lowers the device limit, enables partitionTypeAttribute)."""
    return any(d.get("consumesCounters") for d in _devices(spec))


def _validate_pool(pool: dict[str, Any], path: Path) -> list[FieldError]:
    """ResourcePool: name rules, resourceSliceCount > 0, generation ≥ 0."""
    errs = validate_pool_name(pool.get("name"), path.child("name"))
    count = pool.get("resourceSliceCount") or 0
    if not isinstance(count, int) or count <= 0:
        errs.append(invalid(path.child("resourceSliceCount"), count, "must be greater than zero"))
    generation = pool.get("generation") or 0
    if isinstance(generation, int) and generation < 0:
        errs.append(invalid(path.child("generation"), generation, "must be greater than or equal to zero"))
    return errs


_SLICE_SELECTION_MSG = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"


def _validate_node_selection(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """Exactly one of nodeName, nodeSelector, allNodes: true, perDeviceNodeSelection: true."""
    errs: list[FieldError] = []
    chosen: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name != "":
            chosen.append("`nodeName`")
            errs.extend(validate_node_name(str(node_name), path.child("nodeName")))
        else:
            errs.append(invalid(path.child("nodeName"), node_name, "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if selector is not None:
        chosen.append("`nodeSelector`")
        errs.extend(validate_node_selector(selector, path.child("nodeSelector")))
        terms = (selector or {}).get("nodeSelectorTerms") or []
        if len(terms) != 1:
            errs.append(
                invalid(path.child("nodeSelector", "nodeSelectorTerms"), terms, "must have exactly one node selector term")
            )
    for fld in ("allNodes", "perDeviceNodeSelection"):
        value = spec.get(fld)
        if value is None:
            continue
        if value is True:
            chosen.append(f"`{fld}`")
        else:
            errs.append(invalid(path.child(fld), value, "must be either unset or set to true"))
    if not chosen:
        errs.append(required(path, _SLICE_SELECTION_MSG))
    elif len(chosen) > 1:
        errs.append(invalid(path, "{" + ", ".join(chosen) + "}", _SLICE_SELECTION_MSG + ", but multiple fields are set"))
    return errs

# ---------------------------------------------------------------------------
# Devices

_DEVICE_SELECTION_MSG = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
    "is set to true in the ResourceSlice spec"
)


def _validate_device(
    device: dict[str, Any], old_device: dict[str, Any] | None, path: Path, per_device: Any, gates: GateReader | None
) -> list[FieldError]:
    """One Device: name, attribute/capacity limits, attributes, capacity, taints, counters,
    per-device node selection, binding conditions, node-allocatable resources."""
    errs = validate_device_name(device.get("name"), path.child("name"))
    attributes = device.get("attributes") or {}
    capacity = device.get("capacity") or {}
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        errs.append(
            invalid(
                path,
                total,
                f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}",
            )
        )
    values = count_attribute_values(attributes)
    if values > MAX_ATTRIBUTE_VALUES_PER_DEVICE:
        errs.append(
            invalid(path, values, f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES_PER_DEVICE}")
        )
    errs.extend(
        validate_map(
            attributes, None, ATTRIBUTE_KEY_TRUNCATE, _validate_device_key, validate_device_attribute,
            path.child("attributes"), scalar_attribute_ok,
        )
    )
    if old_device is None or not semantic_equal(old_device.get("capacity"), capacity, quantities=True):
        if device.get("allowMultipleAllocations") is True:
            check_capacity: Callable[[Any, Path], list[FieldError]] = lambda c, p: validate_multi_capacity(c, p, gates)  # noqa: E731  # one of two checkers picked here
            capacity_ok = None
        else:
            check_capacity, capacity_ok = validate_single_capacity, plain_capacity_ok
        errs.extend(
            validate_map(
                capacity, None, ATTRIBUTE_KEY_TRUNCATE, _validate_device_key, check_capacity, path.child("capacity"),
                capacity_ok,
            )
        )
    # features the device does not use (empty or null fields) have nothing to report: their
    # checks, and the paths built for them, are skipped
    taints = device.get("taints") or []
    if taints and (old_device is None or not semantic_equal(old_device.get("taints"), taints)):
        errs.extend(validate_list(taints, path.child("taints"), MAX_TAINTS_PER_DEVICE, validate_device_taint))
    consumes = device.get("consumesCounters") or []
    if consumes:
        errs.extend(
            validate_list(
                consumes,
                path.child("consumesCounters"),
                MAX_COUNTER_CONSUMPTIONS_PER_DEVICE,
                validate_counter_consumption,
                key=lambda c: (c or {}).get("counterSet") or "",
            )
        )
    errs.extend(_validate_device_node_selection(device, path, per_device))
    if device.get("bindingConditions") is not None or device.get("bindingFailureConditions") is not None:
        errs.extend(validate_binding_conditions(device, path))
    allocatable = device.get("nodeAllocatableResources") or {}
    if allocatable:
        errs.extend(validate_node_allocatable(allocatable, capacity, path.child("nodeAllocatableResources")))
    return errs


_PLAIN_DEVICE_FIELDS = frozenset({"name", "attributes", "capacity"})


def _plain_device_ok(device: Any, valid_keys: set[str]) -> bool:
    """True for a device that sets no field beyond name, attributes and capacity, and passes
    every check of :func:`_validate_device` (valid name, at most 32 attributes and capacities,
    valid keys, one valid scalar per attribute, no request policy): it has no errors to report.
    False means only that the full checks must run (without perDeviceNodeSelection: true).
    ``valid_keys`` holds the attribute and capacity keys found valid so far in this call
    (the devices of a slice mostly share theirs)."""
    if type(device) is not dict or not _PLAIN_DEVICE_FIELDS.issuperset(device):
        return False
    name = device.get("name")
    attributes = device.get("attributes") or {}
    capacity = device.get("capacity") or {}
    if type(name) is not str or type(attributes) is not dict or type(capacity) is not dict:
        return False
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE or not dns1123_label_ok(name):
        return False  # (scalar attributes count one value each: at most 32 < 48)
    if not (_keys_ok(attributes, valid_keys) and _keys_ok(capacity, valid_keys)):
        return False
    if not scalar_attributes_ok(attributes.values()):
        return False
    for cap in capacity.values():
        if type(cap) is dict and cap.get("requestPolicy") is not None:
            return False
    return True


def _keys_ok(mapping: dict[Any, Any], valid_keys: set[str]) -> bool:
    """Whether every key of ``mapping`` is a valid qualified name; the new valid ones join ``valid_keys``."""
    if valid_keys.issuperset(mapping):
        return True
    for key in mapping:
        if type(key) is not str or not is_valid_qualified_name(key):
            return False
        valid_keys.add(key)
    return True


def _validate_device_key(name: str, path: Path) -> list[FieldError]:
    """An attribute or capacity key: a DRA qualified name (errors at the map path)."""
    if is_valid_qualified_name(name):
        return []
    return validate_qualified_name(name, path)


def _validate_device_node_selection(device: dict[str, Any], path: Path, per_device: Any) -> list[FieldError]:
    """With perDeviceNodeSelection: exactly one of nodeName/nodeSelector/allNodes; else none of them."""
    errs: list[FieldError] = []
    if per_device is True:
        chosen: list[str] = []
        node_name = device.get("nodeName")
        if node_name is not None:
            if node_name != "":
                chosen.append("`nodeName`")
                errs.extend(validate_node_name(str(node_name), path.child("nodeName")))
            else:
                errs.append(invalid(path.child("nodeName"), node_name, "must not be empty"))
        if device.get("nodeSelector") is not None:
            chosen.append("`nodeSelector`")
            errs.extend(validate_node_selector(device.get("nodeSelector"), path.child("nodeSelector")))
        all_nodes = device.get("allNodes")
        if all_nodes is not None:
            if all_nodes is True:
                chosen.append("`allNodes`")
            else:
                errs.append(invalid(path.child("allNodes"), all_nodes, "must be either unset or set to true"))
        if not chosen:
            errs.append(required(path, _DEVICE_SELECTION_MSG))
        elif len(chosen) > 1:
            errs.append(invalid(path, "{" + ", ".join(chosen) + "}", _DEVICE_SELECTION_MSG))
    elif any(present(device, f) for f in NODE_FIELDS):
        errs.append(
            invalid(
                path,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to "
                "true in the ResourceSlice spec",
            )
        )
    return errs


def _validate_partition_type_attribute(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """partitionTypeAttribute: a fully qualified name, only with counter-consuming devices, each of
    which must carry it as a string attribute."""
    name = str(spec.get("partitionTypeAttribute") or "")
    ppath = path.child("partitionTypeAttribute")
    if not _has_consumes_counters(spec):
        return [invalid(ppath, name, "may only be set on a slice which declares devices that consume counters")]
    name_errs = validate_fully_qualified_name(name, ppath)
    if name_errs:
        return name_errs
    driver = str(spec.get("driver") or "")
    bare = name[len(driver) + 1 :] if name.startswith(driver + "/") else ""
    errs: list[FieldError] = []
    for i, device in enumerate(spec.get("devices") or []):
        device = device if isinstance(device, dict) else {}
        if not device.get("consumesCounters"):
            continue
        attrs = device.get("attributes") or {}
        apath = path.child("devices").index(i).child("attributes").key(name)
        attr = attrs.get(name) if name in attrs else (attrs.get(bare) if bare and bare in attrs else None)
        if attr is None:
            errs.append(
                required(
                    apath,
                    "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set",
                )
            )
        elif not isinstance(attr, dict) or attr.get("string") is None:
            message = "must be a string value because `partitionTypeAttribute` names this attribute"
            errs.append(invalid(apath, attr, message))
    return errs
