"""Consumable capacity (DRAConsumableCapacity): how much of a device a request consumes.

A request's capacity requirements are rounded by the device's request policy (default
when nothing is asked, a valid range with min/max/step, or a list of valid values) and
must fit beside what existing shares and the current search already consume.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from ..errors import AllocationError
from ..model.devices import Capacity, DeviceView
from ..quantity import Quantity

ZERO = Quantity.from_int(0)


def _q(value: Any) -> Quantity | None:
    return None if value is None else Quantity.from_json(value)


def resolve_requests(requests: Mapping[str, Quantity] | None, device: DeviceView) -> dict[str, Quantity] | None:
    """Map request names onto the device's fully-qualified capacity names.

    A name without a domain means the device driver's own capacity. Returns None when
    the device lacks a requested capacity (the device does not fit, others may).
    """
    if not requests:
        return {}
    driver = device.slice.driver
    raw = device.raw.get("capacity") or {}
    out: dict[str, Quantity] = {}
    for name, value in requests.items():
        if name in raw:
            key = name if "/" in name else f"{driver}/{name}"
        else:
            domain, sep, ident = name.partition("/")
            if sep:
                if domain != driver or ident not in raw:
                    return None
                key = name
            elif f"{driver}/{name}" in raw:
                key = f"{driver}/{name}"
            else:
                return None
        if key in out:
            other = key if name != key else key.partition("/")[2]
            raise AllocationError(f"capacity {key.partition('/')[2]!r} requested both as {name!r} and as {other!r}")
        out[key] = value
    return out


#: the largest value of upstream's int64 range arithmetic
_MAX_INT64 = 2**63 - 1


def _unrepresentable(requested: Quantity, why: str) -> AllocationError:
    """Upstream errCapacityRequestNotRepresentable: the allocation aborts, it does not skip the device."""
    return AllocationError(f"capacity request {requested} cannot be represented in the device's range arithmetic: {why}")


def _safe_milli(q: Quantity) -> int | None:
    """Upstream safeMilliValue: ``q`` in thousandths when that is exact and fits int64, else None."""
    milli = q.milli_value()
    if abs(milli) > _MAX_INT64 or Quantity.from_milli(milli) != q:
        return None
    return milli


def _use_milli(lo: Quantity | None, hi: Quantity | None, step: Quantity | None, fractional: bool) -> bool:
    """Upstream useMilli: milli-unit arithmetic for a valid range only with DRAFractionalCapacityRange
    on, every bound exact in thousandths and a step of at least 1m; otherwise integers (``Value()``)."""
    if not fractional:
        return False
    for q in (lo, hi, step):
        if q is not None and _safe_milli(q) is None:
            return False
    return step is None or (_safe_milli(step) or 0) >= 1


def _round_up_range(requested: Quantity, lo: Quantity, hi: Quantity | None, step: Quantity | None,
                    fractional: bool) -> Quantity:
    """Upstream roundUpRange: at least ``min``, then up to the next step from ``min`` (in
    thousandths or in integers, see :func:`_use_milli`)."""
    if requested < lo:
        return lo
    if step is None or step.value <= 0:
        return requested
    if _use_milli(lo, hi, step, fractional):
        req, unit, base = _safe_milli(requested), step.milli_value(), lo.milli_value()
        if req is None:
            raise _unrepresentable(requested, "not a representable milli value")
        n = -((base - req) // unit)  # ceil((req - min) / step)
        if n > (_MAX_INT64 - base) // unit:
            raise _unrepresentable(requested, "rounding it up to the next step passes the milli-value range")
        milli = base + unit * n
        return Quantity.from_int(milli // 1000, step.format) if milli % 1000 == 0 else Quantity.from_milli(milli, step.format)
    if requested.value > _MAX_INT64:
        raise _unrepresentable(requested, "it exceeds MaxInt64")
    req, unit, base = requested.int_value(), step.int_value(), lo.int_value()
    n = -((base - req) // unit)
    if base >= 0 and n > (_MAX_INT64 - base) // unit:
        raise _unrepresentable(requested, "rounding it up to the next step passes MaxInt64")
    return Quantity.from_int(base + unit * n, step.format)


def consumed_amount(requested: Quantity | None, cap: Capacity, *, fractional: bool) -> Quantity:
    """What a request consumes of one capacity after the policy's rounding (upstream
    calculateConsumedCapacity; ``fractional``: DRAFractionalCapacityRange is on)."""
    policy = cap.policy
    if requested is None:
        default = _q((policy or {}).get("default"))
        return default if default is not None else cap.value
    if not policy:
        return requested
    vr = policy.get("validRange")
    if vr is not None and vr.get("min") is not None:
        lo = _q(vr["min"])
        assert lo is not None
        return _round_up_range(requested, lo, _q(vr.get("max")), _q(vr.get("step")), fractional)
    valid = policy.get("validValues")
    if valid is not None:
        for v in valid:
            q = _q(v)
            if q is not None and requested <= q:
                return q
        return requested
    return requested


def violates_policy(amount: Quantity, policy: Mapping[str, Any] | None, *, fractional: bool) -> bool:
    """Whether a (rounded) amount is outside what the request policy allows (upstream
    violatesPolicy; a valid range's step is checked in thousandths or integers as it is rounded)."""
    if not policy:
        return False
    default = _q(policy.get("default"))
    if default is not None and amount == default:
        return False
    vr = policy.get("validRange")
    if vr is not None:
        hi = _q(vr.get("max"))
        if hi is not None and amount > hi:
            return True
        step = _q(vr.get("step"))
        if step is not None and step.value > 0:
            lo = _q(vr.get("min")) or ZERO
            if _use_milli(lo, hi, step, fractional):
                req = _safe_milli(amount)
                return req is None or (req - lo.milli_value()) % step.milli_value() != 0
            return (amount.int_value() - lo.int_value()) % step.int_value() != 0
        return False
    valid = policy.get("validValues")
    if valid:
        return all(amount != _q(v) for v in valid)
    return False


@dataclass
class CapacityShortfall:
    """Why a device's capacity cannot serve a request (for explain)."""

    capacity: str
    needed: Quantity
    left: Quantity
    requested: Quantity | None
    missing: bool = False
    policy: bool = False


def nothing_to_check(requests: Mapping[str, Quantity] | None, device: DeviceView,
                     consumed: Mapping[str, Quantity] | None, allocating: Mapping[str, Quantity] | None) -> bool:
    """Nothing asked, nothing shared yet, no rounding: the request takes the device's totals,
    which fit (the device's capacity need not even be read)."""
    return not requests and not consumed and not allocating and not device.has_policies


def check_capacity(requests: Mapping[str, Quantity] | None, device: DeviceView,
                   consumed: Mapping[str, Quantity] | None,
                   allocating: Mapping[str, Quantity] | None, *,
                   fractional: bool) -> tuple[dict[str, Quantity] | None, CapacityShortfall | None]:
    """The amounts this request would consume per capacity, or a shortfall (upstream
    CmpRequestOverCapacity).

    ``consumed`` is what existing shares use, ``allocating`` what the current search
    has reserved, both keyed by fully-qualified capacity name; ``fractional``: the
    DRAFractionalCapacityRange gate is on.
    """
    if nothing_to_check(requests, device, consumed, allocating):
        return {k: c.value for k, c in device.capacity.items()}, None
    resolved = resolve_requests(requests, device)
    if resolved is None:
        missing = next(iter(requests or {}), "")
        return None, CapacityShortfall(missing, (requests or {}).get(missing, ZERO), ZERO, None, missing=True)
    amounts: dict[str, Quantity] = {}
    for key, cap in device.capacity.items():
        amount = consumed_amount(resolved.get(key), cap, fractional=fractional)
        if amount.sign() < 0:
            raise AllocationError(f"capacity {key!r}: capacity value is negative")
        amounts[key] = amount
    for key, cap in device.capacity.items():
        amount = amounts[key]
        if violates_policy(amount, cap.policy, fractional=fractional):
            return None, CapacityShortfall(key, amount, cap.value, resolved.get(key), policy=True)
        parts: tuple[Quantity, ...] = (amount,)
        if consumed and key in consumed:
            parts += (consumed[key],)
        if allocating and key in allocating:
            parts += (allocating[key],)
        if Quantity.sum_exceeds(parts, cap.value):
            already = sum(parts[1:], ZERO)
            return None, CapacityShortfall(key, amount, cap.value - already, resolved.get(key))
    return amounts, None


def status_amounts(amounts: Mapping[str, Quantity], device: DeviceView) -> dict[str, str]:
    """consumedCapacity as stored in a claim: the device's own spelling, canonical strings."""
    return {device.capacity[k].name: str(v) for k, v in amounts.items()}


def add_amounts(into: dict[str, Quantity], amounts: Mapping[str, Quantity], sign: int = 1) -> None:
    """Add (or subtract) per-capacity amounts in place."""
    for k, v in amounts.items():
        cur = into.get(k)
        if sign > 0:
            into[k] = v if cur is None else cur + v
        else:
            into[k] = (cur if cur is not None else ZERO) - v


def fraction(q: Quantity) -> Fraction:
    return q.value
