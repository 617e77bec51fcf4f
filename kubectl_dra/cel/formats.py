"""The named formats of the Kubernetes CEL ``format`` library.

``format.dns1123Label().validate(s)`` and ``format.named("uuid")`` reach these
validators: each returns upstream's messages for an invalid value (empty when valid).
The name validators reuse the project's apimachinery ports; the others follow
go-openapi ``strfmt`` and ``net/url`` as the apiserver does.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import re
from typing import Callable

from kubectl_dra.cel.urls import URLError, parse_request_uri

_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_RE = re.compile(rf"^{_DNS1035_FMT}\Z")
_DNS1035_ERROR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    f"'abc-123', regex used for validation is '{_DNS1035_FMT}')")
_UUID_RE = re.compile(r"^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})\Z",
                      re.IGNORECASE)
_DATETIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


def _mask_trailing_dash(name: str) -> str:
    """apimachinery maskTrailingDash: a generateName prefix may end in '-'."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def _dns1123_label(value: str) -> list[str]:
    from kubectl_dra.nameformats import is_dns1123_label

    return is_dns1123_label(value)


def _dns1123_subdomain(value: str) -> list[str]:
    from kubectl_dra.nameformats import is_dns1123_subdomain

    return is_dns1123_subdomain(value)


def _dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_RE.match(value):
        errs.append(_DNS1035_ERROR)
    return errs


def _qualified_name(value: str) -> list[str]:
    from kubectl_dra.nameformats import is_qualified_name

    return is_qualified_name(value)


def _label_value(value: str) -> list[str]:
    from kubectl_dra.nameformats import is_valid_label_value

    return is_valid_label_value(value)


def _uri(value: str) -> list[str]:
    try:
        parse_request_uri(value)
    except URLError as err:
        return [str(err)]
    return []


def _uuid(value: str) -> list[str]:
    return [] if _UUID_RE.match(value) else ["does not match the UUID format"]


def _byte(value: str) -> list[str]:
    try:
        base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return ["invalid base64"]
    return []


def _date(value: str) -> list[str]:
    try:
        if len(value) != 10:
            raise ValueError(value)
        _dt.date.fromisoformat(value)
    except ValueError:
        return ["invalid date"]
    return []


def _datetime(value: str) -> list[str]:
    m = _DATETIME_RE.match(value)
    if m is None:
        return ["invalid datetime"]
    try:
        year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
        _dt.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return ["invalid datetime"]
    return []


#: CEL constant name -> (Format name as upstream prints it, validator)
FORMATS: dict[str, tuple[str, Callable[[str], list[str]]]] = {
    "dns1123Label": ("DNS1123Label", _dns1123_label),
    "dns1123Subdomain": ("DNS1123Subdomain", _dns1123_subdomain),
    "dns1035Label": ("DNS1035Label", _dns1035_label),
    "qualifiedName": ("QualifiedName", _qualified_name),
    "dns1123LabelPrefix": ("DNS1123LabelPrefix", lambda v: _dns1123_label(_mask_trailing_dash(v))),
    "dns1123SubdomainPrefix": ("DNS1123SubdomainPrefix",
                               lambda v: _dns1123_subdomain(_mask_trailing_dash(v))),
    "dns1035LabelPrefix": ("DNS1035LabelPrefix", lambda v: _dns1035_label(_mask_trailing_dash(v))),
    "labelValue": ("LabelValue", _label_value),
    "uri": ("URI", _uri),
    "uuid": ("uuid", _uuid),
    "byte": ("byte", _byte),
    "date": ("date", _date),
    "datetime": ("datetime", _datetime),
}
#: Format name -> validator
VALIDATORS: dict[str, Callable[[str], list[str]]] = {name: fn for name, fn in FORMATS.values()}
