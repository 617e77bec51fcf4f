"""How an allocated device reaches its node: binding conditions (of a device or an allocation
result) and the node operations a driver skips (``skipNodeOperations``)."""

from __future__ import annotations

from typing import Any

from kubectl_dra.validation import schema

from .field import FieldError, Path, duplicate, invalid, not_supported
from .lists import validate_list
from .names import validate_label_name
from .schema import STR, shaped

__all__ = [
    "BINDING_CONDITIONS_MAX", "SKIP_NODE_OPERATIONS", "validate_binding_conditions", "validate_skip_node_operations",
]


BINDING_CONDITIONS_MAX = 4
SKIP_NODE_OPERATIONS = ("*", "NodePrepareResources", "NodeUnprepareResources")


@shaped(schema.BINDING_CONDITIONS)
def validate_binding_conditions(obj: Any, path: Path) -> list[FieldError]:
    """``bindingConditions``/``bindingFailureConditions`` of a device or allocation result (``path``
    is the owner): ≤4 each (TooMany skips the item syntax, not the duplicate check), label-key
    syntax, unique, no overlap, both or neither."""
    obj = obj or {}
    conds = list(obj.get("bindingConditions") or [])
    failures = list(obj.get("bindingFailureConditions") or [])
    cpath = path.child("bindingConditions")
    fpath = path.child("bindingFailureConditions")
    errs = validate_list(conds, cpath, BINDING_CONDITIONS_MAX, lambda c, p: validate_label_name(str(c), p))
    errs.extend(validate_list(failures, fpath, BINDING_CONDITIONS_MAX, lambda c, p: validate_label_name(str(c), p)))
    seen: set[str] = set()
    for i, cond in enumerate(conds):
        if cond in seen:
            errs.append(duplicate(cpath.index(i), cond))
        seen.add(cond)
    cond_set = set(conds)
    seen = set()
    for i, cond in enumerate(failures):
        if cond in seen:
            errs.append(duplicate(fpath.index(i), cond))
        seen.add(cond)
        if cond in cond_set:
            errs.append(invalid(fpath.index(i), cond, "bindingFailureConditions must not overlap with bindingConditions"))
    if not conds and failures:
        errs.append(invalid(cpath, conds, "bindingConditions are required to use bindingFailureConditions"))
    if not failures and conds:
        errs.append(invalid(fpath, failures, "bindingFailureConditions are required to use bindingConditions"))
    return errs


@shaped([STR])
def validate_skip_node_operations(values: Any, path: Path) -> list[FieldError]:
    """``skipNodeOperations``: known values, no repeats, NodePrepareResources needs NodeUnprepareResources or ``*``."""
    values = list(values or [])
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value not in SKIP_NODE_OPERATIONS:
            errs.append(not_supported(path.index(i), value, SKIP_NODE_OPERATIONS))
        if value in seen:
            errs.append(duplicate(path.index(i), value))
        seen.add(value)
    if "NodePrepareResources" in seen and not ({"NodeUnprepareResources", "*"} & seen):
        errs.append(
            invalid(path, values, "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")
        )
    return errs
