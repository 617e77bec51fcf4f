"""Device capacity of a ResourceSlice: request policies of multi-allocatable devices
(``validValues``, ``validRange`` with its steps) and the node-allocatable resources a device's
capacity maps to."""

from __future__ import annotations

from typing import Any

from kubectl_dra.gates import Gate, GateReader
from kubectl_dra.quantity import Quantity, QuantityError

from .field import FieldError, Path, duplicate, forbidden, invalid, required, too_many
from .gating import gate_enabled
from .values import parse_quantity, present

__all__ = [
    "plain_capacity_ok", "validate_multi_capacity", "validate_node_allocatable", "validate_single_capacity",
]


MAX_VALID_VALUES = 10
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
NODE_ALLOCATABLE_FIXED = ("cpu", "memory")


def validate_single_capacity(capacity: Any, path: Path) -> list[FieldError]:
    """Capacity of a device without allowMultipleAllocations: no requestPolicy."""
    capacity = capacity if isinstance(capacity, dict) else {}
    if present(capacity, "requestPolicy"):
        return [forbidden(path.child("requestPolicy"), "allowMultipleAllocations must be true")]
    return []


def plain_capacity_ok(capacity: Any) -> bool:
    """True when :func:`validate_single_capacity` finds nothing (no requestPolicy)."""
    return not isinstance(capacity, dict) or capacity.get("requestPolicy") is None


def validate_multi_capacity(capacity: Any, path: Path, gates: GateReader | None) -> list[FieldError]:
    """Capacity of a multi-allocatable device: its requestPolicy, if any."""
    capacity = capacity if isinstance(capacity, dict) else {}
    policy = capacity.get("requestPolicy")
    if policy is None:
        return []
    try:
        value = parse_quantity(capacity.get("value"))
    except QuantityError:
        return []  # reported by _quantity_errors before validation
    return _validate_request_policy(value, policy if isinstance(policy, dict) else {}, path.child("requestPolicy"), gates)


def _q(value: Any) -> Quantity | None:
    """An optional quantity field (None when absent)."""
    if value is None:
        return None
    return parse_quantity(value)


def _validate_request_policy(capacity: Quantity, policy: dict[str, Any], path: Path, gates: GateReader | None) -> list[FieldError]:
    """CapacityRequestPolicy: validValues xor validRange; default required with either."""
    try:
        default = _q(policy.get("default"))
        valid_values = [parse_quantity(v) for v in (policy.get("validValues") or [])]
        vr = policy.get("validRange")
        valid_range = None
        if vr is not None:
            vr = vr if isinstance(vr, dict) else {}
            valid_range = {k: _q(vr.get(k)) for k in ("min", "max", "step")}
    except QuantityError:
        return []  # reported by _quantity_errors before validation
    if valid_values and valid_range is not None:
        message = 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'
        return [forbidden(path, message)]
    fractional = gate_enabled(gates, Gate.FRACTIONAL_CAPACITY_RANGE)
    if valid_values:
        if default is None:
            return [required(path.child("default"), "required when validValues is defined")]
        return _validate_valid_values(default, capacity, valid_values, path.child("validValues"), fractional)
    if valid_range is not None:
        if default is None:
            return [required(path.child("default"), "required when validRange is defined")]
        return _validate_range(default, capacity, valid_range, path.child("validRange"), fractional)
    return []


def _validate_valid_values(
    default: Quantity, capacity: Quantity, values: list[Quantity], path: Path, fractional: bool
) -> list[FieldError]:
    """validValues: ascending, ≤10, each ≤ capacity, unique (integer or exact key), default among them."""
    errs: list[FieldError] = []
    for i in range(len(values) - 1):
        if values[i].cmp(values[i + 1]) > 0:
            errs.append(invalid(path.index(i + 1), str(values[i + 1]), "values must be sorted in ascending order"))
    found_default = False
    if len(values) > MAX_VALID_VALUES:
        errs.append(too_many(path, len(values), MAX_VALID_VALUES))
    else:
        seen: set[Any] = set()
        for i, option in enumerate(values):
            if option.cmp(capacity) > 0:
                errs.append(invalid(path.index(i), str(option), f"option is larger than capacity value: {capacity}"))
            if option.cmp(default) == 0:
                found_default = True
            key: Any = option.value if fractional else option.int_value()
            if key in seen:
                errs.append(duplicate(path.index(i), str(option)))
            seen.add(key)
    if not found_default:
        errs.append(invalid(path, str(default), "default value is not valid according to the requestPolicy"))
    return errs


def _is_fractional(q: Quantity) -> bool:
    """Whether a quantity has a fractional part (selects milli-unit arithmetic)."""
    return not q.is_integer()


def _milli_exact(q: Quantity) -> bool:
    """Whether ``q`` is exactly a whole number of milli-units within int64."""
    milli = q.value * 1000
    return milli.denominator == 1 and INT64_MIN <= milli.numerator <= INT64_MAX


