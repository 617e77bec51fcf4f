"""Explain a preview plan on nodes: the preview's per-node loop with an explain tracer on
every node, then one explanation per node and the summary across them (what ``kubectl dra
explain`` and ``preview --explain`` show; a script can call :func:`explain_plan` directly).

The reasons are :class:`~kubectl_dra.explain.verdict.NodeReasons`', as for a preview: this
package uses the explain package, never the other way round."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from ..allocation.index import ClusterIndex
from ..errors import UsageError
from ..explain import Explanation, NodeReasons, explanation
from ..limits import FILTER_TIMEOUT
from .nodes import node_name, pod_ref
from .run import candidate_nodes, run_preview

if TYPE_CHECKING:
    from ..gates import FeatureGates
    from ..state import ClusterState
    from .targets import PreviewPlan

#: references named in a summary subject before "and N more"
SUBJECT_REFS = 3


def _refs(refs: Sequence[str]) -> str:
    shown = ", ".join(refs[:SUBJECT_REFS])
    return shown + (f" and {len(refs) - SUBJECT_REFS} more" if len(refs) > SUBJECT_REFS else "")


def subject_of(plan: "PreviewPlan", fallback: str = "") -> str:
    """What the summary line speaks of: ``pod ml-team/trainer-0``, ``ResourceClaim ml-team/a``,
    ``claims ml-team/a, ml-team/b``, ``ResourceClaimTemplate ml-team/t``, ``PodGroup ml-team/g``
    (the objects, not the command line that named them); ``fallback`` when the plan has none."""
    pods = list(dict.fromkeys(pod_ref(p) for p in plan.pods))
    if pods:
        return (f"pod {pods[0]}" if len(pods) == 1 else f"pods {_refs(pods)}")
    kinds: dict[tuple[str, str], list[str]] = {}
    for claim in plan.claims:
        origin = str(claim.origin or "").split(" ")[0]
        if origin.startswith("podgroup/"):
            kind, ref = ("PodGroup", "pod groups"), origin[len("podgroup/"):]
        elif origin.startswith("template/"):
            kind, ref = ("ResourceClaimTemplate", "templates"), f"{claim.namespace}/{origin[len('template/'):]}"
        else:
            kind, ref = ("ResourceClaim", "claims"), f"{claim.namespace}/{claim.name}"
        refs = kinds.setdefault(kind, [])
        if ref not in refs:
            refs.append(ref)
    parts = [f"{one} {refs[0]}" if len(refs) == 1 else f"{many} {_refs(refs)}"
             for (one, many), refs in kinds.items()]
    return ", ".join(parts) or fallback


def explain_plan(state: "ClusterState", gates: "FeatureGates", plan: "PreviewPlan",
                 nodes: Sequence[str] | None = None, target: str = "",
                 progress: Callable[[int, int], None] | None = None,
                 timeout: float | None = FILTER_TIMEOUT,
                 warn: Callable[[str], None] | None = None) -> Explanation:
    """Run the preview's per-node loop with an explain tracer on every node; an Explanation.

    The summary speaks of the plan's pods or claims (``target`` only when it has none).
    ``nodes`` are the node names asked for (None: every node); ``timeout`` bounds the run as
    for a preview; ``warn`` hears about a state without Node objects.
    """
    candidates = candidate_nodes(state, nodes, warn=warn)
    if not candidates:
        raise UsageError("the cluster state has no nodes to explain (no Node objects and no node-local slices); "
                         "use --node NAME")
    index = ClusterIndex(state)  # one index for the previews and the reasons: CEL answers computed once
    reasons = NodeReasons(state, gates, index)
    result = run_preview(state, plan, gates, candidates, progress=progress, timeout=timeout, index=index,
                         reasons=reasons, tracer_factory=lambda node: reasons.tracer(node_name(node)))
    by_name = {node_name(n): n for n in candidates}
    explained = [outcome.explanation or reasons.explain(
        outcome.node, outcome.status, [c.claim for c in plan.claims_for(by_name[outcome.node])], outcome.tracer,
        before=outcome.reasons, error=outcome.error) for outcome in result.nodes]
    for outcome, node in zip(result.nodes, explained):  # a pod's refusing filter and what explain adds
        node.filter, node.detail = outcome.plugin, list(outcome.detail)
    claim_keys = [(str(r["namespace"]), str(r["name"])) for r in plan.claim_refs()]
    exp = explanation(subject_of(plan, target), explained, every_node=not nodes, claims=claim_keys)
    if plan.pods:
        exp.notes = list(result.notes)
        if not result.fitting:
            exp.fit_error = result.fit_error()
    return exp
