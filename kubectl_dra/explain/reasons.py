"""Reasons: the one reason that decides a node, and a request's reason, worded from the
rejections' codes and typed details (never from their messages' words)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..allocation.trace import Rejection, RejectionCode
from ..limits import CANNOT_ALLOCATE
from .funnel import (
    ALLOCATED, BEFORE_CLASS, ERROR, SELECTION_CODES, STAGE_INDEX, NodeExplanation, RequestExplanation,
)
from .refine import SHORT_MISSING, SHORT_POLICY

C = RejectionCode

#: the scheduler's generic words, which explain replaces with its own
GENERIC = CANNOT_ALLOCATE

_SHORT = {
    C.IN_USE: "in use", C.COUNTERS_EXHAUSTED: "out of shared counters", C.CAPACITY_SHORT: "short of capacity",
    C.TAINT_NOT_TOLERATED: "with untolerated taints", C.COMPATIBILITY_CONFLICT: "in conflicting compatibility groups",
    C.CONSTRAINT_MISMATCH: "not meeting constraints", C.POOL_INCOMPLETE: "in incomplete pools",
    C.POOL_INVALID: "in invalid pools", C.NODE_MISMATCH: "not reachable from the node",
    C.GATE_DISABLED: "needing a disabled feature gate",
}


def is_attempt_rejection(rejection: Rejection, attempt_claims: frozenset[str]) -> bool:
    """In use only because the search had picked the device for some request of this very
    attempt: every holder named is a claim being allocated, and no later request asked for it."""
    if rejection.code is not C.IN_USE:
        return False
    details = rejection.details or {}
    holders = str(details.get("claim") or "")
    return (bool(holders) and "request" not in details
            and all(h in attempt_claims for h in holders.split(", ")))


def node_reason(node: NodeExplanation, reasons: Sequence[str] = ()) -> str:
    """The one reason that decides the node, in words that aggregate well across nodes."""
    if node.status == ALLOCATED:
        return "fits"
    if node.status == ERROR:
        return f"error: {node.error or 'allocation failed'}"
    external = [r for r in reasons if r and r != GENERIC]
    if external and not any(r.evaluated for r in node.requests):
        return "; ".join(external)  # the node was ruled out before any device was looked at
    failing = first_failing_request(node.requests)
    if failing:
        return group_reason(failing, node)
    if external:
        return "; ".join(external)
    unsatisfied = [u for r in node.requests for u in r.unsatisfied]
    if unsatisfied:
        return unsatisfied[0]
    if node.pools_skipped:
        driver, pool, rejection = node.pools_skipped[0]
        return f"pool {driver}/{pool}: {rejection.message or rejection.code.value}"
    return "no combination of devices satisfies all requests and constraints"


def _parent(req: RequestExplanation, index: int) -> tuple[Any, ...]:
    """Subrequests group under their request; other requests stand alone (names may repeat)."""
    if "/" in req.spec.name:
        return (req.claim, req.spec.name.split("/")[0])
    return (req.claim, req.spec.name, index)


def _needed(req: RequestExplanation) -> int:
    return 1 if req.spec.mode == "All" else max(1, req.spec.count)


def _short_of_devices(req: RequestExplanation) -> bool:
    if not req.evaluated or req.allocated:
        return False
    if req.viable < _needed(req):
        return True
    return req.spec.mode == "All" and req.viable < req.matching


def first_failing_request(requests: Sequence[RequestExplanation]) -> list[RequestExplanation]:
    """The first request (in claim order) that the search could not satisfy, as a group: one
    request, or every subrequest of a prioritized list when none of them could be satisfied.
    Requests short of devices come first; then requests the search gave up on."""
    groups: dict[tuple[Any, ...], list[RequestExplanation]] = {}
    for i, req in enumerate(requests):
        groups.setdefault(_parent(req, i), []).append(req)
    for group in groups.values():
        if all(_short_of_devices(r) for r in group):
            return group
    for group in groups.values():
        if all(r.evaluated and not r.allocated and r.unsatisfied for r in group):
            return group
    return []


def group_reason(group: Sequence[RequestExplanation], node: NodeExplanation) -> str:
    """The reason of a failed request; for a prioritized list, each subrequest's reason."""
    if len(group) == 1 and "/" not in group[0].spec.name:
        return request_reason(group[0], node)
    parent = group[0].spec.name.split("/")[0]
    parts = [f"{r.spec.name.split('/', 1)[1]}: {request_reason(r, node)}" for r in group]
    return f"no subrequest of {parent} fits ({'; '.join(parts)})"


