"""The pods of a preview plan as kube-scheduler's filters see them: every Filter plugin of
the default profile before DynamicResources (:mod:`kubectl_dra.scheduling`), against a
per-snapshot :class:`~kubectl_dra.scheduling.SchedulingIndex`.

:func:`evaluate_pod` is the one call for "where would this pod go": the whole chain,
DynamicResources included, per node, with the scheduler's FitError line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from ..gates import FeatureGates, effective_gates
from ..model.nodes import node_name
from ..scheduling import PodFilters, SchedulingIndex, Status
from ..scheduling.nodeinfo import pod_key
from ..types import Obj

if TYPE_CHECKING:
    from ..allocation import Allocator
    from ..allocation.index import ClusterIndex
    from ..state import ClusterState
    from .run import PreviewResult
    from .targets import PreviewPlan


class PlanPods:
    """Every pod of a plan with its PreFilter state; a node passes when each pod's chain lets it through."""

    def __init__(self, index: SchedulingIndex, plan: "PreviewPlan") -> None:
        self.index = index
        dra: set[str] = set()
        for ext in plan.extended:
            dra.update(ext.classes)
        self.filters = [PodFilters(index, pod, dra) for pod in plan.pods]

    @property
    def notes(self) -> list[str]:
        """What the chain could not check for these pods (volumes, unknown node resources)."""
        return list(dict.fromkeys(n for f in self.filters for n in f.notes))

    def filter(self, node: str) -> Status | None:
        """The first refusal of ``node`` among the plan's pods (None: every pod passes every filter)."""
        for filters in self.filters:
            status = filters.filter(node)
            if status is not None:
                return status
        return None

    def bind(self, pods: Sequence[Obj], node: str) -> None:
        """Bind copies of the plan's pods (a replica, in the plan's order) to ``node``: the index
        and every pod's counts follow."""
        for pod, filters_of in zip(pods, self.filters):
            info = self.index.add_pod(pod, node, like=filters_of.info)
            for filters in self.filters:
                filters.observe(info, node)

    def spread_minimums(self) -> tuple[int, ...]:
        """Each spread constraint's global minimum now (a refusal by spread can lift only when one rises)."""
        return tuple(m for f in self.filters for m in f.spread_minimums())

    @property
    def has_affinity(self) -> bool:
        """Whether a pod has required pod affinity (a replica may let another node pass)."""
        return any(f.affinity_terms for f in self.filters)

    @property
    def interacts(self) -> bool:
        """Whether binding a copy of these pods may change their answer on other nodes than
        its own: they have spread constraints, pod affinity or anti-affinity."""
        return any(f.constraints or f.affinity_terms or f.anti_terms for f in self.filters)


def scheduling_index(state: "ClusterState", nodes: Sequence[Obj], plan: "PreviewPlan | None" = None) -> SchedulingIndex:
    """The snapshot's NodeInfo index, without the plan's own pods (a bound pod previewed is
    placed anew, not counted against itself)."""
    index = SchedulingIndex.of_state(state, nodes)
    for pod in (plan.pods if plan is not None else ()):
        index.remove_pod(*pod_key(pod))
    return index


def plan_pods(state: "ClusterState", plan: "PreviewPlan", nodes: Sequence[Obj],
              index: SchedulingIndex | None = None) -> PlanPods | None:
    """The plan's pods against ``index`` (built from ``state`` when not given); None without pods."""
    if not plan.pods:
        return None
    return PlanPods(index if index is not None else scheduling_index(state, nodes, plan), plan)


def evaluate_pod(state: "ClusterState", pod: Obj, nodes: Sequence[Obj] | None = None,
                 gates: FeatureGates | None = None, *, namespace: str = "default",
                 scheduling: SchedulingIndex | None = None, index: "ClusterIndex | None" = None,
                 allocator: "Allocator | None" = None, explain_failures: bool = False,
                 timeout: float | None = None,
                 warn: Callable[[str], None] | None = None) -> "PreviewResult":
    """Where kube-scheduler's default profile would let ``pod`` go: per node, Allocated (with
    the claims' allocations) or Unschedulable with the first failing filter's reasons in
    the scheduler's words (``outcome.plugin``, ``outcome.reasons``, ``outcome.detail``);
    ``result.fit_error()`` is the FailedScheduling line. ``nodes`` default to every node;
    ``scheduling`` is the caller's index of the snapshot (built here when not given; the
    pod itself is not counted in one built here)."""
    from .run import candidate_nodes, run_preview
    from .targets import Resolver

    gates = effective_gates(gates)
    resolver = Resolver(state, namespace, gates)
    resolver.add_pod(dict(pod))
    plan = resolver.plan
    candidates = list(nodes) if nodes is not None else candidate_nodes(state, warn=warn)
    return run_preview(state, plan, gates, candidates, allocator=allocator, index=index, timeout=timeout,
                       explain_failures=explain_failures, scheduling=scheduling)


__all__ = ["PlanPods", "evaluate_pod", "node_name", "plan_pods", "scheduling_index"]
