"""Nodes and core/v1 NodeSelectors: does a slice or device reach a node?"""

from __future__ import annotations

from typing import Any, Mapping


def node_name(node: Mapping[str, Any] | None) -> str:
    """metadata.name of a Node dict ("" for no node)."""
    return ((node or {}).get("metadata") or {}).get("name") or ""


def node_labels(node: Mapping[str, Any] | None) -> Mapping[str, str]:
    """metadata.labels of a Node dict."""
    return ((node or {}).get("metadata") or {}).get("labels") or {}


def _int_or_none(text: Any) -> int | None:
    try:
        return int(str(text), 10)
    except (TypeError, ValueError):
        return None


def _requirement_matches(req: Mapping[str, Any], value: str | None) -> bool:
    """One NodeSelectorRequirement against the label (or field) value, None when absent."""
    op = req.get("operator")
    values = [str(v) for v in req.get("values") or ()]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None or len(values) != 1:
            return False
        have, want = _int_or_none(value), _int_or_none(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _term_matches(term: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False  # an empty term selects nothing
    for req in exprs:
        if not _requirement_matches(req, labels.get(req.get("key", ""))):
            return False
    for req in fields:
        if req.get("key") != "metadata.name":
            return False
        if not _requirement_matches(req, name):
            return False
    return True


def node_selector_matches(selector: Mapping[str, Any] | None, node: Mapping[str, Any] | None) -> bool:
    """core/v1 NodeSelector semantics: terms are ORed, requirements within a term ANDed."""
    if node is None or not selector:
        return False
    name, labels = node_name(node), node_labels(node)
    return any(_term_matches(t or {}, name, labels) for t in selector.get("nodeSelectorTerms") or [])


def node_matches(node: Mapping[str, Any] | None, want_name: str, all_nodes: bool,
                 selector: Mapping[str, Any] | None) -> bool:
    """The nodeName / allNodes / nodeSelector one-of of slices and devices, for one node."""
    if want_name:
        return node is not None and node_name(node) == want_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node)
    return False
