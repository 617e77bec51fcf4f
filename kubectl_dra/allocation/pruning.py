"""What the search prunes that upstream searches exhaustively (in Go that is quick; here it
can take the whole filter timeout). None of it changes the answer or the first solution:

- :func:`plan_all_requests`: branches that give a device to one request although a later
  "all devices" request needs it exclusively are cut before they are searched;
- :class:`FailedStates`: once a search has run long, the states from which the search of a
  request failed are remembered, and the same state reached again fails at once;
- :func:`search_cannot_fail_with_error`: when both of these (and the search's check of
  claims that cannot fit alone, :meth:`Search.claim_cannot_fit`) may apply.

Each reads the :class:`~kubectl_dra.allocation.search.Search` it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable

from ..errors import DraError
from ..limits import ALLOCATION_RESULTS_MAX
from ..model.devices import DeviceView
from . import capacity as cap
from . import rejections as why
from .gated import counters_unusable, shareable
from .taints import untolerated_taint
from .trace import Rejection

if TYPE_CHECKING:
    from .preparation import RequestData
    from .search import Call, Search

#: (claim, request) -> the devices that a later "all devices" request needs exclusively, and that request
NeededLater = dict[tuple[int, int], dict[tuple[str, str, str], "RequestData"]]


def plan_all_requests(search: "Search") -> NeededLater | None:
    """The branches that a later "all devices" request is bound to fail, to be cut before
    they are searched; None when such a request cannot get all its devices, so that no
    search can succeed.

    Upstream searches these branches exhaustively (allocateOne fails only when it
    reaches the request); in Go that is quick, here it can take the whole filter
    timeout. The pruning changes neither the answer nor the first solution found,
    because it only applies when no error can occur on the way (every selector,
    capacity check and constrained attribute evaluates; no derived attribute is
    involved; no constraint applies to an "all devices" request):
    then a branch that gives a later top-level request's device to an earlier request
    ends with that request unsatisfied, whatever else is tried in it.
    """
    needed_later: NeededLater = {}
    if not search.all_mode:
        return needed_later
    order = sorted(search.requests)
    targets = [k for k in order if search.requests[k].all_mode and search.requests[k].parent is None
               and not search.requests[k].admin and k != order[0]]
    if not targets or not search_cannot_fail_with_error(search):
        return needed_later
    for key in targets:
        rd = search.requests[key]
        if not rd.all_devices:
            if search.tracer is not None:
                search.tracer.request_unsatisfied(search.claims[key[0]], rd.full_name, "no device matches the request")
            return None
        for _, device in rd.all_devices:
            rejection = never_available(search, rd, device)
            if rejection is not None:
                if search.tracer is not None:
                    claim = search.claims[key[0]]
                    search.tracer.device_rejected(claim, rd.full_name, device.slice.driver, device.slice.pool,
                                              device.name, rejection)
                    search.tracer.request_unsatisfied(claim, rd.full_name, f"device {device.uid} is one of all "
                                                      f"devices the request needs and cannot be allocated")
                return None
    for key in order:
        needed: dict[tuple[str, str, str], "RequestData"] = {}
        for target in targets:
            if target[:2] > key[:2]:
                rd = search.requests[target]
                for _, device in rd.all_devices:
                    if not shareable(device, search.f):
                        needed.setdefault(device.id, rd)
        if needed:
            needed_later[key[:2]] = needed
    return needed_later


def never_available(search: "Search", rd: "RequestData", device: DeviceView) -> Rejection | None:
    """Why ``rd`` cannot take ``device`` whatever the search does, if it cannot: another
    claim holds it, it consumes counters without DRAPartitionableDevices, its slice skips
    node operations that this node or the gates do not allow, or it has a taint the
    request does not tolerate (the static checks of _allocate_device)."""
    holder = search.in_use.dedicated.get(device.id)
    if holder is not None:
        return why.held_by_claim(holder)
    if counters_unusable(device, search.f):
        return why.counters_gate_off()
    if device.slice.skip_node_operations:
        refused = search.node_operations_refused(device)
        if refused is not None:
            return refused
    taint = untolerated_taint(device, rd.tolerations) if search.f.device_taints and device.taints else None
    if taint is not None:
        return why.taint_not_tolerated(taint)
    return None


def search_cannot_fail_with_error(search: "Search") -> bool:
    """Whether the search can only end in a solution or "unschedulable": every
    selector evaluates on every device (answers are remembered for the search), and
    nothing that can raise while searching is involved."""
    if any(rd.derived for rd in search.requests.values()):
        return False
    applying = {key: [c for c in search.constraints[key[0]] if c.applies(rd.name, rd.parent)]
                for key, rd in search.requests.items()}
    if any(rd.all_mode and applying[key] for key, rd in search.requests.items()):
        return False  # a constraint that an "all devices" request breaks is an error
    tracer, search.tracer = search.tracer, None  # the search itself tells the tracer why
    try:
        for key, rd in search.requests.items():
            for pool in search.pools:
                if pool.incomplete or pool.invalid:
                    continue
                for device in pool.devices:
                    search.tick()
                    search.is_selectable(rd, pool, device)
                    if search.f.consumable_capacity:
                        # raises for unusable amounts
                        cap.check_capacity(rd.capacity, device, None, None,
                                           fractional=search.f.fractional_capacity_range)
                    for c in applying[key]:
                        search.attribute_of(rd, device, c.attribute)  # raises for unusable attribute values
    except DraError:
        return False
    finally:
        search.tracer = tracer
    return True


class FailedStates:
    """The states from which the search of a request failed, so that the same state reached
    again fails at once (upstream searches it again).

    What the search from the start of a request can do depends only on the request, on the
    devices held (exclusively, or the capacity taken of a shared one: which also decides the
    shared counters and compatibility groups taken), and of the current claim on the state of
    its constraints, on the devices it holds itself (when admin access makes that matter) and
    on how many devices it has (when the claim's limit can matter): :meth:`key` is all of it.
    A search with a tracer does not use this: the tracer would hear fewer rejections.
    """

    __slots__ = ("search", "failed", "most_later", "admin_later")

    def __init__(self, search: "Search") -> None:
        self.search = search
        #: state key -> FAIL or EXCEEDED
        self.failed: dict[Hashable, int] = {}
        most: dict[tuple[int, int], int] = {}
        admin: dict[tuple[int, int], bool] = {}
        for (ci, ri, _), rd in search.requests.items():
            most[(ci, ri)] = max(most.get((ci, ri), 0), rd.num_devices)
            admin[(ci, ri)] = admin.get((ci, ri), False) or rd.admin
        for ci, n in enumerate(search.num_requests):
            total, any_admin = 0, False
            for ri in range(n - 1, -1, -1):
                total += most.get((ci, ri), 0)
                any_admin = any_admin or admin.get((ci, ri), False)
                most[(ci, ri)], admin[(ci, ri)] = total, any_admin
        #: per (claim, request): the most devices it and the claim's later requests can take
        self.most_later = most
        #: per (claim, request): whether it or one of the claim's later requests has admin access
        self.admin_later = admin

    def key(self, call: "Call") -> Hashable:
        """The state the search is in at the start of the request ``call`` names."""
        search = self.search
        ci = call[0]
        results = search.results
        held = [t.device.id for c in range(ci + 1) for t in results[c] if t.holders is not None]
        held.sort()
        reserved = search.allocating_capacity
        shares = tuple(sorted((did, tuple(sorted(reserved[did].items())))
                              for did, n in search.shares.items() if n))
        mine: Any = None
        if self.admin_later.get(call[:2]):
            mine = frozenset(t.device.id for t in results[ci] if t.holders is not None)
        count = len(results[ci])
        if count + self.most_later[call[:2]] <= ALLOCATION_RESULTS_MAX:
            count = -1  # (the limit cannot be reached)
        return (call[:5], tuple(held), shares, mine, count, tuple(c.state() for c in search.constraints[ci]))
