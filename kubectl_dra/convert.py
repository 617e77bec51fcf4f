"""resource.k8s.io/v1beta1 and v1beta2 objects in their v1 form, as the API server converts
them before validating and storing; the one conversion that validate, preview and explain
share. (The webhook needs none: it is registered for v1 with ``matchPolicy: Equivalent``,
so the API server converts before calling it.)"""

from __future__ import annotations

import copy
from typing import Any

GROUP = "resource.k8s.io"
V1 = f"{GROUP}/v1"
#: older versions of the group whose objects convert to v1
CONVERTIBLE = (f"{GROUP}/v1beta1", f"{GROUP}/v1beta2")
#: the DRA kinds the group serves in every one of those versions
KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass"})

#: request fields that v1beta1 keeps on the request itself and v1 (like v1beta2) under ``exactly``
_V1BETA1_EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                         "capacity", "derivedAttributes")


def needs_conversion(obj: Any) -> bool:
    """Whether ``obj`` is a DRA object of an older resource.k8s.io version."""
    return isinstance(obj, dict) and obj.get("apiVersion") in CONVERTIBLE and obj.get("kind") in KINDS


def to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` in its v1 form: a converted copy, or ``obj`` itself when there is nothing to do.

    v1beta2 has v1's structure. v1beta1 keeps a request's fields on the request (v1: under
    ``exactly``, unless the request has ``firstAvailable``) and a slice device's fields under
    ``basic`` (v1: on the device). Malformed parts are left as they are for validation to name.
    """
    if not needs_conversion(obj):
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = V1
    if obj["apiVersion"] != f"{GROUP}/v1beta1":
        return out
    kind = out["kind"]
    spec = _dict(out.get("spec"))
    if kind == "ResourceClaimTemplate":
        spec = _dict(spec.get("spec"))
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        requests = _dict(spec.get("devices")).get("requests")
        for request in requests if isinstance(requests, list) else ():
            if not isinstance(request, dict) or request.get("firstAvailable"):
                continue
            exactly = {k: request.pop(k) for k in _V1BETA1_EXACT_FIELDS if k in request}
            if exactly:
                request["exactly"] = exactly
    elif kind == "ResourceSlice":
        devices = spec.get("devices")
        for device in devices if isinstance(devices, list) else ():
            if isinstance(device, dict) and isinstance(device.get("basic"), dict):
                device.update(device.pop("basic"))
    return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
