"""Precomputed views of ResourceSlices and their devices.

Building a view once per slice moves all dict digging (quantities, counters, taints,
node selection) out of the allocator's hot loop; views keep the original dicts for
presenters and for CEL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from ..errors import InputError
from ..quantity import Quantity, QuantityError
from ..types import DeviceID
from .names import qualify



def device_uid(driver: str, pool: str, device: str) -> str:
    """``driver/pool/device``: how upstream prints a device ID in messages."""
    return f"{driver}/{pool}/{device}"


class CounterConsumption:
    """One consumesCounters entry: the counter set, the amounts, the compatibility groups.

    Amounts are parsed on first use: most devices of a big cluster are never candidates.
    """

    __slots__ = ("counter_set", "raw_counters", "groups", "_counters", "_values")

    def __init__(self, raw: Any) -> None:
        """From one entry of a device's ``consumesCounters``."""
        get = (raw or {}).get
        groups = get("compatibilityGroups")
        self.counter_set: str = get("counterSet") or ""
        self.raw_counters: Mapping[str, Any] = get("counters") or {}
        #: None when the device declares no groups (omitted, null or empty list)
        self.groups = frozenset(groups) if groups else None
        self._counters: dict[str, Quantity] | None = None
        self._values: dict[str, int] | None = None

    @property
    def names(self) -> Iterable[str]:
        """The counter names (no parsing)."""
        return self.raw_counters.keys()

    @property
    def counters(self) -> dict[str, Quantity]:
        if self._counters is None:
            self._counters = _counters(self.raw_counters)
        return self._counters

    @property
    def values(self) -> dict[str, int]:
        """The amounts in 1n units, exact integers (what the allocator adds up)."""
        if self._values is None:
            if self._counters is not None:
                self._values = {k: q.nanos() for k, q in self._counters.items()}
            else:  # (the allocator needs only these: no Quantity dict kept)
                self._values = {k: json_nanos((c or {}).get("value")) for k, c in self.raw_counters.items()}
        return self._values


@dataclass(frozen=True)
class Capacity:
    """One consumable capacity of a device: its published name, total and request policy."""

    name: str
    value: Quantity
    policy: Mapping[str, Any] | None


