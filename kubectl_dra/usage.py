"""Device accounting for ``kubectl dra usage``: what is total, allocated and free, per node and
pool (or per DeviceClass), with shared counters and consumable capacity.

"Allocated" follows the allocator's notion of in use: every result in an allocated claim's
``status.allocation.devices.results`` holds its device, except admin-access results, which
consume nothing (neither the device nor its counters nor its capacity). A device that
allows multiple allocations is allocated once it has one consuming share; its capacity is
consumed by the sum of the shares' ``consumedCapacity``. Counters of a partitionable device
are consumed once per allocated device. Only the newest generation of each pool counts.

"Free" is what a one-device request could get now, judged by the allocator's own rules
(:mod:`kubectl_dra.allocation.availability`): a device that is not allocated may still not be
free (its shared counters exhausted, a compatibility-group conflict, its pool skipped, a gate
off, an untolerated taint), and a shared device with room for one more share is both.
``Tally.unavailable`` says why the others are not free. ``--node`` limits rows and total.

The report also lists what in the stored state cannot be (:class:`Finding`): an exclusive
device held twice, counters or capacity consumed beyond their totals, allocations of devices
no slice publishes.

Pure: plain dicts in, plain data out; no I/O, no click.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from .allocation import availability
from .allocation.allocator import Features
from .allocation.inuse import InUse as AllocatorInUse, gather_in_use
from .allocation.gated import (binding_conditions_unusable, counters_unusable, node_operations_unusable,
                               shareable, slice_unseen)
from .allocation.pools import whole_pool
from .errors import UsageError
from .gates import FeatureGates, Gate, effective_gates
from .model.devices import SliceView, slice_view
from .quantity import DECIMAL_SI, Format, Quantity, QuantityError
from .state.snapshot import ClusterState
from .types import Obj

DeviceKey = tuple[str, str, str]  # driver, pool, device

#: node column for devices reachable from every node / from nodes picked by a selector
ALL_NODES = "<all-nodes>"
SELECTED_NODES = "<node-selector>"
CLUSTER = "*"

SORT_KEYS = ("name", "devices", "allocated", "free", "utilization")


Number = int | Fraction


@lru_cache(maxsize=8192)
def _parse(value: Any) -> tuple[Number, Format]:
    q = Quantity.from_json(value)
    v = q.value
    return (v.numerator if v.denominator == 1 else v), q.format


def amount_of(value: Any) -> tuple[Number, Format | None]:
    """(exact value, format) of a JSON quantity, cached by text; (0, None) when unreadable.

    Sums are kept as Python numbers (ints in practice) and turned into quantities only for
    output: adding thousands of Quantity objects was the cost of a large cluster's report."""
    try:
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return _parse(value)
        q = Quantity.from_json(value)
        return q.value, q.format
    except (QuantityError, TypeError, ValueError):
        return 0, None


@lru_cache(maxsize=8192)
def _quantity(value: Number, fmt: Format) -> Quantity:
    """A sum as a quantity in the driver's format (cached: rows repeat the same sums)."""
    if isinstance(value, int):
        return Quantity(value, 0, fmt)
    return Quantity.from_fraction(value, fmt)


def quantity(value: Any) -> Quantity:
    """A quantity from JSON; 0 when unreadable."""
    number, fmt = amount_of(value)
    return Quantity.from_fraction(Fraction(number), fmt or DECIMAL_SI)


def percent(part: Fraction, whole: Fraction) -> int:
    """``part`` of ``whole`` as a whole percentage rounded half up, as people round (1 of 6 is
    17 %), but never 0 % for some nor 100 % for not all: a row must not read empty or full
    when it is not."""
    exact = part * 100 / whole
    rounded = int(exact + Fraction(1, 2))
    if part > 0 and rounded == 0:
        return 1
    if part < whole and rounded >= 100:
        return 99
    return rounded


@dataclass
class Amount:
    """Consumed and total of one counter or capacity (exact numbers, printed as quantities)."""

    consumed: Number = 0
    total: Number = 0
    #: the format the driver wrote the total in (``80Gi`` prints back as ``80Gi``)
    fmt: Format | None = None

    def add(self, other: "Amount") -> None:
        self.consumed += other.consumed
        self.total += other.total
        if self.fmt is None:
            self.fmt = other.fmt

    def _q(self, value: Number) -> Quantity:
        return _quantity(value, self.fmt or DECIMAL_SI)

    @property
    def consumed_quantity(self) -> Quantity:
        return self._q(self.consumed)

    @property
    def total_quantity(self) -> Quantity:
        return self._q(self.total)

    def percent(self) -> int | None:
        """Consumed as a whole percentage of total (None when total is zero), see :func:`percent`."""
        if not self.total:
            return None
        return percent(Fraction(self.consumed), Fraction(self.total))

    def to_dict(self) -> Obj:
        return {"consumed": str(self.consumed_quantity), "total": str(self.total_quantity)}


