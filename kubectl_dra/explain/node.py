"""One node's explanation: the allocator's verdict, each request's funnel from the node's
trace, and the deciding reason."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..allocation.trace import Rejection, RejectionCode
from ..model.claims import parse_claim
from .funnel import NodeExplanation, RequestExplanation, explain_request
from .reasons import is_attempt_rejection, node_reason
from ..types import ClaimKey, DeviceID, claim_key
from .tracer import ExplainTracer, RequestTrace

C = RejectionCode


def _trace_for(tracer: ExplainTracer | None, claim: ClaimKey, name: str) -> RequestTrace | None:
    if tracer is None:
        return None
    trace = tracer.requests.get((claim, name))
    if trace is None and "/" in name:
        trace = tracer.requests.get((claim, name.split("/")[0]))
    return trace


def explain_node(node: str, status: str, claims: Sequence[Mapping[str, Any]], tracer: ExplainTracer | None, *,
                 results: Sequence[Mapping[str, Any] | None] = (), reasons: Sequence[str] = (),
                 error: str | None = None, plugin: str = "", detail: Sequence[str] = ()) -> NodeExplanation:
    """Explain one node: ``status`` is the allocator's verdict, ``results`` the AllocationResult
    per claim when allocated (None for claims that were allocated before)."""
    requests: list[RequestExplanation] = []
    for i, claim in enumerate(claims):
        key = claim_key(claim)
        chosen = _chosen_devices(results[i] if i < len(results) else None)
        for spec in parse_claim(claim).all_requests:
            trace = _trace_for(tracer, key, spec.name)
            # pop: a repeated request name (stored before validation forbade it) gets the devices once
            requests.append(explain_request(key, spec, trace, chosen.pop(spec.name, [])))
    attempt = frozenset(tracer.attempt_claims) if tracer is not None else frozenset()
    _restate_picked(requests, tracer, attempt)
    pools = [(d, p, r) for (d, p), r in (tracer.pools.items() if tracer else [])]
    refs = frozenset(f"{k[0]}/{k[1]}" for k in map(claim_key, claims))
    explanation = NodeExplanation(node, status, "", requests, pools, error, refs, attempt, plugin, list(detail))
    explanation.reason = node_reason(explanation, reasons)
    return explanation


def _restate_picked(requests: Sequence[RequestExplanation], tracer: ExplainTracer | None,
                    attempt: frozenset[str]) -> None:
    """Say which request of the attempt had picked a device the search then found "in use"
    (a backtracking artifact, not another workload): ``already picked for request gpus of this claim``."""
    if not any(is_attempt_rejection(rejection, attempt)
               for req in requests for _, rejection in req.rejections.get(C.IN_USE, ())):
        return  # the usual case: nothing to restate
    pickers: dict[DeviceID, list[tuple[ClaimKey, str]]] = {}
    for req in requests:  # the final allocation first, then any tentative pick
        for device in req.allocated:
            pickers.setdefault(device, []).append((req.claim, req.spec.name))
    for (claim, name), trace in (tracer.requests.items() if tracer else []):
        for device in trace.selected:
            pickers.setdefault(device, []).append((claim, name))
    for req in requests:
        devices = req.rejections.get(C.IN_USE) or []
        for i, (device, rejection) in enumerate(devices):
            if is_attempt_rejection(rejection, attempt):
                holder = next((p for p in pickers.get(device, []) if p != (req.claim, req.spec.name)), None)
                devices[i] = (device, _picked(req.claim, holder, rejection))


def _picked(claim: ClaimKey, holder: tuple[ClaimKey, str] | None, rejection: Rejection) -> Rejection:
    """An attempt's "in use" rejection restated as the request that had picked the device."""
    if holder is None:
        text, details = "already picked for another request in this attempt", {}
    else:
        details = {"pickedFor": {"claim": f"{holder[0][0]}/{holder[0][1]}", "request": holder[1]}}
        if holder[0] == claim:
            text = f"already picked for request {holder[1]} of this claim"
        else:
            text = f"already picked for request {holder[1]} of claim {holder[0][0]}/{holder[0][1]} (allocated together)"
    return Rejection(C.IN_USE, text, {**(rejection.details or {}), **details, "thisAttempt": True})


def _chosen_devices(result: Mapping[str, Any] | None) -> dict[str, list[DeviceID]]:
    chosen: dict[str, list[DeviceID]] = {}
    for r in (((result or {}).get("devices") or {}).get("results")) or []:
        chosen.setdefault(str(r.get("request") or ""), []).append(
            (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or "")))
    return chosen
