"""Run the allocator for every candidate node and rank the nodes as the scheduler would.

:func:`evaluate_node` is the per-node evaluation every command shares: the node's status,
its allocations and, for a node that does not fit, its one-line reason from
:class:`~kubectl_dra.explain.verdict.NodeReasons` (the one source of reasons, which
``explain`` and ``fit`` read too). Commands that judge nodes (preview, explain, fit,
pending) call it, or :func:`run_preview` for a list of nodes, and read
:attr:`NodeOutcome.reason`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from ..limits import CANNOT_ALLOCATE, FILTER_TIMEOUT, TIMED_OUT
from ..errors import DraError, NotFoundError
from ..gates import BASE_GATE, effective_gates
from ..types import Obj
from ..state import ClusterState
from .nodes import node_name, slice_node_names
from .targets import PreviewClaim, PreviewPlan

if TYPE_CHECKING:
    from ..allocation import Allocator
    from ..allocation.index import ClusterIndex
    from ..allocation.trace import Tracer
    from ..explain.funnel import NodeExplanation
    from ..explain.verdict import NodeReasons
    from ..gates import FeatureGates
    from ..scheduling import SchedulingIndex
    from .pods import PlanPods


#: the DynamicResources filter (the allocator), last in a pod's chain
DYNAMIC_RESOURCES = "DynamicResources"
#: the scheduler's words for a claim allocated with devices the node cannot reach
CLAIM_NOT_AVAILABLE = "resourceclaim not available on the node"

ALLOCATED = "Allocated"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"

#: why nothing is allocated anywhere when the base gate is off
DRA_DISABLED = (f"feature gate {BASE_GATE} is disabled: the scheduler allocates no devices and the API server "
                "serves no ResourceClaims")


@dataclass(slots=True)
class NodeOutcome:
    """The preview's answer for one node."""

    node: str
    status: str
    score: int = 0
    #: (claim, AllocationResult dict) in the order of the plan; already-allocated claims keep theirs
    allocations: list[tuple[PreviewClaim, Obj]] = field(default_factory=list)
    #: why the node is unschedulable (empty for the others: one shared empty tuple)
    reasons: Sequence[str] = ()
    error: str | None = None
    #: the tracer used for this node (when explaining), for presenters
    tracer: "Tracer | None" = None
    #: the node's explanation, when :class:`NodeReasons` made one (its ``reason`` is :attr:`reason`)
    explanation: "NodeExplanation | None" = None
    #: for pods: the filter plugin that refused the node ("NodeResourcesFit", ..., "DynamicResources")
    plugin: str = ""
    #: what explain adds to the reason: amounts, domains, the pods in the way
    detail: Sequence[str] = ()
    #: the refusal in kube-scheduler's words (what its FailedScheduling event counts)
    scheduler_reasons: Sequence[str] = ()

    @property
    def allocated(self) -> bool:
        return self.status == ALLOCATED

    @property
    def reason(self) -> str:
        """The one-line reason: "fits", the error, or why the node is unschedulable."""
        if self.explanation is not None:
            return self.explanation.reason
        if self.status == ALLOCATED:
            return "fits"
        if self.status == ERROR:
            return f"error: {self.error or 'allocation failed'}"
        return "; ".join(self.reasons) or CANNOT_ALLOCATE


@dataclass
class PreviewResult:
    """Everything a presenter needs: the plan, the gates and the ranked per-node outcomes."""

    plan: PreviewPlan
    gates: "FeatureGates | None"
    nodes: list[NodeOutcome]
    #: what the filters could not check for the plan's pods (volumes, unknown node resources)
    notes: list[str] = field(default_factory=list)

    @property
    def fitting(self) -> list[NodeOutcome]:
        return [n for n in self.nodes if n.allocated]

    def fit_error(self) -> str:
        """kube-scheduler's FailedScheduling line for these nodes (``0/5 nodes are available: ...``)."""
        from ..scheduling import fit_error

        return fit_error(len(self.nodes), (n.scheduler_reasons or ([n.error] if n.error else n.reasons)
                                           for n in self.nodes if not n.allocated))

    @property
    def all_errors(self) -> bool:
        """True when every node ended in an error (the input cannot be evaluated anywhere)."""
        return bool(self.nodes) and all(n.status == ERROR for n in self.nodes)