@dataclass
class Tally:
    """Devices, counters and capacity of one row.

    ``free`` counts the devices that could be allocated now (see
    :mod:`kubectl_dra.allocation.availability`): not every device that is not allocated is
    free (its counters may be exhausted, its pool skipped, …; ``unavailable`` says why), and a
    shared device can be both allocated and free (room for another share)."""

    devices: int = 0
    allocated: int = 0
    free: int = 0
    #: devices neither allocated nor free, by reason (availability's reason keys)
    unavailable: dict[str, int] = field(default_factory=dict)
    #: allocated devices that allow multiple allocations (they may take more shares)
    shared: int = 0
    #: devices that hold only admin-access allocations (those consume nothing)
    admin_access: int = 0
    #: (counter set, counter) -> amount
    counters: dict[tuple[str, str], Amount] = field(default_factory=dict)
    #: capacity name -> amount (devices that allow multiple allocations only)
    capacity: dict[str, Amount] = field(default_factory=dict)

    def merge(self, other: "Tally") -> None:
        """Add ``other`` into this tally (for the cluster row and aggregates)."""
        self.devices += other.devices
        self.allocated += other.allocated
        self.free += other.free
        for reason, count in other.unavailable.items():
            self.unavailable[reason] = self.unavailable.get(reason, 0) + count
        self.shared += other.shared
        self.admin_access += other.admin_access
        for key, amount in other.counters.items():
            self.counters.setdefault(key, Amount()).add(amount)
        for name, amount in other.capacity.items():
            self.capacity.setdefault(name, Amount()).add(amount)

    def counters_by_name(self) -> dict[str, Amount]:
        """Counters summed over counter sets, by counter name (for compact tables)."""
        out: dict[str, Amount] = {}
        for (_, counter), amount in sorted(self.counters.items()):
            out.setdefault(counter, Amount()).add(amount)
        return out

    def utilization(self) -> float:
        return self.allocated / self.devices if self.devices else 0.0

    def percent(self) -> int:
        """Allocated devices as a whole percentage (:func:`percent`); 0 without devices."""
        return percent(Fraction(self.allocated), Fraction(self.devices)) if self.devices else 0

    def to_dict(self) -> Obj:
        return {
            "devices": {"total": self.devices, "allocated": self.allocated, "free": self.free,
                        "shared": self.shared, "adminAccess": self.admin_access,
                        "unavailable": dict(sorted(self.unavailable.items()))},
            "counters": [{"counterSet": s, "counter": c, **a.to_dict()} for (s, c), a in sorted(self.counters.items())],
            "capacity": [{"name": n, **a.to_dict()} for n, a in sorted(self.capacity.items())],
        }


@dataclass
class UsageRow:
    """One row: a node and pool (``by node``) or a DeviceClass (``by class``)."""

    node: str = ""
    driver: str = ""
    pool: str = ""
    device_class: str = ""
    tally: Tally = field(default_factory=Tally)
    #: the pool is incomplete (not every slice of its newest generation is there)
    incomplete: bool = False
    #: the allocator's view of the pool under the gates: complete | incomplete | invalid ("" unknown)
    status: str = ""
    #: why the allocator cannot use the pool, or some of its devices, under the gates
    notes: list[str] = field(default_factory=list)

    def to_dict(self, by: str) -> Obj:
        head: Obj = {"class": self.device_class} if by == "class" else {
            "node": self.node, "driver": self.driver, "pool": self.pool, "incomplete": self.incomplete}
        if by != "class" and self.status:
            head["status"] = self.status
            head["notes"] = list(self.notes)
        return {**head, **self.tally.to_dict()}


@dataclass
class Usage:
    """The whole report: the cluster total and the rows."""

    by: str
    cluster: Tally
    rows: list[UsageRow]
    warnings: list[str] = field(default_factory=list)
    #: the gates the report was made for (None: not considered)
    feature_gates: dict[str, bool] | None = None
    #: what in the stored state cannot be (see :func:`consistency_findings`)
    consistency: list["Finding"] = field(default_factory=list)

    def to_dict(self) -> Obj:
        doc: Obj = {"apiVersion": "kubectl-dra/v1", "kind": "Usage", "by": self.by}
        if self.feature_gates is not None:
            doc["featureGates"] = dict(self.feature_gates)
        doc["cluster"] = self.cluster.to_dict()
        doc["rows"] = [r.to_dict(self.by) for r in self.rows]
        doc["consistency"] = [f.to_dict() for f in self.consistency]
        return doc


