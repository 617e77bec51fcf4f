"""Explain allocation: a :class:`Tracer` that records, per request, the first reason each
candidate device was rejected, and the aggregation of those records into per-request
funnels, one deciding reason per node and a one-line summary per target.

The allocation outcome is the truth: a node's status always comes from the allocator's
result (never from the trace), and the trace only says why. Pure: no click, no I/O.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from .trace import NullTracer, Rejection, RejectionCode

Obj = dict[str, Any]
DeviceId = tuple[str, str, str]  # driver, pool, device
ClaimKey = tuple[str, str]  # namespace, name

ALLOCATED = "Allocated"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"

C = RejectionCode

#: funnel order: the stage a device falls out at, and what the survivors of that stage are
STAGES: tuple[tuple[RejectionCode, str], ...] = (
    (C.POOL_INCOMPLETE, "in complete pools"),
    (C.POOL_INVALID, "in valid pools"),
    (C.NODE_MISMATCH, "reachable from the node"),
    (C.GATE_DISABLED, "usable with the feature gates"),
    (C.NOT_IN_CLASS, "in the class"),
    (C.CLASS_SELECTOR_FALSE, "match the class selectors"),
    (C.CEL_ERROR, "evaluate without CEL errors"),
    (C.REQUEST_SELECTOR_FALSE, "match the request selectors"),
    (C.ADMIN_ACCESS, "allowed for admin access"),
    (C.BINDING_CONDITIONS, "fine with binding conditions"),
    (C.TAINT_NOT_TOLERATED, "tolerated"),
    (C.IN_USE, "free"),
    (C.COUNTERS_EXHAUSTED, "with counters left"),
    (C.CAPACITY_SHORT, "with capacity left"),
    (C.COMPATIBILITY_CONFLICT, "compatible with the other devices"),
    (C.CONSTRAINT_MISMATCH, "meeting the constraints"),
    (C.OTHER, "otherwise fine"),
)
STAGE_INDEX: dict[RejectionCode, int] = {code: i for i, (code, _) in enumerate(STAGES)}
_IN_USE = C.IN_USE
_COUNTERS_EXHAUSTED = C.COUNTERS_EXHAUSTED
_COMPATIBILITY_CONFLICT = C.COMPATIBILITY_CONFLICT

#: codes that mean "the device is not of the kind asked for" (it does not count as matching)
SELECTION_CODES = frozenset({C.NOT_IN_CLASS, C.CLASS_SELECTOR_FALSE, C.REQUEST_SELECTOR_FALSE, C.CEL_ERROR})
CLASS_CODES = frozenset({C.NOT_IN_CLASS, C.CLASS_SELECTOR_FALSE})

#: short names of codes for JSON and tables
CODE_NAMES: dict[RejectionCode, str] = {code: code.name for code in RejectionCode}


def claim_key(claim: Obj) -> ClaimKey:
    """(namespace, name) of a claim; remembered per claim object (asked once per node)."""
    entry = _CLAIM_KEYS.get(id(claim))
    if entry is not None and entry[0] is claim:
        return entry[1]
    meta = claim.get("metadata") or {}
    key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
    if len(_CLAIM_KEYS) >= 4096:
        _CLAIM_KEYS.clear()
    _CLAIM_KEYS[id(claim)] = (claim, key)
    return key


#: id of a claim dict -> (the claim, its key)
_CLAIM_KEYS: dict[int, tuple[Obj, ClaimKey]] = {}


# --------------------------------------------------------------------------- the tracer


@dataclass(slots=True)
class RequestTrace:
    """What the search saw for one request of one claim on one node."""

    claim: ClaimKey
    request: str
    #: device -> the first rejection (insertion order is search order)
    rejected: dict[DeviceId, Rejection] = field(default_factory=dict)
    #: devices tentatively chosen at some point of the search
    selected: dict[DeviceId, None] = field(default_factory=dict)
    unsatisfied: list[str] = field(default_factory=list)

    def seen(self) -> list[DeviceId]:
        """Every device the search looked at for this request, in search order."""
        out = dict.fromkeys(self.rejected)
        out.update(self.selected)
        return list(out)


Refiner = Callable[[Obj, str, str, str, str, Rejection], Rejection]
"""(claim, request, driver, pool, device, rejection) -> the rejection to record instead."""


class ExplainTracer(NullTracer):
    """Collects rejections per (claim, request): the first reason each device was refused.

    ``refine`` may restate a rejection in funnel order (see :class:`SelectionRefiner`).
    """

    def __init__(self, node: str = "", refine: Refiner | None = None,
                 refine_pool: Callable[[str, str, Rejection], Rejection] | None = None) -> None:
        self.node = node
        self.refine = refine
        #: codes the refiner may restate (a SelectionRefiner leaves every other code alone)
        self._refined: frozenset[RejectionCode] | None = (
            SelectionRefiner.RESTATES if isinstance(refine, SelectionRefiner) else None)
        self.refine_pool = refine_pool
        self.requests: dict[tuple[ClaimKey, str], RequestTrace] = {}
        self.pools: dict[tuple[str, str], Rejection] = {}
        #: (id of the claim dict, request) -> its trace; the claims outlive the node's search
        self._by_id: dict[tuple[int, str], RequestTrace] = {}
        #: the last (claim, request, trace): the search reports many devices of one request in a row
        self._last: tuple[Any, str, RequestTrace | None] = (None, "", None)

    def _trace(self, claim: Obj, request: str) -> RequestTrace:
        last = self._last
        if last[0] is claim and last[1] == request:
            return last[2]  # type: ignore[return-value]
        fast = self._by_id.get((id(claim), request))
        if fast is not None:
            self._last = (claim, request, fast)
            return fast
        key = (claim_key(claim), request)
        trace = self.requests.get(key)
        if trace is None:
            trace = self.requests[key] = RequestTrace(key[0], request)
        self._by_id[(id(claim), request)] = trace
        self._last = (claim, request, trace)
        return trace

    def device_rejected(self, claim: dict, request: str, driver: str, pool: str, device: str,
                        rejection: Rejection) -> None:
        last = self._last
        trace = last[2] if last[0] is claim and last[1] == request else self._trace(claim, request)
        key = (driver, pool, device)
        rejected = trace.rejected  # type: ignore[union-attr]
        if key in rejected:
            return
        if self.refine is not None and (self._refined is None or rejection.code in self._refined):
            rejection = self.refine(claim, request, driver, pool, device, rejection)
        rejected[key] = rejection

    def device_selected(self, claim: dict, request: str, driver: str, pool: str, device: str) -> None:
        self._trace(claim, request).selected[(driver, pool, device)] = None

    def pool_skipped(self, driver: str, pool: str, rejection: Rejection) -> None:
        if (driver, pool) in self.pools:
            return
        if self.refine_pool is not None:
            rejection = self.refine_pool(driver, pool, rejection)
        self.pools[(driver, pool)] = rejection

    def request_unsatisfied(self, claim: dict, request: str, reason: str) -> None:
        trace = self._trace(claim, request)
        if reason not in trace.unsatisfied:
            trace.unsatisfied.append(reason)


class SelectionRefiner:
    """Restates "in use" as "not in the class" / "request selector false" when that is also true.

    The search tests availability before selectors (as upstream does), so a device held by
    another claim is reported in use even when it is of another kind entirely. For people,
    a device of another class is "not in the class"; this evaluates the class and request
    selectors for such devices (cached) so the funnel reads in selection order.
    """

    #: the codes :meth:`__call__` may restate; it returns any other rejection as it is
    RESTATES = frozenset({C.IN_USE, C.COUNTERS_EXHAUSTED, C.COMPATIBILITY_CONFLICT})

    def __init__(self, state: Any, gates: Any = None) -> None:
        self.state = state
        self.gates = gates
        self._pool_cache: dict[tuple[str, str], Rejection | None] = {}
        self._devices: dict[DeviceId, Obj] | None = None
        self._slices: dict[tuple[str, str], list[Obj]] = {}
        self._pool_devices: dict[tuple[str, str], list[tuple[str, Obj]]] = {}
        self._classes = {str((c.get("metadata") or {}).get("name") or ""): c for c in state.device_classes}
        self._cache: dict[tuple[str, str], bool | None] = {}
        self._contents: dict[DeviceId, str] = {}
        self._allocated: set[DeviceId] | None = None
        #: (id of the claim dict, request) -> (the claim, its spec)
        self._specs: dict[tuple[int, str], tuple[Obj, RequestSpec | None]] = {}
        #: ((id of the claim dict, request), device content) -> the first false selector, or None
        self._verdicts: dict[tuple[tuple[int, str], str], tuple[RejectionCode, int, str] | None] = {}
        #: (id of the claim dict, request) -> the key of its verdicts on device views
        self._tokens: dict[tuple[int, str], object] = {}
        self._restated: dict[tuple[tuple[int, str], tuple[RejectionCode, int, str]], Rejection] = {}
        self._view_map: Any = _UNKNOWN
        #: the last (claim, request, answer key): the search reports a request's devices in a row
        self._last: tuple[Any, str, object | None] = (None, "", None)

    def _index(self) -> dict[DeviceId, Obj]:
        """Devices by id and slices by pool, built once on first need."""
        if self._devices is None:
            self._devices = {}
            for s in self.state.resource_slices:
                spec = s.get("spec") or {}
                driver, pool = str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or "")
                self._slices.setdefault((driver, pool), []).append(spec)
                for d in spec.get("devices") or []:
                    name = str(d.get("name") or "")
                    if (driver, pool, name) not in self._devices:
                        self._devices[(driver, pool, name)] = d
                        self._pool_devices.setdefault((driver, pool), []).append((name, d))
        return self._devices

    def _device(self, key: DeviceId) -> Obj | None:
        return self._index().get(key)

    def _content(self, key: DeviceId, device: Obj) -> str:
        """What CEL can see of a device (driver, attributes, capacity); identical devices on
        different nodes share one evaluation."""
        # repr, not sorted JSON: several times cheaper; the same content written in another key
        # order only costs a second evaluation
        return repr((key[0], device.get("attributes"), device.get("capacity"), device.get("allowMultipleAllocations")))

    def _matches(self, expression: str, key: DeviceId) -> bool | None:
        """The selector's value for the device; None when it cannot be evaluated."""
        device = self._device(key)
        if device is None:
            return None
        content = self._contents.get(key)
        if content is None:
            content = self._contents[key] = self._content(key, device)
        cache_key = (expression, content)
        if cache_key in self._cache:
            return self._cache[cache_key]
        from ..cel import compile_expression, make_device_input
        from ..errors import CELError

        value: bool | None
        try:
            value = compile_expression(expression).matches(make_device_input(key[0], device))
        except CELError:
            value = None
        self._cache[cache_key] = value
        return value

    def _counter_format(self, driver: str, pool: str, counter_set: str, counter: str) -> Any:
        """The quantity format the slice declared the counter in (None when not found)."""
        from ..quantity import Quantity, QuantityError

        self._index()
        for spec in self._slices.get((driver, pool), []):
            for cs in spec.get("sharedCounters") or []:
                if cs.get("name") == counter_set:
                    value = ((cs.get("counters") or {}).get(counter) or {}).get("value")
                    try:
                        return Quantity.from_json(value).format
                    except (QuantityError, TypeError, ValueError):
                        return None
        return None

    def _counters(self, driver: str, pool: str, rejection: Rejection) -> Rejection:
        """Counter amounts in the format the driver wrote them (``80Gi``, not ``85899345920``)."""
        from ..quantity import Quantity, QuantityError

        d = dict(rejection.details or {})
        fmt = self._counter_format(driver, pool, str(d.get("counterSet")), str(d.get("counter")))
        if fmt is None:
            return rejection
        message = rejection.message
        for key in ("needed", "left"):
            try:
                q = Quantity.parse(str(d[key]))
            except (KeyError, QuantityError):
                return rejection
            m, e = q.as_decimal_parts()
            text = str(Quantity(m, e, fmt))
            message = message.replace(str(d[key]), text, 1) if str(d[key]) != text else message
            d[key] = text
        return Rejection(rejection.code, message, d)

    def _holders(self, driver: str, pool: str, counter_set: str) -> list[str]:
        """Allocated devices of the pool that draw on ``counter_set`` (the compatibility peers)."""
        if self._allocated is None:
            from ..usage import allocated_devices

            self._allocated = set(allocated_devices(self.state.resource_claims).consuming)
        self._index()
        out = []
        for name, device in self._pool_devices.get((driver, pool), []):
            if (driver, pool, name) not in self._allocated:
                continue
            if any(c.get("counterSet") == counter_set for c in device.get("consumesCounters") or []):
                out.append(name)
        return out

    def _compat(self, driver: str, pool: str, rejection: Rejection) -> Rejection:
        """Name the allocated devices a compatibility-group conflict is with, when they are known."""
        d = dict(rejection.details or {})
        peers = self._holders(driver, pool, str(d.get("counterSet") or d.get("with") or ""))
        if not peers:
            return rejection
        d["allocatedDevices"] = peers
        return Rejection(rejection.code, f"{rejection.message}; allocated there: {', '.join(peers)}", d)

    def pool(self, driver: str, pool: str, rejection: Rejection) -> Rejection:
        """An "incomplete" pool that is complete but uses compatibility groups with the gate off:
        say so, naming the gate (the allocator treats such a pool as being updated)."""
        if rejection.code != C.POOL_INCOMPLETE or self.gates is None:
            return rejection
        key = (driver, pool)
        if key not in self._pool_cache:
            self._pool_cache[key] = self._gate_incomplete(driver, pool)
        return self._pool_cache[key] or rejection

    def _gate_incomplete(self, driver: str, pool: str) -> Rejection | None:
        from ..usage import INCOMPLETE, current_pools, pool_findings

        slices = [s for s in self.state.resource_slices
                  if (s.get("spec") or {}).get("driver") == driver
                  and ((s.get("spec") or {}).get("pool") or {}).get("name") == pool]
        found = current_pools(slices)
        if len(found) != 1:
            return None
        status, notes = pool_findings(found[0], self.gates)
        if status != INCOMPLETE or found[0].incomplete or not notes:
            return None
        return Rejection(C.POOL_INCOMPLETE, f"resource pool {driver}/{pool} {notes[0]}",
                         {"gate": "DRADeviceCompatibilityGroups"})

    def __call__(self, claim: Obj, request: str, driver: str, pool: str, device: str,
                 rejection: Rejection) -> Rejection:
        """The rejection to record (see the class)."""
        code = rejection.code
        if code is not _IN_USE:
            if code is _COUNTERS_EXHAUSTED:
                return self._counters(driver, pool, rejection)
            if code is _COMPATIBILITY_CONFLICT:
                return self._compat(driver, pool, rejection)
            return rejection
        # the fast way: the answer for this request's words, remembered on the device's view
        last = self._last
        if last[0] is claim and last[1] == request:
            answer_key = last[2]
        else:
            answer_key = self._answer_key(claim, request)
            self._last = (claim, request, answer_key)
        if answer_key is not None:
            view = self._view_map.get((driver, pool, device))
            if view is None:
                return rejection
            answer = view.cel_results.get(answer_key, _UNKNOWN)
            if answer is _UNKNOWN:
                answer = view.cel_results[answer_key] = self._answer(claim, request, driver, pool, device, rejection)
            return rejection if answer is None else answer
        return self._refine_in_use(claim, request, driver, pool, device, rejection)

    def _answer_key(self, claim: Obj, request: str) -> object | None:
        """The key of a request's restated "in use" rejections on device views (None when views
        cannot be used or the request is unknown): unique per selectors, request and class."""
        if self._views() is None:
            return None
        spec = self._spec(claim, request)
        if spec is None:
            return None
        signature = (self._verdict_token(spec), request, spec.device_class)
        key = _ANSWER_KEYS.get(signature)
        if key is None:
            key = _ANSWER_KEYS[signature] = object()
        return key

    def _answer(self, claim: Obj, request: str, driver: str, pool: str, device: str,
                rejection: Rejection) -> Rejection | None:
        """The restated rejection of an in-use device, or None to keep the original."""
        refined = self._refine_in_use(claim, request, driver, pool, device, rejection)
        return None if refined is rejection else refined

    def _spec(self, claim: Obj, request: str) -> "RequestSpec | None":
        spec_key = (id(claim), request)
        cached = self._specs.get(spec_key)
        if cached is None:  # the claim is kept in the entry so that its id cannot be reused
            cached = self._specs[spec_key] = (claim, next((r for r in request_specs(claim) if r.name == request), None))
        return cached[1]

    def _refine_in_use(self, claim: Obj, request: str, driver: str, pool: str, device: str,
                       rejection: Rejection) -> Rejection:
        """An "in use" rejection restated as the first false selector, when one is false."""
        spec_key = (id(claim), request)
        cached = self._specs.get(spec_key)
        if cached is None:  # the claim is kept in the entry so that its id cannot be reused
            cached = self._specs[spec_key] = (claim, next((r for r in request_specs(claim) if r.name == request), None))
        spec = cached[1]
        if spec is None:
            return rejection
        key = (driver, pool, device)
        views = self._views()
        if views is not None:
            view = views.get(key)
            if view is None:
                return rejection
            # remembered on the device's view, which later explains over the same objects share
            token = self._tokens.get(spec_key)
            if token is None:
                token = self._tokens[spec_key] = self._verdict_token(spec)
            results = view.cel_results
            verdict = results.get(token, _UNKNOWN)
            if verdict is _UNKNOWN:
                verdict = results[token] = self._selection_verdict(spec, key, view)
        else:
            found = (self._devices if self._devices is not None else self._index()).get(key)
            if found is None:
                return rejection
            content = self._contents.get(key)
            if content is None:
                content = self._contents[key] = self._content(key, found)
            verdict_key = (spec_key, content)
            if verdict_key in self._verdicts:
                verdict = self._verdicts[verdict_key]
            else:
                verdict = self._verdicts[verdict_key] = self._selection_verdict(spec, key)
        if verdict is None:
            return rejection
        restated_key = (spec_key, verdict)
        restated = self._restated.get(restated_key)
        if restated is None:  # immutable, so one per request and verdict serves every node
            restated = self._restated[restated_key] = self._restate(request, spec, verdict)
        return restated

    @staticmethod
    def _restate(request: str, spec: "RequestSpec", verdict: tuple[RejectionCode, int, str]) -> Rejection:
        """An "in use" rejection restated as the first false selector."""
        code, i, expression = verdict
        if code == C.REQUEST_SELECTOR_FALSE:
            return Rejection(code, f"selector #{i} of request {request} is false for this device (it is also in use)",
                             {"request": request, "index": i, "expression": expression, "inUse": True})
        return Rejection(code, f"selector #{i} of device class {spec.device_class} is false for this "
                               f"device (it is also in use)", {"class": spec.device_class, "index": i,
                                                               "expression": expression, "inUse": True})

    def _selection_verdict(self, spec: "RequestSpec", key: DeviceId,
                           view: Any = None) -> tuple[RejectionCode, int, str] | None:
        """The first class or request selector that is false for the device (None: all hold or
        cannot be evaluated); identical devices share the verdict through the caller's cache."""
        matches = self._matches if view is None else (lambda expression, _key: _view_matches(expression, view))
        cls = self._classes.get(spec.device_class)
        for i, expression in enumerate(_expressions((cls or {}).get("spec", {}).get("selectors"))):
            if matches(expression, key) is False:
                return (C.NOT_IN_CLASS if i == 0 else C.CLASS_SELECTOR_FALSE, i, expression)
        for i, expression in enumerate(_expressions(spec.selector_list)):
            if matches(expression, key) is False:
                return (C.REQUEST_SELECTOR_FALSE, i, expression)
        return None

    def _verdict_token(self, spec: "RequestSpec") -> object:
        """A key for what decides :meth:`_selection_verdict` besides the device (the
        expressions in order), unique per such signature."""
        cls = self._classes.get(spec.device_class)
        signature = (tuple(_expressions((cls or {}).get("spec", {}).get("selectors"))),
                     tuple(_expressions(spec.selector_list)))
        token = _VERDICT_TOKENS.get(signature)
        if token is None:
            token = _VERDICT_TOKENS[signature] = object()
        return token

    def _views(self) -> "dict[DeviceId, Any] | None":
        """The allocator's device views by id (None when the slices cannot be viewed)."""
        if self._view_map is _UNKNOWN:
            try:
                self._view_map = device_views(self.state.resource_slices)
            except Exception:  # noqa: BLE001 - a slice the views reject: evaluate from the dicts
                self._view_map = None
        return self._view_map  # type: ignore[return-value]


