"""Which nodes a preview considers: core/v1 NodeSelector matching (for allocated claims
and pod affinity), pod nodeName/nodeSelector filtering, and the candidate list."""

from __future__ import annotations

from typing import Any, Iterable

Obj = dict[str, Any]


def node_name(node: Obj) -> str:
    """``metadata.name`` of a Node."""
    return str((node.get("metadata") or {}).get("name") or "")


def node_labels(node: Obj) -> dict[str, str]:
    """``metadata.labels`` of a Node (never None)."""
    return dict((node.get("metadata") or {}).get("labels") or {})


def _requirement_matches(values: dict[str, str], req: Obj) -> bool:
    """One NodeSelectorRequirement against a label (or field) map, as the scheduler reads it."""
    key = req.get("key") or ""
    op = req.get("operator") or ""
    wanted = [str(v) for v in (req.get("values") or [])]
    present = key in values
    if op == "In":
        return present and values[key] in wanted
    if op == "NotIn":
        return not present or values[key] not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(wanted) != 1:
            return False
        try:
            have, limit = int(values[key]), int(wanted[0])
        except ValueError:
            return False
        return have > limit if op == "Gt" else have < limit
    return False  # unknown operators never match (upstream treats them as errors)


def term_matches(node: Obj, term: Obj) -> bool:
    """A NodeSelectorTerm: all expressions and fields must match; an empty term matches nothing."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = node_labels(node)
    field_values = {"metadata.name": node_name(node)}
    return all(_requirement_matches(labels, r) for r in expressions) and all(
        _requirement_matches(field_values, r) for r in fields
    )


def selector_matches(node: Obj, selector: Obj | None) -> bool:
    """A core/v1 NodeSelector (terms ORed); a missing selector matches every node."""
    if not selector:
        return True
    terms = selector.get("nodeSelectorTerms") or []
    return any(term_matches(node, t) for t in terms)


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