# --------------------------------------------------------------------------- consistency

#: kinds of inconsistent stored state
HELD_TWICE = "DeviceHeldTwice"
COUNTERS_OVERCOMMITTED = "CountersOvercommitted"
CAPACITY_OVERCOMMITTED = "CapacityOvercommitted"
UNPUBLISHED = "DeviceNotPublished"


@dataclass(frozen=True)
class Finding:
    """One thing in the stored state that the API server and scheduler would never have let
    happen together (a lost update, a restored backup, a driver that shrank its slices)."""

    kind: str
    #: the device (driver/pool/device) or counter set (driver/pool/counterSet) concerned
    object: str
    message: str
    #: the allocated claims involved ("namespace/name")
    claims: tuple[str, ...] = ()

    def to_dict(self) -> Obj:
        return {"kind": self.kind, "object": self.object, "message": self.message, "claims": list(self.claims)}


def unpublished_findings(in_use: InUse, seen: set[DeviceKey]) -> list[Finding]:
    """Allocations of devices that no current slice publishes (``seen``: the allocated devices
    found in slices)."""
    findings = []
    for key in sorted(set(in_use.consuming) - seen):
        claims = _claims_of(in_use, key)
        findings.append(Finding(UNPUBLISHED, "/".join(key),
                                f"allocated to {', '.join(claims)} but no current ResourceSlice publishes it", claims))
    return findings


def _claims_of(in_use: InUse, key: DeviceKey) -> tuple[str, ...]:
    return tuple(dict.fromkeys(who for who, _ in in_use.holders.get(key, ())))


def device_findings(device: Obj, key: DeviceKey, in_use: InUse) -> list[Finding]:
    """An allocated device held more than once where it cannot be shared, or whose shares
    consume more capacity than it has."""
    out: list[Finding] = []
    holders = in_use.holders.get(key) or []
    ref = "/".join(key)
    multi = bool(device.get("allowMultipleAllocations"))
    if len(holders) > 1 and any(share is None or not multi for _, share in holders):
        claims = _claims_of(in_use, key)
        out.append(Finding(HELD_TWICE, ref, f"allocated exclusively {len(holders)} times, to {', '.join(claims)}",
                           claims))
    consumed = in_use.consumed_capacity.get(key) or {}
    for name, entry in (device.get("capacity") or {}).items() if consumed else ():
        total, fmt = _capacity_value(entry)
        if name in consumed and consumed[name] > total:
            out.append(Finding(CAPACITY_OVERCOMMITTED, ref, f"capacity {name}: shares consume "
                               f"{_show(consumed[name], fmt)} of {_show(total, fmt)}", _claims_of(in_use, key)))
    return out


def counter_findings(pool: Pool, totals: Mapping[str, Mapping[str, tuple[Number, Format | None]]],
                     consumed: Mapping[tuple[str, str], Number], in_use: InUse) -> list[Finding]:
    """The pool's counters that allocated devices consume beyond their totals (a 200 % counter
    set), with the claims holding devices on that counter set."""
    out: list[Finding] = []
    for (set_name, counter), amount in sorted(consumed.items()):
        found = totals.get(set_name, {}).get(counter)
        if found is None or amount <= found[0]:
            continue  # (a counter no set declares makes the pool invalid: its verdict says so)
        total, fmt = found
        pct = f" ({percent(Fraction(amount), Fraction(total))}%)" if total else ""
        out.append(Finding(COUNTERS_OVERCOMMITTED, f"{pool.driver}/{pool.name}/{set_name}",
                           f"counter {counter}: allocated devices consume {_show(amount, fmt)} of "
                           f"{_show(total, fmt)}{pct}", _counter_set_claims(pool, set_name, in_use)))
    return out


def _counter_set_claims(pool: Pool, set_name: str, in_use: InUse) -> tuple[str, ...]:
    """The claims holding devices of ``pool`` that consume counter set ``set_name``."""
    claims: dict[str, None] = {}
    for s in pool.slices:
        for device in (s.get("spec") or {}).get("devices") or []:
            if any(c.get("counterSet") == set_name for c in device.get("consumesCounters") or ()):
                claims.update(dict.fromkeys(_claims_of(in_use, (pool.driver, pool.name, str(device.get("name") or "")))))
    return tuple(claims)


def _show(value: Number, fmt: Format | None) -> str:
    """An exact amount as a quantity in the driver's format."""
    return str(_quantity(value, fmt or DECIMAL_SI))


# --------------------------------------------------------------------------- in use


