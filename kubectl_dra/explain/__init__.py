"""Explain allocation: why claims do (not) fit each node, device by device.

- :mod:`.tracer` -- the allocator's Tracer hook: the first rejection of each device per request
- :mod:`.refine` -- restating rejections in funnel order, through the allocator's index and CEL path
- :mod:`.funnel` -- per-request funnels (requests parsed by :mod:`kubectl_dra.model.claims`), the node and request explanation types
- :mod:`.reasons` -- the deciding reason of a node, worded from typed rejection details
- :mod:`.node` -- one node's explanation from its trace and the allocator's verdict
- :mod:`.cluster` -- across nodes: the summary line and cluster-wide findings
- :mod:`.document` -- the ``kubectl-dra/v1 Explanation`` JSON document
- :mod:`.verdict` -- :class:`~.verdict.NodeReasons`: THE one-line reason of a node, which
  preview, explain, fit and pending all read (through :func:`kubectl_dra.preview.run.evaluate_node`)

Explaining a preview plan on nodes (:func:`kubectl_dra.preview.explained.explain_plan`) lives
with the preview's per-node loop: the preview package uses this one, never the reverse.

The allocation outcome is the truth: a node's status always comes from the allocator's
result, and the trace only says why. No click, no I/O.
"""

from __future__ import annotations

from .cluster import Explanation, cluster_findings, explanation
from .document import DOCUMENT_KEYS, explanation_to_dict, node_to_dict, request_results, request_to_dict
from .funnel import (
    ALLOCATED, ERROR, STAGES, UNSCHEDULABLE, FunnelStage, NodeExplanation, RequestExplanation,
    explain_request,
)
from .node import explain_node
from .reasons import node_reason, request_reason
from .refine import SelectionRefiner
from .tracer import ExplainTracer, RequestTrace
from .verdict import NodeReasons

__all__ = [
    "ALLOCATED", "DOCUMENT_KEYS", "ERROR", "STAGES", "UNSCHEDULABLE", "Explanation", "ExplainTracer", "FunnelStage",
    "NodeExplanation", "NodeReasons", "RequestExplanation", "RequestTrace", "SelectionRefiner", "cluster_findings",
    "explain_node", "explain_request", "explanation", "explanation_to_dict", "node_reason", "node_to_dict",
    "request_reason", "request_results", "request_to_dict",
]