_UNKNOWN: Any = object()
#: (verdict token, request, class) -> key of restated in-use rejections on device views
_ANSWER_KEYS: dict[tuple[object, str, str], object] = {}
#: verdict signatures (class and request expressions) -> their key on device views
_VERDICT_TOKENS: dict[tuple[tuple[str, ...], tuple[str, ...]], object] = {}
#: device views by id per slice list (see :func:`device_views`)
_VIEW_MAPS: dict[tuple[int, int], tuple[list[Obj], dict[DeviceId, Any]]] = {}


def device_views(slices: list[Obj]) -> dict[DeviceId, Any]:
    """The allocator's (cached) DeviceViews of a slice list by device id, the first of an id
    in state order; shared by every explain over the same objects."""
    from ..model.devices import cached_slice_view

    key = (id(slices), len(slices))
    found = _VIEW_MAPS.get(key)
    if found is None or found[0] is not slices:
        by_id: dict[DeviceId, Any] = {}
        for i, raw in enumerate(slices):
            for view in cached_slice_view(raw, i).devices:
                by_id.setdefault(view.id, view)
        if len(_VIEW_MAPS) >= 8:
            _VIEW_MAPS.clear()
        found = _VIEW_MAPS[key] = (slices, by_id)
    return found[1]


def _view_matches(expression: str, view: Any) -> bool | None:
    """A selector's value for a device view (cached on it); None when it cannot be evaluated."""
    from ..errors import CELError
    from .celcache import CelCache

    try:
        return CelCache().matches(expression, view)
    except CELError:
        return None


