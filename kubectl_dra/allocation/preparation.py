"""The checks upstream's Allocate makes of every claim before it searches (the feature gates of
the request kinds, the claim's device limit, the constraints, and per request
``validateDeviceRequest``: selectors, admin access, class, count or all devices), and what
they produce: one :class:`RequestData` per request or subrequest (upstream ``requestData``),
kept in a :class:`PreparedClaims` for the next node when it does not depend on the node.

:class:`ClaimChecks` runs them for one :class:`~kubectl_dra.allocation.search.Search`, whose
claims, features, pools and device matching they read, and returns a :class:`CheckedClaims`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import AllocationError, DraError
from ..limits import ALLOCATION_RESULTS_MAX
from ..model.claims import ALL, EXACT_COUNT, parse_claim, selector_expression
from ..model.claims import Request as ClaimsRequest
from ..model.devices import DeviceView
from ..quantity import Quantity
from ..types import claim_ref
from . import capacity as cap
from .constraints import Constraint, DistinctAttribute, MatchAttribute
from .inuse import InUse
from .pools import Pool

if TYPE_CHECKING:
    from .search import Search



@dataclass(eq=False)
class RequestData:
    """One request without subrequests, or one subrequest, ready for the search."""

    key: tuple[int, int, int]
    #: the request or subrequest as the claim model parsed it
    request: ClaimsRequest
    name: str
    parent: str | None
    class_name: str
    class_: Mapping[str, Any]
    class_selectors: list[str]
    selectors: list[str]
    all_mode: bool
    num_devices: int
    admin: bool
    tolerations: list[Mapping[str, Any]]
    capacity: dict[str, Quantity] | None
    derived: dict[str, str]
    all_devices: list[tuple[Pool, DeviceView]] = field(default_factory=list)
    #: names what decides selectability besides the device (gates, class and request
    #: selectors); the answer is also remembered on the device under this token, for
    #: later Allocators (the next whole-cluster preview)
    token: int = 0
    #: key of the remembered reason a device is not selectable (see Search._explain_unselectable)
    why_token: Any = None
    #: ``request/subrequest`` for a subrequest, else the request's name (set from parent and name)
    full_name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.full_name = f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass(eq=False)
class PreparedClaims:
    """The claims of allocate calls for many nodes, and what does not depend on the node:
    the devices other claims hold, and (unless a request asks for all devices, which
    depends on the node's pools) the validated requests. Kept by the Allocator per list
    of claims, so the next node starts from here."""

    claims: list[dict[str, Any]]
    in_use: InUse
    #: (claim, request, subrequest) -> RequestData; None until validated for any node
    requests: dict[tuple[int, int, int], RequestData] | None = None
    #: per claim: its constraints (fresh copies per search when any exist: they carry state)
    constraints: list[list[Constraint]] = field(default_factory=list)
    num_requests: list[int] = field(default_factory=list)
    configured: list[bool] = field(default_factory=list)


@dataclass(eq=False)
class CheckedClaims:
    """The claims of one search, checked: every request and subrequest ready for the search
    (keyed like upstream's ``requestIndices``: claim, request, subrequest), and per claim its
    constraints, its number of requests and whether it or the class of any of its requests has
    a config to copy."""

    requests: dict[tuple[int, int, int], RequestData] = field(default_factory=dict)
    constraints: list[list[Constraint]] = field(default_factory=list)
    num_requests: list[int] = field(default_factory=list)
    configured: list[bool] = field(default_factory=list)


class ClaimChecks:
    """Upstream's per-claim checks before searching, for one search."""

    __slots__ = ("search", "checked")

    def __init__(self, search: "Search") -> None:
        self.search = search
        self.checked = CheckedClaims()

    def run(self) -> CheckedClaims:
        """Upstream's per-claim checks before searching: gates of the request kinds, the
        claim's device limit, the constraints; each request through :meth:`validate`."""
        s, out = self.search, self.checked
        for ci, claim in enumerate(s.claims):
            ref = claim_ref(claim)
            devices = parse_claim(claim)
            out.num_requests.append(len(devices.requests))
            min_devices = 0
            for entry in devices.requests:
                name, subs, exactly = entry.name, entry.first_available, entry.exactly
                if subs and not s.f.prioritized_list:
                    raise AllocationError(f"claim {ref}, request {name}: has subrequests, but the DRAPrioritizedList feature is disabled")
                if not s.f.consumable_capacity:
                    if exactly is not None and exactly.capacity_requests is not None:
                        raise AllocationError(f"claim {ref}, request {name}: has capacity requests, but the DRAConsumableCapacity feature is disabled")
                    for sub in subs:
                        if sub.capacity_requests is not None:
                            raise AllocationError(f"claim {ref}, subrequest {sub.subrequest}: has capacity requests, but the DRAConsumableCapacity feature is disabled")
                if subs:
                    fewest = None
                    for sub in subs:
                        rd = self.validate(ci, sub)
                        out.requests[(ci, sub.index, sub.sub_index)] = rd
                        fewest = rd.num_devices if fewest is None else min(fewest, rd.num_devices)
                    min_devices += fewest or 0
                elif exactly is not None:
                    rd = self.validate(ci, exactly)
                    out.requests[(ci, exactly.index, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX:
                raise AllocationError(f"claim {ref}: number of requested devices {min_devices} exceeds the claim limit of {ALLOCATION_RESULTS_MAX}")
            constraints: list[Constraint] = []
            for i, c in enumerate(devices.constraints):
                if c.match_attribute is not None:
                    constraints.append(MatchAttribute(c.match_attribute, list(c.requests), s.f.list_type_attributes))
                elif c.distinct_attribute is not None:
                    constraints.append(DistinctAttribute(c.distinct_attribute, list(c.requests), s.f.list_type_attributes))
                else:
                    raise AllocationError(f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)")
            out.constraints.append(constraints)
            out.configured.append(bool(devices.config) or any(
                (rd.class_.get("spec") or {}).get("config") for key, rd in out.requests.items() if key[0] == ci))
        return out

    def validate(self, ci: int, request: ClaimsRequest) -> RequestData:
        """Upstream ``validateDeviceRequest``: selectors, gates, class, count or all devices."""
        s = self.search
        claim = s.claims[ci]
        ref = claim_ref(claim)
        name = request.subrequest if request.subrequest is not None else request.name
        parent = request.parent
        shown = name  # upstream names the subrequest itself in these messages
        selectors: list[str] = []
        for i, expr in enumerate(request.selectors):
            if expr is None:
                raise AllocationError(f"claim {ref}, request {shown}, selector #{i}: CEL expression empty (unsupported selector type?)")
            selectors.append(expr)
        admin = bool(request.admin_access)
        if request.admin_access is not None and not s.f.admin_access:
            raise AllocationError(f"claim {ref}, request {shown}: admin access is requested, but the feature is disabled")
        derived = dict(request.derived_attributes)
        if derived and not s.f.derived_attributes:
            raise AllocationError(f"claim {ref}, request {shown}: cannot handle request with derived attributes, the feature is disabled")
        class_name = request.device_class
        if not class_name:
            raise AllocationError(f"claim {ref}, request {shown}: missing device class name (unsupported request type?)")
        class_ = s.a.classes.get(class_name)
        if class_ is None:
            raise AllocationError(f"claim {ref}, request {shown}: could not retrieve device class {class_name}: "
                                  f'deviceclass.resource.k8s.io "{class_name}" not found')
        class_selectors = [selector_expression(s) or "" for s in (class_.get("spec") or {}).get("selectors") or ()]
        capacity = None
        if s.f.consumable_capacity and request.capacity_requests is not None:
            try:
                capacity = {k: Quantity.from_json(v) for k, v in request.capacity_requests.items()}
            except DraError as exc:
                raise AllocationError(f"claim {ref}, request {shown}: capacity requests: {exc}") from None
        rd = RequestData(
            key=(ci, request.index, request.sub_index), request=request, name=name, parent=parent,
            class_name=class_name, class_=class_,
            class_selectors=class_selectors, selectors=selectors, all_mode=False, num_devices=0, admin=admin,
            tolerations=list(request.tolerations), capacity=capacity, derived=derived,
            # what, besides the device, decides _check_selectable for a device whose answer
            # does not depend on the node: the key of its remembered answer on the device
            token=s.a.cluster.token((s.f.binding_conditions, tuple(class_selectors), tuple(selectors))),
        )
        mode = request.mode
        if mode == EXACT_COUNT:
            if not request.count_is_number:
                raise AllocationError(f"claim {ref}, request {shown}: count {request.body.get('count')!r} is not a number")
            rd.num_devices = request.count
        elif mode == ALL:
            rd.all_mode = True
            for pool in s.seen.problems[:1]:
                if pool.incomplete:
                    raise AllocationError(f"claim {ref}, request {shown}: asks for all devices, but resource pool {pool.uid} is currently being updated")
                raise AllocationError(f"claim {ref}, request {shown}: asks for all devices, but resource pool {pool.uid} is currently invalid")
            for pool in s.pools:
                for sv in pool.slices:
                    for device in sv.devices:
                        s.tick()
                        if not s.is_selectable(rd, pool, device):
                            continue
                        if s.f.consumable_capacity:
                            # The device's own capacity only (upstream validateDeviceRequest since
                            # kubernetes#140769): a matching device whose remaining capacity is used
                            # up stays among "all devices", and allocateDevice then fails the request.
                            amounts, _ = cap.check_capacity(rd.capacity, device, None, None,
                                                            fractional=s.f.fractional_capacity_range)
                            if amounts is None:
                                continue
                        rd.all_devices.append((pool, device))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {ref}, request {shown}: unsupported count mode {mode}")
        return rd
