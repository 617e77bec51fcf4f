"""Devices already allocated by claims in the cluster (upstream ``GatherAllocatedState``).

A result with adminAccess does not make a device unavailable. A result with a shareID
is one share of a multi-allocatable device: it consumes capacity but leaves the device
shareable. Any other result allocates the device exclusively.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..model.names import qualify
from ..quantity import Quantity
from ..types import ClaimKey, DeviceID, claim_key

if TYPE_CHECKING:
    from ..model.devices import DeviceView
    from .pools import Pool

__all__ = ["ClaimKey", "DeviceID", "InUse", "claim_key", "gather_in_use"]



@dataclass
class InUse:
    """Exclusive allocations, shares with their consumed capacity, and who holds them."""

    #: device -> "namespace/name" of the claim holding it exclusively
    dedicated: dict[DeviceID, str] = field(default_factory=dict)
    #: device -> fully-qualified capacity name -> consumed by all existing shares
    shared_capacity: dict[DeviceID, dict[str, Quantity]] = field(default_factory=dict)
    #: device -> claims holding a share
    shared_by: dict[DeviceID, list[str]] = field(default_factory=dict)
    #: every device allocated at all, exclusively or shared (see allocated)
    held: set[DeviceID] = field(default_factory=set)
    #: caches that depend on these allocations: available counters and compatibility
    #: baselines per (slice index serial, pool)
    counters: dict[Any, Any] = field(default_factory=dict)
    compat: dict[Any, Any] = field(default_factory=dict)
    #: device -> explain's "already allocated to claim ..." rejection (made once)
    rejections: dict[DeviceID, Any] = field(default_factory=dict)
    #: pool view -> positions in its devices that no allocated claim holds exclusively
    #: (see unheld_positions; dropped whenever ``dedicated`` grows)
    unheld: dict[Any, tuple[int, ...]] = field(default_factory=dict)

    def allocated(self, device: DeviceID) -> bool:
        """Allocated at all (exclusively or shared): its counters are consumed."""
        return device in self.held

    def allocated_among(self, devices: Iterable["DeviceView"]) -> list["DeviceView"]:
        """Those of ``devices`` that are allocated at all, in order (one call for a slice's
        devices instead of one per device)."""
        held = self.held
        return [d for d in devices if d.id in held]

    def add_allocation(self, who: str, allocation: Mapping[str, Any], consumable_capacity: bool = True) -> list[DeviceID]:
        """Mark the devices of one more allocated claim (``who`` = "namespace/name") as in use;
        returns those that were not in use before (in result order).

        Callers that add to an InUse the allocator has already searched with must then tell
        :meth:`Allocator.note_allocated` about the returned devices, pool by pool.
        """
        fresh: list[DeviceID] = []
        for result in (allocation.get("devices") or {}).get("results") or ():
            if result.get("adminAccess"):
                continue
            driver = result.get("driver") or ""
            device = (driver, result.get("pool") or "", result.get("device") or "")
            if device not in self.held:
                self.held.add(device)
                fresh.append(device)
            if consumable_capacity and result.get("shareID"):
                self.shared_by.setdefault(device, []).append(who)
                consumed = self.shared_capacity.setdefault(device, {})
                for name, value in (result.get("consumedCapacity") or {}).items():
                    q = Quantity.from_json(value)
                    fq = qualify(name, driver)
                    consumed[fq] = consumed[fq] + q if fq in consumed else q
            elif device not in self.dedicated:
                self.dedicated[device] = who
                if self.unheld:
                    self.unheld.clear()
        return fresh

    def unheld_positions(self, pool: "Pool", start: int = 0) -> Sequence[int]:
        """Positions (from ``start`` on) in ``pool.devices`` of the devices that no allocated
        claim holds exclusively: the only ones a request without admin access can take, so
        the search need not look at the others. Remembered per pool view."""
        found = self.unheld.get(pool)
        if found is None:
            dedicated = self.dedicated
            found = self.unheld[pool] = tuple([i for i, d in enumerate(pool.devices) if d.id not in dedicated])
        return found[bisect_left(found, start):] if start else found

    def copy(self) -> "InUse":
        """The allocations alone (no caches): an overlay to add allocations to."""
        return InUse(dedicated=dict(self.dedicated),
                     shared_capacity={d: dict(c) for d, c in self.shared_capacity.items()},
                     shared_by={d: list(w) for d, w in self.shared_by.items()}, held=set(self.held))


def gather_in_use(claims: Iterable[Mapping[str, Any]], exclude: frozenset[tuple[str, str]] = frozenset(),
                  consumable_capacity: bool = True) -> InUse:
    """In-use devices from every allocated claim except those in ``exclude``.

    Without DRAConsumableCapacity a share is not understood: the device counts as
    allocated exclusively, as the scheduler then treats it.
    """
    state = InUse()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            continue
        key = claim_key(claim)
        if key in exclude:
            continue
        state.add_allocation(f"{key[0]}/{key[1]}", allocation, consumable_capacity)
    return state
