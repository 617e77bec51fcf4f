"""Device configuration: opaque driver parameters (``OpaqueDeviceConfiguration``) and the
raw JSON fields that carry them."""

from __future__ import annotations

from typing import Any

from kubectl_dra.validation import schema

from .field import FieldError, Path, invalid, required, too_long
from .names import validate_driver_name
from .schema import shaped, wrong_type
from .values import as_dict, json_size

__all__ = ["OPAQUE_PARAMETERS_MAX_LENGTH", "validate_device_configuration", "validate_opaque_configuration",
           "validate_raw_extension"]


OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024


@shaped(schema.OPAQUE_CONFIG)
def validate_opaque_configuration(opaque: Any, path: Path, stored: bool = False) -> list[FieldError]:
    """OpaqueDeviceConfiguration: driver-name rules for ``driver``; ``parameters`` a JSON object ≤10 KiB."""
    opaque = opaque or {}
    errs = validate_driver_name(opaque.get("driver"), path.child("driver"))
    errs.extend(
        validate_raw_extension(opaque, "parameters", path.child("parameters"), stored, OPAQUE_PARAMETERS_MAX_LENGTH)
    )
    return errs


def validate_raw_extension(
    parent: dict[str, Any], field_name: str, path: Path, stored: bool, max_size: int
) -> list[FieldError]:
    """A RawExtension field of ``parent``: required (absent/null), ≤``max_size`` bytes unless stored,
    must be a JSON object."""
    if not isinstance(parent, dict):
        return [wrong_type(path, parent, "an object")]
    if field_name not in parent or parent[field_name] is None:
        return [required(path, "")]
    value = parent[field_name]
    if isinstance(value, (str, bytes)) and len(value) == 0:
        return [required(path, "")]
    if not stored and json_size(value) > max_size:
        return [too_long(path, "", max_size)]
    if not isinstance(value, dict):
        return [invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def validate_device_configuration(config: dict, path: Path, stored: bool = False) -> list[FieldError]:
    """``opaque`` is required: a driver name and JSON-object parameters of at most 10 KiB."""
    opaque = config.get("opaque")
    if opaque is None:
        return [required(path.child("opaque"))]
    return validate_opaque_configuration(as_dict(opaque), path.child("opaque"), stored)