def _expressions(selectors: Any) -> list[str]:
    return [str(((s or {}).get("cel") or {}).get("expression") or "") for s in selectors or []
            if ((s or {}).get("cel") or {}).get("expression")]


# --------------------------------------------------------------------------- requests of a claim


@dataclass(frozen=True)
class RequestSpec:
    """A request (or subrequest, named ``request/sub``) as the explanation describes it."""

    name: str
    device_class: str
    mode: str  # ExactCount | All
    count: int
    admin_access: bool = False
    selector_list: tuple[Any, ...] = ()


#: id of a claim dict -> (the claim, its request specs): explain asks once per node
_SPECS: dict[int, tuple[Obj, list[RequestSpec]]] = {}


def request_specs(claim: Obj) -> list[RequestSpec]:
    """The requests of a claim in order; a firstAvailable request contributes its subrequests.

    Remembered per claim object (claims are immutable snapshots; the specs are frozen).
    """
    entry = _SPECS.get(id(claim))
    if entry is not None and entry[0] is claim:
        return list(entry[1])
    specs = _request_specs(claim)
    if len(_SPECS) >= 1024:
        _SPECS.clear()
    _SPECS[id(claim)] = (claim, specs)
    return list(specs)


def _request_specs(claim: Obj) -> list[RequestSpec]:
    out: list[RequestSpec] = []
    for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        name = str(req.get("name") or "")
        if req.get("firstAvailable"):
            for sub in req["firstAvailable"]:
                out.append(_spec(f"{name}/{sub.get('name') or ''}", sub))
        else:
            out.append(_spec(name, req.get("exactly") or req))
    return out


