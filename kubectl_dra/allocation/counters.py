"""Shared counters and compatibility groups of partitionable devices (upstream
``checkAvailableCounters`` and the compatibility-group check of allocateDevice).

A pool's counter sets are charged for every allocated device that consumes them; what is
left is cached on the :class:`InUse` the search runs against (per slice index and pool).
One search's own reservations live in a :class:`CounterLedger`, undone as the search
backtracks. Amounts are exact integers in 1n units; availability may go negative (an
over-committed pool), which leaves nothing for anybody, as upstream treats it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Callable, Mapping

from ..model.devices import DeviceView
from ..quantity import Quantity
from .inuse import InUse
from .pools import Pool

#: counter set -> counter -> amount in 1n units
CounterSets = dict[str, dict[str, int]]
#: per counter set, the compatibility-group intersection of the devices on it: (any device
#: there, all of them without groups, the intersection, the first device there)
GroupState = tuple[bool, bool, frozenset[str], str]
_NO_GROUPS: GroupState = (False, False, frozenset(), "")
#: a counter set of which the current search consumes nothing
_NOTHING_USED: Mapping[str, int] = MappingProxyType({})


def charge(available: CounterSets, device: DeviceView) -> None:
    """Subtract what an allocated device consumes from a pool's available counters."""
    for cc in device.consumes:
        per_set = available.get(cc.counter_set)
        if per_set is None:
            continue
        for name, v in cc.values.items():
            if name in per_set:
                per_set[name] -= v


def available_counters(pool: Pool, in_use: InUse, serial: int) -> CounterSets:
    """The pool's counters minus what allocated devices consume, remembered on ``in_use``
    (``serial`` tells one slice index's pool views from another's)."""
    key = (serial, pool.id)
    found: CounterSets | None = in_use.counters.get(key)
    if found is None:
        found = {name: dict(totals) for name, totals in pool.counter_totals().items()}
        for sv in pool.slices + pool.other_slices:
            for d in in_use.allocated_among(sv.devices):
                if d.consumes:
                    charge(found, d)
        in_use.counters[key] = found
    return found


def group_baseline(pool: Pool, in_use: InUse, serial: int) -> dict[str, GroupState]:
    """Per counter set, the compatibility groups of the devices allocated claims hold there."""
    key = (serial, pool.id)
    found: dict[str, GroupState] | None = in_use.compat.get(key)
    if found is None:
        found = {}
        for sv in pool.slices + pool.other_slices:
            for d in in_use.allocated_among(sv.devices):
                for cc in d.consumes:
                    has, empty, groups, first = found.get(cc.counter_set, _NO_GROUPS)
                    if not has:
                        found[cc.counter_set] = (True, cc.groups is None, cc.groups or frozenset(), d.uid)
                    elif not empty and cc.groups is not None:
                        found[cc.counter_set] = (True, False, groups & cc.groups, first)
        in_use.compat[key] = found
    return found


def note_allocated(in_use: InUse, serial: int, pool: Pool, names: list[str]) -> None:
    """Keep ``in_use``'s caches of ``pool`` true after its devices ``names`` became allocated
    there (:meth:`InUse.add_allocation` says which): the available counters are charged for
    them, the group baseline is rebuilt on next use."""
    key = (serial, pool.id)
    in_use.compat.pop(key, None)
    found = in_use.counters.get(key)
    if found is None:
        return
    for name in names:
        device = pool.device_named(name)
        if device is None:  # not a device of this pool view: rebuild on next use
            in_use.counters.pop(key, None)
            return
        if device.consumes:
            charge(found, device)


@dataclass(frozen=True)
class Shortage:
    """The first counter a device would overdraw: what it needs and what was left, in 1n
    units and in the counter's quantity format."""

    counter_set: str
    counter: str
    need: int
    remaining: int
    format: str = "DecimalSI"

    @property
    def needed(self) -> str:
        """What the device needs, as a canonical quantity."""
        return _quantity(self.need, self.format)

    @property
    def left(self) -> str:
        """What was left before the device, as a canonical quantity."""
        return _quantity(self.remaining, self.format)


