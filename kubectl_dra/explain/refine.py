"""Restating rejections in funnel order, through the allocator's index.

The search tests availability before selectors (as upstream does), so a device held by
another claim is reported "in use" even when it is of another kind entirely. For people,
a device of another class is "not in the class": :class:`SelectionRefiner` evaluates the
class and request selectors of such devices with the allocator's own CEL path
(:class:`~kubectl_dra.allocation.celcache.CelCache` on the index's device views, whose
answers the previews share). It also names the allocated devices a compatibility-group
conflict is with, and says which kind of capacity shortfall a rejection is.

Every cache here belongs to the refiner, which the caller builds for one run over one
snapshot and then drops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..allocation.capacity import violates_policy
from ..allocation.celcache import CelCache
from ..allocation.index import ClusterIndex
from ..allocation.trace import Rejection, RejectionCode
from ..errors import CELError
from ..gates import Gate, effective_gates
from ..model.claims import Request, parse_claim, selector_expression
from ..model.devices import DeviceView
from ..quantity import Quantity, QuantityError
from ..types import DeviceID

if TYPE_CHECKING:
    from ..gates import FeatureGates
    from ..state import ClusterState

C = RejectionCode
#: the first false selector of a device: (code, selector index, expression)
Verdict = tuple[RejectionCode, int, str]
#: what decides a selection verdict besides the device: class and request expressions
Signature = tuple[tuple[str, ...], tuple[str, ...]]

#: capacity shortfall kinds (the ``shortfall`` detail of a CAPACITY_SHORT rejection)
SHORT_MISSING = "missing"
SHORT_POLICY = "policy"
SHORT_AMOUNT = "amount"


def expressions(selectors: Sequence[Any] | None) -> tuple[str, ...]:
    """The CEL expressions of a selector list, in order."""
    return tuple(e for e in map(selector_expression, selectors or ()) if e)


class SelectionRefiner:
    """Restates rejections as they are recorded (see the module docstring).

    ``index`` is the allocator's index of ``state`` (built here when not given); pass the one
    the previews use so selector answers are computed once.
    """

    #: the codes :meth:`__call__` may restate; the tracer records any other rejection as it is
    restates = frozenset({C.IN_USE, C.COMPATIBILITY_CONFLICT, C.CAPACITY_SHORT})

    def __init__(self, state: "ClusterState", gates: "FeatureGates | None" = None,
                 index: ClusterIndex | None = None) -> None:
        self.state = state
        self.gates = effective_gates(gates)
        self.index = index if index is not None else ClusterIndex(state)
        self.cel = CelCache()
        self._views: dict[DeviceID, DeviceView] | None = None
        #: (id of the claim dict, request) -> (the claim, its signature or None when unknown)
        self._signatures: dict[tuple[int, str], tuple[Mapping[str, Any], tuple[Signature, str, str] | None]] = {}
        #: device -> what CEL sees of it (see _content)
        self._contents: dict[DeviceID, str] = {}
        #: (signature, device content) -> the first false selector, or None
        self._verdicts: dict[tuple[Signature, str], Verdict | None] = {}
        self._restated: dict[tuple[tuple[Signature, str, str], Verdict], Rejection] = {}
        self._holders: dict[tuple[str, str, str], list[str]] = {}

    def __call__(self, claim: Mapping[str, Any], request: str, driver: str, pool: str, device: str,
                 rejection: Rejection) -> Rejection:
        """The rejection to record (see the class)."""
        code = rejection.code
        if code is C.IN_USE:
            return self._in_use(claim, request, (driver, pool, device), rejection)
        if code is C.COMPATIBILITY_CONFLICT:
            return self._compat(driver, pool, rejection)
        if code is C.CAPACITY_SHORT:
            return self._capacity((driver, pool, device), rejection)
        return rejection

    # -- device views ------------------------------------------------------------------

    def _view(self, key: DeviceID) -> DeviceView | None:
        """The index's view of a device (the first of an id in state order)."""
        if self._views is None:
            views: dict[DeviceID, DeviceView] = {}
            for sv in self.index.slice_views:
                for view in sv.devices:
                    views.setdefault(view.id, view)
            self._views = views
        return self._views.get(key)

    # -- in use ------------------------------------------------------------------------

    def _signature(self, claim: Mapping[str, Any], request: str) -> tuple[Signature, str, str] | None:
        """(class and request expressions, request, class) of a claim's request; None when unknown."""
        spec_key = (id(claim), request)
        found = self._signatures.get(spec_key)
        if found is None or found[0] is not claim:
            spec = next((r for r in parse_claim(claim).all_requests if r.name == request), None)
            found = self._signatures[spec_key] = (claim, None if spec is None else self._signature_of(spec))
        return found[1]

    def _signature_of(self, spec: Request) -> tuple[Signature, str, str]:
        cls = self.index.classes.get(spec.device_class) or {}
        class_exprs = expressions((cls.get("spec") or {}).get("selectors"))
        return ((class_exprs, spec.expressions), spec.name, spec.device_class)

    def _in_use(self, claim: Mapping[str, Any], request: str, key: DeviceID, rejection: Rejection) -> Rejection:
        """An "in use" rejection restated as the first false selector, when one is false."""
        signature = self._signature(claim, request)
        if signature is None:
            return rejection
        view = self._view(key)
        if view is None:
            return rejection
        verdict_key = (signature[0], self._content(view))
        if verdict_key in self._verdicts:
            verdict = self._verdicts[verdict_key]
        else:
            verdict = self._verdicts[verdict_key] = self._verdict(signature[0], view)
        if verdict is None:
            return rejection
        restated = self._restated.get((signature, verdict))
        if restated is None:  # immutable, so one per request and verdict serves every node
            restated = self._restated[(signature, verdict)] = _restate(signature[1], signature[2], verdict)
        return restated

    def _content(self, view: DeviceView) -> str:
        """Everything CEL sees of a device (driver, attributes, capacity, allowMultipleAllocations;
        see ``cel.make_device_input``): devices with equal content get equal verdicts, so the many
        identical devices of a cluster are evaluated once."""
        found = self._contents.get(view.id)
        if found is None:
            raw = view.raw
            found = self._contents[view.id] = repr((view.slice.driver, raw.get("attributes"), raw.get("capacity"),
                                                    bool(raw.get("allowMultipleAllocations"))))
        return found

    def _verdict(self, signature: Signature, view: DeviceView) -> Verdict | None:
        """The first class or request selector that is false for the device (None: all hold
        or one cannot be evaluated)."""
        class_exprs, request_exprs = signature
        for i, expression in enumerate(class_exprs):
            if self._matches(expression, view) is False:
                return (C.NOT_IN_CLASS if i == 0 else C.CLASS_SELECTOR_FALSE, i, expression)
        for i, expression in enumerate(request_exprs):
            if self._matches(expression, view) is False:
                return (C.REQUEST_SELECTOR_FALSE, i, expression)
        return None

    def _matches(self, expression: str, view: DeviceView) -> bool | None:
        """A selector's value for a device, as the allocator computes it; None on a CEL error."""
        try:
            return self.cel.matches(expression, view)
        except CELError:
            return None

    # -- compatibility groups ----------------------------------------------------------

    def _compat(self, driver: str, pool: str, rejection: Rejection) -> Rejection:
        """Name the allocated devices a compatibility-group conflict is with, when they are known."""
        details = dict(rejection.details or {})
        peers = self._peers(driver, pool, str(details.get("counterSet") or details.get("with") or ""))
        if not peers:
            return rejection
        details["allocatedDevices"] = peers
        return Rejection(rejection.code, f"{rejection.message}; allocated there: {', '.join(peers)}", details)

    def _peers(self, driver: str, pool: str, counter_set: str) -> list[str]:
        """Allocated devices of the pool that draw on ``counter_set``."""
        key = (driver, pool, counter_set)
        found = self._holders.get(key)
        if found is None:
            in_use = self.index.in_use(frozenset(), True)
            names: dict[str, None] = {}
            for sv in self.index.slice_views:
                if sv.pool_id != (driver, pool):
                    continue
                for view in sv.devices:
                    if (view.name not in names and in_use.allocated(view.id)
                            and any(c.counter_set == counter_set for c in view.consumes)):
                        names[view.name] = None
            found = self._holders[key] = list(names)
        return found

    # -- capacity ----------------------------------------------------------------------

    def _capacity(self, key: DeviceID, rejection: Rejection) -> Rejection:
        """Say which kind of shortfall a capacity rejection is (``shortfall`` in its details):
        the device lacks the capacity, its request policy refuses the amount, or too little is left."""
        details = rejection.details or {}
        name = str(details.get("capacity") or "")
        view = self._view(key)
        if view is None or "shortfall" in details:
            return rejection
        capacity = view.capacity.get(name)
        if capacity is None:
            kind = SHORT_MISSING
        else:
            try:
                needed = Quantity.parse(str(details.get("needed")))
            except QuantityError:
                return rejection
            fractional = self.gates.enabled(Gate.FRACTIONAL_CAPACITY_RANGE)
            kind = SHORT_POLICY if violates_policy(needed, capacity.policy, fractional=fractional) else SHORT_AMOUNT
        return Rejection(rejection.code, rejection.message, {**details, "shortfall": kind})


def _restate(request: str, device_class: str, verdict: Verdict) -> Rejection:
    """An "in use" rejection restated as the first false selector."""
    code, i, expression = verdict
    if code == C.REQUEST_SELECTOR_FALSE:
        return Rejection(code, f"selector #{i} of request {request} is false for this device (it is also in use)",
                         {"request": request, "index": i, "expression": expression, "inUse": True})
    return Rejection(code, f"selector #{i} of device class {device_class} is false for this device (it is "
                           "also in use)", {"class": device_class, "index": i, "expression": expression,
                                            "inUse": True})
