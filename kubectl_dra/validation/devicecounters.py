"""Counters of a ResourceSlice: the shared counter sets and what each device consumes of them."""

from __future__ import annotations

from typing import Any

from .field import FieldError, Path, required, too_many
from .lists import validate_map
from .names import validate_dns_label

__all__ = ["MAX_COUNTER_SETS", "MAX_COUNTER_CONSUMPTIONS_PER_DEVICE", "validate_counter_consumption",
           "validate_counter_set"]


COUNTER_KEY_TRUNCATE = 63
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_COMPATIBILITY_GROUPS = 2


def _validate_counter_name(name: str, path: Path) -> list[FieldError]:
    """Counter and counter-set names are DNS labels."""
    return validate_dns_label(name, path)


def _validate_counters(counters: Any, max_size: int, path: Path) -> list[FieldError]:
    """A counters map: non-empty, ≤ max_size, DNS-label names; any parsed quantity is valid."""
    if not counters:
        return [required(path, "")]
    return validate_map(counters, max_size, COUNTER_KEY_TRUNCATE, _validate_counter_name, lambda c, p: [], path)


def validate_counter_set(counter_set: Any, path: Path) -> list[FieldError]:
    """CounterSet: name required DNS label; counters non-empty, ≤32."""
    counter_set = counter_set if isinstance(counter_set, dict) else {}
    name = counter_set.get("name") or ""
    errs = [required(path.child("name"), "")] if not name else _validate_counter_name(name, path.child("name"))
    errs.extend(_validate_counters(counter_set.get("counters"), MAX_COUNTERS_PER_SET, path.child("counters")))
    return errs


def validate_counter_consumption(consumption: Any, path: Path) -> list[FieldError]:
    """DeviceCounterConsumption: counterSet required DNS label; counters non-empty, ≤32;
    compatibilityGroups ≤2 (docs)."""
    consumption = consumption if isinstance(consumption, dict) else {}
    name = consumption.get("counterSet") or ""
    errs = (
        [required(path.child("counterSet"), "")] if not name else _validate_counter_name(name, path.child("counterSet"))
    )
    errs.extend(_validate_counters(consumption.get("counters"), MAX_COUNTERS_PER_CONSUMPTION, path.child("counters")))
    groups = consumption.get("compatibilityGroups") or []
    if len(groups) > MAX_COMPATIBILITY_GROUPS:
        errs.append(too_many(path.child("compatibilityGroups"), len(groups), MAX_COMPATIBILITY_GROUPS))
    return errs