class DeviceView:
    """One device of a slice, with everything the allocator checks pre-parsed.

    Built straight from the device dict (one per device of the cluster on a first preview,
    so each field the search reads is read once and empty values share one empty tuple); what
    only messages, results and per-device node selection read is read from the dict when asked.
    The dict stays as ``raw`` for presenters and for CEL. A device also marks its slice's view
    when it has binding conditions or compatibility groups.
    """

    __slots__ = ("raw", "slice", "name", "id", "attributes", "consumes", "allow_multiple", "taints",
                 "binding_conditions", "cel_input", "has_policies", "_capacity", "cel_results", "node_dependent")

    def __init__(self, raw: Mapping[str, Any], sv: "SliceView", node_dependent: bool = False) -> None:
        get = raw.get
        name = get("name") or ""
        driver, pool = sv.driver, sv.pool
        counters, taints, capacity = get("consumesCounters"), get("taints"), get("capacity")
        conditions = get("bindingConditions")
        self.raw = raw
        self.slice = sv
        self.name = name
        self.id: DeviceID = (driver, pool, name)
        self.attributes: Mapping[str, Any] = get("attributes") or {}
        if counters:
            self.consumes: tuple[CounterConsumption, ...] = tuple(map(CounterConsumption, counters))
            if not sv._compat_groups:
                for cc in self.consumes:
                    if cc.groups:
                        sv._compat_groups = True
                        break
        else:
            self.consumes = ()
        self.allow_multiple = bool(get("allowMultipleAllocations"))
        self.taints: tuple[Mapping[str, Any], ...] = tuple(taints) if taints else ()
        self.binding_conditions: tuple[str, ...] = tuple(conditions) if conditions else ()
        if conditions is not None:  # upstream tests "!= nil": an explicitly empty list still counts
            sv._binding_conditions = True
        #: lazily built CEL input (one per device, shared by every expression)
        self.cel_input: Any = None
        #: whether any capacity has a request policy (no policy: the fast path in capacity checks)
        self.has_policies = False
        if capacity:
            for entry in capacity.values():
                if entry and entry.get("requestPolicy"):
                    self.has_policies = True
                    break
        self._capacity: dict[str, Capacity] | None = None
        #: CEL results for this device by (expression, result kind), and the allocator's
        #: selectability answers by (negative) token; they never change. None until first
        #: used: see answers()
        self.cel_results: dict[Any, Any] | None = None
        #: whether selecting the device depends on the node (per-device node selection or a
        #: slice that skips node operations): such answers are never shared between nodes
        self.node_dependent = node_dependent

    def __repr__(self) -> str:
        return f"DeviceView({self.uid!r})"

    def answers(self) -> dict[Any, Any]:
        """``cel_results``, made on first use: the dict of the devices of the same content,
        from the slice's ``answer_book`` (the owning index's), else one of its own."""
        found = self.cel_results
        if found is None:
            book = self.slice.answer_book
            found = self.cel_results = book(self) if book is not None else {}
        return found

    @property
    def uid(self) -> str:
        """``driver/pool/device``, as upstream prints a device in messages."""
        return device_uid(*self.id)

    @property
    def binding_failure_conditions(self) -> tuple[str, ...]:
        return tuple(self.raw.get("bindingFailureConditions") or ())

    @property
    def binds_to_node(self) -> bool:
        return bool(self.raw.get("bindsToNode"))

    @property
    def node_name(self) -> str:
        """The device's own nodeName (per-device node selection)."""
        return self.raw.get("nodeName") or ""

    @property
    def all_nodes(self) -> bool:
        return bool(self.raw.get("allNodes"))

    @property
    def node_selector(self) -> Mapping[str, Any] | None:
        return self.raw.get("nodeSelector")

    @property
    def capacity(self) -> dict[str, Capacity]:
        """Fully-qualified capacity name -> Capacity (driver's own entries win over implicit
        ones); parsed on first use."""
        if self._capacity is None:
            try:
                self._capacity = _capacity(self.raw.get("capacity"), self.slice.driver)
            except QuantityError as exc:
                raise InputError(f"ResourceSlice {self.slice.name}: device {self.name}: capacity: {exc}") from None
        return self._capacity

    @property
    def has_compat_groups(self) -> bool:
        return any(c.groups for c in self.consumes)


@dataclass(eq=False, slots=True)
class SliceView:
    """One ResourceSlice: pool membership, node selection, counters and devices."""

    raw: Mapping[str, Any] = field(repr=False)
    index: int
    name: str
    driver: str
    pool: str
    #: (driver, pool name): the pool's identity
    pool_id: tuple[str, str]
    generation: int
    slice_count: int
    node_name: str
    all_nodes: bool
    node_selector: Mapping[str, Any] | None
    per_device_node_selection: bool
    #: counter set name -> counter name -> value
    shared_counters: dict[str, dict[str, Quantity]]
    shared_counter_names: tuple[str, ...]
    skip_node_operations: tuple[str, ...]
    #: spec.devices as stored (the views are made on first use of ``devices``)
    raw_devices: Iterable[Any] = field(default=(), repr=False)
    #: gives a device the dict of remembered answers it shares with devices of the same
    #: content (set by the index that owns the view; see DeviceView.answers)
    answer_book: Callable[[DeviceView], dict[Any, Any]] | None = field(default=None, repr=False)
    _devices: list[DeviceView] | None = field(default=None, init=False, repr=False)
    #: set by the devices as they are viewed (see has_binding_conditions, has_compat_groups)
    _binding_conditions: bool = field(default=False, init=False, repr=False)
    _compat_groups: bool = field(default=False, init=False, repr=False)

    @property
    def devices(self) -> list[DeviceView]:
        """The views of the slice's devices, made when first asked for: a preview views a
        node's devices when it first looks at the node, so what it builds is still in the
        CPU's caches when it searches them (and a slice nobody looks at costs nothing)."""
        found = self._devices
        if found is None:
            node_dependent = self.per_device_node_selection
            found = self._devices = [DeviceView(d, self, node_dependent) for d in self.raw_devices
                                     if type(d) is dict or _is_mapping(d)]
        return found

    @property
    def has_binding_conditions(self) -> bool:
        """Whether any device has bindingConditions (upstream tests "!= nil": an explicitly
        empty list counts)."""
        return bool(self.devices) and self._binding_conditions

    @property
    def has_compat_groups(self) -> bool:
        """Whether any device consumes counters with compatibility groups."""
        return bool(self.devices) and self._compat_groups


