"""The ``kubectl-dra/v1 Explanation`` document (``explain -o json|yaml``)."""

from __future__ import annotations

from typing import Any, Mapping

from ..scheduling import MODELLED
from .cluster import Explanation
from .funnel import NodeExplanation, RequestExplanation
from ..types import DeviceID, Obj

#: top-level keys of the ``kubectl-dra/v1 Explanation`` document, in order (``explain --help`` lists them)
DOCUMENT_KEYS = ("apiVersion", "kind", "target", "summary", "fit", "total", "featureGates", "claims", "reasons",
                 "cluster", "nodes", "modelled")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _device(d: DeviceID) -> Obj:
    return {"driver": d[0], "pool": d[1], "device": d[2]}


def request_results(node: NodeExplanation) -> list[str]:
    """Each request's RESULT on the node: a request with enough usable devices that the search
    gave up only because another request falls short reads "satisfiable on its own"."""
    short = [r for r in node.requests if r.shortfall() is not None]
    out = []
    for req in node.requests:
        if short and req.evaluated and not req.allocated and all(req is not r for r in short):
            out.append("satisfiable on its own")
        else:
            out.append(req.result_text())
    return out


def request_to_dict(req: RequestExplanation, result: str | None = None) -> Obj:
    """One request's funnel, rejections and outcome."""
    return {
        "claim": {"namespace": req.claim[0], "name": req.claim[1]},
        "request": req.spec.name,
        "deviceClassName": req.spec.device_class,
        "allocationMode": req.spec.mode,
        "count": req.spec.count,
        "evaluated": req.evaluated,
        "candidates": req.candidates,
        "needed": req.needed,
        "usable": req.viable if req.evaluated else None,
        "funnel": [{"stage": s.label, "code": s.code.name, "rejected": s.rejected, "remaining": s.remaining}
                   for s in req.funnel],
        "rejections": [
            {"code": code.name, "count": len(devices),
             "devices": [{**_device(d), "message": r.message, "details": _jsonable(r.details)} for d, r in devices]}
            for code, devices in req.rejections.items()],
        "allocated": [_device(d) for d in req.allocated],
        "unsatisfied": list(req.unsatisfied),
        "result": result if result is not None else req.result_text(),
    }


def node_to_dict(node: NodeExplanation) -> Obj:
    """One node: status, reason, devices (when it fits), requests, skipped pools."""
    out: Obj = {"node": node.node, "status": node.status, "reason": node.reason}
    if node.filter:
        out["filter"] = node.filter
    if node.detail:
        out["detail"] = list(node.detail)
    if node.fits:
        out["devices"] = [_device(d) for r in node.requests for d in r.allocated]
    if node.error is not None:
        out["error"] = node.error
    out["requests"] = [request_to_dict(r, result) for r, result in zip(node.requests, request_results(node))]
    if node.pools_skipped:
        out["poolsSkipped"] = [{"driver": d, "pool": p, "code": r.code.name, "message": r.message}
                               for d, p, r in node.pools_skipped]
    return out


def explanation_to_dict(exp: Explanation, feature_gates: Mapping[str, bool] | None = None) -> Obj:
    """The ``kubectl-dra/v1 Explanation`` document (``explain -o json``): every node, every request,
    every rejected device (``NOT_IN_CLASS`` included), in a stable order (nodes that fit first, then
    by name; rejections in funnel order; devices in search order)."""
    doc: Obj = {"apiVersion": "kubectl-dra/v1", "kind": "Explanation", "target": exp.target,
                "summary": exp.summary(), "fit": len(exp.fitting), "total": len(exp.nodes)}
    if feature_gates is not None:
        doc["featureGates"] = dict(feature_gates)
    doc["claims"] = [{"namespace": ns, "name": name} for ns, name in exp.claims]
    doc["reasons"] = [{"reason": r, "nodes": n} for r, n in exp.reason_counts()]
    doc["cluster"] = list(exp.cluster)
    doc["nodes"] = [node_to_dict(n) for n in exp.nodes]
    doc["modelled"] = MODELLED
    if exp.fit_error:
        doc["fitError"] = exp.fit_error
    if exp.notes:
        doc["notes"] = list(exp.notes)
    return doc