def _validate_range(
    default: Quantity, capacity: Quantity, rng: dict[str, Quantity | None], path: Path, fractional_gate: bool
) -> list[FieldError]:
    """validRange: min required and ≤ capacity; default within [min, max]; max ≤ capacity; step
    positive, min+step ≤ capacity, default/max reachable from min in steps."""
    errs: list[FieldError] = []
    lo, hi, step = rng["min"], rng["max"], rng["step"]
    if lo is None:
        return [required(path.child("min"), "required when validRange is defined")]
    if lo.cmp(capacity) > 0:
        errs.append(invalid(path.child("min"), str(lo), f"min is larger than capacity value: {capacity}"))
    if default.cmp(lo) < 0:
        errs.append(invalid(path.child("default"), str(default), f"default is less than min: {lo}"))
    if hi is not None:
        if lo.cmp(hi) > 0:
            errs.append(invalid(path.child("max"), str(lo), f"min is larger than max: {hi}"))
        if hi.cmp(capacity) > 0:
            errs.append(invalid(path.child("max"), str(hi), f"max is larger than capacity value: {capacity}"))
        if default.cmp(hi) > 0:
            errs.append(invalid(path.child("default"), str(default), f"default is more than max: {hi}"))
    named = [("default", default), ("min", lo), ("max", hi), ("step", step)]
    use_milli = False
    if fractional_gate:
        use_milli = any(q is not None and _is_fractional(q) for q in (lo, hi, step)) or _is_fractional(default)
        if use_milli:
            unsafe = False
            for name, q in named:
                if q is not None and not _milli_exact(q):
                    errs.append(invalid(path.child(name), str(q), "value cannot be represented as a milli value"))
                    unsafe = True
            if unsafe:
                return errs
    if step is None:
        return errs
    if step.sign() <= 0:
        errs.append(invalid(path.child("step"), str(step), "must be greater than zero"))
        return errs
    added = lo + step
    if added.cmp(capacity) > 0:
        errs.append(invalid(path.child("step"), str(step), f"one step {added} is larger than capacity value: {capacity}"))
    if not use_milli:
        unsafe = False
        for name, q in named:
            if q is None:
                continue
            if q.sign() < 0:
                errs.append(invalid(path.child(name), str(q), "must be greater than or equal to 0"))
                unsafe = True
            elif q.value > INT64_MAX:
                errs.append(invalid(path.child(name), str(q), f"must not be larger than {INT64_MAX}"))
                unsafe = True
        if unsafe:
            return errs
    errs.extend(_validate_step(default, lo, step, use_milli, path.child("step")))
    if hi is not None:
        errs.extend(_validate_step(hi, lo, step, use_milli, path.child("step")))
    return errs


def _validate_step(value: Quantity, lo: Quantity, step: Quantity, use_milli: bool, path: Path) -> list[FieldError]:
    """``value - min`` must be a multiple of ``step`` (milli units or values rounded up to integers)."""
    if use_milli:
        s, m, v = step.milli_value(), lo.milli_value(), value.milli_value()
    else:
        s, m, v = step.int_value(), lo.int_value(), value.int_value()
    if s != 0 and (v - m) % s != 0:
        return [invalid(path, str(value), f"value is not a multiple of a given step ({step}) from ({lo})")]
    return []


def _is_node_allocatable_resource(name: str) -> bool:
    """cpu, memory and hugepages-<size> are node-allocatable resources that devices may map."""
    return name in NODE_ALLOCATABLE_FIXED or name.startswith("hugepages-")


def validate_node_allocatable(mappings: Any, capacity: dict[str, Any], path: Path) -> list[FieldError]:
    """nodeAllocatableResources: resource names, mapping/overhead presence and values."""
    errs: list[FieldError] = []
    if not isinstance(mappings, dict):
        return errs
    for name, entry in mappings.items():
        kpath = path.key(str(name))
        entry = entry if isinstance(entry, dict) else {}
        if not _is_node_allocatable_resource(str(name)):
            errs.append(invalid(kpath, name, "must be a node allocatable resource name"))
        mapping, overhead = entry.get("mapping"), entry.get("overhead")
        if mapping is None and overhead is None:
            errs.append(required(kpath, "at least one of mapping or overhead must be set"))
        if isinstance(mapping, dict):
            errs.extend(_validate_allocatable_mapping(mapping, capacity, kpath.child("mapping")))
        if isinstance(overhead, dict):
            errs.extend(_validate_allocatable_overhead(overhead, kpath.child("overhead")))
    return errs


def _sign_of(value: Any) -> int | None:
    """Sign of a quantity field (None when it does not parse)."""
    try:
        return parse_quantity(value).sign()
    except QuantityError:
        return None


def _validate_allocatable_mapping(mapping: dict[str, Any], capacity: dict[str, Any], path: Path) -> list[FieldError]:
    """A node-allocatable mapping: capacityKey and capacityMultiplier go together; multipliers positive."""
    errs: list[FieldError] = []
    key = mapping.get("capacityKey")
    mult = mapping.get("capacityMultiplier")
    if key is not None:
        if key == "":
            errs.append(invalid(path.child("capacityKey"), "", "capacityKey must not be an empty string"))
        elif key not in capacity:
            errs.append(FieldError("FieldValueNotFound", str(path.child("capacityKey")), key, ""))
        if mult is None:
            errs.append(required(path.child("capacityMultiplier"), "capacityMultiplier is required when capacityKey is set"))
        elif (_sign_of(mult) or 0) <= 0:
            errs.append(invalid(path.child("capacityMultiplier"), str(mult), "must be positive"))
    device_mult = mapping.get("deviceMultiplier")
    if device_mult is not None and (_sign_of(device_mult) or 0) <= 0:
        errs.append(invalid(path.child("deviceMultiplier"), str(device_mult), "must be positive"))
    if mult is not None and key is None:
        errs.append(required(path.child("capacityKey"), "capacityKey is required when capacityMultiplier is set"))
    return errs


def _validate_allocatable_overhead(overhead: dict[str, Any], path: Path) -> list[FieldError]:
    """A node-allocatable overhead: perPod or perContainer, neither negative."""
    per_pod, per_container = overhead.get("perPod"), overhead.get("perContainer")
    if per_pod is None and per_container is None:
        return [invalid(path, "", "at least one of perPod or perContainer must be set")]
    errs: list[FieldError] = []
    for name, value in (("perPod", per_pod), ("perContainer", per_container)):
        if value is not None and (_sign_of(value) or 0) < 0:
            errs.append(invalid(path.child(name), str(value), "must be non-negative"))
    return errs
