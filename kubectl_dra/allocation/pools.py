"""Resource pools as one node sees them (upstream ``GatherPools``).

A pool is all slices of one (driver, pool name) with the newest generation. The node
sees the slices that target it (nodeName, allNodes, nodeSelector, or per-device node
selection), slices with shared counters included. When it sees fewer slices of a pool
than ``resourceSliceCount``, every slice of the pool is consulted: a newer generation
makes the pool obsolete (ignored), too few slices make it *incomplete*; otherwise the
slices that do not target the node still count (their shared counters, their devices'
consumption). With a feature gate off, some slices are skipped as if absent (see
:func:`~kubectl_dra.allocation.gated.slice_unseen`). A pool is *invalid* when its slices contradict each other (duplicate device
names, duplicate counter sets, counters that do not exist). Neither an incomplete nor an
invalid pool is allocated from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import replace
from operator import attrgetter
from typing import Any, Iterable, Mapping

from ..model.devices import DeviceView, Quantity, SliceView
from ..model.nodes import node_matches
from .gated import slice_unseen


#: a pool's device slices are searched in name order
_BY_NAME = attrgetter("name")


@dataclass(eq=False)
class Pool:
    """One pool as seen from one node; ``slices`` are the device slices reaching the node."""

    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[SliceView] = field(default_factory=list, repr=False)
    #: device slices of the pool that do not reach the node (their devices still consume counters)
    other_slices: list[SliceView] = field(default_factory=list, repr=False)
    counter_sets: dict[str, dict[str, Quantity]] = field(default_factory=dict, repr=False)
    has_binding_conditions: bool = False
    #: the devices of ``slices`` in search order (slice by slice)
    devices: list[DeviceView] = field(default_factory=list, repr=False)
    #: derived once, on first use: counter totals in 1n units, every device by name
    _totals: dict[str, dict[str, int]] | None = field(default=None, repr=False)
    _by_name: dict[str, DeviceView] | None = field(default=None, repr=False)

    @property
    def id(self) -> tuple[str, str]:
        return (self.driver, self.name)

    @property
    def uid(self) -> str:
        return f"{self.driver}/{self.name}"

    def counter_totals(self) -> dict[str, dict[str, int]]:
        """Each counter set's counters in 1n units: what the allocator charges consumption against."""
        if self._totals is None:
            self._totals = {name: {c: q.nanos() for c, q in counters.items()} for name, counters in self.counter_sets.items()}
        return self._totals

    def device_named(self, name: str) -> DeviceView | None:
        """A device of the pool by name, whether its slice reaches the node or not."""
        if self._by_name is None:
            self._by_name = {d.name: d for sv in (*self.slices, *self.other_slices) for d in sv.devices}
        return self._by_name.get(name)


def pool_order(pool: Pool) -> tuple[bool, str, str]:
    """The order pools are searched in (upstream GatherPools/sortPoolsByID): pools without
    binding conditions first, then by pool ID, driver name before pool name."""
    return (pool.has_binding_conditions, pool.driver, pool.name)


def slice_reaches(sv: SliceView, node: Mapping[str, Any]) -> bool:
    """Whether a slice is relevant for the node (upstream GatherPools' node selection, which
    slices with shared counters follow too)."""
    if sv.node_name or sv.all_nodes or sv.node_selector is not None:
        return node_matches(node, sv.node_name, sv.all_nodes, sv.node_selector)
    if sv.per_device_node_selection:
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in sv.devices)
    return False  # some future node selection we do not understand


def _add(pools: dict[tuple[str, str], list[SliceView]], sv: SliceView) -> None:
    """Keep only the newest generation of each pool (upstream ``addSlice``)."""
    current = pools.get(sv.pool_id)
    if current is None or sv.generation > current[0].generation:
        pools[sv.pool_id] = [sv]
    elif sv.generation == current[0].generation:
        current.append(sv)


def _validate(pool: Pool, device_slices: list[SliceView], counter_slices: list[SliceView],
              other: list[SliceView], partitionable: bool) -> Pool:
    """Fill in the pool or mark it invalid, as upstream ``buildPool`` does."""
    names = [d.name for sv in device_slices for d in sv.devices]
    if len(set(names)) != len(names):
        pool.invalid, pool.invalid_reason = True, f"duplicate device name {_first_repeat(names)}"
        return pool
    if partitionable:
        counter_sets: dict[str, dict[str, Quantity]] = {}
        for sv in counter_slices:
            for name in sv.shared_counter_names:
                if name in counter_sets:
                    pool.invalid, pool.invalid_reason = True, f"duplicate counter set name {name}"
                    return pool
                counter_sets[name] = sv.shared_counters[name]
        for group in (device_slices, other):
            reason = _check_consumption(counter_sets, group)
            if reason:
                pool.invalid, pool.invalid_reason = True, reason
                return pool
        pool.counter_sets = counter_sets
        pool.other_slices = other
    pool.slices = sorted(device_slices, key=_BY_NAME)
    pool.devices = [d for sv in pool.slices for d in sv.devices]
    pool.has_binding_conditions = any(s.has_binding_conditions for s in device_slices)
    return pool