def _spec(name: str, body: Obj) -> RequestSpec:
    mode = str(body.get("allocationMode") or "ExactCount")
    try:
        count = int(body.get("count") or 1)
    except (TypeError, ValueError):
        count = 1
    return RequestSpec(name, str(body.get("deviceClassName") or ""), mode, count,
                       bool(body.get("adminAccess")), tuple(body.get("selectors") or ()))


# --------------------------------------------------------------------------- per node


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
    spec: RequestSpec
    candidates: int
    funnel: list[FunnelStage]
    #: code -> rejected devices with their rejection, in search order
    rejections: dict[RejectionCode, list[tuple[DeviceId, Rejection]]]
    #: devices in the final allocation for this request
    allocated: list[DeviceId]
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
                                     if c in SELECTION_CODES or STAGE_INDEX[c] < STAGE_INDEX[C.NOT_IN_CLASS])

    @property
    def in_class(self) -> int:
        return self.candidates - sum(len(v) for c, v in self.rejections.items()
                                     if c in CLASS_CODES or STAGE_INDEX[c] < STAGE_INDEX[C.NOT_IN_CLASS])

    @property
    def needed(self) -> int:
        """Devices the request needs: its count, or (mode All) every matching device, at least one."""
        return max(1, self.matching) if self.spec.mode == "All" else max(1, self.spec.count)

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
            needed = f"all {short[0]}" if self.spec.mode == "All" else str(short[0])
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
        if any(STAGE_INDEX[c] < STAGE_INDEX[C.NOT_IN_CLASS] for c in self.rejections):
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

    @property
    def fits(self) -> bool:
        return self.status == ALLOCATED


