"""The validation helpers that code outside this package reads from here, re-exported.

The helpers themselves live by concept: formats in :mod:`.formats`, name checks in
:mod:`.names`. ``kubectl_dra.cel.formats`` and ``kubectl_dra.metadata.check`` import these
names from this module; new code imports them from their homes.
"""

from __future__ import annotations

from .formats import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from .names import (
    validate_device_name,
    validate_dns_label,
    validate_driver_name,
    validate_pool_name,
    validate_qualified_name,
)

__all__ = [
    "is_dns1123_label", "is_dns1123_subdomain", "is_qualified_name", "is_valid_label_value", "validate_device_name",
    "validate_dns_label", "validate_driver_name", "validate_pool_name", "validate_qualified_name",
]
