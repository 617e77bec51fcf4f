"""Explain a preview plan on nodes: the preview's per-node loop with an explain tracer on
every node, then one explanation per node and the summary across them (what ``kubectl dra
explain`` and ``preview --explain`` show; a script can call :func:`explain_plan` directly)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..allocation.index import ClusterIndex
from ..errors import UsageError
from ..limits import FILTER_TIMEOUT
from ..preview.nodes import node_name, pod_ref
from ..preview.run import candidate_nodes, run_preview
from .cluster import Explanation, explanation
from .node import explain_node
from .refine import SelectionRefiner
from .tracer import ExplainTracer

if TYPE_CHECKING:
    from ..gates import FeatureGates
    from ..preview.targets import PreviewPlan
    from ..state import ClusterState

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
    by_name = {node_name(n): n for n in candidates}
    index = ClusterIndex(state)  # one index for the previews and the refiner: CEL answers computed once
    refiner = SelectionRefiner(state, gates, index)
    result = run_preview(state, plan, gates, candidates, progress=progress, timeout=timeout, index=index,
                         tracer_factory=lambda node: ExplainTracer(node_name(node), refine=refiner))
    explained = []
    for outcome in result.nodes:
        claims = plan.claims_for(by_name[outcome.node])
        results: list[Mapping[str, Any] | None] = (
            [alloc for _, alloc in outcome.allocations] if outcome.allocated else [])
        tracer = outcome.tracer if isinstance(outcome.tracer, ExplainTracer) else None
        explained.append(explain_node(outcome.node, outcome.status, [c.claim for c in claims], tracer,
                                      results=results, reasons=outcome.reasons, error=outcome.error))
    claim_keys = [(str(r["namespace"]), str(r["name"])) for r in plan.claim_refs()]
    return explanation(subject_of(plan, target), explained, every_node=not nodes, claims=claim_keys)
