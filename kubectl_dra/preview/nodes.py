"""Which nodes a preview considers: pod nodeName/nodeSelector/affinity and taint filtering,
and the candidate list (NodeSelector matching itself is kubectl_dra.model.nodes')."""

from __future__ import annotations

from typing import Iterable

from ..types import Obj
from ..model.nodes import node_labels, node_name, node_selector_matches
from ..scheduling.nodeaffinity import node_affinity
from ..scheduling.nodename import node_name_filter
from ..scheduling.nodeunschedulable import UNSCHEDULABLE_TAINT, node_unschedulable
from ..scheduling.tainttoleration import taint_toleration, toleration_matches


__all__ = ["UNSCHEDULABLE_TAINT", "node_labels", "node_name", "pod_fits_node", "pod_ref", "selector_matches",
           "slice_node_names", "toleration_matches"]


def selector_matches(node: Obj, selector: Obj | None) -> bool:
    """A core/v1 NodeSelector (an allocation's, a pod's required node affinity); a missing
    one places no limit, so it matches every node."""
    return not selector or node_selector_matches(selector, node)


def pod_fits_node(pod: Obj, node: Obj) -> str | None:
    """None when the node-only filters (NodeUnschedulable, NodeName, TaintToleration,
    NodeAffinity, in the scheduler's order) let the pod on ``node``; otherwise the first
    refusal in the scheduler's words."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    status = (node_unschedulable(tolerations, node) or node_name_filter(pod, node_name(node))
              or taint_toleration(tolerations, node) or node_affinity(pod, node))
    return status.reasons[0] if status is not None else None


def pod_ref(pod: Obj) -> str:
    """``namespace/name`` of a pod."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def slice_node_names(slices: Iterable[Obj]) -> list[str]:
    """Node names that ResourceSlices are bound to (used when the state has no Node objects)."""
    slices = list(slices)
    names = {((s.get("spec") or {}).get("nodeName")) for s in slices}
    for s in slices:
        for device in (s.get("spec") or {}).get("devices") or []:
            names.add(device.get("nodeName"))
    return sorted(n for n in names if isinstance(n, str) and n)
