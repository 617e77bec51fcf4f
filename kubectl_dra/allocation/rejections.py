"""The words of every rejection the allocator hands its tracer: one function per reason.

The search decides; these functions only say why, as a :class:`Rejection` (a sentence with
the numbers in it, and the same facts as details for explain's reasons and JSON). Keeping
the wording here gives each reason one spelling wherever the search meets it (the search
step, the checks before it, the pruning for "all devices" requests).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..gates import Gate
from ..model.attributes import AttrValue
from .constraints import Constraint, MatchAttribute, describe_value
from .pools import Pool
from .trace import Rejection, RejectionCode as RC

if TYPE_CHECKING:
    from ..model.devices import SliceView
    from .capacity import CapacityShortfall


def held_by_claim(holder: str) -> Rejection:
    """The device is allocated to an existing claim."""
    return Rejection(RC.IN_USE, f"device is already allocated to claim {holder}", {"claim": holder})


def held_by_same_claim(claim: str) -> Rejection:
    """Another request of the claim being allocated took the device (admin access)."""
    return Rejection(RC.IN_USE, "device is already allocated to another request of this claim", {"claim": claim})


def being_allocated(holders: str) -> Rejection:
    """A claim of this attempt took the device earlier in the search."""
    return Rejection(RC.IN_USE, f"device is being allocated to claim {holders} in this attempt", {"claim": holders})


def needed_later(claim: str, request: str) -> Rejection:
    """A later "all devices" request needs the device for itself."""
    return Rejection(RC.IN_USE, f"request {request} of claim {claim} asks for all devices, this one included",
                     {"claim": claim, "request": request})


def counters_gate_off() -> Rejection:
    """The device consumes shared counters, which only DRAPartitionableDevices understands."""
    return Rejection(RC.GATE_DISABLED, "the device consumes shared counters, but DRAPartitionableDevices is disabled",
                     {"gate": Gate.PARTITIONABLE_DEVICES.value})


def binding_conditions_gate_off() -> Rejection:
    """The device has binding conditions, which only DRADeviceBindingConditions understands."""
    return Rejection(RC.GATE_DISABLED, "the device has binding conditions, but DRADeviceBindingConditions is disabled",
                     {"gate": Gate.DEVICE_BINDING_CONDITIONS.value})


def node_operations_gate_off() -> Rejection:
    """The device's slice skips node operations, which only DRAOptionalNodeOperations understands."""
    return Rejection(RC.GATE_DISABLED, "the device's slice skips node operations, but DRAOptionalNodeOperations is "
                     "disabled", {"gate": Gate.OPTIONAL_NODE_OPERATIONS.value})


def node_operations_undeclared() -> Rejection:
    """The device's slice skips node operations and the node does not declare that it can."""
    return Rejection(RC.NODE_MISMATCH, "the device's slice skips node operations, but the node does not declare "
                     "DRAOptionalNodeOperations", {"feature": Gate.OPTIONAL_NODE_OPERATIONS.value})


def class_selector_false(class_name: str, index: int, expression: str) -> Rejection:
    """A selector of the request's DeviceClass is false (the first one: not a device of the class)."""
    return Rejection(RC.NOT_IN_CLASS if index == 0 else RC.CLASS_SELECTOR_FALSE,
                     f"selector #{index} of device class {class_name} is false for this device",
                     {"class": class_name, "index": index, "expression": expression})


def request_selector_false(request: str, index: int, expression: str) -> Rejection:
    """A selector of the request itself is false."""
    return Rejection(RC.REQUEST_SELECTOR_FALSE, f"selector #{index} of request {request} is false for this device",
                     {"request": request, "index": index, "expression": expression})


def unreachable() -> Rejection:
    """Per-device node selection does not reach the node."""
    return Rejection(RC.NODE_MISMATCH, "the device is not reachable from this node", {})


