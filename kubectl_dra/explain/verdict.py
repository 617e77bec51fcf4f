"""The one source of why claims do (not) fit a node, in the words every command prints.

``preview``'s REASON column, ``explain``'s node lines and summary, ``fit``'s stop reasons
(and anything else that says why a node is out) read a node's reason from
:meth:`NodeReasons.explain`: the allocator's verdict for the node, the trace of a search with
an :class:`~kubectl_dra.explain.tracer.ExplainTracer` whose rejections the run's
:class:`~kubectl_dra.explain.refine.SelectionRefiner` restates in funnel order, and the
reasons found before any device was looked at (a pod that may not land there, DRA off).
Two callers with the same inputs therefore get the same words.

This module knows nothing of previews or plans: the per-node loop that calls it is
:func:`kubectl_dra.preview.run.evaluate_node`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..allocation.index import ClusterIndex
from .funnel import NodeExplanation
from .node import explain_node
from .refine import SelectionRefiner
from .tracer import ExplainTracer

if TYPE_CHECKING:
    from ..allocation.trace import Tracer
    from ..gates import FeatureGates
    from ..state import ClusterState

__all__ = ["NodeReasons"]


class NodeReasons:
    """Why claims do (not) fit each node of one snapshot: one per run (a preview, an explain,
    a count's final state); its refiner's caches live as long as it does.

    ``state`` is the snapshot the reasons speak of (it names the claims holding devices),
    ``index`` the allocator's index of it when the caller has one (built on first need).
    """

    def __init__(self, state: "ClusterState", gates: "FeatureGates | None", index: ClusterIndex | None = None) -> None:
        self.state = state
        self.gates = gates
        self._index = index
        self._refiner: SelectionRefiner | None = None

    @property
    def refiner(self) -> SelectionRefiner:
        """The run's refiner (made on first need: most previews fit everywhere)."""
        if self._refiner is None:
            self._refiner = SelectionRefiner(self.state, self.gates, self._index)
        return self._refiner

    def tracer(self, node: str) -> ExplainTracer:
        """A tracer for one allocation attempt on ``node`` whose trace :meth:`explain` reads."""
        return ExplainTracer(node, refine=self.refiner)

    def traced(self, tracer: "Tracer | None") -> bool:
        """Whether ``tracer`` is one of this run's (its trace gives the reasons as they are)."""
        return isinstance(tracer, ExplainTracer) and tracer.refine is self._refiner and tracer.refine is not None

    def explain(self, node: str, status: str, claims: Sequence[Mapping[str, Any]], tracer: "Tracer | None", *,
                results: Sequence[Mapping[str, Any] | None] = (), before: Sequence[str] = (),
                error: str | None = None) -> NodeExplanation:
        """The node's explanation, whose ``reason`` is THE one-line reason for the node.

        ``status`` is the allocator's verdict (Allocated, Unschedulable, Error), ``claims``
        the claims allocated together there, ``tracer`` one of :meth:`tracer`'s (None when
        no search ran), ``results`` the AllocationResult per claim when allocated, ``before``
        what ruled the node out before any device was looked at, ``error`` the error text."""
        trace = tracer if isinstance(tracer, ExplainTracer) else None
        return explain_node(node, status, claims, trace, results=results, reasons=before, error=error)
