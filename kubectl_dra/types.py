"""The few names every layer shares for API objects and their identities, defined once."""

from __future__ import annotations

from typing import Any, Mapping

#: an API object as the API server returns it (decoded JSON)
Obj = dict[str, Any]
#: a device: (driver, pool, device name)
DeviceID = tuple[str, str, str]
#: a namespaced object's (namespace, name)
ClaimKey = tuple[str, str]


def claim_key(claim: Mapping[str, Any]) -> ClaimKey:
    """(namespace, name) of a claim; a claim without a namespace is in "default"."""
    meta = claim.get("metadata") or {}
    return (meta.get("namespace") or "default", meta.get("name") or "")


def claim_ref(claim: Mapping[str, Any]) -> str:
    """``namespace/name`` as upstream's klog.KObj prints a claim (``name`` without a namespace)."""
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace") or ""
    name = meta.get("name") or ""
    return f"{ns}/{name}" if ns else name