def _self_held(rejection: Rejection, node: NodeExplanation | None) -> bool:
    """In use only by the claims being allocated now (another of their requests took it)."""
    if rejection.code != C.IN_USE or node is None:
        return False
    details = rejection.details or {}
    holder = str(details.get("claim") or "")
    return (holder in node.claim_refs or bool(details.get("thisAttempt"))
            or is_attempt_rejection(rejection, node.attempt_claims))


Devices = list[tuple[tuple[str, str, str], Rejection]]


def _most(blockers: Mapping[RejectionCode, Devices]) -> RejectionCode:
    """The code that rejected the most devices (the earlier stage on a tie)."""
    return max(blockers, key=lambda c: (len(blockers[c]), -STAGE_INDEX[c]))


def _unusable(req: RequestExplanation, node: NodeExplanation | None, cls: str) -> str:
    """Why a request has no device of its class: pools, gates, or none on the node."""
    pool_codes = [c for c in req.rejections if c in BEFORE_CLASS]
    if pool_codes:
        return code_reason(pool_codes[0], req.rejections[pool_codes[0]][0][1])
    if node is not None and node.pools_skipped:
        gated = sorted({str(r.details["gate"]) for _, _, r in node.pools_skipped if (r.details or {}).get("gate")})
        if gated:
            return f"no usable {cls} device (pools skipped: feature gate {', '.join(gated)} disabled)"
        kinds = sorted({short_name(r.code) for _, _, r in node.pools_skipped})
        return f"no usable {cls} device (devices {', '.join(kinds)})"
    return f"no {cls} device"


def _blockers(req: RequestExplanation) -> dict[RejectionCode, Devices]:
    """The rejections after the selectors: what kept matching devices from being used."""
    last_selector = STAGE_INDEX[C.REQUEST_SELECTOR_FALSE]
    return {c: v for c, v in req.rejections.items() if c not in SELECTION_CODES and STAGE_INDEX[c] > last_selector}


def request_reason(req: RequestExplanation, node: NodeExplanation | None = None) -> str:
    """Why a request failed on a node, node-independent where possible (so nodes group)."""
    cls = req.spec.device_class or "matching"
    if req.in_class == 0:
        return _unusable(req, node, cls)
    if req.matching == 0:
        return f"request {req.spec.name}: selector matches no {cls} device"
    blockers = _blockers(req)
    own = [d for d in blockers.get(C.IN_USE, []) if _self_held(d[1], node)]
    if own:
        others = [d for d in blockers[C.IN_USE] if not _self_held(d[1], node)]
        blockers = {c: v for c, v in blockers.items() if c != C.IN_USE}
        if others:
            blockers = {C.IN_USE: others, **blockers}
        if not blockers and req.viable == 0:
            return "matching devices taken by the other requests being allocated"
        if req.viable == 0 and list(blockers) == [C.IN_USE]:
            return (f"no {cls} device left: {len(others)} in use, {len(own)} already picked for "
                    f"{'another request' if len(own) == 1 else 'other requests'} of this attempt")
    needed = _needed(req)
    if req.viable == 0 and blockers:
        if len(blockers) == 1:
            code, devices = next(iter(blockers.items()))
            return "all matching devices in use" if code == C.IN_USE else code_reason(code, devices[0][1])
        return "no matching device free: " + ", ".join(
            f"{len(v)} {short_name(c)}" for c, v in sorted(blockers.items(), key=lambda kv: (-len(kv[1]), STAGE_INDEX[kv[0]])))
    if req.viable < needed:
        shortage = f"{cls}: {needed} devices needed, {req.viable} usable"
        if blockers:
            code = _most(blockers)
            if code == C.IN_USE:
                return f"{shortage}, {len(blockers[code])} in use"
            return f"{code_reason(code, blockers[code][0][1])} ({shortage})"
        return shortage
    if req.unsatisfied:
        return req.unsatisfied[0]
    if blockers:
        code = _most(blockers)
        return code_reason(code, blockers[code][0][1])
    return f"request {req.spec.name}: no combination of {cls} devices fits"