def candidate_nodes(state: ClusterState, names: Sequence[str] | None = None,
                    warn: Callable[[str], None] | None = None) -> list[Obj]:
    """The Node objects to try: ``names`` (in the order given) or every node in the state.

    A state without Node objects (a dump of DRA objects only) falls back to the nodes that
    ResourceSlices name, as bare nodes without labels.
    """
    nodes = list(state.nodes)
    if not nodes:
        known = slice_node_names(state.resource_slices)
        wanted = list(names) if names else known
        if warn is not None and wanted:
            warn("the cluster state has no Node objects; previewing for bare nodes without labels "
                 f"({', '.join(wanted[:5])}{', …' if len(wanted) > 5 else ''})")
        return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}} for n in wanted]
    if not names:
        return sorted(nodes, key=node_name)
    by_name = {node_name(n): n for n in nodes}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise NotFoundError(f"Node {missing[0]!r} not found in the cluster state")
    return [by_name[n] for n in dict.fromkeys(names)]  # each once, in the order given


def explain_outcome(reasons: "NodeReasons", allocator: "Allocator", node: Obj, claims: "NodeClaims",
                    outcome: NodeOutcome, deadline: float | None = None) -> NodeOutcome:
    """``outcome`` with its explanation from ``reasons`` (the one source of node reasons).

    An unschedulable node whose search ran without one of ``reasons``' tracers is searched
    again with one (the search is deterministic: same verdict, now with its trace); if that
    attempt fails (time is up), the node keeps the scheduler's generic words."""
    from ..errors import DraError

    tracer = outcome.tracer
    searched = list(outcome.reasons) == [CANNOT_ALLOCATE]  # (not ruled out before the search)
    if outcome.status == UNSCHEDULABLE and searched and claims.open and not reasons.traced(tracer):
        tracer = reasons.tracer(outcome.node)
        try:
            allocator.allocate(node, claims.open, tracer=tracer, deadline=deadline, name=outcome.node)
        except DraError:
            outcome.reasons = [CANNOT_ALLOCATE]
            return outcome
    results: list[Obj | None] = [alloc for _, alloc in outcome.allocations] if outcome.allocated else []
    explanation = reasons.explain(outcome.node, outcome.status, [c.claim for c in claims.all], tracer,
                                  results=results, before=outcome.reasons, error=outcome.error)
    outcome.tracer, outcome.explanation = tracer, explanation
    if outcome.status == UNSCHEDULABLE:
        outcome.reasons = [explanation.reason]
    return outcome


@dataclass(frozen=True, slots=True)
class NodeClaims:
    """The claims to allocate together on one node (``all``, in plan order) and those of
    them still without an allocation (``open``, as ResourceClaim dicts)."""

    all: list[PreviewClaim]
    open: list[Obj]

    @classmethod
    def of(cls, plan: PreviewPlan, node: Obj) -> "NodeClaims":
        claims = plan.claims_for(node)
        return cls(claims, [c.claim for c in claims if c.allocation is None])