#: stage label per code (a plain dict lookup: enum members hash in Python, so few lookups is faster)
STAGE_LABEL: dict[RejectionCode, str] = dict(STAGES)


def build_funnel(rejected: Iterable[Rejection], candidates: int) -> list[FunnelStage]:
    """Stages in funnel order, only those that rejected something."""
    counts = Counter(r.code for r in rejected)
    return _funnel(sorted(counts.items(), key=lambda kv: STAGE_INDEX[kv[0]]), candidates)


def _funnel(counts: Iterable[tuple[RejectionCode, int]], candidates: int) -> list[FunnelStage]:
    """Stages from (code, rejected) pairs already in funnel order."""
    remaining = candidates
    funnel = []
    for code, n in counts:
        if n:
            remaining -= n
            funnel.append(FunnelStage(code, STAGE_LABEL[code], n, remaining))
    return funnel


def explain_request(claim: ClaimKey, spec: RequestSpec, trace: RequestTrace | None,
                    allocated: list[DeviceId]) -> RequestExplanation:
    """The funnel of one request from its trace (an absent trace: the search never got there)."""
    if trace is None:
        return RequestExplanation(claim, spec, 0, [], {}, allocated, [], evaluated=bool(allocated))
    # every device the search looked at, or that the allocation holds (only the number counts)
    rejected = trace.rejected
    selected = trace.selected
    final = frozenset(allocated)
    # every device the search looked at, or that the allocation holds
    if final:
        candidates = len(rejected.keys() | selected.keys() | final)
    elif selected:
        candidates = len(rejected.keys() | selected.keys())
    else:
        candidates = len(rejected)
    groups: dict[RejectionCode, list[tuple[DeviceId, Rejection]]] = {}
    in_use = _IN_USE
    for device, rejection in rejected.items():
        if final and device in final:
            continue  # rejected on one branch of the search, chosen on another
        code = rejection.code
        if code is in_use and device in selected:
            continue  # "in use" only because this very request had already taken it
        found = groups.get(code)
        if found is None:
            groups[code] = [(device, rejection)]
        else:
            found.append((device, rejection))
    ordered = {code: groups[code] for code in sorted(groups, key=STAGE_INDEX.__getitem__)} if len(groups) > 1 else groups
    remaining = candidates
    funnel = []
    for code, devices in ordered.items():  # (_funnel, inline: this runs for every request and node)
        remaining -= len(devices)
        funnel.append(FunnelStage(code, STAGE_LABEL[code], len(devices), remaining))
    return RequestExplanation(claim, spec, candidates, funnel, ordered, allocated, list(trace.unsatisfied), True)


def _trace_for(tracer: ExplainTracer | None, claim: ClaimKey, name: str) -> RequestTrace | None:
    if tracer is None:
        return None
    trace = tracer.requests.get((claim, name))
    if trace is None and "/" in name:
        trace = tracer.requests.get((claim, name.split("/")[0]))
    return trace