def _first_repeat(names: list[str]) -> str:
    """The first name that occurs a second time (the one upstream reports)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return ""


def _check_consumption(counter_sets: dict[str, dict[str, Quantity]], slices: Iterable[SliceView]) -> str:
    """Why a device consumes from a counter set or counter the pool does not declare ("" if none does)."""
    for sv in slices:
        for d in sv.devices:
            for c in d.consumes:
                counters = counter_sets.get(c.counter_set)
                if counters is None:
                    return f"counter set {c.counter_set} not found"
                if not counters.keys() >= c.raw_counters.keys():
                    missing = next(name for name in c.names if name not in counters)
                    return f"counter {missing} not found in counter set {c.counter_set}"
    return ""


def gather_pools(candidates: Iterable[SliceView], all_slices_of_pool: Mapping[tuple[str, str], list[SliceView]],
                 node: Mapping[str, Any], *, partitionable: bool, compat_groups: bool) -> list[Pool]:
    """The pools reachable from ``node``, in search order.

    ``candidates`` are the slices that may reach the node, in state order;
    ``all_slices_of_pool`` every slice per pool (for the incomplete/obsolete check, upstream
    checkSlicesInPool). Order: pools without binding conditions first, each group by pool
    name then driver.
    """
    pools: dict[tuple[str, str], list[SliceView]] = {}
    later: list[SliceView] = []
    for sv in candidates:
        if slice_unseen(sv, partitionable, compat_groups):
            continue
        if slice_reaches(sv, node):
            if sv.has_binding_conditions:
                later.append(sv)
            else:
                _add(pools, sv)
    for sv in later:
        _add(pools, sv)

    result: list[Pool] = []
    for pool_id, slices in pools.items():
        pool = Pool(driver=pool_id[0], name=pool_id[1])
        expected = slices[0].slice_count
        other: list[SliceView] = []
        other_counters: list[SliceView] = []
        if len(slices) != expected:
            everything = all_slices_of_pool.get(pool_id, [])
            if not compat_groups:  # ignored entirely: not even counted here
                everything = [s for s in everything if not s.has_compat_groups]
            generation = slices[0].generation
            if any(s.generation > generation for s in everything):
                continue  # obsolete: the driver is replacing this generation
            same = [s for s in everything if s.generation == generation]
            if len(same) != expected:
                pool.incomplete = True
                result.append(pool)
                continue
            if partitionable:  # upstream buildPool: the slices that do not target the node
                names = {s.name for s in slices}
                other = [s for s in same if s.name not in names and not s.shared_counter_names]
                other_counters = [s for s in same if s.name not in names and s.shared_counter_names]
        if partitionable:
            device_slices = [s for s in slices if not s.shared_counter_names]
            counter_slices = sorted((s for s in slices if s.shared_counter_names), key=_BY_NAME) + other_counters
        else:
            device_slices, counter_slices = list(slices), []
        result.append(_validate(pool, device_slices, counter_slices, other, partitionable))
    result.sort(key=pool_order)
    return result


def whole_pool(slices: list[SliceView], *, partitionable: bool, compat_groups: bool) -> Pool | None:
    """The allocator's verdict on one pool as a whole (``kubectl dra usage`` judges pools, not
    nodes): :func:`gather_pools` for a node that every slice of the pool reaches, so the
    incomplete / obsolete / invalid rules are the allocator's own. ``slices`` are all slices
    of one pool, in state order; None when the allocator sees none of them (with
    DRAPartitionableDevices off, a pool of counter or per-device-selection slices only; with
    DRADeviceCompatibilityGroups off, one of slices using compatibility groups only)."""
    # the node the first named slice targets; slices that miss it are re-aimed at all nodes
    probe = {"metadata": {"name": next((sv.node_name for sv in slices if sv.node_name), "")}}
    everywhere = [sv if slice_reaches(sv, probe)
                  else replace(sv, node_name="", all_nodes=True, node_selector=None) for sv in slices]
    by_pool = {sv.pool_id: everywhere for sv in everywhere[:1]}
    pools = gather_pools(everywhere, by_pool, probe, partitionable=partitionable, compat_groups=compat_groups)
    return pools[0] if pools else None
