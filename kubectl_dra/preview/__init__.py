"""``kubectl dra preview``'s core: resolve targets into claims, run the allocator on every
candidate node (for pods, after kube-scheduler's other filters: :func:`evaluate_pod`), rank
the nodes and build the ``kubectl-dra/v1 Preview`` document.

No click here: the presenter is :mod:`kubectl_dra.cli.preview`.
"""

from .targets import PreviewClaim, PreviewPlan, parse_target, resolve_targets
from .run import NodeOutcome, PreviewResult, candidate_nodes, run_preview
from .document import preview_document
from .pods import evaluate_pod, scheduling_index

__all__ = [
    "NodeOutcome", "PreviewClaim", "PreviewPlan", "PreviewResult", "candidate_nodes",
    "evaluate_pod", "parse_target", "preview_document", "resolve_targets", "run_preview", "scheduling_index",
]