def short_name(code: RejectionCode) -> str:
    """A code as a few words after a number: ``3 in use``."""
    return _SHORT.get(code, code.value)


def _detail(details: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if details.get(name) not in (None, ""):
            return details[name]
    return None


def _counters(d: Mapping[str, Any]) -> str | None:
    counter, counter_set = _detail(d, "counter"), _detail(d, "counterSet")
    needed, left = _detail(d, "needed"), _detail(d, "left")
    if counter_set and counter and needed is not None and left is not None:
        return f"counter {counter_set}/{counter}: {needed} needed, {left} left"
    return None


def _capacity(d: Mapping[str, Any]) -> str | None:
    name, needed, left, requested = _detail(d, "capacity"), _detail(d, "needed"), _detail(d, "left"), _detail(d, "requested")
    if not name:
        return None
    if d.get("shortfall") == SHORT_MISSING:
        return f"capacity {name}: the device has none"
    if d.get("shortfall") == SHORT_POLICY:
        return f"capacity {name}: the requestPolicy does not allow {needed}"
    if needed is not None and left is not None:
        rounding = f" (requested {requested}, rounded up by the requestPolicy)" if (
            requested is not None and str(requested) != str(needed)) else ""
        return f"capacity {name}: {needed} needed{rounding}, {left} left"
    return None


def _compatibility(d: Mapping[str, Any]) -> str | None:
    counter_set = _detail(d, "counterSet", "with")
    if not counter_set:
        return None
    existing, peers = d.get("existing") or [], d.get("allocatedDevices")
    where = f" ({_list(existing)}: {', '.join(peers)})" if peers else f" ({_list(existing)})"
    return (f"compatibility groups {_list(d.get('groups') or [])} conflict with the devices allocated on counter "
            f"set {counter_set}{where}")


def _taint(d: Mapping[str, Any]) -> str | None:
    taint = _detail(d, "taint")
    if not isinstance(taint, dict):
        return None
    value = "=" + str(taint["value"]) if taint.get("value") else ""
    return f"taint {taint.get('key')}{value}:{taint.get('effect')} not tolerated"


def _constraint(d: Mapping[str, Any]) -> str | None:
    attribute = _detail(d, "attribute")
    kind = _detail(d, "constraint") or "constraint"
    if not attribute:
        return None
    if d.get("value") is None:
        return f"{kind} on {attribute} not met: the device has no such attribute"
    if kind == "matchAttribute":
        return f"matchAttribute on {attribute} not met: {_value(d.get('value'))} vs {_value(d.get('expected'))}"
    if kind == "distinctAttribute":
        return f"distinctAttribute on {attribute} not met: {_value(d.get('value'))} already taken"
    return f"{kind} on {attribute} not met"


def _gate(d: Mapping[str, Any]) -> str | None:
    gate = _detail(d, "gate")
    return f"feature gate {gate} disabled" if gate else None


#: per code, the reason from a rejection's details (None: its own message says it best)
_BY_CODE = {
    C.COUNTERS_EXHAUSTED: _counters, C.CAPACITY_SHORT: _capacity, C.COMPATIBILITY_CONFLICT: _compatibility,
    C.TAINT_NOT_TOLERATED: _taint, C.CONSTRAINT_MISMATCH: _constraint, C.GATE_DISABLED: _gate,
}


def code_reason(code: RejectionCode, rejection: Rejection) -> str:
    """A reason for one code, with the numbers from the rejection's details when it has them."""
    worded = _BY_CODE.get(code)
    text = worded(rejection.details or {}) if worded is not None else None
    return text or rejection.message or code.value


def _value(value: Any) -> str:
    """An attribute value as people write it in CEL (booleans lower-case)."""
    if isinstance(value, bool) or value in ("True", "False"):
        return str(value).lower()
    return str(value)


def _list(values: Any) -> str:
    return "[" + ", ".join(str(v) for v in values or []) + "]"
