"""Which devices could be allocated now: what ``kubectl dra usage`` calls FREE.

A device is free when a request for one device of a class that selects it, without admin
access, tolerations or capacity asked, could get it now on a node it reaches. The checks are
the allocator's own, in the order its search applies them (:mod:`.search`): the pool
verdict (:func:`.pools.whole_pool`: incomplete or invalid pools are skipped), exclusive
allocations (:mod:`.inuse`), gated devices (:mod:`.gated`), skipNodeOperations on a node
that does not declare it, consumable capacity left for one more share (:mod:`.capacity`),
shared counters and compatibility groups (:class:`.counters.CounterLedger`) and untolerated
taints (:mod:`.taints`). Class selectors are the caller's: usage counts every device it
publishes and asks, per device, why it is not free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..gates import Gate
from ..model.devices import DeviceView, SliceView
from . import capacity as cap
from .counters import CounterLedger, GroupConflict
from .gated import binding_conditions_unusable, counters_unusable, node_operations_unusable, shareable, slice_unseen
from .inuse import InUse
from .pools import Pool, whole_pool
from .taints import untolerated_taint

if TYPE_CHECKING:
    from .allocator import Features

#: why a device is not free (the keys of usage's ``unavailable`` counts)
ALLOCATED = "allocated"
POOL_SKIPPED = "poolSkipped"
GATED = "featureGateOff"
NODE_UNDECLARED = "nodeOperationsUndeclared"
CAPACITY = "capacityUsedUp"
COUNTERS = "countersExhausted"
COMPATIBILITY = "compatibilityConflict"
TAINTED = "tainted"

REASONS = (ALLOCATED, POOL_SKIPPED, GATED, NODE_UNDECLARED, CAPACITY, COUNTERS, COMPATIBILITY, TAINTED)

#: how a reason reads in a table or warning
WORDS = {
    ALLOCATED: "allocated", POOL_SKIPPED: "in a pool the allocator skips", GATED: "unusable with a feature gate off",
    NODE_UNDECLARED: "on a node that does not declare DRAOptionalNodeOperations", CAPACITY: "capacity used up",
    COUNTERS: "shared counters exhausted", COMPATIBILITY: "compatibility group conflicts",
    TAINTED: "tainted (NoSchedule/NoExecute)",
}


def device_reason(pool: Pool, device: DeviceView, in_use: InUse, features: "Features", ledger: CounterLedger,
                  node_declares: bool = True) -> str | None:
    """Why a one-device request could not take ``device`` of ``pool`` now (see the module);
    None when it could: the device is free.

    ``ledger`` is a ledger over ``in_use`` holding no reservation (it is left so);
    ``node_declares`` whether the node the device is on declares optional node operations."""
    did = device.id
    if pool.incomplete or pool.invalid:
        return POOL_SKIPPED
    if did in in_use.dedicated:
        return ALLOCATED
    if binding_conditions_unusable(device, features) or node_operations_unusable(device.slice, features) \
            or counters_unusable(device, features):
        return GATED
    if device.slice.skip_node_operations and not node_declares:
        return NODE_UNDECLARED
    if features.consumable_capacity:
        consumed = in_use.shared_capacity.get(did)
        if not cap.nothing_to_check(None, device, consumed, None):
            amounts, _ = cap.check_capacity(None, device, consumed, None, fractional=features.fractional_capacity_range)
            if amounts is None:
                return CAPACITY
    if device.consumes:
        if not (shareable(device, features) and did in in_use.shared_by):  # a shared device pays its counters once
            if ledger.take(pool, device) is not None:
                return COUNTERS
            ledger.give_back(pool, device)
        if features.compatibility_groups:
            joined = ledger.join_groups(pool, device)
            if isinstance(joined, GroupConflict):
                return COMPATIBILITY
            joined()
    if features.device_taints and device.taints and untolerated_taint(device, []) is not None:
        return TAINTED
    return None


def _alike(device: DeviceView, declared: bool) -> tuple[Any, ...] | None:
    """What :func:`device_reason` reads of a device besides its identity, as a key: devices of
    one pool with the same key get the same answer (with nothing reserved, the counters'
    answer depends on the consumption alone). None for devices whose answer is their own:
    shared ones (their shares), those with request policies or taints."""
    if device.allow_multiple or device.has_policies or device.taints:
        return None
    return (tuple((cc.counter_set, tuple(cc.values.items()), cc.groups) for cc in device.consumes),
            bool(device.binding_conditions), bool(device.slice.skip_node_operations), declared)


def pool_reasons(slices: list[SliceView], in_use: InUse, features: "Features",
                 declares: Mapping[str, bool] | None = None, serial: int = 0,
                 judged: tuple[Pool | None] | None = None) -> dict[str, str]:
    """Device name -> why it is not free, for every device of one pool that is not (all the
    pool's slices, any generation, in state order; a device absent from the answer is free).

    The pool is judged as a whole (:func:`.pools.whole_pool`; ``judged`` holds that verdict
    when the caller has it already); a device the allocator never gathers (a slice unseen
    with a gate off) is GATED. ``declares`` maps node names to whether the Node declares
    optional node operations (a node not in it does not)."""
    if judged is None:
        judged = (whole_pool(slices, partitionable=features.partitionable,
                             compat_groups=features.compatibility_groups),)
    pool = judged[0]
    out: dict[str, str] = {}
    newest = max((sv.generation for sv in slices), default=0)
    current = [sv for sv in slices if sv.generation == newest]
    if pool is None or not pool.devices and (pool.incomplete or pool.invalid):
        reason = GATED if pool is None else POOL_SKIPPED
        return {d.name: reason for sv in current for d in sv.devices}
    ledger = CounterLedger(in_use, serial)
    for sv in current:
        if slice_unseen(sv, features.partitionable, features.compatibility_groups):
            out.update((d.name, GATED) for d in sv.devices)
    dedicated = in_use.dedicated
    #: answers of devices alike (see _alike): a pool's identical partitions are judged once
    known: dict[tuple[Any, ...], str | None] = {}
    for d in pool.devices:
        if d.id in dedicated:  # (the common case of a busy pool, without a call)
            out[d.name] = ALLOCATED
            continue
        declared = _declares(declares, d.node_name or d.slice.node_name) if d.slice.skip_node_operations else True
        key = _alike(d, declared)
        if key is not None and key in known:
            why = known[key]
        else:
            why = device_reason(pool, d, in_use, features, ledger, declared)
            if key is not None:
                known[key] = why
        if why is not None:
            out[d.name] = why
    return out


def _declares(declares: Mapping[str, bool] | None, node: str) -> bool:
    """Whether ``node`` (or, for a device of no one node, any node) declares optional node operations."""
    if declares is None:
        return False
    if node:
        return declares.get(node, False)
    return any(declares.values())


def node_declarations(nodes: Iterable[Mapping[str, Any]]) -> dict[str, bool]:
    """Node name -> whether it declares DRAOptionalNodeOperations in status.declaredFeatures."""
    return {str((n.get("metadata") or {}).get("name") or ""):
            Gate.OPTIONAL_NODE_OPERATIONS.value in ((n.get("status") or {}).get("declaredFeatures") or ())
            for n in nodes}
