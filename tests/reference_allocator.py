"""A plain reference allocator: upstream's search written as directly as it reads, to check
the product's search (its trampoline, caches and pruning) against.

It follows upstream's ``Allocate`` and its recursive ``allocateOne`` (kubernetes/dynamic-
resource-allocation, ``structured/internal/experimental/allocator_experimental.go``): the
claims in order, their requests in order (a prioritized list's subrequests in order),
each device of a request searched after the previous one in pool, slice and device order;
a device is taken when it is not in use, its selectors match, its capacity, counters and
taints allow it and every constraint of the claim still holds. There is no pruning, no
memo and no cache of selector answers: every check is made again each time.

What it takes from the product: the pools the node sees (``GatherPools`` is not what this
checks), the parsed claims, the feature gates, the capacity arithmetic of one device
(``CmpRequestOverCapacity``), the taint matching and attribute values. Features that the
generated clusters do not draw (compatibility groups, derived attributes, node operations)
raise :class:`Unsupported`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from kubectl_dra.allocation import Allocator
from kubectl_dra.allocation import capacity as cap
from kubectl_dra.allocation.counters import available_counters
from kubectl_dra.allocation.gated import binding_conditions_unusable, counters_unusable, shareable
from kubectl_dra.allocation.pools import Pool
from kubectl_dra.allocation.taints import untolerated_taint
from kubectl_dra.cel import compile_expression, make_device_input
from kubectl_dra.errors import CELError
from kubectl_dra.limits import ALLOCATION_RESULTS_MAX
from kubectl_dra.model.attributes import attribute_value, lookup_attribute
from kubectl_dra.model.claims import ALL, EXACT_COUNT, Request, parse_claim
from kubectl_dra.model.devices import DeviceView
from kubectl_dra.model.nodes import node_matches
from kubectl_dra.quantity import Quantity

Obj = dict[str, Any]
DeviceId = tuple[str, str, str]


class Unsupported(Exception):
    """The scenario uses something this reference does not implement."""


class ReferenceError(Exception):
    """Where upstream's Allocate returns an error."""


class TooLong(Exception):
    """The search took more steps than the caller allowed."""


#: what allocateOne returns: a solution below, none, or a claim over its device limit
DONE, FAIL, EXCEEDED = "done", "fail", "exceeded"


@dataclass
class Req:
    """upstream requestData: one request or subrequest, checked."""

    name: str  # as results name it: request or request/subrequest
    own_name: str
    parent: str | None
    class_selectors: list[str]
    selectors: list[str]
    admin: bool
    tolerations: list[Mapping[str, Any]]
    capacity: dict[str, Quantity] | None
    all_mode: bool
    num_devices: int
    all_devices: list[tuple[Pool, DeviceView]] = field(default_factory=list)


@dataclass(eq=False)
class Taken:
    """One device given to a request: an entry of upstream's result."""

    claim: int
    req: Req
    pool: Pool
    device: DeviceView
    shared: bool
    amounts: dict[str, Quantity] | None
    paid_counters: bool


