"""NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that tolerate
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .status import Status
from .tainttoleration import tolerates

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"
#: the taint that stands for ``spec.unschedulable``
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def node_unschedulable(tolerations: Sequence[Mapping[str, Any]], node: Mapping[str, Any]) -> Status | None:
    """Refuse a cordoned node unless the pod tolerates its stand-in taint."""
    if not (node.get("spec") or {}).get("unschedulable"):
        return None
    if tolerates(tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}):
        return None
    return Status(NAME, (REASON,), ("the node is cordoned (spec.unschedulable) and the pod does not tolerate "
                                    f"{UNSCHEDULABLE_TAINT}:NoSchedule",))
