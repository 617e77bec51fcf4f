"""The search: first-fit with backtracking over claims, requests and devices.

This follows upstream's experimental structured allocator: claims in the given order,
their requests in order (for a prioritized list, its subrequests in order), and for
each needed device the candidates in pool order, slice order and device order. A
candidate is taken when it is free, matches the class and request selectors, fits the
shared counters, compatibility groups and consumable capacity, is not tainted (or the
taint is tolerated) and keeps every claim constraint satisfiable; the search then
moves on and undoes the choice when the rest cannot be satisfied. The first complete
solution wins.

Read beside upstream (``structured/internal/experimental/allocator_experimental.go`` in
kubernetes/dynamic-resource-allocation), the names map as follows:

==================================================  ==================================================
here                                                upstream
==================================================  ==================================================
:class:`~.allocator.Allocator`, ``allocate``        ``Allocator``, ``Allocate``
:class:`Search` (one ``allocate`` call)             ``allocator`` (the state of one Allocate call)
:meth:`Search.prepare`, :class:`~.preparation.      the claim loop of ``Allocate`` before the search,
ClaimChecks` (``run``, ``validate``)                ``validateDeviceRequest``
:class:`~.preparation.RequestData`, ``rd``          ``requestData``
``Search.requests[(ci, ri, si)]``                   ``requestData[requestIndices{claimIndex,
                                                    requestIndex, subRequestIndex}]``
``ci, ri, si, di`` (a :data:`Call`)                 ``deviceIndices{claimIndex, requestIndex,
                                                    subRequestIndex, deviceIndex}``
``in_sub``; ``start`` (pool, device)                ``allocateSubRequest``; ``deviceLocation``
:meth:`Search._one` with :meth:`Search._settle`,    ``allocateOne`` (recursive there; here each
run by :meth:`Search._drive`                        activation is a generator on an explicit stack:
                                                    where allocateOne calls itself, ``_one`` yields
                                                    the call's arguments and finds its result in
                                                    ``Search.reply`` when resumed)
``DONE``, ``FAIL``, ``EXCEEDED``                    ``(true, nil)``, ``(false, nil)``,
                                                    ``errAllocationResultMaxSizeExceeded``
:meth:`Search.is_selectable`,                       ``isSelectable``, ``selectorsMatch``
``_check_selectable``
:meth:`Search._allocate_device`, :class:`Chosen`,   ``allocateDevice`` and the ``deallocate`` func
:meth:`Search._undo`                                it returns
``Search.allocating``                               ``allocatingDevices``
``Search.allocating_capacity``, ``shares``          ``allocatingCapacity``
:class:`~.counters.CounterLedger`                   ``consumedCounters``, ``checkAvailableCounters``
``InUse.dedicated`` (:mod:`.inuse`)                 ``allocatedState.AllocatedDevices``
``InUse.shared_by``, ``shared_capacity``            ``AllocatedSharedDeviceIDs``, ``AggregatedCapacity``
``Search.matches``, ``DeviceView.cel_results``      ``deviceMatchesRequest``
``Search.results[ci]``                              ``result[claimIndex].devices``
``Search.selected_sub``                             the subrequest each device result records
``Constraint.check``, ``push``, ``pop``             ``constraint.add``, ``remove``
``Search.steps``                                    ``numAllocateOneInvocations``
:mod:`.pruning`, :meth:`Search._escalate`,          (ours: upstream searches these branches
:meth:`Search._claim_cannot_fit`                    exhaustively)
==================================================  ==================================================
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any, Callable, Generator, Hashable, Mapping

from ..errors import AllocationError, AllocationTimeout, CELError
from ..gates import Gate
from ..limits import ALLOCATION_RESULTS_MAX, TIMED_OUT
from ..model.attributes import AttrValue, attribute_value, derived_value, lookup_attribute
from ..model.devices import DeviceView
from ..model.nodes import node_matches
from ..quantity import Quantity
from ..types import claim_ref
from . import capacity as cap
from . import rejections as why
from .constraints import Constraint
from .counters import CounterLedger, GroupConflict
from .gated import binding_conditions_unusable, counters_unusable, node_operations_unusable, shareable
from .taints import untolerated_taint
from .pools import Pool
from .preparation import ClaimChecks, PreparedClaims, RequestData
from .pruning import FailedStates, NeededLater, plan_all_requests, search_cannot_fail_with_error
from .trace import Rejection, Tracer

if TYPE_CHECKING:
    from .allocator import Allocator, Features
    from .index import NodePools

FAIL, DONE, EXCEEDED = 0, 1, 2
#: the number of search steps after which a search starts pruning what it has proven
#: (see Search._escalate): few searches get there, and those that do are long
ESCALATE_AFTER = 2000
#: the most failed states a search remembers (a few hundred bytes each)
MEMO_MAX = 1 << 18
#: the most steps a check of one claim on its own takes before it gives up (see
#: Search._claim_cannot_fit): it is a shortcut, not a second search as long as the first
ALONE_MAX = 100_000
#: the deadline of a search without one
_NEVER = float("inf")
#: where a request's device search starts: (pool index, device index)
_START = (0, 0)
#: the arguments of one allocateOne call: claim, request, subrequest, device, whether the
#: subrequest was chosen by its parent's loop, and where the device search starts (pool, device)
Call = tuple[int, int, int, int, bool, tuple[int, int]]
#: one activation of the search step: yields the arguments of each step it needs answered
#: (and finds that step's result in Search.reply when resumed); leaves its own result (FAIL,
#: DONE or EXCEEDED) in Search.reply when it ends
Step = Generator[Call, None, None]


class _Inconclusive(Exception):
    """A check of one claim on its own ran out of steps (see Search._claim_cannot_fit)."""


class Chosen:
    """One device taken for a request during the search, and what taking it changed, so
    that :meth:`Search._undo` can give everything back (also after a partial take)."""

    __slots__ = ("ci", "rd", "pool", "device", "share_id", "consumed", "reserved", "counters", "compat",
                 "pushed", "holders", "result")

    def __init__(self, ci: int, rd: RequestData, pool: Pool, device: DeviceView) -> None:
        self.ci = ci
        self.rd = rd
        self.pool = pool
        self.device = device
        #: for one share of a multi-allocatable device: its ID and the capacity it consumes
        self.share_id: str | None = None
        self.consumed: dict[str, Quantity] | None = None
        #: the search's reservations on the shared device, which ``consumed`` was added to
        self.reserved: dict[str, Quantity] | None = None
        #: whether the device's shared counters were taken
        self.counters = False
        #: undoes joining the device's compatibility groups
        self.compat: Callable[[], None] | None = None
        #: the constraints the device's attribute values were pushed on
        self.pushed: list[Constraint] | None = None
        #: the claims holding the device exclusively in this search (ci was added)
        self.holders: set[int] | None = None
        #: whether the device was appended to its claim's results
        self.result = False


class Search:
    """One Allocate call: per-call state on top of the Allocator's indexes (the checks of the
    claims before searching are in :mod:`.preparation`; the pruning that upstream does not
    have, in :mod:`.pruning`)."""

    __slots__ = ("a", "f", "prepared", "node", "claims", "seen", "pools", "in_use", "tracer", "requests", "selected_sub",
                 "constraints", "results", "allocating", "shares", "allocating_capacity", "ledger",
                 "matches", "steps", "ticks", "deadline", "num_requests", "last_rejection", "configured", "all_mode",
                 "needed_later", "reply", "memo", "escalate_at", "give_up_at", "alone", "end")

    def __init__(self, allocator: "Allocator", prepared: PreparedClaims, node: Mapping[str, Any],
                 seen: "NodePools", tracer: Tracer | None, deadline: float | None = None) -> None:
        """``deadline`` (a ``time.monotonic()`` value) bounds preparation and search, as the
        scheduler's filter timeout does: :class:`AllocationTimeout` once it has passed."""
        self.a = allocator
        self.f: "Features" = allocator.features
        self.prepared = prepared
        self.node = node
        self.claims = claims = prepared.claims
        #: the pools the node sees (``seen.problems``: the incomplete or invalid ones, also
        #: those without devices here)
        self.seen = seen
        self.pools = seen.pools
        self.in_use = prepared.in_use
        self.tracer = tracer
        # (when the claims were checked for an earlier node, as they are for most: see prepare)
        known = prepared.requests
        checked = known is not None
        #: (claim, request, subrequest) -> the request or subrequest, checked (see prepare)
        self.requests: dict[tuple[int, int, int], RequestData] = known if known is not None else {}
        #: per claim: its constraints, the number of its requests, and whether it or the class
        #: of any of its (sub)requests has a config to copy
        self.constraints: list[list[Constraint]] = prepared.constraints if checked else []
        self.num_requests: list[int] = prepared.num_requests if checked else []
        self.configured: list[bool] = prepared.configured if checked else []
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.results: list[list[Chosen]] = [[] for _ in claims]
        self.allocating: dict[tuple[str, str, str], set[int]] = {}
        #: device -> number of shares the current search holds
        self.shares: dict[tuple[str, str, str], int] = {}
        self.allocating_capacity: dict[tuple[str, str, str], dict[str, Quantity]] = {}
        #: the shared counters and compatibility groups this search has taken (made when
        #: the first device with counters is taken: most searches take none)
        self.ledger: CounterLedger | None = None
        self.matches: dict[tuple[tuple[int, int, int], int], bool] = {}
        self.steps = 0
        #: units of work (search steps and devices looked at) since the clock was last read
        self.ticks = 0
        self.deadline = deadline if deadline is not None else _NEVER
        #: whether any request asks for all devices (then the preparation depends on the node)
        self.all_mode = False
        #: the rejection last handed to the tracer
        self.last_rejection: Rejection | None = None
        #: (claim, request) -> devices that a later "all devices" request needs exclusively
        #: (see pruning.plan_all_requests)
        self.needed_later: NeededLater = {}
        #: the result of the search step that ended last (see _one)
        self.reply = FAIL
        #: the states from which the search failed (see _escalate), once it has run long
        self.memo: FailedStates | None = None
        #: the number of steps after which the search escalates
        self.escalate_at: float = ESCALATE_AFTER
        #: the number of steps after which a check of one claim on its own gives up
        self.give_up_at: float = _NEVER
        #: whether this search checks one claim on its own (see _claim_cannot_fit)
        self.alone = False
        #: the claims searched are those before this one
        self.end = len(claims)

    # -- before the search ------------------------------------------------------------------

    def prepare(self) -> None:
        """Check every claim and request, as upstream does before searching.

        Without "all devices" requests the outcome does not depend on the node, so it is
        kept on the PreparedClaims for the next node (constraints are copied: they carry
        search state).
        """
        p = self.prepared
        if p.requests is not None:  # (__init__ took them from p)
            if any(p.constraints):
                self.constraints = [[c.fresh() for c in group] for group in p.constraints]
            return
        checked = ClaimChecks(self).run()
        self.requests, self.constraints = checked.requests, checked.constraints
        self.num_requests, self.configured = checked.num_requests, checked.configured
        self.all_mode = any(rd.all_mode for rd in self.requests.values())
        if not self.all_mode:
            p.requests, p.num_requests, p.configured = self.requests, self.num_requests, self.configured
            p.constraints = self.constraints

    # -- the recursion ----------------------------------------------------------------------

    def run(self) -> bool:
        """Search for a solution; True when every claim got all its devices."""
        if self.all_mode:
            needed_later = plan_all_requests(self)
            if needed_later is None:
                return False
            self.needed_later = needed_later
        return self._drive((0, 0, 0, 0, False, _START)) == DONE

    def _escalate(self) -> bool:
        """A search that has run long: start remembering the states from which the search
        failed (see FailedStates), and True when a claim cannot be satisfied on its own (see
        _claim_cannot_fit); neither changes the answer or the first solution."""
        if self.tracer is None:  # (a tracer would hear less: see FailedStates)
            self.memo = FailedStates(self)
        if self.alone or len(self.claims) < 2 or not search_cannot_fail_with_error(self):
            return False
        return any(self._claim_cannot_fit(ci) for ci in range(len(self.claims)))

    def _claim_cannot_fit(self, ci: int) -> bool:
        """Whether claim ``ci`` fails even when no other claim of the search takes anything.

        What other claims take only narrows what is left for this one (exclusive devices,
        counters, capacity and compatibility groups), so then every branch of the whole
        search fails, as it would after searching them all: only called when nothing in
        the search can raise an error instead (pruning.search_cannot_fail_with_error)."""
        alone = Search(self.a, self.prepared, self.node, self.seen, self.tracer, self.deadline)
        alone.alone = True
        alone.requests, alone.num_requests, alone.configured = self.requests, self.num_requests, self.configured
        alone.constraints = [[c.fresh() for c in group] for group in self.constraints]
        alone.all_mode, alone.needed_later, alone.matches = self.all_mode, self.needed_later, self.matches
        alone.end = ci + 1
        alone.give_up_at = ALONE_MAX
        try:
            found = alone._drive((ci, 0, 0, 0, False, _START))
        except _Inconclusive:
            return False  # (the whole search goes on as it would without the check)
        finally:
            self.steps += alone.steps
        return found != DONE

    def _drive(self, call: Call) -> int:
        """Run _one and the calls it makes on an explicit stack: the search goes as deep as a
        claim's devices need without Python recursion (no recursion limit to raise). A call
        that only moves on to the next request or claim is followed by :meth:`_settle`
        without a frame of its own."""
        first, crossed = self._settle(*call)
        if first is None:
            return DONE
        memo = self.memo
        stack: list[tuple[Step, bool, Hashable]] = [(self._one(*first), crossed, None)]
        while True:
            asked = next(stack[-1][0], None)
            if asked is None:  # that step ended, its result in self.reply
                _, crossed, key = stack.pop()
                if key is not None and self.reply != DONE:
                    assert memo is not None
                    if len(memo.failed) < MEMO_MAX:
                        memo.failed[key] = self.reply
                if crossed and self.reply == EXCEEDED:
                    self.reply = FAIL  # the claim limit of one claim does not end the search of the one before
                if not stack:
                    return self.reply
            else:  # a step it needs answered first
                nxt, crossed = self._settle(*asked)
                if nxt is None:
                    self.reply = DONE
                    continue
                if self.steps >= self.escalate_at:  # (checked as steps are taken: see _escalate)
                    if self.steps >= self.give_up_at:
                        raise _Inconclusive()
                    self.escalate_at = self.give_up_at
                    if self._escalate():
                        return FAIL
                    memo = self.memo
                key = None
                if memo is not None and nxt[3] == 0:  # (the start of a request)
                    key = memo.key(nxt)
                    known = memo.failed.get(key)
                    if known is not None:
                        self.reply = FAIL if crossed and known == EXCEEDED else known
                        continue
                stack.append((self._one(*nxt), crossed, key))

    def _settle(self, ci: int, ri: int, si: int, di: int, in_sub: bool,
                start: tuple[int, int]) -> tuple[Call | None, bool]:
        """The steps of upstream allocateOne that only move on: past a request's last device
        to the next request, past a claim's last request to the next claim, past the last
        claim to success. Each counts as a search step, as upstream's calls do. Returns the
        call that looks at devices (None: every claim is satisfied) and whether a claim's end
        was passed (then that call's EXCEEDED is reported as FAIL, as upstream does there)."""
        crossed = False
        moved = 0  # steps that only moved on
        requests, num_requests = self.requests, self.num_requests
        num_claims = self.end
        while ci < num_claims:
            if ri < num_requests[ci]:
                rd = requests[(ci, ri, si)]
                if di < rd.num_devices or (not in_sub and rd.parent is not None) \
                        or (rd.all_mode and not rd.all_devices):
                    if moved:
                        self._steps(moved)
                    return (ci, ri, si, di, in_sub, start), crossed
                ri, si, di, in_sub, start = ri + 1, 0, 0, False, _START
            else:
                ci, ri, si, di, in_sub, start = ci + 1, 0, 0, 0, False, _START
                crossed = True
            moved += 1
        self._steps(moved + 1)  # (the last one finds every claim satisfied)
        return None, crossed

    def _steps(self, n: int) -> None:
        """Count ``n`` search steps (allocateOne calls upstream), which are also units of work
        (see :meth:`tick`)."""
        self.steps += n
        ticks = self.ticks = self.ticks + n
        if (ticks >> 8) != ((ticks - n) >> 8) and time.monotonic() > self.deadline:
            self.timed_out()

    def tick(self) -> None:
        """Count one unit of work; every 256 units, stop if the deadline has passed. Every
        loop over devices ticks, so no part of the search runs unbounded."""
        self.ticks += 1
        if not self.ticks & 0xFF and time.monotonic() > self.deadline:
            self.timed_out()

    def timed_out(self) -> None:
        raise AllocationTimeout(f"{TIMED_OUT} (stopped after {self.steps} search steps)")

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool,
             start: tuple[int, int] = (0, 0)) -> Step:
        """Upstream allocateOne from where it looks at a request's devices (see _settle for
        the steps that only move on): find a device for device ``di`` of request ``ri``
        (subrequest ``si``) of claim ``ci``, and everything after it. A generator: where
        upstream calls itself, this yields the arguments of that call (a tuple) and finds its
        result in ``self.reply`` when resumed; where upstream returns, this sets ``self.reply``
        and ends (see _drive: a generator that ends costs less than one dropped while suspended)."""
        self.steps += 1
        self.ticks += 1  # (tick() inline: this runs for every step and device)
        if not self.ticks & 0xFF and time.monotonic() > self.deadline:
            self.timed_out()
        rd = self.requests[(ci, ri, si)]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            k = 0
            while (ci, ri, k) in self.requests:
                yield (ci, ri, k, di, True, _START)
                res = self.reply
                if res == EXCEEDED:
                    k += 1
                    continue
                all_exceeded = False
                if res == DONE:
                    self.selected_sub[(ci, ri)] = k
                    self.reply = DONE
                    return
                k += 1
            if self.tracer is not None:
                self.tracer.request_unsatisfied(self.claims[ci], rd.parent, "no subrequest could be satisfied")
            self.reply = EXCEEDED if all_exceeded else FAIL
            return
        if rd.all_mode and not rd.all_devices:
            if self.tracer is not None:
                self.tracer.request_unsatisfied(self.claims[ci], rd.full_name, "no device matches the request")
            self.reply = FAIL
            return
        if len(self.results[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX:
            if self.tracer is not None:
                self.tracer.request_unsatisfied(self.claims[ci], rd.full_name, f"the claim would exceed {ALLOCATION_RESULTS_MAX} allocated devices")
            self.reply = EXCEEDED
            return
        if rd.all_mode:
            pool, device = rd.all_devices[di]
            needed_later = self.needed_later.get((ci, ri))
            if needed_later and device.id in needed_later:
                if self.tracer is not None:
                    self._reject_needed_later(rd, device, needed_later[device.id])
                self.reply = FAIL
                return
            taken = self._allocate_device(ci, rd, pool, device, must=True)
            if taken is None:
                self.reply = FAIL
                return
            yield (ci, ri, si, di + 1, in_sub, _START)
            res = self.reply
            if res != DONE:
                self._undo(taken)
            self.reply = res
            return
        # The devices of one request form a set: the next one is searched after the
        # previous one, so no combination is tried twice (upstream does the same).
        p0, k0 = start
        pools = self.pools
        in_use = self.in_use
        admin, allocating, dedicated = rd.admin, self.allocating, in_use.dedicated
        # Without admin access, a device that an allocated claim holds is rejected below
        # whatever else holds: unless a tracer is to hear why, such devices are not visited.
        skip_held = not admin and self.tracer is None
        check_capacity = self.f.consumable_capacity
        # devices that a later "all devices" request needs (see pruning.plan_all_requests)
        later = self.needed_later.get((ci, ri)) if self.needed_later else None
        for pi in range(p0, len(pools)):
            pool = pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            devices = pool.devices
            first = k0 if pi == p0 else 0
            for dk in in_use.unheld_positions(pool, first) if skip_held else range(first, len(devices)):
                device = devices[dk]
                self.ticks += 1
                if not self.ticks & 0xFF and time.monotonic() > self.deadline:
                    self.timed_out()
                # "in use" is cheap and thus checked first (upstream deviceInUse: held by an
                # allocated claim or by this search; with admin access only a device that another
                # request of the same claim takes counts), then selectors, then capacity. Each
                # failed check tells the tracer, when one is attached, why.
                did = device.id
                if admin:
                    holders = allocating.get(did)
                    if holders and ci in holders:
                        if self.tracer is not None:
                            self._tell(rd, device, why.held_by_same_claim(claim_ref(self.claims[ci])))
                        continue
                elif did in dedicated or allocating.get(did):
                    if self.tracer is not None:
                        self._reject_in_use(rd, device)
                    continue
                if not self.is_selectable(rd, pool, device):
                    continue
                if check_capacity and not self._capacity_fits(rd, device):
                    continue
                if later and did in later:
                    if self.tracer is not None:
                        self._reject_needed_later(rd, device, later[did])
                    continue
                taken = self._allocate_device(ci, rd, pool, device, must=False)
                if taken is None:
                    continue
                # The next device of this request is searched from the following device
                # on (upstream allocateOne: nextLocation = deviceIndex + 1), so a
                # multi-allocatable device appears at most once per request.
                yield (ci, ri, si, di + 1, in_sub, (pi, dk + 1))
                res = self.reply
                if res == DONE:
                    self.reply = DONE
                    return
                self._undo(taken)
                if res == EXCEEDED:
                    self.reply = EXCEEDED
                    return
        if self.tracer is not None:
            self.tracer.request_unsatisfied(self.claims[ci], rd.full_name, "no suitable device left for this request")
        self.reply = FAIL

    # -- device checks ----------------------------------------------------------------------

    def _capacity_fits(self, rd: RequestData, device: DeviceView) -> bool:
        """Upstream CmpRequestOverCapacity: what the request consumes (after the request
        policy's rounding) fits beside existing shares and this search's reservations."""
        did = device.id
        consumed, allocating = self.in_use.shared_capacity.get(did), self.allocating_capacity.get(did)
        if cap.nothing_to_check(rd.capacity, device, consumed, allocating):
            return True
        amounts, short = cap.check_capacity(rd.capacity, device, consumed, allocating,
                                             fractional=self.f.fractional_capacity_range)
        if amounts is None and self.tracer is not None:
            self._reject_capacity(rd, device, short)
        return amounts is not None

    def is_selectable(self, rd: RequestData, pool: Pool, device: DeviceView) -> bool:
        """Upstream isSelectable: class and request selectors, gated device features,
        per-device node selection.

        The answer is remembered: on the device (for every later search over the same
        index) unless it depends on the node (per-device node selection), else for this
        search.
        """
        if device.node_dependent:
            cache: dict[Any, Any] = self.matches
            key: Any = (rd.key, id(device))
        else:
            known = device.cel_results
            cache, key = (known if known is not None else device.answers()), rd.token
        ok = cache.get(key)
        if ok is None:
            ok = cache[key] = self._check_selectable(rd, pool, device)
        elif not ok and self.tracer is not None:
            self._explain_unselectable(rd, pool, device)
        return ok

    def _explain_unselectable(self, rd: RequestData, pool: Pool, device: DeviceView) -> None:
        """Re-run the (cached, cheap) checks only to tell the tracer why.

        Unless the answer depends on the node, the reason depends only on the device and
        on the request's class, name and selectors: it is remembered on the device, so the
        next explain over the same objects hands the tracer the same rejection at once.
        """
        if device.node_dependent:
            self._check_selectable(rd, pool, device)
            return
        key = rd.why_token
        if key is None:
            # the words of a rejection depend on the class and request names too
            key = rd.why_token = self.a.cluster.token(("why", rd.token, rd.class_name, rd.full_name))
        known = device.answers().get(key)
        if known is not None:
            assert self.tracer is not None
            self.tracer.device_rejected(self.claims[rd.key[0]], rd.full_name, device.slice.driver,
                                        device.slice.pool, device.name, known)
            return
        self.last_rejection = None
        self._check_selectable(rd, pool, device)
        if self.last_rejection is not None:
            device.answers()[key] = self.last_rejection

    def _check_selectable(self, rd: RequestData, pool: Pool, device: DeviceView) -> bool:
        f = self.f
        tracer = self.tracer
        if binding_conditions_unusable(device, f):
            if tracer is not None:
                self._tell(rd, device, why.binding_conditions_gate_off())
            return False
        class_name = rd.class_name
        for i, expr in enumerate(rd.class_selectors):
            if not self._cel(expr, device, rd, i, of_class=True):
                if tracer is not None:
                    self._tell(rd, device, why.class_selector_false(class_name, i, expr))
                return False
        for i, expr in enumerate(rd.selectors):
            if not self._cel(expr, device, rd, i, of_class=False):
                if tracer is not None:
                    self._tell(rd, device, why.request_selector_false(rd.full_name, i, expr))
                return False
        if device.slice.per_device_node_selection:
            if not node_matches(self.node, device.node_name, device.all_nodes, device.node_selector):
                if tracer is not None:
                    self._tell(rd, device, why.unreachable())
                return False
        return True

    def _cel(self, expr: str, device: DeviceView, rd: RequestData, i: int, *, of_class: bool) -> bool:
        """Upstream selectorsMatch for one selector (selector ``i`` of ``rd``'s class or of
        the request itself): its CEL errors end the allocation."""
        try:
            return self.a.cel.matches(expr, device)
        except CELError as exc:
            from ..errors import CELCompileError

            owner = f"class {rd.class_name}" if of_class else f"claim {claim_ref(self.claims[rd.key[0]])}"
            where = f"{owner}: selector #{i}"
            kind = "CEL compile error" if isinstance(exc, CELCompileError) else "CEL runtime error"
            if kind == "CEL compile error":
                raise AllocationError(f"{where}: {kind}: {exc}") from None
            raise AllocationError(f"{where} on device {device.uid}: {kind}: {exc}") from None

    def _allocate_device(self, ci: int, rd: RequestData, pool: Pool, device: DeviceView, *, must: bool) -> Chosen | None:
        """Take ``device`` for ``rd`` if availability and constraints allow (upstream
        allocateDevice); returns what was taken, for the results and for :meth:`_undo`."""
        f = self.f
        did = device.id
        tracer = self.tracer
        multi = shareable(device, f)
        if not multi and rd.admin:
            holders = self.allocating.get(did)
            if holders and ci in holders:
                if tracer is not None:
                    self._tell(rd, device, why.held_by_same_claim(claim_ref(self.claims[ci])))
                return None
        if not rd.admin and (did in self.in_use.dedicated or self.allocating.get(did)):
            if tracer is not None:
                self._reject_in_use(rd, device)
            return None
        if counters_unusable(device, f):
            if tracer is not None:
                self._tell(rd, device, why.counters_gate_off())
            return None
        if device.slice.skip_node_operations:
            rejection = self.node_operations_refused(device)
            if rejection is not None:
                if tracer is not None:
                    self._tell(rd, device, rejection)
                return None
        taken = Chosen(ci, rd, pool, device)
        if device.consumes:
            # A shared device pays its counters once, with its first share.
            share_held = multi and (did in self.in_use.shared_by or self.shares.get(did, 0) > 0)
            if not share_held:
                if not self._consume_counters(rd, pool, device):
                    return None
                taken.counters = True
            if f.compatibility_groups:
                taken.compat = self._consume_compat(rd, pool, device)
                if taken.compat is None:
                    self._undo(taken)
                    return None
        if f.device_taints and device.taints:
            taint = untolerated_taint(device, rd.tolerations)
            if taint is not None:
                if tracer is not None:
                    self._tell(rd, device, why.taint_not_tolerated(taint))
                self._undo(taken)
                return None
        constraints = self.constraints[ci]
        if constraints:
            pushed: list[Constraint] = []
            for c in constraints:
                if not c.applies(rd.name, rd.parent):
                    continue
                value = self.attribute_of(rd, device, c.attribute)
                entry = c.check(value)
                if entry is None:
                    for p in reversed(pushed):
                        p.pop()
                    self._undo(taken)
                    if must:
                        raise AllocationError(f"claim {claim_ref(self.claims[ci])}, request {rd.full_name}: cannot add device {device.uid} because a claim constraint would not be satisfied")
                    if tracer is not None:
                        self._tell(rd, device, why.constraint_mismatch(c, value))
                    return None
                c.push(entry)
                pushed.append(c)
            taken.pushed = pushed
        if not multi:
            holders = self.allocating.get(did)
            if holders is None:
                holders = self.allocating[did] = set()
            holders.add(ci)
            taken.holders = holders
        if f.consumable_capacity:
            consumed, allocating = self.in_use.shared_capacity.get(did), self.allocating_capacity.get(did)
        if f.consumable_capacity and (multi or not cap.nothing_to_check(rd.capacity, device, consumed, allocating)):
            # (otherwise the device fits, as the search loop already found, and only shared
            # devices record amounts)
            amounts, short = cap.check_capacity(rd.capacity, device, consumed, allocating,
                                             fractional=self.f.fractional_capacity_range)
            if amounts is None:
                self._undo(taken)
                if tracer is not None:
                    self._reject_capacity(rd, device, short)
                return None
            if multi:
                taken.consumed = amounts
                taken.share_id = str(uuid.uuid4())
                taken.reserved = reserved = self.allocating_capacity.setdefault(did, {})
                cap.add_amounts(reserved, amounts)
                self.shares[did] = self.shares.get(did, 0) + 1
        self.results[ci].append(taken)
        taken.result = True
        if tracer is not None:
            tracer.device_selected(self.claims[ci], rd.full_name, device.slice.driver, device.slice.pool, device.name)
        return taken

    def node_operations_refused(self, device: DeviceView) -> Rejection | None:
        """Why a device whose slice skips node operations cannot be allocated here, if it
        cannot: the gate is off, or the node does not declare the feature. Upstream checks
        this in allocateDevice, not isSelectable: the device still matches requests."""
        if node_operations_unusable(device.slice, self.f):
            return why.node_operations_gate_off()
        if not self.a.node_declares(self.node, Gate.OPTIONAL_NODE_OPERATIONS):
            return why.node_operations_undeclared()
        return None

    def _undo(self, taken: Chosen) -> None:
        """Give back everything a (possibly partial) _allocate_device took, newest first."""
        if taken.result:
            self.results[taken.ci].pop()
        if taken.reserved is not None:
            assert taken.consumed is not None
            cap.add_amounts(taken.reserved, taken.consumed, -1)
            self.shares[taken.device.id] -= 1
        if taken.holders is not None:
            taken.holders.discard(taken.ci)
        if taken.pushed:
            for p in reversed(taken.pushed):
                p.pop()
        if taken.compat is not None:
            taken.compat()
        if taken.counters:
            self._ledger().give_back(taken.pool, taken.device)

    # -- counters ---------------------------------------------------------------------------

    def _ledger(self) -> CounterLedger:
        """The search's counter ledger (made on first use)."""
        if self.ledger is None:
            self.ledger = CounterLedger(self.in_use, self.a.index.serial)
        return self.ledger

    def _consume_counters(self, rd: RequestData, pool: Pool, device: DeviceView) -> bool:
        """Reserve the device's counters; False (and nothing reserved) when any counter of the pool overflows."""
        shortage = self._ledger().take(pool, device)
        if shortage is None:
            return True
        if self.tracer is not None:
            self._tell(rd, device, why.counters_exhausted(shortage.counter_set, shortage.counter, shortage.needed,
                                                          shortage.left))
        return False

    def _consume_compat(self, rd: RequestData, pool: Pool, device: DeviceView) -> Callable[[], None] | None:
        """Join the device's compatibility groups; the undo, or None when they conflict."""
        joined = self._ledger().join_groups(pool, device)
        if isinstance(joined, GroupConflict):
            if self.tracer is not None:
                self._tell(rd, device, why.compatibility_conflict(joined.counter_set, joined.groups, joined.first,
                                                                  joined.existing))
            return None
        return joined

    # -- attributes for constraints ---------------------------------------------------------

    def attribute_of(self, rd: RequestData, device: DeviceView, attribute: str) -> AttrValue | None:
        expr = rd.derived.get(attribute)
        if expr is not None:
            try:
                value = self.a.cel.evaluate(expr, device)
            except CELError as exc:
                raise AllocationError(f"evaluate derived attribute {attribute} on device {device.uid} failed: {exc}") from None
            converted = derived_value(value)
            if converted is None:
                raise AllocationError(f"evaluate derived attribute {attribute} on device {device.uid} failed: unsupported attribute value")
            return converted
        raw = lookup_attribute(device.attributes, device.slice.driver, attribute)
        if raw is None:
            return None
        value = attribute_value(raw)
        if value is None:
            raise AllocationError(f"device {device.uid}, attribute {attribute}: unsupported attribute value")
        return value

    # -- tracing helpers --------------------------------------------------------------------

    def _tell(self, rd: RequestData, device: DeviceView, rejection: Rejection) -> None:
        """Hand the tracer why ``rd`` cannot take ``device`` (only called with a tracer)."""
        assert self.tracer is not None
        self.last_rejection = rejection
        self.tracer.device_rejected(self.claims[rd.key[0]], rd.full_name, device.slice.driver, device.slice.pool,
                                    device.name, rejection)

    def _reject_needed_later(self, rd: RequestData, device: DeviceView, later: RequestData) -> None:
        self._tell(rd, device, why.needed_later(claim_ref(self.claims[later.key[0]]), later.full_name))

    def _reject_in_use(self, rd: RequestData, device: DeviceView) -> None:
        holder = self.in_use.dedicated.get(device.id)
        if holder is not None:  # the same words for every request and node: made once
            known = self.in_use.rejections.get(device.id)
            if known is None:
                known = self.in_use.rejections[device.id] = why.held_by_claim(holder)
            self._tell(rd, device, known)
            return
        holders = self.allocating.get(device.id) or set()
        self._tell(rd, device, why.being_allocated(", ".join(claim_ref(self.claims[i]) for i in sorted(holders))))

    def _reject_capacity(self, rd: RequestData, device: DeviceView, short: cap.CapacityShortfall | None) -> None:
        if short is not None:
            self._tell(rd, device, why.capacity_short(short))
