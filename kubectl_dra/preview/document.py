"""The ``kubectl-dra/v1 Preview`` document (``preview -o json``): a stable contract.

Shape::

    {"apiVersion": "kubectl-dra/v1", "kind": "Preview",
     "featureGates": {...}, "claims": [{"namespace", "name"}],
     "nodes": [{"node", "status": "Allocated", "score", "allocations": [{"namespace", "name", "allocation"}]},
               {"node", "status": "Unschedulable", "reasons": [...]},
               {"node", "status": "Error", "error": "..."}],
     "modelled": "...", "notes": [...]}

``allocation`` is a Kubernetes AllocationResult exactly as it would be stored in
``ResourceClaim.status.allocation``. ``claims`` lists every claim of the preview; a node's
``allocations`` has one entry per claim in that order, except the implicit claim for
extended resources on nodes that serve all of them through a device plugin (no claim is
needed there). Already-allocated claims appear with their stored allocation.

An Unschedulable node also names the ``filter`` that refused it (kube-scheduler's plugin:
``NodeResourcesFit``, ``PodTopologySpread``, ..., ``DynamicResources``) and, where known,
``detail`` (what is left, the domain's skew, the pod in the way). With pods, ``fitError``
is the scheduler's FailedScheduling line when no node fits. ``modelled`` says which filters
are modelled; ``notes`` (when present) what could not be checked for these pods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..gates import effective_gates
from ..scheduling import MODELLED
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
        if outcome.plugin:
            entry["filter"] = outcome.plugin
        if outcome.detail:
            entry["detail"] = list(outcome.detail)
    return entry


def preview_document(result: PreviewResult) -> Obj:
    """The whole document, key order as documented."""
    doc: Obj = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "featureGates": gates_dict(result.gates),
        "claims": result.plan.claim_refs(),
        "nodes": [node_entry(o) for o in result.nodes],
    }
    if result.plan.pods and not result.fitting:
        doc["fitError"] = result.fit_error()
    doc["modelled"] = MODELLED
    if result.notes:
        doc["notes"] = list(result.notes)
    return doc
