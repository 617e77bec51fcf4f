"""What the allocator cannot use, or uses differently, while a feature gate is off: one home
for these conditions, read by the search's checks, its pruning, pool gathering and the notes
``kubectl dra usage`` writes about such devices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..gates import Gate

if TYPE_CHECKING:
    from ..model.devices import DeviceView, SliceView
    from .allocator import Features


def slice_unseen(sv: "SliceView", partitionable: bool, compat_groups: bool) -> bool:
    """A slice that pool gathering (upstream GatherPools) skips as if it did not exist: with
    DRAPartitionableDevices off, one with shared counters or per-device node selection; with
    DRADeviceCompatibilityGroups off, one whose devices use compatibility groups. Its pool is
    whatever the pool's other slices make of it (possibly nothing). A slice using
    compatibility groups is not counted either when the pool's slices are (incomplete and
    obsolete checks); one skipped for DRAPartitionableDevices is."""
    return bool(gate_hiding_slice(sv, partitionable, compat_groups))


def gate_hiding_slice(sv: "SliceView", partitionable: bool, compat_groups: bool) -> str:
    """The disabled gate for which pool gathering skips the slice ("" when it does not; see
    :func:`slice_unseen`)."""
    if not partitionable and (sv.per_device_node_selection or bool(sv.shared_counter_names)):
        return Gate.PARTITIONABLE_DEVICES.value
    if not compat_groups and sv.has_compat_groups:
        return Gate.DEVICE_COMPATIBILITY_GROUPS.value
    return ""


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
