"""What the allocator cannot use, or uses differently, while a feature gate is off: one home
for these conditions, read by the search's checks, its pruning, pool gathering and the notes
``kubectl dra usage`` writes about such devices."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.devices import DeviceView, SliceView
    from .allocator import Features


def slice_unseen(sv: "SliceView", partitionable: bool) -> bool:
    """A slice the allocator does not gather at all with DRAPartitionableDevices off: one
    with shared counters or per-device node selection."""
    return not partitionable and (sv.per_device_node_selection or bool(sv.shared_counter_names))


def counters_unusable(device: "DeviceView", f: "Features") -> bool:
    """A device consuming shared counters with DRAPartitionableDevices off (allocateDevice
    refuses it)."""
    return bool(device.consumes) and not f.partitionable


def binding_conditions_unusable(device: "DeviceView", f: "Features") -> bool:
    """A device with binding conditions while DRADeviceBindingConditions (or the device status
    it needs) is off (isSelectable refuses it)."""
    return bool(device.binding_conditions) and not f.binding_conditions


def node_operations_unusable(sv: "SliceView", f: "Features") -> bool:
    """A device of a slice that skips node operations with DRAOptionalNodeOperations off
    (allocateDevice refuses it; matching still sees it, so a request for all devices counts
    it and selectors are evaluated on it)."""
    return bool(sv.skip_node_operations) and not f.optional_node_operations


def shareable(device: "DeviceView", f: "Features") -> bool:
    """Whether the allocator hands out shares of the device: it allows multiple allocations
    and DRAConsumableCapacity is on (with the gate off it is allocated whole)."""
    return f.consumable_capacity and device.allow_multiple