def explain_node(node: str, status: str, claims: Sequence[Obj], tracer: ExplainTracer | None, *,
                 results: Sequence[Obj | None] = (), reasons: Sequence[str] = (),
                 error: str | None = None) -> NodeExplanation:
    """Explain one node: ``status`` is the allocator's verdict, ``results`` the AllocationResult
    per claim when allocated (None for claims that were allocated before)."""
    requests: list[RequestExplanation] = []
    for i, claim in enumerate(claims):
        key = claim_key(claim)
        result = results[i] if i < len(results) else None
        chosen = _chosen_devices(result)
        for spec in request_specs(claim):
            trace = _trace_for(tracer, key, spec.name)
            # pop: a repeated request name (stored before validation forbade it) gets the devices once
            requests.append(explain_request(key, spec, trace, chosen.pop(spec.name, [])))
    _restate_picked(requests, tracer)
    pools = [(d, p, r) for (d, p), r in (tracer.pools.items() if tracer else [])]
    refs = _claim_refs(claims)
    explanation = NodeExplanation(node, status, "", requests, pools, error, refs)
    explanation.reason = node_reason(explanation, reasons)
    return explanation


_REFS: dict[tuple[int, ...], tuple[Sequence[Obj], frozenset[str]]] = {}


def _claim_refs(claims: Sequence[Obj]) -> frozenset[str]:
    """``namespace/name`` of the claims (remembered per list of claim objects: every node asks)."""
    ids = tuple(map(id, claims))
    entry = _REFS.get(ids)
    if entry is None:  # (the entry keeps its claims alive: equal ids are the same objects)
        if len(_REFS) >= 256:
            _REFS.clear()
        entry = _REFS[ids] = (list(claims), frozenset(f"{k[0]}/{k[1]}" for k in (claim_key(c) for c in claims)))
    return entry[1]


def _is_attempt_rejection(rejection: Rejection) -> bool:
    """In use only because the search had picked the device for some request of this very attempt."""
    return rejection.code == _IN_USE and (
        "in this attempt" in rejection.message or "another request" in rejection.message)


def _restate_picked(requests: Sequence[RequestExplanation], tracer: ExplainTracer | None) -> None:
    """Say which request of the attempt had picked a device the search then found "in use"
    (a backtracking artifact, not another workload): ``already picked for request gpus of this claim``."""
    for req in requests:
        devices = req.rejections.get(_IN_USE)
        if devices and any(_is_attempt_rejection(rejection) for _, rejection in devices):
            break
    else:
        return  # the usual case: nothing to restate
    pickers: dict[DeviceId, list[tuple[ClaimKey, str]]] = {}
    for req in requests:  # the final allocation first, then any tentative pick
        for device in req.allocated:
            pickers.setdefault(device, []).append((req.claim, req.spec.name))
    for (claim, name), trace in (tracer.requests.items() if tracer else []):
        for device in trace.selected:
            pickers.setdefault(device, []).append((claim, name))
    for req in requests:
        devices = req.rejections.get(C.IN_USE)
        if not devices:
            continue
        for i, (device, rejection) in enumerate(devices):
            if not _is_attempt_rejection(rejection):
                continue
            holder = next((p for p in pickers.get(device, []) if p != (req.claim, req.spec.name)), None)
            if holder is None:
                text, details = "already picked for another request in this attempt", {}
            elif holder[0] == req.claim:
                text = f"already picked for request {holder[1]} of this claim"
                details = {"pickedFor": {"claim": f"{holder[0][0]}/{holder[0][1]}", "request": holder[1]}}
            else:
                text = (f"already picked for request {holder[1]} of claim {holder[0][0]}/{holder[0][1]} "
                        "(allocated together)")
                details = {"pickedFor": {"claim": f"{holder[0][0]}/{holder[0][1]}", "request": holder[1]}}
            devices[i] = (device, Rejection(C.IN_USE, text, {**(rejection.details or {}), **details,
                                                              "thisAttempt": True}))


def _chosen_devices(result: Obj | None) -> dict[str, list[DeviceId]]:
    chosen: dict[str, list[DeviceId]] = {}
    for r in (((result or {}).get("devices") or {}).get("results")) or []:
        chosen.setdefault(str(r.get("request") or ""), []).append(
            (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or "")))
    return chosen


# --------------------------------------------------------------------------- reasons


def node_reason(node: NodeExplanation, reasons: Sequence[str] = ()) -> str:
    """The one reason that decides the node, in words that aggregate well across nodes."""
    if node.status == ALLOCATED:
        return "fits"
    if node.status == ERROR:
        return f"error: {node.error or 'allocation failed'}"
    external = [r for r in reasons if r and r != "cannot allocate all claims"]
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
        return _pool_reason(node.pools_skipped)
    return "no combination of devices satisfies all requests and constraints"


def _parent(req: RequestExplanation, index: int) -> tuple[Any, ...]:
    """Subrequests group under their request; other requests stand alone (names may repeat)."""
    if "/" in req.spec.name:
        return (req.claim, req.spec.name.split("/")[0])
    return (req.claim, req.spec.name, index)


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


def _needed(req: RequestExplanation) -> int:
    return 1 if req.spec.mode == "All" else max(1, req.spec.count)


def _class_label(req: RequestExplanation) -> str:
    return req.spec.device_class or "matching"


def _self_held(rejection: Rejection, refs: frozenset[str]) -> bool:
    """In use only by the claims being allocated now (another of their requests took it)."""
    if rejection.code != C.IN_USE:
        return False
    details = rejection.details or {}
    holder = str(details.get("claim") or "")
    return holder in refs or bool(details.get("thisAttempt")) or _is_attempt_rejection(rejection)