class ReferenceAllocator:
    """One Allocate call, searched plainly."""

    def __init__(self, allocator: Allocator, node: Obj, claims: list[Obj], max_steps: int) -> None:
        self.f = allocator.features
        if self.f.compatibility_groups or self.f.derived_attributes or self.f.optional_node_operations:
            raise Unsupported("compatibility groups, derived attributes or node operations")
        self.node = node
        self.claims = claims
        self.classes = allocator.classes
        seen = allocator.pools_for(node)
        self.pools = seen.pools
        self.problems = seen.problems
        self.in_use = allocator.prepared_claims(claims).in_use
        self.serial = allocator.index.serial
        self.max_steps = max_steps
        self.steps = 0
        self.requests: dict[tuple[int, int, int], Req] = {}
        self.has_subrequests: dict[tuple[int, int], bool] = {}
        self.num_requests: list[int] = []
        self.constraints: list[list[Obj]] = []
        self.taken: list[list[Taken]] = [[] for _ in claims]
        self.chosen_sub: dict[tuple[int, int], int] = {}

    # -- before the search: upstream's checks of each claim ------------------------------

    def check_claims(self) -> None:
        for ci, claim in enumerate(self.claims):
            devices = parse_claim(claim)
            self.num_requests.append(len(devices.requests))
            least = 0
            for ri, entry in enumerate(devices.requests):
                subs, exactly = entry.first_available, entry.exactly
                if subs and not self.f.prioritized_list:
                    raise ReferenceError("subrequests without DRAPrioritizedList")
                if not self.f.consumable_capacity and any(
                        r.capacity_requests is not None for r in (*subs, *([exactly] if exactly else []))):
                    raise ReferenceError("capacity requests without DRAConsumableCapacity")
                self.has_subrequests[(ci, ri)] = bool(subs)
                if subs:
                    checked = [self.check_request(s) for s in subs]
                    for si, req in enumerate(checked):
                        self.requests[(ci, ri, si)] = req
                    least += min(r.num_devices for r in checked)
                elif exactly is not None:
                    req = self.check_request(exactly)
                    self.requests[(ci, ri, 0)] = req
                    least += req.num_devices
            if least > ALLOCATION_RESULTS_MAX:
                raise ReferenceError("the claim asks for more devices than a result can hold")
            constraints = []
            for c in devices.constraints:
                if c.match_attribute is None and c.distinct_attribute is None:
                    raise ReferenceError("empty constraint")
                constraints.append({"match": c.match_attribute, "distinct": c.distinct_attribute,
                                    "requests": set(c.requests)})
            self.constraints.append(constraints)

    def check_request(self, request: Request) -> Req:
        """upstream validateDeviceRequest."""
        if any(e is None for e in request.selectors):
            raise ReferenceError("a selector without an expression")
        if request.admin_access is not None and not self.f.admin_access:
            raise ReferenceError("admin access without DRAAdminAccess")
        if request.derived_attributes:
            raise Unsupported("derived attributes")
        cls = self.classes.get(request.device_class) if request.device_class else None
        if cls is None:
            raise ReferenceError("no such device class")
        class_selectors = [(s.get("cel") or {}).get("expression") or "" for s in (cls.get("spec") or {}).get("selectors") or ()]
        capacity = None
        if self.f.consumable_capacity and request.capacity_requests is not None:
            capacity = {k: Quantity.from_json(v) for k, v in request.capacity_requests.items()}
        own = request.subrequest if request.subrequest is not None else request.name
        req = Req(name=request.name, own_name=own, parent=request.parent, class_selectors=class_selectors,
                  selectors=[e for e in request.selectors if e is not None], admin=bool(request.admin_access),
                  tolerations=list(request.tolerations), capacity=capacity, all_mode=False, num_devices=0)
        if request.mode == EXACT_COUNT:
            if not request.count_is_number:
                raise ReferenceError("count is not a number")
            req.num_devices = request.count
        elif request.mode == ALL:
            if self.problems:
                raise ReferenceError("all devices of an incomplete or invalid pool")
            req.all_mode = True
            for pool in self.pools:
                for device in pool.devices:
                    if not self.selectable(req, device):
                        continue
                    if self.f.consumable_capacity:
                        amounts, _ = cap.check_capacity(req.capacity, device, None, None,
                                                        fractional=self.f.fractional_capacity_range)
                        if amounts is None:
                            continue
                    req.all_devices.append((pool, device))
            req.num_devices = len(req.all_devices)
        else:
            raise ReferenceError("unknown allocation mode")
        return req

    # -- the search --------------------------------------------------------------------------

    def allocate(self) -> list[list[Taken]] | None:
        """The first solution (per claim, the devices in the order they were taken), or None."""
        self.check_claims()
        found = self.allocate_one(0, 0, 0, 0, False, (0, 0))
        if found != DONE:
            if any(p.invalid for p in self.problems):
                raise ReferenceError("invalid resource pools")
            return None
        return self.taken

    def allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int]) -> str:
        """upstream allocateOne."""
        self.steps += 1
        if self.steps > self.max_steps:
            raise TooLong()
        if ci == len(self.claims):
            return DONE
        if ri == self.num_requests[ci]:
            below = self.allocate_one(ci + 1, 0, 0, 0, False, (0, 0))
            return FAIL if below == EXCEEDED else below  # a claim's limit is its own
        if self.has_subrequests[(ci, ri)] and not in_sub:
            all_exceeded = True
            k = 0
            while (ci, ri, k) in self.requests:
                below = self.allocate_one(ci, ri, k, di, True, start)
                if below == DONE:
                    self.chosen_sub[(ci, ri)] = k
                    return DONE
                all_exceeded = all_exceeded and below == EXCEEDED
                k += 1
            return EXCEEDED if all_exceeded else FAIL
        req = self.requests[(ci, ri, si)]
        if req.all_mode and not req.all_devices:
            return FAIL
        if di == req.num_devices:
            return self.allocate_one(ci, ri + 1, 0, 0, False, (0, 0))
        if len(self.taken[ci]) + req.num_devices - di > ALLOCATION_RESULTS_MAX:
            return EXCEEDED
        if req.all_mode:
            pool, device = req.all_devices[di]
            taken = self.allocate_device(ci, req, pool, device, must=True)
            if taken is None:
                return FAIL
            below = self.allocate_one(ci, ri, si, di + 1, in_sub, (0, 0))
            if below != DONE:
                self.deallocate(taken)
            return below
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            for dk in range(start[1] if pi == start[0] else 0, len(pool.devices)):
                device = pool.devices[dk]
                if self.in_use_for(ci, req, device):
                    continue
                if not self.selectable(req, device):
                    continue
                if self.f.consumable_capacity and self.capacity_amounts(req, device) is None:
                    continue
                taken = self.allocate_device(ci, req, pool, device, must=False)
                if taken is None:
                    continue
                below = self.allocate_one(ci, ri, si, di + 1, in_sub, (pi, dk + 1))
                if below == DONE:
                    return DONE
                self.deallocate(taken)
                if below == EXCEEDED:
                    return EXCEEDED
        return FAIL

    # -- one device ----------------------------------------------------------------------------

    def held_by(self, device: DeviceView) -> set[int]:
        """The claims of this search that hold ``device`` exclusively."""
        return {t.claim for claim in self.taken for t in claim if t.device.id == device.id and not t.shared}

    def in_use_for(self, ci: int, req: Req, device: DeviceView) -> bool:
        """upstream deviceInUse (with admin access: only the claim's own other requests count)."""
        if req.admin:
            return ci in self.held_by(device)
        return device.id in self.in_use.dedicated or bool(self.held_by(device))

    def selectable(self, req: Req, device: DeviceView) -> bool:
        """upstream isSelectable: gated device features, class and request selectors, node."""
        if binding_conditions_unusable(device, self.f):
            return False
        if device.slice.skip_node_operations:
            raise Unsupported("node operations")
        for expr in (*req.class_selectors, *req.selectors):
            try:
                matched = compile_expression(expr, result="bool").matches(
                    make_device_input(device.slice.driver, device.raw))
            except CELError as exc:
                raise ReferenceError(f"CEL: {exc}") from None
            if not matched:
                return False
        if device.slice.per_device_node_selection:
            return node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
        return True

    def reserved(self, device: DeviceView) -> dict[str, Quantity]:
        """What the search's shares of a shared device consume, summed."""
        total: dict[str, Quantity] = {}
        for claim in self.taken:
            for t in claim:
                if t.device.id == device.id and t.amounts is not None and t.shared:
                    cap.add_amounts(total, t.amounts)
        return total

    def capacity_amounts(self, req: Req, device: DeviceView) -> dict[str, Quantity] | None:
        """upstream CmpRequestOverCapacity beside existing shares and the search's own."""
        amounts, _ = cap.check_capacity(req.capacity, device, self.in_use.shared_capacity.get(device.id),
                                        self.reserved(device), fractional=self.f.fractional_capacity_range)
        return amounts

    def counters_fit(self, pool: Pool, extra: DeviceView) -> bool:
        """upstream checkAvailableCounters: every counter of the pool, after what allocated
        claims and this search consume, with ``extra`` added."""
        left = {name: dict(c) for name, c in available_counters(pool, self.in_use, self.serial).items()}
        paying = [t.device for claim in self.taken for t in claim if t.paid_counters and t.pool.id == pool.id]
        for device in (*paying, extra):
            for cc in device.consumes:
                for name, value in cc.values.items():
                    if name in left.get(cc.counter_set, {}):  # (what the pool does not count is not checked)
                        left[cc.counter_set][name] -= value
        return all(v >= 0 for per_set in left.values() for v in per_set.values())

    def attribute(self, device: DeviceView, name: str) -> tuple[bool, tuple[Any, ...]] | None:
        raw = lookup_attribute(device.attributes, device.slice.driver, name)
        if raw is None:
            return None
        value = attribute_value(raw)
        if value is None:
            raise ReferenceError("unsupported attribute value")
        return value

    def constraint_holds(self, ci: int, req: Req, device: DeviceView) -> bool:
        """Every constraint of the claim that covers ``req`` holds with ``device`` added."""
        for c in self.constraints[ci]:
            if not self.covered(c, req):
                continue
            name = c["match"] or c["distinct"]
            members = [t.device for t in self.taken[ci] if self.covered(c, t.req)] + [device]
            values = [self.attribute(d, name) for d in members]
            if any(v is None for v in values):
                return False
            if not self.f.list_type_attributes:
                if any(v[0] for v in values if v is not None):
                    return False
                scalars = [v[1][0] for v in values if v is not None]
                if c["match"] and len(set(scalars)) > 1:
                    return False
                if c["distinct"] and len(set(scalars)) < len(scalars):
                    return False
                continue
            sets = [frozenset(v[1]) for v in values if v is not None]
            if c["match"] and not frozenset.intersection(*sets):
                return False
            if c["distinct"]:
                for i, a in enumerate(sets):
                    if any(a & b for b in sets[i + 1:]):
                        return False
        return True

    @staticmethod
    def covered(c: Obj, req: Req) -> bool:
        scope = c["requests"]
        if not scope:
            return True
        if req.parent is None:
            return req.own_name in scope
        return req.parent in scope or req.name in scope

    def allocate_device(self, ci: int, req: Req, pool: Pool, device: DeviceView, *, must: bool) -> Taken | None:
        """upstream allocateDevice: what is taken, or None."""
        shared = shareable(device, self.f)
        if not shared and req.admin and ci in self.held_by(device):
            return None
        if not req.admin and (device.id in self.in_use.dedicated or self.held_by(device)):
            return None
        if counters_unusable(device, self.f):
            return None
        pays = False
        if device.consumes:
            already = shared and (device.id in self.in_use.shared_by or any(
                t.device.id == device.id for claim in self.taken for t in claim))
            if not already:
                if not self.counters_fit(pool, device):
                    return None
                pays = True
        if self.f.device_taints and device.taints and untolerated_taint(device, req.tolerations) is not None:
            return None
        if not self.constraint_holds(ci, req, device):
            if must:
                raise ReferenceError("an 'all devices' request breaks a constraint")
            return None
        amounts = None
        if self.f.consumable_capacity:
            amounts = self.capacity_amounts(req, device)
            if amounts is None:
                return None
        taken = Taken(ci, req, pool, device, shared, amounts if shared else None, pays)
        self.taken[ci].append(taken)
        return taken

    def deallocate(self, taken: Taken) -> None:
        """Give back the device taken last (upstream's deallocate func)."""
        last = self.taken[taken.claim].pop()
        assert last is taken


def reference_answer(allocator: Allocator, node: Obj, claims: list[Obj], max_steps: int = 20_000) -> tuple[Any, ...]:
    """("allocated", per claim [(request, driver, pool, device), ...]) | ("unschedulable",) |
    ("error",); raises Unsupported or TooLong."""
    ref = ReferenceAllocator(allocator, node, claims, max_steps)
    try:
        found = ref.allocate()
    except ReferenceError:
        return ("error",)
    if found is None:
        return ("unschedulable",)
    return ("allocated", [[(t.req.name, t.device.slice.driver, t.device.slice.pool, t.device.name) for t in claim]
                          for claim in found])
