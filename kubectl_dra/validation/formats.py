"""The apimachinery name formats, as validation's modules have imported them; they live in
:mod:`kubectl_dra.nameformats`, below both validation and cel."""

from __future__ import annotations

from ..nameformats import (
    DNS1123_LABEL_MAX,
    DNS1123_SUBDOMAIN_MAX,
    LABEL_VALUE_MAX,
    QUALIFIED_NAME_MAX,
    dns1123_label_ok,
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_semver,
    is_valid_label_value,
)

__all__ = [
    "DNS1123_LABEL_MAX", "DNS1123_SUBDOMAIN_MAX", "LABEL_VALUE_MAX", "QUALIFIED_NAME_MAX", "dns1123_label_ok",
    "is_c_identifier", "is_dns1123_label", "is_dns1123_subdomain", "is_qualified_name", "is_semver",
    "is_valid_label_value",
]