@dataclass(frozen=True)
class GroupConflict:
    """The device's compatibility groups share none with those already on a counter set
    (``existing`` None: the devices there declare no groups)."""

    counter_set: str
    groups: frozenset[str] | None
    first: str
    existing: frozenset[str] | None


class CounterLedger:
    """What one search has taken of each pool's counters and compatibility groups."""

    __slots__ = ("in_use", "serial", "consumed", "groups")

    def __init__(self, in_use: InUse, serial: int) -> None:
        self.in_use = in_use
        self.serial = serial
        #: pool id -> counter set -> counter -> consumed by the search so far
        self.consumed: dict[tuple[str, str], CounterSets] = {}
        #: pool id -> counter set -> the group intersection with the search's devices
        self.groups: dict[tuple[str, str], dict[str, GroupState]] = {}

    def take(self, pool: Pool, device: DeviceView) -> Shortage | None:
        """Reserve the device's counters; the first counter of the pool that is then
        overdrawn (and nothing reserved) if any, as upstream checks every counter of the pool."""
        available = available_counters(pool, self.in_use, self.serial)
        consumed = self.consumed.get(pool.id)
        if consumed is None:
            consumed = self.consumed[pool.id] = {}
        for cc in device.consumes:
            per_set = consumed.get(cc.counter_set)
            if per_set is None:
                per_set = consumed[cc.counter_set] = {}
            for name, v in cc.values.items():
                per_set[name] = per_set.get(name, 0) + v
        for set_name, counters in available.items():
            used = consumed.get(set_name, _NOTHING_USED)
            for name, left in counters.items():
                if left < used.get(name, 0):
                    shortage = _shortage(pool, device, set_name, name, left, used.get(name, 0))
                    self.give_back(pool, device)
                    return shortage
        return None

    def give_back(self, pool: Pool, device: DeviceView) -> None:
        """Release what :meth:`take` reserved for the device."""
        consumed = self.consumed.get(pool.id, {})
        for cc in device.consumes:
            per_set = consumed.get(cc.counter_set, {})
            for name, v in cc.values.items():
                per_set[name] = per_set.get(name, 0) - v

    def join_groups(self, pool: Pool, device: DeviceView) -> Callable[[], None] | GroupConflict:
        """Fold the device's compatibility groups into each of its counter sets' intersection:
        the function that undoes it, or the conflict (and nothing changed)."""
        running = self.groups.setdefault(pool.id, {})
        baseline = group_baseline(pool, self.in_use, self.serial)
        saved: list[tuple[str, GroupState | None]] = []

        def undo() -> None:
            for set_name, prev in reversed(saved):
                if prev is None:
                    running.pop(set_name, None)
                else:
                    running[set_name] = prev

        for cc in device.consumes:
            state = running.get(cc.counter_set)
            if state is None:
                state = baseline.get(cc.counter_set, _NO_GROUPS)
            has_members, all_empty, groups, first = state
            mine = cc.groups
            if has_members:
                admitted = all_empty if mine is None else (not all_empty and bool(groups & mine))
                if not admitted:
                    undo()
                    return GroupConflict(cc.counter_set, mine, first, None if all_empty else groups)
                new = state if (all_empty or mine is None) else (True, False, groups & mine, first)
            else:
                new = (True, mine is None, mine or frozenset(), device.uid)
            saved.append((cc.counter_set, running.get(cc.counter_set)))
            running[cc.counter_set] = new
        return undo


def _shortage(pool: Pool, device: DeviceView, set_name: str, name: str, left: int, used: int) -> Shortage:
    """How much of counter ``name`` the device needs and how much was left before it."""
    need = sum(v for cc in device.consumes if cc.counter_set == set_name for n, v in cc.values.items() if n == name)
    total = pool.counter_sets.get(set_name, {}).get(name)
    return Shortage(set_name, name, need, left - (used - need), total.format if total is not None else "DecimalSI")


def _quantity(value: int, fmt: str = "DecimalSI") -> str:
    """An amount in 1n units as a canonical quantity string in the counter's format."""
    return str(Quantity.from_fraction(Fraction(value, 1_000_000_000), fmt))
