"""Names as field checks: DNS labels and subdomains, label keys and values, and the DRA
names (driver, pool, device, node, attribute and capacity keys) at upstream's paths.

Each check takes ``(value, path)`` and returns ``list[FieldError]``; a value that is no string
is one ``FieldValueTypeInvalid`` error, ``None`` counts as the empty string.
"""

from __future__ import annotations

import functools

from .field import FieldError, Path, invalid, required, too_long
from ..nameformats import (
    dns1123_label_ok,
    dns1123_subdomain_ok,
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from .schema import STR, shaped

__all__ = [
    "DEVICE_ID_MAX", "DRIVER_NAME_MAX", "POOL_NAME_MAX", "fully_qualified_name_ok", "is_valid_qualified_name",
    "validate_c_identifier", "validate_device_name", "validate_dns_label", "validate_dns_subdomain", "validate_driver_name",
    "validate_fully_qualified_name", "validate_label_name", "validate_label_value", "validate_node_name",
    "validate_pool_name", "validate_qualified_name",
]


DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
DEVICE_ID_MAX = 32


@shaped(STR)
def validate_dns_label(value: str, path: Path) -> list[FieldError]:
    """Invalid for each way ``value`` is not a DNS-1123 label (a valid one, the usual case,
    costs one match)."""
    if dns1123_label_ok(value):
        return []
    return [invalid(path, value, m) for m in is_dns1123_label(value)]


@shaped(STR)
def validate_dns_subdomain(value: str, path: Path) -> list[FieldError]:
    """Invalid for each way ``value`` is not a DNS-1123 subdomain (a valid one costs one match)."""
    if dns1123_subdomain_ok(value):
        return []
    return [invalid(path, value, m) for m in is_dns1123_subdomain(value)]


@shaped(STR)
def validate_label_name(key: str, path: Path) -> list[FieldError]:
    """Label key / qualified name (``ValidateLabelName``): Invalid per problem, empty included."""
    return [invalid(path, key, m) for m in is_qualified_name(key)]


@shaped(STR)
def validate_label_value(value: str, path: Path) -> list[FieldError]:
    """Label value syntax: Invalid per problem."""
    return [invalid(path, value, m) for m in is_valid_label_value(value)]


@shaped(STR)
def validate_driver_name(value: str | None, path: Path) -> list[FieldError]:
    """Driver name (also DRA domains), as CSI driver names: required, ≤63, DNS subdomain after
    lower-casing (an empty value is both Required and Invalid, as upstream)."""
    value = value or ""
    errs: list[FieldError] = []
    if not value:
        errs.append(required(path, ""))
    if len(value) > DRIVER_NAME_MAX:
        errs.append(too_long(path, "", DRIVER_NAME_MAX))
    errs.extend(invalid(path, value, m) for m in is_dns1123_subdomain(value.lower()))
    return errs


@shaped(STR)
def validate_pool_name(value: str | None, path: Path) -> list[FieldError]:
    """Pool name: required, ≤253, each ``/``-separated segment a DNS subdomain."""
    value = value or ""
    if not value:
        return [required(path, "")]
    errs: list[FieldError] = []
    if len(value) > POOL_NAME_MAX:
        errs.append(too_long(path, "", POOL_NAME_MAX))
    for part in value.split("/"):
        errs.extend(validate_dns_subdomain(part, path))
    return errs


@shaped(STR)
def validate_device_name(value: str | None, path: Path) -> list[FieldError]:
    """Device name: a DNS-1123 label."""
    return validate_dns_label(value or "", path)


@shaped(STR)
def validate_node_name(value: str, path: Path) -> list[FieldError]:
    """Node name syntax (``ValidateNodeName``): a DNS-1123 subdomain."""
    return validate_dns_subdomain(value, path)


@shaped(STR)
def validate_c_identifier(value: str, path: Path) -> list[FieldError]:
    """DRA attribute/capacity ID: ≤32, C identifier syntax."""
    errs: list[FieldError] = []
    if len(value) > DEVICE_ID_MAX:
        errs.append(too_long(path, "", DEVICE_ID_MAX))
    errs.extend(invalid(path, value, m) for m in is_c_identifier(value))
    return errs


@shaped(STR)
def validate_qualified_name(name: str | None, path: Path) -> list[FieldError]:
    """DRA QualifiedName (attribute/capacity key): ``ID`` or ``domain/ID``; errors at ``path``
    (the map itself for keys). Empty parts and extra slashes are Invalid."""
    name = name or ""
    parts = name.split("/")
    if len(parts) == 1:
        return validate_c_identifier(parts[0], path)
    if len(parts) == 2:
        errs: list[FieldError] = []
        domain, ident = parts
        if not domain:
            errs.append(invalid(path, "", "the domain must not be empty"))
        else:
            errs.extend(validate_driver_name(domain, path))
        if not ident:
            errs.append(invalid(path, "", "the name must not be empty"))
        else:
            errs.extend(validate_c_identifier(ident, path))
        return errs
    return [invalid(path, name, "must not contain more than one slash")]


@functools.lru_cache(maxsize=4096)
def is_valid_qualified_name(name: str) -> bool:
    """Whether :func:`validate_qualified_name` accepts ``name`` (a pure function of the text,
    memoised: the attribute and capacity keys of a slice repeat on every device)."""
    return not validate_qualified_name(name, Path(""))


def fully_qualified_name_ok(name: object) -> bool:
    """Whether :func:`validate_fully_qualified_name` accepts ``name`` (memoised: constraints
    repeat their attribute names)."""
    return type(name) is str and "/" in name and is_valid_qualified_name(name)


@shaped(STR)
def validate_fully_qualified_name(name: str | None, path: Path) -> list[FieldError]:
    """DRA FullyQualifiedName (``matchAttribute``, ``distinctAttribute``): a qualified name with a domain."""
    if fully_qualified_name_ok(name):
        return []
    return _fully_qualified_name_problems(name, path)


def _fully_qualified_name_problems(name: str | None, path: Path) -> list[FieldError]:
    """Every error of a fully qualified name, found the long way (what :func:`fully_qualified_name_ok` spares)."""
    errs = validate_qualified_name(name, path)
    if "/" not in (name or ""):
        errs.append(invalid(path, name or "", "a fully qualified name must be a domain and a name separated by a slash"))
    return errs
