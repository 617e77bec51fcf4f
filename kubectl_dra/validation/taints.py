"""Device taints (on slices) and device tolerations (in claims and allocation results)."""

from __future__ import annotations

from typing import Any, Iterable

from kubectl_dra.validation import schema

from .field import FieldError, Path, invalid, not_supported, required
from .names import validate_label_name, validate_label_value
from .schema import shaped

__all__ = [
    "TAINT_EFFECTS", "TOLERATION_EFFECTS", "TOLERATION_OPERATORS", "validate_device_taint", "validate_device_toleration",
]


TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
TOLERATION_EFFECTS = ("NoExecute", "NoSchedule")
TOLERATION_OPERATORS = ("Equal", "Exists")


@shaped(schema.DEVICE_TAINT)
def validate_device_taint(taint: Any, path: Path) -> list[FieldError]:
    """A DeviceTaint: key a label key, optional label value, effect required and known."""
    taint = taint or {}
    errs = validate_label_name(taint.get("key") or "", path.child("key"))
    value = taint.get("value") or ""
    if value:
        errs.extend(validate_label_value(value, path.child("value")))
    effect = taint.get("effect") or ""
    if not effect:
        errs.append(required(path.child("effect"), ""))
    elif effect not in TAINT_EFFECTS:
        errs.append(not_supported(path.child("effect"), effect, TAINT_EFFECTS))
    return errs


@shaped(schema.DEVICE_TOLERATION)
def validate_device_toleration(
    toleration: Any, path: Path, effects: Iterable[str] = TAINT_EFFECTS
) -> list[FieldError]:
    """A DeviceToleration (after defaulting operator to Equal): key, operator/value pairing, effect
    (``effects``: the newest upstream code accepts the taint effects incl. ``None``; pass
    ``TOLERATION_EFFECTS`` for the older rule)."""
    toleration = toleration or {}
    errs: list[FieldError] = []
    key = toleration.get("key") or ""
    if key:
        errs.extend(validate_label_name(key, path.child("key")))
    op = toleration.get("operator") or ""
    value = toleration.get("value") or ""
    if op == "Exists":
        if value:
            errs.append(invalid(path.child("value"), value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs.extend(validate_label_value(value, path.child("value")))
    elif op == "":
        errs.append(required(path.child("operator"), ""))
    else:
        errs.append(not_supported(path.child("operator"), op, TOLERATION_OPERATORS))
    effect = toleration.get("effect") or ""
    allowed = tuple(sorted(effects))
    if effect and effect not in allowed:
        errs.append(not_supported(path.child("effect"), effect, allowed))
    return errs
