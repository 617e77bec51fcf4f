"""Device taints and the tolerations of a request (upstream ``resourceclaim.ToleratesTaint``)."""

from __future__ import annotations

from typing import Any, Mapping

from ..model.devices import DeviceView


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Upstream ``resourceclaim.ToleratesTaint``."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def untolerated_taint(device: DeviceView, tolerations: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first NoSchedule/NoExecute taint of the device that no toleration covers."""
    for taint in device.taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute"):
            if not any(tolerates(t, taint) for t in tolerations):
                return taint
    return None