def _quantity(value: Any) -> Quantity:
    return Quantity.from_json(value)


@lru_cache(maxsize=4096)
def _text_nanos(text: str) -> int:
    return Quantity.from_json(text).nanos()


def json_nanos(value: Any) -> int:
    """A quantity as decoded from JSON, in 1n units (see :meth:`Quantity.nanos`); remembered per
    text, as the same few amounts are consumed by every device of a big cluster."""
    return _text_nanos(value) if type(value) is str else Quantity.from_json(value).nanos()


def _int(value: Any) -> int:
    """An integer field as stored; anything unparsable counts as 0."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _counters(raw: Mapping[str, Any] | None) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, counter in (raw or {}).items():
        out[name] = _quantity((counter or {}).get("value"))
    return out


def _capacity(raw: Mapping[str, Any] | None, driver: str) -> dict[str, Capacity]:
    """Capacity keyed by fully-qualified name; an explicit ``driver/x`` beats an implicit ``x``."""
    out: dict[str, Capacity] = {}
    prefix = driver + "/"
    items = list((raw or {}).items())
    for name, cap in items:
        if name.startswith(prefix):
            out[name] = Capacity(name, _quantity((cap or {}).get("value")), (cap or {}).get("requestPolicy"))
    for name, cap in items:
        if name.startswith(prefix):
            continue
        key = qualify(name, driver)
        if key not in out:
            out[key] = Capacity(name, _quantity((cap or {}).get("value")), (cap or {}).get("requestPolicy"))
    return out


def _is_mapping(value: Any) -> bool:
    """isinstance(value, Mapping), with the plain dict of parsed JSON first (the ABC check is slow)."""
    return type(value) is dict or isinstance(value, Mapping)


def slice_view(raw: Mapping[str, Any], index: int) -> SliceView:
    """Build the view of one ResourceSlice dict (``index`` is its position in the state)."""
    spec = raw.get("spec") or {}
    pool = spec.get("pool") or {}
    if not _is_mapping(spec) or not _is_mapping(pool):
        spec, pool = {}, {}
    shared: dict[str, dict[str, Quantity]] = {}
    names: list[str] = []
    for cs in spec.get("sharedCounters") or ():
        cs = cs or {}
        names.append(cs.get("name") or "")
        shared.setdefault(cs.get("name") or "", _counters(cs.get("counters")))
    driver, pool_name = spec.get("driver") or "", pool.get("name") or ""
    sv = SliceView(
        raw=raw,
        index=index,
        name=(raw.get("metadata") or {}).get("name") or "",
        driver=driver,
        pool=pool_name,
        pool_id=(driver, pool_name),
        generation=_int(pool.get("generation")),
        slice_count=_int(pool.get("resourceSliceCount")),
        node_name=spec.get("nodeName") or "",
        all_nodes=bool(spec.get("allNodes")),
        node_selector=spec.get("nodeSelector"),
        per_device_node_selection=bool(spec.get("perDeviceNodeSelection")),
        shared_counters=shared,
        shared_counter_names=tuple(names),
        skip_node_operations=tuple(spec.get("skipNodeOperations") or ()),
        raw_devices=spec.get("devices") or (),
    )
    return sv
