"""Device attributes of a ResourceSlice (``validateDeviceAttribute``): exactly one value per
attribute, string and version limits, non-empty list values, and the per-device value count."""

from __future__ import annotations

from typing import Any, Iterable

from .field import FieldError, Path, invalid, too_long
from ..nameformats import is_semver
from .values import present

__all__ = [
    "ATTRIBUTE_MAX_VALUE_LENGTH", "LIST_ATTRIBUTE_FIELDS", "LIST_ATTRIBUTE_FIELD_SET", "MAX_ATTRIBUTE_VALUES_PER_DEVICE",
    "count_attribute_values", "device_attribute_errors", "scalar_attribute_ok", "scalar_attributes_ok",
    "validate_device_attribute",
]


MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48
ATTRIBUTE_MAX_VALUE_LENGTH = 64
LIST_ATTRIBUTE_FIELDS = ("bools", "ints", "strings", "versions")
LIST_ATTRIBUTE_FIELD_SET = frozenset(LIST_ATTRIBUTE_FIELDS)


def count_attribute_values(attributes: dict[str, Any]) -> int:
    """Attribute values of a device: a scalar counts one, a list its length (several lists summed)."""
    total = 0
    for attr in attributes.values():
        attr = attr if isinstance(attr, dict) else {}
        lists = 0
        for f, items in attr.items():  # usually one member: cheaper than four lookups
            if items and f in LIST_ATTRIBUTE_FIELD_SET:
                lists += len(items)
        total += lists if lists else 1
    return total


def _byte_len(value: Any) -> int:
    """Length in bytes, as Go's len() of a string."""
    return len(str(value).encode("utf-8"))


def _validate_string_value(value: Any, path: Path) -> list[FieldError]:
    """A string attribute value: at most 64 bytes."""
    if _byte_len(value) > ATTRIBUTE_MAX_VALUE_LENGTH:
        return [too_long(path, "", ATTRIBUTE_MAX_VALUE_LENGTH)]
    return []


def _validate_version_value(value: Any, path: Path) -> list[FieldError]:
    """A version attribute value: semver 2.0.0, at most 64 bytes."""
    errs: list[FieldError] = []
    if not isinstance(value, str) or not is_semver(value):
        errs.append(invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if _byte_len(value) > ATTRIBUTE_MAX_VALUE_LENGTH:
        errs.append(too_long(path, "", ATTRIBUTE_MAX_VALUE_LENGTH))
    return errs


def scalar_attributes_ok(attributes: Iterable[Any]) -> bool:
    """True when each attribute is one valid scalar: the common case, which
    :func:`validate_device_attribute` accepts, checked without building a path."""
    for attr in attributes:
        if type(attr) is not dict or len(attr) != 1:
            return False
        ((fld, value),) = attr.items()
        if fld == "bool" or fld == "int":
            if value is None:
                return False
            continue
        if type(value) is not str or (fld != "string" and fld != "version"):
            return False
        if len(value) > ATTRIBUTE_MAX_VALUE_LENGTH // 4 and len(value.encode("utf-8")) > ATTRIBUTE_MAX_VALUE_LENGTH:
            return False  # (at most 4 bytes a character: a short text needs no encoding)
        if fld == "version" and not is_semver(value):
            return False
    return True


def scalar_attribute_ok(attr: Any) -> bool:
    """:func:`scalar_attributes_ok` of one attribute."""
    return scalar_attributes_ok((attr,))


def validate_device_attribute(attr: Any, path: Path) -> list[FieldError]:
    """DeviceAttribute: exactly one value; string/version limits; list values non-empty."""
    if scalar_attribute_ok(attr):  # the common case: no paths built
        return []
    return device_attribute_errors(attr, path)


def device_attribute_errors(attr: Any, path: Path) -> list[FieldError]:
    """Every check of :func:`validate_device_attribute`, without its shortcut for the valid
    scalars that :func:`scalar_attribute_ok` accepts (the tests hold the two to agree)."""
    attr = attr if isinstance(attr, dict) else {}
    errs: list[FieldError] = []
    count = 0
    for fld in ("bool", "int"):
        if present(attr, fld):
            count += 1
    if present(attr, "string"):
        count += 1
        errs.extend(_validate_string_value(attr["string"], path.child("string")))
    if present(attr, "version"):
        count += 1
        errs.extend(_validate_version_value(attr["version"], path.child("version")))
    for fld in LIST_ATTRIBUTE_FIELDS:
        if not present(attr, fld):
            continue
        count += 1
        items = attr[fld] or []
        if len(items) == 0:
            errs.append(invalid(path.child(fld), items, "must not be empty if specified"))
        for i, item in enumerate(items):
            if fld == "strings":
                errs.extend(_validate_string_value(item, path.child(fld).index(i)))
            elif fld == "versions":
                errs.extend(_validate_version_value(item, path.child(fld).index(i)))
    if count == 0:
        errs.append(invalid(path, "", "exactly one value must be specified"))
    elif count > 1:
        errs.append(invalid(path, attr, "exactly one value must be specified"))
    return errs
