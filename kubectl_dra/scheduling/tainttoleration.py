"""TaintToleration: a node's NoSchedule and NoExecute taints keep off pods that do not tolerate them."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .status import Status

NAME = "TaintToleration"
#: the scheduler's words (which taint is in the detail: the event keeps the count of reasons small)
REASON = "node(s) had untolerated taint(s)"
#: the effects the filter looks at (PreferNoSchedule only scores)
FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


def toleration_matches(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """core/v1 Toleration.ToleratesTaint: an empty effect or key matches any; the operator
    ``Exists`` any value, ``Equal`` (the default) the same value."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or "Equal"
    # (Gt/Lt need the alpha gate TaintTolerationComparisonOperators, off by default: they tolerate nothing)
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """Whether any of ``tolerations`` tolerates ``taint``."""
    return any(toleration_matches(t or {}, taint) for t in tolerations)


def untolerated_taint(tolerations: Sequence[Mapping[str, Any]], node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first NoSchedule/NoExecute taint of the node no toleration covers (None: all tolerated)."""
    for taint in (node.get("spec") or {}).get("taints") or []:
        if (taint or {}).get("effect") in FILTERED_EFFECTS and not tolerates(tolerations, taint):
            return taint
    return None


def taint_toleration(tolerations: Sequence[Mapping[str, Any]], node: Mapping[str, Any]) -> Status | None:
    """Refuse a node with a taint the pod does not tolerate (the taint is named in the detail)."""
    taint = untolerated_taint(tolerations, node)
    if taint is None:
        return None
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    return Status(NAME, (REASON,), (f"taint {key}{'=' + value if value else ''}:{effect} is not tolerated",))
