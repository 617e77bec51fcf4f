"""Funnels: per request (as :mod:`kubectl_dra.model.claims` parses it) and node, how many candidate devices each stage (in the order a
person reads the selection: pool, node, gates, class, selectors, availability, counters,
capacity, compatibility, constraints) left, built from a node's trace.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

from ..allocation.trace import Rejection, RejectionCode
from ..model.claims import ALL, Request
from ..types import ClaimKey, DeviceID
from .tracer import RequestTrace

C = RejectionCode

ALLOCATED = "Allocated"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"

#: funnel order: the stage a device falls out at, and what the survivors of that stage are
STAGES: tuple[tuple[RejectionCode, str], ...] = (
    (C.POOL_INCOMPLETE, "in complete pools"),
    (C.POOL_INVALID, "in valid pools"),
    (C.NODE_MISMATCH, "reachable from the node"),
    (C.GATE_DISABLED, "usable with the feature gates"),
    (C.NOT_IN_CLASS, "in the class"),
    (C.CLASS_SELECTOR_FALSE, "match the class selectors"),
    (C.REQUEST_SELECTOR_FALSE, "match the request selectors"),
    (C.TAINT_NOT_TOLERATED, "tolerated"),
    (C.IN_USE, "free"),
    (C.COUNTERS_EXHAUSTED, "with counters left"),
    (C.CAPACITY_SHORT, "with capacity left"),
    (C.COMPATIBILITY_CONFLICT, "compatible with the other devices"),
    (C.CONSTRAINT_MISMATCH, "meeting the constraints"),
)
STAGE_INDEX: dict[RejectionCode, int] = {code: i for i, (code, _) in enumerate(STAGES)}
#: stage label per code
STAGE_LABEL: dict[RejectionCode, str] = dict(STAGES)

#: codes that mean "the device is not of the kind asked for" (it does not count as matching)
SELECTION_CODES = frozenset({C.NOT_IN_CLASS, C.CLASS_SELECTOR_FALSE, C.REQUEST_SELECTOR_FALSE})
CLASS_CODES = frozenset({C.NOT_IN_CLASS, C.CLASS_SELECTOR_FALSE})
#: codes of stages before the class (pool, node, gate): such devices may be of the class
BEFORE_CLASS = frozenset(c for c in STAGE_INDEX if STAGE_INDEX[c] < STAGE_INDEX[C.NOT_IN_CLASS])


# --------------------------------------------------------------------------- funnels


@dataclass(slots=True)
class FunnelStage:
    """Devices left after one stage, and how many fell out there."""

    code: RejectionCode
    label: str
    rejected: int
    remaining: int


@dataclass(slots=True)
class RequestExplanation:
    """The funnel of one request on one node."""

    claim: ClaimKey
    #: the request or subrequest (its ``name`` is ``request/subrequest`` for a subrequest)
    spec: Request
    candidates: int
    funnel: list[FunnelStage]
    #: code -> rejected devices with their rejection, in search order
    rejections: dict[RejectionCode, list[tuple[DeviceID, Rejection]]]
    #: devices in the final allocation for this request
    allocated: list[DeviceID]
    unsatisfied: list[str]
    evaluated: bool

    @property
    def viable(self) -> int:
        """Devices that no stage rejected."""
        return self.funnel[-1].remaining if self.funnel else self.candidates

    @property
    def matching(self) -> int:
        """Devices of the kind asked for (past class and request selectors)."""
        return self.candidates - sum(len(v) for c, v in self.rejections.items()
                                     if c in SELECTION_CODES or c in BEFORE_CLASS)

    @property
    def in_class(self) -> int:
        """Devices in the request's class (past the class selectors)."""
        return self.candidates - sum(len(v) for c, v in self.rejections.items() if c in CLASS_CODES or c in BEFORE_CLASS)

    @property
    def needed(self) -> int:
        """Devices the request needs: its count, or (mode All) every matching device, at least one."""
        return max(1, self.matching) if self.spec.mode == ALL else max(1, self.spec.count)

    def shortfall(self) -> tuple[int, int] | None:
        """(needed, usable) when the funnel leaves fewer usable devices than the request needs."""
        if not self.evaluated or self.allocated:
            return None
        needed = self.needed
        return (needed, self.viable) if self.viable < needed else None

    def result_text(self) -> str:
        """The request's outcome in a few words: ``allocated …``, ``unsatisfied: 3 needed, 2 usable``."""
        if not self.evaluated:
            return "not reached"
        if self.allocated:
            return "allocated " + ", ".join("/".join(d) for d in self.allocated)
        short = self.shortfall()
        if short is not None:
            needed = f"all {short[0]}" if self.spec.mode == ALL else str(short[0])
            return f"unsatisfied: {needed} needed, {short[1]} usable"
        if self.unsatisfied:
            return f"unsatisfied: {self.unsatisfied[0]}"
        return "satisfiable"

    def class_note(self) -> str | None:
        """``no device on this node matches class X (2 devices of nic.example.com)`` when none does."""
        if not self.evaluated or self.allocated or self.in_class > 0:
            return None
        others = Counter(d[0] for d, _ in self.rejections.get(C.NOT_IN_CLASS, []))
        if not others:
            return None
        ranked = sorted(others.items(), key=lambda kv: (-kv[1], kv[0]))
        parts = [f"{n} {'device' if n == 1 else 'devices'} of {driver}" if i == 0 else f"{n} of {driver}"
                 for i, (driver, n) in enumerate(ranked)]
        cls = self.spec.device_class or "of the request"
        if any(c in BEFORE_CLASS for c in self.rejections):
            # devices that fell out earlier (pool, node, gate) may be of the class
            return f"the other devices on this node are not of class {cls} ({', '.join(parts)})"
        return f"no device on this node matches class {cls} ({', '.join(parts)})"

    def funnel_text(self) -> str:
        """``8 devices → 6 in the class → 0 free (6 in use)``."""
        parts = [f"{self.candidates} device{'s' if self.candidates != 1 else ''}"]
        for stage in self.funnel:
            parts.append(f"{stage.remaining} {stage.label}")
        return " → ".join(parts)


