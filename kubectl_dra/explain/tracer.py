"""The explain tracer: the allocator's :class:`~kubectl_dra.allocation.trace.Tracer` hook that
records, per (claim, request), the first reason each candidate device was refused.

It records what the search reports and nothing else; a :class:`Refiner` (see
:mod:`kubectl_dra.explain.refine`) may restate a rejection in funnel order as it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from ..allocation.trace import NullTracer, Rejection, RejectionCode
from ..types import ClaimKey, DeviceID, claim_key, claim_ref

__all__ = ["ExplainTracer", "Refiner", "RequestTrace"]


class Refiner(Protocol):
    """Restates a rejection as it is recorded (only for the codes in ``restates``)."""

    restates: frozenset[RejectionCode]

    def __call__(self, claim: Mapping[str, Any], request: str, driver: str, pool: str, device: str,
                 rejection: Rejection) -> Rejection:
        """The rejection to record instead of ``rejection``."""


@dataclass(slots=True)
class RequestTrace:
    """What the search saw for one request of one claim on one node."""

    claim: ClaimKey
    request: str
    #: device -> the first rejection (insertion order is search order)
    rejected: dict[DeviceID, Rejection] = field(default_factory=dict)
    #: devices tentatively chosen at some point of the search
    selected: dict[DeviceID, None] = field(default_factory=dict)
    unsatisfied: list[str] = field(default_factory=list)

    def seen(self) -> list[DeviceID]:
        """Every device the search looked at for this request, in search order."""
        out = dict.fromkeys(self.rejected)
        out.update(self.selected)
        return list(out)


class ExplainTracer(NullTracer):
    """Collects rejections per (claim, request): the first reason each device was refused.

    One tracer per node and allocation attempt; ``refine`` may restate a rejection in funnel
    order (see :class:`~kubectl_dra.explain.refine.SelectionRefiner`).
    """

    def __init__(self, node: str = "", refine: Refiner | None = None) -> None:
        self.node = node
        self.refine = refine
        self._restates: frozenset[RejectionCode] = refine.restates if refine is not None else frozenset()
        self.requests: dict[tuple[ClaimKey, str], RequestTrace] = {}
        self.pools: dict[tuple[str, str], Rejection] = {}
        #: how the search names the claims it allocates in this attempt (``claim`` in details)
        self.attempt_claims: set[str] = set()
        #: (id of the claim dict, request) -> (the claim, its trace); the entry keeps the claim alive
        self._by_id: dict[tuple[int, str], tuple[Mapping[str, Any], RequestTrace]] = {}
        #: the last (claim, request, trace): the search reports many devices of one request in a row
        self._last: tuple[Mapping[str, Any] | None, str, RequestTrace | None] = (None, "", None)

    def _trace(self, claim: Mapping[str, Any], request: str) -> RequestTrace:
        last = self._last
        if last[0] is claim and last[1] == request and last[2] is not None:
            return last[2]
        found = self._by_id.get((id(claim), request))
        trace: RequestTrace | None
        if found is not None and found[0] is claim:
            trace = found[1]
        else:
            key = (claim_key(claim), request)
            trace = self.requests.get(key)
            if trace is None:
                trace = self.requests[key] = RequestTrace(key[0], request)
            self.attempt_claims.add(claim_ref(claim))
            self._by_id[(id(claim), request)] = (claim, trace)
        self._last = (claim, request, trace)
        return trace

    def device_rejected(self, claim: dict, request: str, driver: str, pool: str, device: str,
                        rejection: Rejection) -> None:
        rejected = self._trace(claim, request).rejected
        key = (driver, pool, device)
        if key in rejected:
            return
        if self.refine is not None and rejection.code in self._restates:
            rejection = self.refine(claim, request, driver, pool, device, rejection)
        rejected[key] = rejection

    def device_selected(self, claim: dict, request: str, driver: str, pool: str, device: str) -> None:
        self._trace(claim, request).selected[(driver, pool, device)] = None

    def pool_skipped(self, driver: str, pool: str, rejection: Rejection) -> None:
        self.pools.setdefault((driver, pool), rejection)

    def request_unsatisfied(self, claim: dict, request: str, reason: str) -> None:
        trace = self._trace(claim, request)
        if reason not in trace.unsatisfied:
            trace.unsatisfied.append(reason)