def request_reason(req: RequestExplanation, node: NodeExplanation | None = None) -> str:
    """Why a request failed on a node, node-independent where possible (so nodes group)."""
    cls = _class_label(req)
    refs = node.claim_refs if node is not None else frozenset()
    if req.in_class == 0:
        pool_codes = [c for c in req.rejections if STAGE_INDEX[c] < STAGE_INDEX[C.NOT_IN_CLASS]]
        if pool_codes:
            return _code_reason(pool_codes[0], req.rejections[pool_codes[0]][0][1], req)
        if node is not None and node.pools_skipped:
            gated = sorted({str(r.details["gate"]) for _, _, r in node.pools_skipped
                            if (r.details or {}).get("gate")})
            if gated:
                return f"no usable {cls} device (pools skipped: feature gate {', '.join(gated)} disabled)"
            kinds = sorted({_short(r.code) for _, _, r in node.pools_skipped})
            return f"no usable {cls} device (devices {', '.join(kinds)})"
        return f"no {cls} device"
    if req.matching == 0:
        if C.CEL_ERROR in req.rejections:
            return f"CEL error: {req.rejections[C.CEL_ERROR][0][1].message}"
        return f"request {req.spec.name}: selector matches no {cls} device"
    blockers = {c: v for c, v in req.rejections.items() if c not in SELECTION_CODES
                and STAGE_INDEX[c] > STAGE_INDEX[C.REQUEST_SELECTOR_FALSE]}
    own = [d for d in blockers.get(C.IN_USE, []) if _self_held(d[1], refs)]
    if own:
        others = [d for d in blockers[C.IN_USE] if not _self_held(d[1], refs)]
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
            if code == C.IN_USE:
                return "all matching devices in use"
            return _code_reason(code, devices[0][1], req)
        return "no matching device free: " + ", ".join(
            f"{len(v)} {_short(c)}" for c, v in sorted(blockers.items(), key=lambda kv: (-len(kv[1]), STAGE_INDEX[kv[0]])))
    if req.viable < needed:
        shortage = f"{cls}: {needed} devices needed, {req.viable} usable"
        if blockers:
            code = max(blockers, key=lambda c: (len(blockers[c]), -STAGE_INDEX[c]))
            if code == C.IN_USE:
                return f"{shortage}, {len(blockers[code])} in use"
            return f"{_code_reason(code, blockers[code][0][1], req)} ({shortage})"
        return shortage
    if req.unsatisfied:
        return req.unsatisfied[0]
    if blockers:
        code = max(blockers, key=lambda c: (len(blockers[c]), -STAGE_INDEX[c]))
        return _code_reason(code, blockers[code][0][1], req)
    return f"request {req.spec.name}: no combination of {cls} devices fits"


_SHORT = {
    C.IN_USE: "in use", C.COUNTERS_EXHAUSTED: "out of shared counters", C.CAPACITY_SHORT: "short of capacity",
    C.TAINT_NOT_TOLERATED: "with untolerated taints", C.COMPATIBILITY_CONFLICT: "in conflicting compatibility groups",
    C.CONSTRAINT_MISMATCH: "not meeting constraints", C.POOL_INCOMPLETE: "in incomplete pools",
    C.POOL_INVALID: "in invalid pools", C.NODE_MISMATCH: "not reachable from the node",
    C.GATE_DISABLED: "needing a disabled feature gate", C.ADMIN_ACCESS: "refused for admin access",
    C.BINDING_CONDITIONS: "with binding conditions", C.OTHER: "otherwise unusable",
}


def _short(code: RejectionCode) -> str:
    return _SHORT.get(code, code.value)


def _detail(details: dict[str, Any], *names: str) -> Any:
    for name in names:
        if details.get(name) not in (None, ""):
            return details[name]
    return None


def _code_reason(code: RejectionCode, rejection: Rejection, req: RequestExplanation) -> str:
    """A reason for one code, with the numbers from the rejection's details when it has them."""
    d = rejection.details or {}
    if code == C.COUNTERS_EXHAUSTED:
        counter = _detail(d, "counter")
        counter_set = _detail(d, "counterSet", "set")
        needed, left = _detail(d, "needed", "requested"), _detail(d, "left", "available", "remaining")
        if counter_set and counter and needed is not None and left is not None:
            return f"counter {counter_set}/{counter}: {needed} needed, {left} left"
    if code == C.CAPACITY_SHORT:
        name = _detail(d, "capacity", "name")
        needed, left = _detail(d, "needed"), _detail(d, "left", "available", "remaining")
        requested = _detail(d, "requested")
        if name and "has no capacity" in rejection.message:
            return f"capacity {name}: the device has none"
        if name and "request policy" in rejection.message:
            return f"capacity {name}: the requestPolicy does not allow {needed}"
        if name and needed is not None and left is not None:
            rounding = f" (requested {requested}, rounded up by the requestPolicy)" if (
                requested is not None and str(requested) != str(needed)) else ""
            return f"capacity {name}: {needed} needed{rounding}, {left} left"
    if code == C.COMPATIBILITY_CONFLICT:
        counter_set = _detail(d, "counterSet", "with")
        if counter_set:
            groups = d.get("groups") or []
            existing = d.get("existing") or []
            peers = d.get("allocatedDevices")
            where = f" ({_list(existing)}: {', '.join(peers)})" if peers else f" ({_list(existing)})"
            return f"compatibility groups {_list(groups)} conflict with the devices allocated on counter set {counter_set}{where}"
    if code == C.TAINT_NOT_TOLERATED:
        taint = _detail(d, "taint")
        if isinstance(taint, dict):
            text = f"{taint.get('key')}{'=' + str(taint['value']) if taint.get('value') else ''}:{taint.get('effect')}"
            return f"taint {text} not tolerated"
    if code == C.CONSTRAINT_MISMATCH:
        attribute = _detail(d, "attribute", "matchAttribute", "distinctAttribute")
        kind = _detail(d, "constraint") or "constraint"
        if attribute and d.get("value") is None:
            return f"{kind} on {attribute} not met: the device has no such attribute"
        if attribute and kind == "matchAttribute":
            return f"matchAttribute on {attribute} not met: {_value(d.get('value'))} vs {_value(d.get('expected'))}"
        if attribute and kind == "distinctAttribute":
            return f"distinctAttribute on {attribute} not met: {_value(d.get('value'))} already taken"
        if attribute:
            return f"{kind} on {attribute} not met"
    if code == C.GATE_DISABLED:
        gate = _detail(d, "gate", "featureGate")
        if gate:
            return f"feature gate {gate} disabled"
    return rejection.message or code.value