@dataclass
class NodeExplanation:
    """One node: the allocator's status, the deciding reason and the per-request funnels."""

    node: str
    status: str
    reason: str
    requests: list[RequestExplanation] = field(default_factory=list)
    pools_skipped: list[tuple[str, str, Rejection]] = field(default_factory=list)
    error: str | None = None
    #: ``namespace/name`` of the claims allocated together (devices they hold are not "in use")
    claim_refs: frozenset[str] = frozenset()
    #: the claims the search allocated in this attempt, as it names them in rejection details
    attempt_claims: frozenset[str] = frozenset()
    #: the scheduler filter that refused the node ("" when it fits or for claims alone)
    filter: str = ""
    #: that filter's detail: what is left against what the pod asks, the domain's skew, the pod in the way
    detail: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return self.status == ALLOCATED


def explain_request(claim: ClaimKey, spec: Request, trace: RequestTrace | None,
                    allocated: list[DeviceID]) -> RequestExplanation:
    """The funnel of one request from its trace (an absent trace: the search never got there)."""
    if trace is None:
        return RequestExplanation(claim, spec, 0, [], {}, allocated, [], evaluated=bool(allocated))
    rejected = trace.rejected
    selected = trace.selected
    final = frozenset(allocated)
    # every device the search looked at, or that the allocation holds (only the number counts)
    if final:
        candidates = len(rejected.keys() | selected.keys() | final)
    elif selected:
        candidates = len(rejected.keys() | selected.keys())
    else:
        candidates = len(rejected)
    groups: dict[RejectionCode, list[tuple[DeviceID, Rejection]]] = {}
    for device, rejection in rejected.items():
        if final and device in final:
            continue  # rejected on one branch of the search, chosen on another
        code = rejection.code
        if code is C.IN_USE and device in selected:
            continue  # "in use" only because this very request had already taken it
        groups.setdefault(code, []).append((device, rejection))
    ordered = {code: groups[code] for code in sorted(groups, key=STAGE_INDEX.__getitem__)}
    return RequestExplanation(claim, spec, candidates, funnel_stages(ordered, candidates), ordered, allocated,
                              list(trace.unsatisfied), True)


def funnel_stages(ordered: Mapping[RejectionCode, list[tuple[DeviceID, Rejection]]],
                  candidates: int) -> list[FunnelStage]:
    """Stages from rejections already in funnel order, only those that rejected something."""
    remaining = candidates
    funnel = []
    for code, devices in ordered.items():
        remaining -= len(devices)
        funnel.append(FunnelStage(code, STAGE_LABEL[code], len(devices), remaining))
    return funnel