@dataclass
class InUse:
    """Allocated devices as the allocator sees them, from allocated claims' results."""

    #: devices held by at least one non-admin result -> number of such results
    consuming: dict[DeviceKey, int] = field(default_factory=dict)
    #: devices named only by admin-access results
    admin_only: set[DeviceKey] = field(default_factory=set)
    #: device -> capacity name -> summed consumedCapacity of its shares
    consumed_capacity: dict[DeviceKey, dict[str, Number]] = field(default_factory=dict)
    #: device -> (claim "namespace/name", shareID or None) of each non-admin result naming it
    holders: dict[DeviceKey, list[tuple[str, str | None]]] = field(default_factory=dict)


def allocated_devices(claims: Iterable[Obj]) -> InUse:
    """Index the results of every allocated claim (admin access consumes nothing)."""
    in_use = InUse()
    admin: set[DeviceKey] = set()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if not isinstance(allocation, dict):
            continue
        meta = claim.get("metadata") or {}
        who = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        for result in ((allocation.get("devices") or {}).get("results")) or []:
            key = (str(result.get("driver") or ""), str(result.get("pool") or ""), str(result.get("device") or ""))
            if result.get("adminAccess"):
                admin.add(key)
                continue
            in_use.consuming[key] = in_use.consuming.get(key, 0) + 1
            share = result.get("shareID")
            in_use.holders.setdefault(key, []).append((who, str(share) if share else None))
            consumed = result.get("consumedCapacity") or {}
            if consumed:
                per_device = in_use.consumed_capacity.setdefault(key, {})
                for name, value in consumed.items():
                    per_device[name] = per_device.get(name, 0) + amount_of(value)[0]
    in_use.admin_only = admin - set(in_use.consuming)
    return in_use


# --------------------------------------------------------------------------- pools


@dataclass
class Pool:
    """The newest generation of one pool (its slices, by name), and what the allocator makes
    of it (see :func:`pool_findings`)."""

    driver: str
    name: str
    generation: int
    #: the newest generation's slices, sorted by name: what usage counts
    slices: list[Obj]
    #: every slice of the pool, of every generation, with its position in the state: what
    #: the allocator judges
    history: list[tuple[int, Obj]] = field(default_factory=list, repr=False)

    #: the allocator finds slices missing (not: the pool is skipped for a disabled gate)
    incomplete: bool = False
    #: what the allocator makes of the pool under the feature gates (see :func:`pool_findings`)
    status: str = ""
    notes: list[str] = field(default_factory=list)
    #: device name -> why it is not free now (availability's reason; absent: free), when judged
    blocked: dict[str, str] = field(default_factory=dict)


def _generation(slice_: Obj) -> int:
    """pool.generation of a slice; unreadable counts as 0, as the allocator's views read it."""
    try:
        return int(((slice_.get("spec") or {}).get("pool") or {}).get("generation") or 0)
    except (TypeError, ValueError):
        return 0


def current_pools(slices: Iterable[Obj], features: Features | None = None,
                  availability_of: "Availability | None" = None) -> list[Pool]:
    """Slices grouped by (driver, pool), keeping only the newest generation, sorted by name,
    each judged as the allocator with ``features`` judges it (:func:`pool_findings`; without
    features, under the newest release's defaults, see :func:`~kubectl_dra.gates.effective_gates`),
    and with ``availability_of`` each device too (``Pool.blocked``)."""
    if features is None:
        features = Features.from_gates(effective_gates(None))
    pools: dict[tuple[str, str], Pool] = {}
    for index, s in enumerate(slices):
        spec = s.get("spec") or {}
        key = (str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or ""))
        generation = _generation(s)
        current = pools.get(key)
        if current is None:
            current = pools[key] = Pool(key[0], key[1], generation, [s])
        elif generation > current.generation:
            current.generation, current.slices = generation, [s]
        elif generation == current.generation:
            current.slices.append(s)
        current.history.append((index, s))
    for pool in pools.values():
        pool.slices.sort(key=lambda s: (s.get("metadata") or {}).get("name") or "")
        pool_findings(pool, features, availability_of)
    return [pools[k] for k in sorted(pools)]


@dataclass(frozen=True)
class Availability:
    """What judging devices free needs besides the pool: the allocator's in-use devices and
    which nodes declare optional node operations (see :mod:`kubectl_dra.allocation.availability`)."""

    in_use: AllocatorInUse
    declares: Mapping[str, bool]

    @classmethod
    def of(cls, state: ClusterState, features: Features) -> "Availability":
        return cls(gather_in_use(state.resource_claims, consumable_capacity=features.consumable_capacity),
                   availability.node_declarations(state.nodes))


COMPLETE, INCOMPLETE, INVALID = "complete", "incomplete", "invalid"