def evaluate_node(allocator: "Allocator", plan: PreviewPlan, node: Obj, tracer: "Tracer | None" = None,
                  explain_failures: bool = True, deadline: float | None = None,
                  claims: NodeClaims | None = None, reasons: "NodeReasons | None" = None,
                  pods: "PlanPods | None" = None) -> NodeOutcome:
    """Allocate the plan's open claims on one node and combine them with the claims already
    allocated; an Error outcome once ``deadline`` (``time.monotonic()``) has passed.
    ``claims`` is ``NodeClaims.of(plan, node)`` when the caller has it already.

    With ``explain_failures`` an unschedulable node's :attr:`~NodeOutcome.reason` comes from
    ``reasons`` (made here from the allocator's snapshot when not given; a run over many
    nodes passes one); a node searched with one of ``reasons``' tracers gets its explanation
    whatever its status (what explain shows).

    With ``pods`` (the plan's pods against the snapshot's NodeInfo index), every filter of
    kube-scheduler's default profile before DynamicResources runs first; the first refusal
    ends the node in the scheduler's words (``plugin``, ``scheduler_reasons``, ``detail``)."""
    outcome, claims = _evaluate(allocator, plan, node, tracer, deadline, claims, pods)
    failed = outcome.status == UNSCHEDULABLE and explain_failures
    if failed and reasons is None:
        from ..explain.verdict import NodeReasons

        reasons = NodeReasons(allocator.state, allocator.gates, allocator.cluster)
    if reasons is not None and (failed or reasons.traced(tracer)):
        outcome = explain_outcome(reasons, allocator, node, claims, outcome, deadline)
    return outcome


def _evaluate(allocator: "Allocator", plan: PreviewPlan, node: Obj, tracer: "Tracer | None",
              deadline: float | None, claims: NodeClaims | None,
              pods: "PlanPods | None" = None) -> tuple[NodeOutcome, NodeClaims]:
    """The filter chain's verdict for one node (see :func:`evaluate_node`), without reasons."""
    name = node_name(node)
    if claims is None:
        claims = NodeClaims.of(plan, node)
    if deadline is not None and time.monotonic() > deadline:
        return NodeOutcome(name, ERROR, error=TIMED_OUT, tracer=tracer), claims
    if pods is not None:
        status = pods.filter(name)
        if status is not None:
            return NodeOutcome(name, UNSCHEDULABLE, reasons=status.reasons, tracer=tracer, plugin=status.plugin,
                               detail=status.detail, scheduler_reasons=status.reasons), claims
        blockers = plan.claim_blockers(node)
        if blockers:
            return NodeOutcome(name, UNSCHEDULABLE, reasons=blockers, tracer=tracer, plugin=DYNAMIC_RESOURCES,
                               scheduler_reasons=(CLAIM_NOT_AVAILABLE,)), claims
    else:
        blockers = plan.blockers(node)
        if blockers:
            return NodeOutcome(name, UNSCHEDULABLE, reasons=blockers, tracer=tracer), claims
    results: list[Obj] = []
    score = 0
    if claims.open:
        try:
            outcome = allocator.allocate(node, claims.open, tracer=tracer, deadline=deadline, name=name)
        except DraError as exc:
            return NodeOutcome(name, ERROR, error=exc.message, tracer=tracer), claims
        if not outcome.allocated:
            # (the filter is named for pods, whose chain has others; a claim's only filter is this one)
            return NodeOutcome(name, UNSCHEDULABLE, reasons=[CANNOT_ALLOCATE], tracer=tracer,
                               plugin=DYNAMIC_RESOURCES if pods is not None else "",
                               scheduler_reasons=(CANNOT_ALLOCATE,)), claims
        results, score = outcome.results, outcome.score
    by_claim = iter(results)  # (claims allocated before keep their allocation)
    allocations = [(c, c.allocation if c.allocation is not None else next(by_claim)) for c in claims.all]
    return NodeOutcome(name, ALLOCATED, score=score, allocations=allocations, tracer=tracer), claims


def rank(outcomes: Iterable[NodeOutcome]) -> list[NodeOutcome]:
    """Allocated nodes first (higher score, then name), then unschedulable, then errors, by name."""
    order = {ALLOCATED: 0, UNSCHEDULABLE: 1, ERROR: 2}
    return sorted(outcomes, key=lambda o: (order.get(o.status, 3), -o.score if o.status == ALLOCATED else 0, o.node))


