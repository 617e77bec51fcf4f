"""NodeName: a pod with ``spec.nodeName`` set fits only that node."""

from __future__ import annotations

from typing import Any, Mapping

from .status import Status

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"


def node_name_filter(pod: Mapping[str, Any], node: str) -> Status | None:
    """Refuse every node but the one the pod names."""
    wanted = (pod.get("spec") or {}).get("nodeName")
    if not wanted or wanted == node:
        return None
    return Status(NAME, (REASON,), (f"the pod's spec.nodeName is {wanted}",))