def pool_findings(pool: Pool, features: Features, availability_of: Availability | None = None) -> tuple[str, list[str]]:
    """(status, notes): what the allocator makes of the pool with ``features``, set on the pool
    with its ``incomplete`` flag (slices missing, whatever the gates).

    Whether the pool is incomplete (slices missing) or invalid, and why, is the allocator's
    own verdict (:func:`kubectl_dra.allocation.pools.whole_pool`, which skips the slices pool
    gathering skips for a gate that is off); a usable pool then gets a note per kind of
    device the allocator does not use because a gate is off. The allocator's
    views of the slices live only for this call: kept for every pool of a big cluster they
    cost more (in the cyclic GC's passes over them) than building them."""
    views = [slice_view(s, index) for index, s in pool.history]
    verdict = whole_pool(views, partitionable=features.partitionable, compat_groups=features.compatibility_groups)
    if availability_of is not None:
        pool.blocked = availability.pool_reasons(views, availability_of.in_use, features, availability_of.declares,
                                                 judged=(verdict,))
    pool.incomplete = verdict is not None and verdict.incomplete
    newest = {id(s) for s in pool.slices}
    current = [sv for sv in views if id(sv.raw) in newest]
    if verdict is not None and verdict.incomplete:
        # the count the allocator compares with: the generation's first slice's
        counted = current if features.compatibility_groups else [sv for sv in current if not sv.has_compat_groups]
        note = f"{len(counted)} of {current[0].slice_count} slices published"
        if len(counted) != len(current):
            note += (f" (not counting {len(current) - len(counted)} using device compatibility groups, which the "
                     f"allocator ignores with {Gate.DEVICE_COMPATIBILITY_GROUPS} off)")
        found = INCOMPLETE, [note]
    elif verdict is not None and verdict.invalid:
        found = INVALID, [verdict.invalid_reason]
    else:
        found = COMPLETE, _gated_device_notes(current, features)
    pool.status, pool.notes = found
    return found


def _gated_device_notes(slices: list[SliceView], features: Features) -> list[str]:
    """Devices the allocator does not use because a gate is off (pool gathering skips their
    slice, or the search refuses them one by one), by the same conditions its checks use
    (:mod:`kubectl_dra.allocation.gated`)."""
    if features.partitionable and features.binding_conditions and features.optional_node_operations \
            and features.consumable_capacity and features.compatibility_groups:
        return []  # every note is about one of these gates being off: no device to count
    per_device = consuming = with_binding = skipping = whole = grouped = 0
    for sv in slices:
        if slice_unseen(sv, features.partitionable, features.compatibility_groups):
            if not features.compatibility_groups and sv.has_compat_groups:
                grouped += len(sv.devices)
            elif sv.per_device_node_selection and not sv.shared_counter_names:
                per_device += len(sv.devices)
            continue
        skips = node_operations_unusable(sv, features)
        for device in sv.devices:
            consuming += counters_unusable(device, features)
            with_binding += binding_conditions_unusable(device, features)
            skipping += skips
            whole += device.allow_multiple and not shareable(device, features)
    notes = []
    if grouped:
        notes.append(f"{_n(grouped)} in slices using device compatibility groups unusable with "
                     f"{Gate.DEVICE_COMPATIBILITY_GROUPS} off")
    if per_device:
        notes.append(f"{_n(per_device)} with per-device node selection unusable with {Gate.PARTITIONABLE_DEVICES} off")
    if consuming:
        notes.append(f"{_n(consuming)} consuming shared counters unusable with {Gate.PARTITIONABLE_DEVICES} off")
    if with_binding:
        notes.append(f"{_n(with_binding)} with binding conditions unusable with {Gate.DEVICE_BINDING_CONDITIONS} off")
    if skipping:
        notes.append(f"{_n(skipping)} skipping node operations unusable with {Gate.OPTIONAL_NODE_OPERATIONS} off")
    if whole:
        notes.append(f"{_n(whole)} allowing multiple allocations allocated whole with {Gate.CONSUMABLE_CAPACITY} off")
    return notes


def _n(count: int) -> str:
    return f"{count} device{'s' if count != 1 else ''}"


def device_node(slice_spec: Obj, device: Obj) -> str:
    """The node column of a device: its slice's or its own nodeName, else all/selected nodes."""
    for holder in (slice_spec, device):
        if holder.get("nodeName"):
            return str(holder["nodeName"])
        if holder.get("allNodes"):
            return ALL_NODES
        if holder.get("nodeSelector"):
            return SELECTED_NODES
    return ALL_NODES


def _capacity_value(entry: Any) -> tuple[Number, Format | None]:
    return amount_of(entry.get("value") if isinstance(entry, dict) else entry)


