"""Which nodes a preview considers: pod nodeName/nodeSelector/affinity and taint filtering,
and the candidate list (NodeSelector matching itself is kubectl_dra.model.nodes')."""

from __future__ import annotations

from typing import Iterable

from ..types import Obj
from ..model.nodes import node_labels, node_name, node_selector_matches


__all__ = ["node_labels", "node_name", "pod_fits_node", "pod_ref", "selector_matches", "slice_node_names",
           "toleration_matches"]


def selector_matches(node: Obj, selector: Obj | None) -> bool:
    """A core/v1 NodeSelector (an allocation's, a pod's required node affinity); a missing
    one places no limit, so it matches every node."""
    return not selector or node_selector_matches(selector, node)


def pod_fits_node(pod: Obj, node: Obj) -> str | None:
    """None when the pod may land on ``node``; otherwise the scheduler-style reason why not."""
    spec = pod.get("spec") or {}
    wanted_name = spec.get("nodeName")
    if wanted_name and wanted_name != node_name(node):
        return f"pod {pod_ref(pod)} is bound to node {wanted_name}"
    labels = node_labels(node)
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != str(value):
            return "node(s) didn't match Pod's node affinity/selector"
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if required and not selector_matches(node, required):
        return "node(s) didn't match Pod's node affinity/selector"
    tolerations = spec.get("tolerations") or []
    node_spec = node.get("spec") or {}
    if node_spec.get("unschedulable") and not any(
            toleration_matches(t, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}) for t in tolerations):
        return "node(s) were unschedulable"
    for taint in node_spec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(
                toleration_matches(t, taint) for t in tolerations):
            value = f": {taint['value']}" if taint.get("value") else ""
            return f"node(s) had untolerated taint {{{taint.get('key')}{value}}}"
    return None


#: the taint that stands for ``spec.unschedulable`` (a cordoned node)
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def toleration_matches(toleration: Obj, taint: Obj) -> bool:
    """A core/v1 Toleration against a node Taint, as the scheduler's TaintToleration filter reads it."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"  # an empty key with Exists tolerates everything
    if key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


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