def taint_not_tolerated(taint: Mapping[str, Any]) -> Rejection:
    """A NoSchedule/NoExecute taint of the device that no toleration of the request covers."""
    return Rejection(RC.TAINT_NOT_TOLERATED, f"the device has the taint {taint.get('key')}={taint.get('value', '')}:"
                     f"{taint.get('effect')}, which the request does not tolerate", {"taint": dict(taint)})


def counters_exhausted(counter_set: str, counter: str, needed: str, left: str) -> Rejection:
    """A shared counter has less left than the device consumes."""
    return Rejection(RC.COUNTERS_EXHAUSTED, f"counter {counter} of counter set {counter_set} has {left} left, the "
                     f"device needs {needed}", {"counterSet": counter_set, "counter": counter, "needed": needed,
                                                "left": left})


def compatibility_conflict(counter_set: str, groups: frozenset[str] | None, first: str,
                           existing: frozenset[str] | None) -> Rejection:
    """The device's compatibility groups share none with those of the devices already on the
    counter set (``existing`` None: those devices declare no groups)."""
    mine = sorted(groups or [])
    theirs = sorted(existing) if existing is not None else []
    return Rejection(RC.COMPATIBILITY_CONFLICT,
                     f"on counter set {counter_set} the device's compatibility groups ({', '.join(mine) or 'none'}) "
                     f"are not compatible with those of {first} and the devices sharing it "
                     f"({'none' if existing is None else ', '.join(theirs)})",
                     {"with": first, "counterSet": counter_set, "groups": mine, "existing": theirs})


def capacity_short(short: "CapacityShortfall") -> Rejection:
    """The request does not fit the device's remaining consumable capacity (or its policy)."""
    if short.missing:
        message = f"the device has no capacity {short.capacity}"
    elif short.policy:
        message = f"the request policy of capacity {short.capacity} does not allow {short.needed}"
    else:
        message = f"capacity {short.capacity} has {short.left} left, the request needs {short.needed}"
    return Rejection(RC.CAPACITY_SHORT, message, {
        "capacity": short.capacity, "needed": str(short.needed), "left": str(short.left),
        "requested": None if short.requested is None else str(short.requested)})


def constraint_mismatch(constraint: Constraint, value: AttrValue | None) -> Rejection:
    """The device's value of the constrained attribute (None: it has none) breaks a
    matchAttribute/distinctAttribute constraint."""
    attribute = constraint.attribute
    if value is None:
        shown = None
        message = f"the device has no attribute {attribute}, which constraint {constraint.kind} needs"
    else:
        shown = describe_value(value[1] if value[0] else value[1][0])
        message = f"attribute {attribute} is {shown!r}, which violates the claim's {constraint.kind} constraint"
    expected = describe_value(getattr(constraint, "current", None)) if isinstance(constraint, MatchAttribute) \
        else "distinct"
    return Rejection(RC.CONSTRAINT_MISMATCH, message, {"attribute": attribute, "value": shown, "expected": expected,
                                                       "constraint": constraint.kind})


def slice_hidden_by_gate(sv: "SliceView") -> Rejection:
    """A slice that pool gathering skips because it uses compatibility groups while
    DRADeviceCompatibilityGroups is off (the pool is what its other slices make of it)."""
    gate = Gate.DEVICE_COMPATIBILITY_GROUPS.value
    return Rejection(RC.GATE_DISABLED, f"slice {sv.name} uses device compatibility groups, so the allocator ignores it "
                     f"with {gate} off", {"gate": gate, "slice": sv.name})


def pool_skipped(pool: Pool) -> Rejection:
    """Why a pool is not searched at all: incomplete (being updated) or invalid."""
    if pool.incomplete:
        return Rejection(RC.POOL_INCOMPLETE, f"resource pool {pool.uid} is incomplete (being updated)", {})
    return Rejection(RC.POOL_INVALID, f"resource pool {pool.uid} is invalid: {pool.invalid_reason}",
                     {"reason": pool.invalid_reason})