class Unreadable:
    """Quantities usage cannot add up (a value too large to compute with exactly, or not a
    quantity): each counts as 0, and the report says which, instead of a silent 0/0."""

    #: most places named in the warning (the count is always whole)
    SHOWN = 3

    def __init__(self) -> None:
        self.places: dict[str, Any] = {}

    def note(self, place: str, entry: Any, read: tuple[Number, Format | None]) -> Number:
        """``read`` (``_capacity_value(entry)``)'s amount; ``place`` is remembered when ``entry`` (a
        capacity or counter: ``{value: …}``) could not be read."""
        if read[1] is None:
            self.places.setdefault(place, entry.get("value") if isinstance(entry, dict) else entry)
        return read[0]

    def warning(self) -> str | None:
        """One line naming the first few, or None."""
        if not self.places:
            return None
        shown = [f"{place}: {_unreadable_reason(value)}" for place, value in list(self.places.items())[:self.SHOWN]]
        more = f" and {len(self.places) - self.SHOWN} more" if len(self.places) > self.SHOWN else ""
        count = len(self.places)
        return (f"{count} quantit{'y' if count == 1 else 'ies'} cannot be added up and count as 0: "
                f"{'; '.join(shown)}{more}")


def _unreadable_reason(value: Any) -> str:
    """Why a quantity cannot be added up, in one line."""
    try:
        _ = Quantity.from_json(value).value  # reading the value is the check
    except (QuantityError, TypeError, ValueError) as exc:
        return f"{str(value)[:40]!r} ({exc})"
    return repr(str(value)[:40])


# --------------------------------------------------------------------------- accounting


ClassMatcher = Callable[[Obj, str, Obj], bool]
"""(DeviceClass, driver, device) -> whether the class selects the device."""


def cel_class_matcher() -> ClassMatcher:
    """The classes' own CEL selectors: every one must be true; an expression that does not
    compile or fails on a device selects nothing (usage reports, it does not allocate). Each
    device's CEL input is made once per matcher (the matcher is made per report)."""
    from .cel import compile_expression, make_device_input
    from .errors import CELError
    from .model.claims import selector_expression

    #: id(device dict) -> (the dict, its CEL input); the dict is kept so its id stays its own
    inputs: dict[int, tuple[Obj, Any]] = {}

    def matches(cls: Obj, driver: str, device: Obj) -> bool:
        known = inputs.get(id(device))
        if known is None or known[0] is not device:
            known = inputs[id(device)] = (device, make_device_input(driver, device))
        for selector in ((cls.get("spec") or {}).get("selectors")) or []:
            expression = selector_expression(selector)
            if not expression:
                continue
            try:
                if not compile_expression(expression).matches(known[1]):
                    return False
            except CELError:
                return False
        return True

    return matches


def compute_usage(state: ClusterState, *, by: str = "node", class_matcher: ClassMatcher | None = None,
                  sort: str = "name", nodes: Iterable[str] | None = None,
                  gates: FeatureGates | None = None) -> Usage:
    """The usage report for ``state``, rows per (node, driver, pool) or per DeviceClass.

    Each pool also gets the allocator's verdict under ``gates`` (without them, the newest
    release's defaults: :func:`~kubectl_dra.gates.effective_gates`): status and notes, see
    :func:`pool_findings`, and a warning names the pools and devices the allocator cannot use;
    the counts stay what the slices publish."""
    if by not in ("node", "class"):
        raise UsageError(f"--by {by!r}: use node or class")
    if by == "class" and class_matcher is None:
        class_matcher = cel_class_matcher()
    in_use = allocated_devices(state.resource_claims)
    gates = effective_gates(gates)
    features = Features.from_gates(gates)
    pools = current_pools(state.resource_slices, features, Availability.of(state, features))
    rows: dict[tuple[str, ...], UsageRow] = {}
    cluster = Tally()
    seen: set[DeviceKey] = set()
    classes = list(state.device_classes)
    wanted = set(nodes) if nodes else None
    findings: dict[tuple[str, str], list[Finding]] = {}
    unreadable = Unreadable()
    for pool in pools:
        found = findings[(pool.driver, pool.name)] = []
        _account_pool(pool, in_use, rows, cluster, seen, by, classes, class_matcher, wanted, found, unreadable)
    if by == "node":  # every device is in exactly one row: the total is the sum of the rows shown
        for row in rows.values():
            if wanted is None or row.node in wanted:
                cluster.merge(row.tally)
    else:
        for cls in classes:
            name = str((cls.get("metadata") or {}).get("name") or "")
            rows.setdefault((name,), UsageRow(device_class=name))
    result = [r for r in rows.values() if wanted is None or by == "class" or r.node in wanted]
    warnings = _stale_warnings(in_use, seen)
    shown = {(r.driver, r.pool) for r in result} if by == "node" else None
    warnings.extend(_pool_warnings(pools, shown))
    if (unreadable_warning := unreadable.warning()) is not None:
        warnings.append(unreadable_warning)
    consistency = [f for pool, found in findings.items() if shown is None or pool in shown for f in found]
    consistency += unpublished_findings(in_use, seen)
    return Usage(by=by, cluster=cluster, rows=sort_rows(result, sort, by), warnings=warnings,
                 feature_gates=gates.as_dict(), consistency=consistency)


