"""Statuses that drivers write about devices (claim ``status.devices`` and device metadata):
metav1 Conditions, network data (interface, hardware address, CIDR addresses) and UIDs."""

from __future__ import annotations

import re

from .field import FieldError, Path, duplicate, invalid, not_supported, required, too_long
from .lists import check_list
from .names import validate_label_name
from .values import as_dict, as_str

__all__ = [
    "CONDITION_STATUSES", "validate_conditions", "validate_interface_address", "validate_network_data", "validate_uid",
]

INTERFACE_NAME_MAX_LENGTH = 256
HARDWARE_ADDRESS_MAX_LENGTH = 128
NETWORK_IPS_MAX = 16
CONDITION_STATUSES = ("False", "True", "Unknown")
CONDITION_REASON_MAX_LENGTH = 1024
CONDITION_MESSAGE_MAX_LENGTH = 32 * 1024


def validate_uid(uid: str, path: Path) -> list[FieldError]:
    """A UUID in RFC 4122 normalized (lower-case, 36 characters) form."""
    import uuid

    try:
        uuid.UUID(uid)
    except ValueError as exc:
        return [invalid(path, uid, f"error validating uid: {exc}")]
    if len(uid) != 36 or uid != uid.lower():
        return [invalid(path, uid, "uid must be in RFC 4122 normalized form, "
                        "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")]
    return []


_CONDITION_REASON_RE = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?\Z")


def validate_conditions(conditions: list, path: Path) -> list[FieldError]:
    """metav1 Conditions (``ValidateConditions``): unique types, known status, reason format."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        c = as_dict(condition)
        p = path.index(i)
        ctype = as_str(c.get("type"))
        if not ctype:
            errs.append(required(p.child("type"), "must be set"))
        else:
            errs += validate_label_name(ctype, p.child("type"))
            if ctype in seen:
                errs.append(duplicate(p.child("type"), ctype))
            seen.add(ctype)
        status = as_str(c.get("status"))
        if status not in CONDITION_STATUSES:
            errs.append(not_supported(p.child("status"), status, CONDITION_STATUSES))
        if not c.get("lastTransitionTime"):
            errs.append(required(p.child("lastTransitionTime"), "must be set"))
        reason = as_str(c.get("reason"))
        if not reason:
            errs.append(required(p.child("reason"), "must be set"))
        else:
            if len(reason) > CONDITION_REASON_MAX_LENGTH:
                errs.append(too_long(p.child("reason"), "", CONDITION_REASON_MAX_LENGTH))
            if not _CONDITION_REASON_RE.match(reason):
                errs.append(invalid(p.child("reason"), reason, "a condition reason must start with alphabetic character, "
                                    "optionally followed by a string of alphanumeric characters or '_,:', and must "
                                    "end with an alphanumeric character or '_'"))
        if len(as_str(c.get("message"))) > CONDITION_MESSAGE_MAX_LENGTH:
            errs.append(too_long(p.child("message"), "", CONDITION_MESSAGE_MAX_LENGTH))
        generation = c.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            errs.append(invalid(p.child("observedGeneration"), generation, "must be greater than or equal to zero"))
    return errs


def validate_network_data(data: dict, path: Path) -> list[FieldError]:
    """NetworkDeviceData: interface name and hardware address lengths, unique canonical CIDR IPs
    (public: the device-metadata checker applies the same rules)."""
    errs: list[FieldError] = []
    if len(as_str(data.get("interfaceName"))) > INTERFACE_NAME_MAX_LENGTH:
        errs.append(too_long(path.child("interfaceName"), "", INTERFACE_NAME_MAX_LENGTH))
    if len(as_str(data.get("hardwareAddress"))) > HARDWARE_ADDRESS_MAX_LENGTH:
        errs.append(too_long(path.child("hardwareAddress"), "", HARDWARE_ADDRESS_MAX_LENGTH))
    errs += check_list(
        data.get("ips"), path.child("ips"), NETWORK_IPS_MAX, lambda ip, p: validate_interface_address(as_str(ip), p),
        key=as_str,
    )
    return errs


def validate_interface_address(value: str, path: Path) -> list[FieldError]:
    """An IP address with prefix length in canonical form (``10.9.8.7/24``, ``2001:db8::1/64``)."""
    import ipaddress

    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        return [invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    if "/" not in value:
        return [invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    canonical = f"{iface.ip.compressed}/{iface.network.prefixlen}"
    if value != canonical:
        return [invalid(path, value, f"must be in canonical form ({canonical!r})")]
    return []
