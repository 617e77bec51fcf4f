"""NodeAffinity: ``spec.nodeSelector`` and the required node affinity must both match the node."""

from __future__ import annotations

from typing import Any, Mapping

from ..model.nodes import node_labels, node_selector_matches
from .status import Status

NAME = "NodeAffinity"
REASON = "node(s) didn't match Pod's node affinity/selector"


def required_node_affinity(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod's requiredDuringSchedulingIgnoredDuringExecution NodeSelector (None: none)."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    return required if isinstance(required, dict) else None


def matches_node_affinity(pod: Mapping[str, Any], node: Mapping[str, Any]) -> tuple[bool, str]:
    """(matches, what did not) for the pod's nodeSelector and required node affinity."""
    labels = node_labels(node)
    for key, value in ((pod.get("spec") or {}).get("nodeSelector") or {}).items():
        if labels.get(key) != str(value):
            have = labels.get(key)
            return False, f"nodeSelector {key}={value}: the node has {f'{key}={have}' if have is not None else f'no label {key}'}"
    required = required_node_affinity(pod)
    if required is not None and not node_selector_matches(required, node):
        return False, "no term of the required node affinity matches the node's labels and fields"
    return True, ""


def node_affinity(pod: Mapping[str, Any], node: Mapping[str, Any]) -> Status | None:
    """Refuse a node the pod's nodeSelector or required node affinity does not select."""
    ok, why = matches_node_affinity(pod, node)
    return None if ok else Status(NAME, (REASON,), (why,))