def _pool_warnings(pools: Iterable[Pool], shown: set[tuple[str, str]] | None) -> list[str]:
    """One line per kind of trouble: pools the allocator skips, and pools with devices it refuses."""
    skipped: list[str] = []
    partly: list[str] = []
    for pool in pools:
        if shown is not None and (pool.driver, pool.name) not in shown:
            continue
        ref = f"{pool.driver}/{pool.name}"
        if pool.status in (INCOMPLETE, INVALID):
            skipped.append(f"{ref} ({pool.status}: {pool.notes[0]})" if pool.notes else f"{ref} ({pool.status})")
        elif any("unusable" in note for note in pool.notes):
            partly.append(f"{ref} ({'; '.join(n for n in pool.notes if 'unusable' in n)})")
    out = []
    for items, what in ((skipped, "skips"), (partly, "refuses devices of")):
        if items:
            more = f" and {len(items) - 3} more" if len(items) > 3 else ""
            out.append(f"with these feature gates the allocator {what} {len(items)} pool{'s' if len(items) != 1 else ''}: "
                       f"{', '.join(items[:3])}{more} (-o wide shows every pool)")
    return out


def _account_pool(pool: Pool, in_use: InUse, rows: dict[tuple[str, ...], UsageRow], cluster: Tally,
                  seen: set[DeviceKey], by: str, classes: list[Obj], matcher: ClassMatcher | None,
                  wanted: set[str] | None = None, findings: list[Finding] | None = None,
                  unreadable: Unreadable | None = None) -> None:
    """Add one pool's devices and counters to the rows (and, by class, to the cluster tally);
    by class with ``wanted`` nodes, only the devices whose NODE column is one of them. What
    is inconsistent in the pool's allocations goes to ``findings``, the quantities that cannot
    be added up to ``unreadable``.

    Hot for large clusters (40,000 devices): devices of a slice share its node, so the row
    is looked up once per node change, and only allocated devices are remembered."""
    counter_totals: dict[str, dict[str, tuple[Number, Format | None]]] = {}
    counter_home: dict[str, str] = {}
    consumed_counters: dict[tuple[str, str], Number] = {}
    consuming = in_use.consuming
    driver, pool_name = pool.driver, pool.name
    for s in pool.slices:
        spec = s.get("spec") or {}
        slice_node = spec.get("nodeName")
        for counter_set in spec.get("sharedCounters") or []:
            set_name = str(counter_set.get("name") or "")
            totals = counter_totals[set_name] = {}
            for c, v in (counter_set.get("counters") or {}).items():
                totals[c] = _capacity_value(v)
                if unreadable is not None:
                    unreadable.note(f"{driver}/{pool_name} counter set {set_name} counter {c}", v, totals[c])
            if slice_node:
                counter_home[set_name] = str(slice_node)
        last_node: str | None = None
        targets: list[Tally] = []
        for device in spec.get("devices") or []:
            key = (driver, pool_name, str(device.get("name") or ""))
            node = str(slice_node) if slice_node else device_node(spec, device)
            allocated = key in consuming
            if allocated:
                seen.add(key)
                if findings is not None and (consuming[key] > 1 or key in in_use.consumed_capacity):
                    findings.extend(device_findings(device, key, in_use))
            if by == "node":
                if node != last_node:
                    targets = [_row(rows, node, pool).tally]
                    last_node = node
            elif wanted is not None and node not in wanted:
                targets = []
            else:
                targets = [cluster, *(r.tally for r in _class_rows(pool, device, classes, matcher, rows))]
            blocked = pool.blocked.get(key[2])
            for tally in targets:
                _count_device(tally, device, key, allocated, in_use, blocked)
            if unreadable is not None and device.get("allowMultipleAllocations"):  # (its capacity is added up)
                for name, entry in (device.get("capacity") or {}).items():
                    unreadable.note(f"{'/'.join(key)} capacity {name}", entry, _capacity_value(entry))
            for consumption in device.get("consumesCounters") or ():
                set_name = str(consumption.get("counterSet") or "")
                if set_name not in counter_home:
                    counter_home[set_name] = node
                if allocated:
                    for counter, value in (consumption.get("counters") or {}).items():
                        k = (set_name, counter)
                        read = _capacity_value(value)
                        if unreadable is not None:
                            unreadable.note(f"{'/'.join(key)} consumes {set_name} counter {counter}", value, read)
                        consumed_counters[k] = consumed_counters.get(k, 0) + read[0]
    if findings is not None and consumed_counters:
        findings.extend(counter_findings(pool, counter_totals, consumed_counters, in_use))
    if by == "node":
        _attribute_counters(pool, counter_totals, counter_home, consumed_counters, rows)