def run_preview(state: ClusterState, plan: PreviewPlan, gates: "FeatureGates | None", nodes: Sequence[Obj],
                tracer_factory: Callable[[Obj], "Tracer"] | None = None, allocator: "Allocator | None" = None,
                progress: Callable[[int, int], None] | None = None,
                explain_failures: bool = True, timeout: float | None = FILTER_TIMEOUT,
                index: "ClusterIndex | None" = None, reasons: "NodeReasons | None" = None,
                scheduling: "SchedulingIndex | None" = None) -> PreviewResult:
    """Try ``plan`` on every node in ``nodes``; ``tracer_factory(node)`` gives a tracer per node.

    With ``explain_failures`` an unschedulable node's reason is the one every command gives
    (:class:`~kubectl_dra.explain.verdict.NodeReasons`, made for the run when ``reasons`` is
    not given) instead of the scheduler's generic "cannot allocate all claims". With
    ``tracer_factory`` giving ``reasons``' tracers, every node gets its explanation
    (``NodeOutcome.explanation``, what explain shows). ``timeout``
    (seconds; None or 0: no limit) bounds the whole run, as the scheduler's filter timeout
    bounds one node: nodes not decided by then end as errors with the scheduler's words.
    ``index`` is the caller's :class:`~kubectl_dra.allocation.index.ClusterIndex` of
    ``state``, kept across previews of one snapshot (built here when not given). A plan with
    pods goes through the scheduler's other filters first (:mod:`kubectl_dra.scheduling`),
    against ``scheduling``, the caller's index of the snapshot's nodes and bound pods (built
    here when not given).
    """
    from .pods import plan_pods

    deadline = time.monotonic() + timeout if timeout else None
    gates = effective_gates(gates)
    pods = plan_pods(state, plan, nodes, scheduling)
    notes = pods.notes if pods is not None else []
    if not gates.enabled(BASE_GATE) and (plan.claims or plan.extended):
        # no DRA: the scheduler's DynamicResources plugin is off and allocates nothing
        outcomes = [NodeOutcome(node_name(n), UNSCHEDULABLE, reasons=[DRA_DISABLED]) for n in nodes]
        if reasons is not None:
            outcomes = [reasons_for_blocked(reasons, plan, n, o) for n, o in zip(nodes, outcomes)]
        return PreviewResult(plan=plan, gates=gates, nodes=rank(outcomes), notes=notes)
    if allocator is None:
        from ..allocation import Allocator

        # claims being previewed are left out of the in-use devices by key (Allocator.allocate),
        # so a claim from a file does not compete with its stored namesake
        allocator = Allocator(state, gates, index)
        index = allocator.cluster
    if reasons is None and explain_failures:
        from ..explain.verdict import NodeReasons

        reasons = NodeReasons(state, gates, index)
    # without implicit claims for extended resources, every node gets the same claims
    same = NodeClaims.of(plan, nodes[0]) if nodes and not plan.extended else None
    outcomes = []
    for i, node in enumerate(nodes):
        tracer = tracer_factory(node) if tracer_factory is not None else None
        outcomes.append(evaluate_node(allocator, plan, node, tracer, explain_failures, deadline, same, reasons,
                                      pods))
        if progress is not None:
            progress(i + 1, len(nodes))
    return PreviewResult(plan=plan, gates=gates, nodes=rank(outcomes), notes=notes)


def reasons_for_blocked(reasons: "NodeReasons", plan: PreviewPlan, node: Obj, outcome: NodeOutcome) -> NodeOutcome:
    """A node ruled out before any search, explained by ``reasons`` (no trace)."""
    claims = NodeClaims.of(plan, node)
    outcome.explanation = reasons.explain(outcome.node, outcome.status, [c.claim for c in claims.all], None,
                                          before=outcome.reasons)
    return outcome
