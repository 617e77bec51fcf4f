"""The ``kubectl-dra/v1 Preview`` document (``preview -o json``): a stable contract.

Shape::

    {"apiVersion": "kubectl-dra/v1", "kind": "Preview",
     "featureGates": {...}, "claims": [{"namespace", "name"}],
     "nodes": [{"node", "status": "Allocated", "score", "allocations": [{"namespace", "name", "allocation"}]},
               {"node", "status": "Unschedulable", "reasons": [...]},
               {"node", "status": "Error", "error": "..."}]}

``allocation`` is a Kubernetes AllocationResult exactly as it would be stored in
``ResourceClaim.status.allocation``. ``claims`` lists every claim of the preview; a node's
``allocations`` has one entry per claim in that order, except the implicit claim for
extended resources on nodes that serve all of them through a device plugin (no claim is
needed there). Already-allocated claims appear with their stored allocation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..gates import effective_gates
from ..types import Obj
from .run import ALLOCATED, ERROR, NodeOutcome, PreviewResult

if TYPE_CHECKING:
    from ..gates import FeatureGates

API_VERSION = "kubectl-dra/v1"
KIND = "Preview"



def gates_dict(gates: "FeatureGates | None") -> dict[str, bool]:
    """The effective feature gates as ``{name: enabled}``, sorted by name (without a gate
    set, the newest release's defaults: :func:`~kubectl_dra.gates.effective_gates`)."""
    values = effective_gates(gates).as_dict()
    return {name: bool(values[name]) for name in sorted(values)}


def node_entry(outcome: NodeOutcome) -> Obj:
    """One element of ``nodes``."""
    entry: Obj = {"node": outcome.node, "status": outcome.status}
    if outcome.status == ALLOCATED:
        entry["score"] = outcome.score
        entry["allocations"] = [
            {"namespace": claim.namespace, "name": claim.name, "allocation": allocation}
            for claim, allocation in outcome.allocations
        ]
    elif outcome.status == ERROR:
        entry["error"] = outcome.error or ""
    else:
        entry["reasons"] = list(outcome.reasons)
    return entry


def preview_document(result: PreviewResult) -> Obj:
    """The whole document, key order as documented."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "featureGates": gates_dict(result.gates),
        "claims": result.plan.claim_refs(),
        "nodes": [node_entry(o) for o in result.nodes],
    }