def _row(rows: dict[tuple[str, ...], UsageRow], node: str, pool: Pool) -> UsageRow:
    key = (node, pool.driver, pool.name)
    row = rows.get(key)
    if row is None:
        row = rows[key] = UsageRow(node=node, driver=pool.driver, pool=pool.name, incomplete=pool.incomplete,
                                   status=pool.status, notes=pool.notes)
    return row


def _class_rows(pool: Pool, device: Obj, classes: list[Obj], matcher: ClassMatcher | None,
                rows: dict[tuple[str, ...], UsageRow]) -> list[UsageRow]:
    """Every class row whose class selects the device."""
    out = []
    assert matcher is not None
    for cls in classes:
        name = str((cls.get("metadata") or {}).get("name") or "")
        if matcher(cls, pool.driver, device):
            out.append(rows.setdefault((name,), UsageRow(device_class=name)))
    return out


def _count_device(tally: Tally, device: Obj, key: DeviceKey, allocated: bool, in_use: InUse,
                  blocked: str | None = None) -> None:
    """Count one device: total, allocated or why not free (``blocked``), its capacity."""
    tally.devices += 1
    if blocked is None:
        tally.free += 1
    elif not allocated and blocked != availability.ALLOCATED:
        tally.unavailable[blocked] = tally.unavailable.get(blocked, 0) + 1
    multi = bool(device.get("allowMultipleAllocations"))
    if allocated:
        tally.allocated += 1
        if multi:
            tally.shared += 1
    elif key in in_use.admin_only:
        tally.admin_access += 1
    if multi:
        consumed = in_use.consumed_capacity.get(key, {})
        for name, entry in (device.get("capacity") or {}).items():
            amount = tally.capacity.get(name)
            if amount is None:
                amount = tally.capacity[name] = Amount()
            total, fmt = _capacity_value(entry)
            amount.add(Amount(consumed.get(name, 0), total, fmt))


def _attribute_counters(pool: Pool, totals: dict[str, dict[str, tuple[Number, Format | None]]],
                        home: dict[str, str], consumed: dict[tuple[str, str], Number],
                        rows: dict[tuple[str, ...], UsageRow]) -> None:
    """Put each counter set of the pool on the row of the node its devices live on."""
    for set_name, counters in totals.items():
        tally = _row(rows, home.get(set_name, ALL_NODES), pool).tally
        for counter, (total, fmt) in counters.items():
            used = consumed.get((set_name, counter), 0)
            amount = tally.counters.get((set_name, counter))
            if amount is None:
                tally.counters[(set_name, counter)] = Amount(used, total, fmt)
            else:
                amount.add(Amount(used, total, fmt))


def _stale_warnings(in_use: InUse, seen: set[DeviceKey]) -> list[str]:
    """Allocated devices that no current slice lists (``seen``: the allocated devices found)."""
    stale = sorted(set(in_use.consuming) - seen)
    if not stale:
        return []
    sample = ", ".join("/".join(k) for k in stale[:3])
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    return [f"{len(stale)} allocated device(s) are not in any current ResourceSlice: {sample}{more}"]


def sort_rows(rows: list[UsageRow], sort: str, by: str) -> list[UsageRow]:
    """Rows by name, or by a number (largest first, name breaking ties)."""
    if sort not in SORT_KEYS:
        raise UsageError(f"--sort {sort!r}: use one of {', '.join(SORT_KEYS)}")

    def name_key(r: UsageRow) -> tuple[str, ...]:
        return (r.device_class,) if by == "class" else (r.node, r.driver, r.pool)

    by_name = sorted(rows, key=name_key)
    numbers: Mapping[str, Callable[[UsageRow], float]] = {
        "devices": lambda r: r.tally.devices, "allocated": lambda r: r.tally.allocated,
        "free": lambda r: r.tally.free, "utilization": lambda r: r.tally.utilization(),
    }
    if sort == "name":
        return by_name
    return sorted(by_name, key=lambda r: -numbers[sort](r))
