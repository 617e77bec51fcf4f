"""Pruning the search for "all devices" requests (ours: upstream searches these branches
exhaustively, which in Go is quick and here can take the whole filter timeout).

A mixin of :class:`~kubectl_dra.allocation.search.Search`: its methods read the search's
prepared requests, constraints and pools, and fill ``needed_later``, which the device loop
consults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DraError
from ..model.devices import DeviceView
from . import capacity as cap
from . import rejections as why
from .gated import counters_unusable, shareable
from .taints import untolerated_taint
from .trace import Rejection

if TYPE_CHECKING:
    from .preparation import RequestData
    from .search import Search


class AllDevicesPruning:
    """Branches that a later "all devices" request is bound to fail, cut before they are searched."""

    __slots__ = ()

    def _plan_all_requests(self: "Search") -> bool:
        """Prune branches that a later "all devices" request is bound to fail; False when
        such a request has no device at all, so that no search can succeed.

        Upstream searches these branches exhaustively (allocateOne fails only when it
        reaches the request); in Go that is quick, here it can take the whole filter
        timeout. The pruning changes neither the answer nor the first solution found,
        because it only applies when no error can occur on the way (every selector,
        capacity check and constrained attribute evaluates; no derived attribute is
        involved; no constraint applies to an "all devices" request):
        then a branch that gives a later top-level request's device to an earlier request
        ends with that request unsatisfied, whatever else is tried in it.
        """
        if not self.all_mode:
            return True
        order = sorted(self.requests)
        targets = [k for k in order if self.requests[k].all_mode and self.requests[k].parent is None
                   and not self.requests[k].admin and k != order[0]]
        if not targets or not self._search_cannot_fail_with_error():
            return True
        for key in targets:
            rd = self.requests[key]
            if not rd.all_devices:
                if self.tracer is not None:
                    self.tracer.request_unsatisfied(self.claims[key[0]], rd.full_name, "no device matches the request")
                return False
            for _, device in rd.all_devices:
                rejection = self._never_available(rd, device)
                if rejection is not None:
                    if self.tracer is not None:
                        claim = self.claims[key[0]]
                        self.tracer.device_rejected(claim, rd.full_name, device.slice.driver, device.slice.pool,
                                                    device.name, rejection)
                        self.tracer.request_unsatisfied(claim, rd.full_name, f"device {device.uid} is one of all "
                                                        f"devices the request needs and cannot be allocated")
                    return False
        for key in order:
            needed: dict[tuple[str, str, str], "RequestData"] = {}
            for target in targets:
                if target[:2] > key[:2]:
                    rd = self.requests[target]
                    for _, device in rd.all_devices:
                        if not shareable(device, self.f):
                            needed.setdefault(device.id, rd)
            if needed:
                self.needed_later[key[:2]] = needed
        return True

    def _never_available(self: "Search", rd: "RequestData", device: DeviceView) -> Rejection | None:
        """Why ``rd`` cannot take ``device`` whatever the search does, if it cannot: another
        claim holds it, it consumes counters without DRAPartitionableDevices, its slice skips
        node operations that this node or the gates do not allow, or it has a taint the
        request does not tolerate (the static checks of _allocate_device)."""
        holder = self.in_use.dedicated.get(device.id)
        if holder is not None:
            return why.held_by_claim(holder)
        if counters_unusable(device, self.f):
            return why.counters_gate_off()
        if device.slice.skip_node_operations:
            refused = self._node_operations_refused(device)
            if refused is not None:
                return refused
        taint = untolerated_taint(device, rd.tolerations) if self.f.device_taints and device.taints else None
        if taint is not None:
            return why.taint_not_tolerated(taint)
        return None

    def _search_cannot_fail_with_error(self: "Search") -> bool:
        """Whether the search can only end in a solution or "unschedulable": every
        selector evaluates on every device (answers are remembered for the search), and
        nothing that can raise while searching is involved."""
        if any(rd.derived for rd in self.requests.values()):
            return False
        applying = {key: [c for c in self.constraints[key[0]] if c.applies(rd.name, rd.parent)]
                    for key, rd in self.requests.items()}
        if any(rd.all_mode and applying[key] for key, rd in self.requests.items()):
            return False  # a constraint that an "all devices" request breaks is an error
        tracer, self.tracer = self.tracer, None  # the search itself tells the tracer why
        try:
            for key, rd in self.requests.items():
                for pool in self.pools:
                    if pool.incomplete or pool.invalid:
                        continue
                    for device in pool.devices:
                        self.tick()
                        self._selectable(rd, pool, device)
                        if self.f.consumable_capacity:
                            # raises for unusable amounts
                            cap.check_capacity(rd.capacity, device, None, None,
                                               fractional=self.f.fractional_capacity_range)
                        for c in applying[key]:
                            self._lookup(rd, device, c.attribute)  # raises for unusable attribute values
        except DraError:
            return False
        finally:
            self.tracer = tracer
        return True