def _value(value: Any) -> str:
    """An attribute value as people write it in CEL (booleans lower-case)."""
    if isinstance(value, bool) or value in ("True", "False"):
        return str(value).lower()
    return str(value)


def _list(values: Any) -> str:
    return "[" + ", ".join(str(v) for v in values or []) + "]"


def _pool_reason(pools: Sequence[tuple[str, str, Rejection]]) -> str:
    driver, pool, rejection = pools[0]
    return f"pool {driver}/{pool}: {rejection.message or rejection.code.value}"


# --------------------------------------------------------------------------- across nodes


@dataclass
class Explanation:
    """Every node's explanation for one target, plus cluster-wide findings."""

    target: str
    nodes: list[NodeExplanation]
    #: findings that hold on every node ("no device of class X exists in the cluster")
    cluster: list[str] = field(default_factory=list)
    #: the claims allocated together (namespace, name), in allocation order
    claims: list[ClaimKey] = field(default_factory=list)

    @property
    def fitting(self) -> list[NodeExplanation]:
        return [n for n in self.nodes if n.fits]

    def reason_counts(self) -> list[tuple[str, int]]:
        """(reason, number of nodes) for the nodes that do not fit, most frequent first."""
        counts = Counter(n.reason for n in self.nodes if not n.fits)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def summary(self) -> str:
        """``0/50 nodes fit: 42 no gpu.example.com device; 6 all matching devices in use``."""
        total = len(self.nodes)
        head = f"{len(self.fitting)}/{total} node{'s' if total != 1 else ''} fit"
        parts = [f"{n} {reason}" for reason, n in self.reason_counts()]
        prefix = f"{self.target}: " if self.target else ""
        text = prefix + head + (": " + "; ".join(parts) if parts else "")
        if self.cluster and not self.fitting:
            text += " (" + "; ".join(self.cluster) + ")"
        return text


def cluster_findings(nodes: Sequence[NodeExplanation], every_node: bool = True) -> list[str]:
    """Requests that no node can serve for a cluster-wide reason: no device of the class
    exists on any node, or the request's selectors match none of them. ``every_node``:
    the nodes are the whole cluster (else the findings speak of the nodes asked for)."""
    where = "in the cluster" if every_node else "on the nodes asked for"
    findings: list[str] = []
    by_request: dict[tuple[ClaimKey, str], list[RequestExplanation]] = {}
    skipped_pools = any(node.pools_skipped for node in nodes)
    for node in nodes:
        if node.status == ERROR:
            continue
        for req in node.requests:
            by_request.setdefault((req.claim, req.spec.name), []).append(req)
    for (claim, name), reqs in by_request.items():
        evaluated = [r for r in reqs if r.evaluated]
        if not evaluated or any(r.allocated for r in reqs):
            continue
        spec = evaluated[0].spec
        cls = spec.device_class or "matching"
        if skipped_pools:  # the skipped pools may hold such devices: no cluster-wide claim
            continue
        if all(r.in_class == 0 for r in evaluated):
            findings.append(f"no device of class {cls} exists {where}")
        elif all(r.matching == 0 for r in evaluated) and C.CEL_ERROR not in {c for r in evaluated for c in r.rejections}:
            findings.append(f"the selectors of request {claim[0]}/{claim[1]}:{name} match no {cls} device "
                            f"{where}")
    return list(dict.fromkeys(findings))


def explanation(target: str, nodes: Sequence[NodeExplanation], every_node: bool = True,
                claims: Sequence[ClaimKey] = ()) -> Explanation:
    """Aggregate node explanations (ordered: fitting nodes first, then by name)."""
    ordered = sorted(nodes, key=lambda n: (not n.fits, n.node))
    return Explanation(target, ordered, cluster_findings(ordered, every_node), list(claims))


# --------------------------------------------------------------------------- structured form


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _device(d: DeviceId) -> Obj:
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
    out: Obj = {"node": node.node, "status": node.status, "reason": node.reason}
    if node.fits:
        out["devices"] = [_device(d) for r in node.requests for d in r.allocated]
    if node.error is not None:
        out["error"] = node.error
    out["requests"] = [request_to_dict(r, result) for r, result in zip(node.requests, request_results(node))]
    if node.pools_skipped:
        out["poolsSkipped"] = [{"driver": d, "pool": p, "code": r.code.name, "message": r.message}
                               for d, p, r in node.pools_skipped]
    return out


#: top-level keys of the ``kubectl-dra/v1 Explanation`` document, in order (``explain --help`` lists them)
DOCUMENT_KEYS = ("apiVersion", "kind", "target", "summary", "fit", "total", "featureGates", "claims", "reasons",
                 "cluster", "nodes")


def explanation_to_dict(exp: Explanation, feature_gates: dict[str, bool] | None = None) -> Obj:
    """The ``kubectl-dra/v1 Explanation`` document (``explain -o json``): every node, every request,
    every rejected device (``NOT_IN_CLASS`` included), in a stable order (nodes that fit first, then
    by name; rejections in funnel order; devices in search order)."""
    doc: Obj = {"apiVersion": "kubectl-dra/v1", "kind": "Explanation", "target": exp.target,
                "summary": exp.summary(), "fit": len(exp.fitting), "total": len(exp.nodes)}
    if feature_gates is not None:
        doc["featureGates"] = feature_gates
    doc["claims"] = [{"namespace": ns, "name": name} for ns, name in exp.claims]
    doc["reasons"] = [{"reason": r, "nodes": n} for r, n in exp.reason_counts()]
    doc["cluster"] = list(exp.cluster)
    doc["nodes"] = [node_to_dict(n) for n in exp.nodes]
    return doc
