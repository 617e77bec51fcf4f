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


def _parses(term: Mapping[str, Any]) -> bool:
    """Whether a NodeSelectorTerm parses as upstream's node selector does: label keys and
    In/NotIn values must be valid (a term that does not parse matches no node)."""
    from ..validation.formats import is_qualified_name, is_valid_label_value  # (only pods with affinity)

    for req in term.get("matchExpressions") or []:
        req = req or {}
        if is_qualified_name(str(req.get("key") or "")):
            return False
        if req.get("operator") in ("In", "NotIn") and any(is_valid_label_value(str(v)) for v in req.get("values") or []):
            return False
    return True


def _usable(selector: Mapping[str, Any]) -> Mapping[str, Any]:
    """The selector with the terms that do not parse left out."""
    terms = [t for t in selector.get("nodeSelectorTerms") or [] if isinstance(t, dict) and _parses(t)]
    return {"nodeSelectorTerms": terms}


def matches_node_affinity(pod: Mapping[str, Any], node: Mapping[str, Any]) -> tuple[bool, str]:
    """(matches, what did not) for the pod's nodeSelector and required node affinity."""
    labels = node_labels(node)
    for key, value in ((pod.get("spec") or {}).get("nodeSelector") or {}).items():
        if labels.get(key) != str(value):
            have = labels.get(key)
            return False, f"nodeSelector {key}={value}: the node has {f'{key}={have}' if have is not None else f'no label {key}'}"
    required = required_node_affinity(pod)
    if required is not None and not node_selector_matches(_usable(required), node):
        return False, "no term of the required node affinity matches the node's labels and fields"
    return True, ""


def node_affinity(pod: Mapping[str, Any], node: Mapping[str, Any]) -> Status | None:
    """Refuse a node the pod's nodeSelector or required node affinity does not select."""
    ok, why = matches_node_affinity(pod, node)
    return None if ok else Status(NAME, (REASON,), (why,))
