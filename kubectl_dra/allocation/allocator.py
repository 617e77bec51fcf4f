"""Entry point: index the cluster once, then allocate claims for any node."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from ..model.devices import SliceView, cached_slice_view, nanos
from ..model.nodes import node_matches, node_name
from .celcache import CelCache
from .inuse import InUse, claim_key, gather_in_use
from .outcome import AllocationOutcome
from .pools import GATED_POOL_FEATURES, Pool, gather_pools, pool_order
from .results import build_results, score_of
from .search import Search
from .trace import Rejection, RejectionCode, Tracer

if TYPE_CHECKING:
    from ..gates import FeatureGates
    from ..state import ClusterState


@dataclass(frozen=True)
class Features:
    """The allocator's view of the feature gates (upstream ``structured.Features``)."""

    admin_access: bool
    prioritized_list: bool
    partitionable: bool
    device_taints: bool
    binding_conditions: bool
    consumable_capacity: bool
    list_type_attributes: bool
    derived_attributes: bool
    compatibility_groups: bool
    optional_node_operations: bool

    @classmethod
    def from_gates(cls, gates: "FeatureGates") -> "Features":
        on = gates.enabled
        return cls(
            admin_access=on("DRAAdminAccess"),
            prioritized_list=on("DRAPrioritizedList"),
            partitionable=on("DRAPartitionableDevices"),
            device_taints=on("DRADeviceTaints"),
            binding_conditions=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
            consumable_capacity=on("DRAConsumableCapacity"),
            list_type_attributes=on("DRAListTypeAttributes"),
            derived_attributes=on("DRADerivedAttributes"),
            compatibility_groups=on("DRADeviceCompatibilityGroups"),
            optional_node_operations=on("DRAOptionalNodeOperations"),
        )


def _may_reach(sv: SliceView, node: Mapping[str, Any]) -> bool:
    """Whether a device slice without nodeName offers devices to the node."""
    if sv.all_nodes or sv.node_selector is not None:
        return node_matches(node, "", sv.all_nodes, sv.node_selector)
    if sv.per_device_node_selection:
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in sv.devices)
    return False


class SliceIndex:
    """Everything derived from the ResourceSlices alone, for one set of allocator features.

    Shared by every Allocator over the same slice list (a whole-cluster preview builds a
    fresh Allocator, but the cluster objects are the same): slice views, the slices per
    node and per pool, and the pools each node sees.
    """

    _serials = 0

    def __init__(self, slices: list[Mapping[str, Any]], partitionable: bool, compat_groups: bool) -> None:
        SliceIndex._serials += 1
        self.serial = SliceIndex._serials
        self.source = slices  # keeps the list (and so its id) alive
        self.partitionable = partitionable
        self.compat_groups = compat_groups
        # Building many small objects triggers the cyclic GC over and over, and each full
        # collection walks the whole cluster state; nothing built here forms cycles.
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            self.slices: list[SliceView] = [cached_slice_view(s, i) for i, s in enumerate(slices)]
        finally:
            if gc_was_on:
                gc.enable()
        if len(slices) >= _FREEZE_AT:
            # The views live as long as the objects (as load_state does for those): keep the
            # collections that the first preview's allocations trigger from walking them all.
            gc.freeze()
        #: device slices naming a node, by node; other device slices may reach any node;
        #: slices with shared counters reach every node (upstream includes them always)
        self.by_node: dict[str, list[SliceView]] = {}
        self.anywhere: list[SliceView] = []
        self.counter_slices: dict[tuple[str, str], list[SliceView]] = {}
        self.by_pool: dict[tuple[str, str], list[SliceView]] = {}
        for sv in self.slices:
            self.by_pool.setdefault(sv.pool_id, []).append(sv)
            if sv.shared_counter_names:
                self.counter_slices.setdefault(sv.pool_id, []).append(sv)
            elif sv.node_name:
                self.by_node.setdefault(sv.node_name, []).append(sv)
            else:
                self.anywhere.append(sv)
        self._counter_problems: list[Pool] | None = None
        self._pools: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[list[Pool], list[Pool]]] = {}
        self._by_node_obj: dict[int, tuple[Mapping[str, Any], Any, str, tuple[list[Pool], list[Pool]]]] = {}

    def counter_only_problems(self) -> list[Pool]:
        """Incomplete or invalid pools as a node sees them when none of their device slices reach it.

        Upstream gathers every slice with shared counters for every node; such a pool
        offers no devices to the node but can still be incomplete or invalid, which
        matters for "all devices" requests and for the invalid-pool error. This view
        does not depend on the node, so it is computed once.
        """
        if self._counter_problems is None:
            if not self.partitionable or not self.counter_slices:
                self._counter_problems = []
            else:
                candidates = sorted((sv for group in self.counter_slices.values() for sv in group), key=lambda s: s.index)
                pools = gather_pools(candidates, self.by_pool, {}, partitionable=True, compat_groups=self.compat_groups)
                self._counter_problems = [p for p in pools if p.incomplete or p.invalid]
        return self._counter_problems

    def pools_for(self, node: Mapping[str, Any]) -> tuple[list[Pool], list[Pool]]:
        """Pools for ``node``: those with devices for it in search order, and every pool
        that blocks "all devices" requests (incomplete or invalid), also in search order.

        Cached per node name and labels.
        """
        name = node_name(node)
        labels = (node.get("metadata") or {}).get("labels") or {}
        key = (name, tuple(sorted(labels.items())))
        found = self._pools.get(key)
        if found is None:
            found = self._gather(node, name)
            if len(self._pools) > 50000:
                self._pools.clear()
            self._pools[key] = found
        return found

    def pools_for_node(self, node: Mapping[str, Any]) -> tuple[list[Pool], list[Pool]]:
        """:meth:`pools_for`, first looked up by the identity of the Node dict (a whole-cluster
        preview asks once per node object; the labels are compared, not trusted)."""
        entry = self._by_node_obj.get(id(node))
        if entry is not None and entry[0] is node:
            meta = node.get("metadata") or {}
            if meta.get("labels") == entry[1] and (meta.get("name") or "") == entry[2]:
                return entry[3]
        found = self.pools_for(node)
        if len(self._by_node_obj) > 50000:
            self._by_node_obj.clear()
        meta = node.get("metadata") or {}
        labels = meta.get("labels")
        self._by_node_obj[id(node)] = (node, dict(labels) if isinstance(labels, dict) else labels,
                                       meta.get("name") or "", found)
        return found

    def _gather(self, node: Mapping[str, Any], name: str) -> tuple[list[Pool], list[Pool]]:
        """Gather the pools of one node (see :meth:`pools_for`)."""
        reaching = list(self.by_node.get(name, ()))
        if self.anywhere:
            reaching += [sv for sv in self.anywhere if _may_reach(sv, node)]
        touched = {sv.pool_id for sv in reaching}
        if self.partitionable:
            for pool_id in touched:
                reaching += self.counter_slices.get(pool_id, ())
        reaching.sort(key=lambda s: s.index)
        pools = gather_pools(reaching, self.by_pool, node, partitionable=self.partitionable,
                             compat_groups=self.compat_groups)
        problems = [p for p in pools if p.incomplete or p.invalid]
        problems += [p for p in self.counter_only_problems() if p.id not in touched]
        problems.sort(key=pool_order)
        return (pools, problems)


_INDEXES: dict[tuple[int, int, bool, bool], SliceIndex] = {}
#: slice lists at least this long have their views moved out of the cyclic GC's reach
_FREEZE_AT = 1000
_IN_USE: dict[tuple[tuple[int, ...], frozenset[tuple[str, str]], bool], tuple[list[Any], InUse]] = {}


def slice_index(slices: list[Mapping[str, Any]], features: "Features") -> SliceIndex:
    """The shared SliceIndex of a slice list (rebuilt when the list changes length)."""
    key = (id(slices), len(slices), features.partitionable, features.compatibility_groups)
    found = _INDEXES.get(key)
    if found is None or found.source is not slices:
        if len(_INDEXES) >= 8:
            _INDEXES.clear()
        found = _INDEXES[key] = SliceIndex(slices, features.partitionable, features.compatibility_groups)
    return found


class _ClaimScan:
    """The allocated claims of one claim list, with their identities and keys."""

    __slots__ = ("source", "allocated", "ids", "keys", "_all_keys")

    def __init__(self, claims: list[Mapping[str, Any]]) -> None:
        self.source = claims  # keeps the list (and so its id) alive
        self.allocated = [c for c in claims if (c.get("status") or {}).get("allocation")]
        self.ids = tuple(id(c) for c in self.allocated)
        self.keys = {claim_key(c) for c in self.allocated}
        self._all_keys: frozenset[tuple[str, str]] | None = None

    @property
    def all_keys(self) -> frozenset[tuple[str, str]]:
        """(namespace, name) of every claim of the list, allocated or not."""
        if self._all_keys is None:
            self._all_keys = frozenset(claim_key(c) for c in self.source)
        return self._all_keys


_SCANS: dict[tuple[int, int], _ClaimScan] = {}
_CLASSES: dict[tuple[int, int], tuple[list[Any], dict[str, Mapping[str, Any]]]] = {}


def _allocated_claims(claims: list[Mapping[str, Any]]) -> _ClaimScan:
    """The scan of a claim list, shared by every Allocator over the same list (a
    whole-cluster preview builds a fresh Allocator over the same objects each time)."""
    key = (id(claims), len(claims))
    found = _SCANS.get(key)
    if found is None or found.source is not claims:
        if len(_SCANS) >= 8:
            _SCANS.clear()
        found = _SCANS[key] = _ClaimScan(claims)
    return found


def stored_claim_keys(claims: list[Mapping[str, Any]]) -> frozenset[tuple[str, str]]:
    """(namespace, name) of every claim in a state's claim list (cached per list, as the
    allocator's own scan): lets a preview see at once whether it shadows a stored claim."""
    return _allocated_claims(claims).all_keys


def _classes(classes: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """DeviceClasses by name (the first of a name wins), shared like :func:`_allocated_claims`."""
    key = (id(classes), len(classes))
    found = _CLASSES.get(key)
    if found is None or found[0] is not classes:
        by_name: dict[str, Mapping[str, Any]] = {}
        for c in classes:
            by_name.setdefault(((c.get("metadata") or {}).get("name") or ""), c)
        if len(_CLASSES) >= 8:
            _CLASSES.clear()
        found = _CLASSES[key] = (classes, by_name)
    return found[1]


class Allocator:
    """Reusable across nodes and calls: classes, slices, pools and in-use devices are indexed once."""

    def __init__(self, state: "ClusterState", gates: "FeatureGates") -> None:
        self.state = state
        self.gates = gates
        self.features = Features.from_gates(gates)
        self.cel = CelCache()
        self.classes: dict[str, Mapping[str, Any]] = _classes(state.device_classes)
        self.index = slice_index(state.resource_slices, self.features)
        self.slices = self.index.slices
        scan = _allocated_claims(state.resource_claims)
        self._allocated = scan.allocated
        self._allocated_ids = scan.ids
        self._allocated_claims = scan.keys
        self._in_use: dict[frozenset[tuple[str, str]], InUse] = {}
        #: in-use devices by the identities of the claims being allocated (see allocate)
        self._in_use_for: dict[tuple[int, ...], tuple[list[Any], InUse]] = {}
        self.last_search_steps = 0
        #: validated requests per list of claims (see Search.prepare)
        self.prepared: dict[tuple[int, ...], Any] = {}
        #: (claim, prepared requests) without any config to copy (see results._config)
        self.no_config: dict[tuple[int, int], tuple[Any, Any, bool]] = {}

    # -- indexes --------------------------------------------------------------------------

    def in_use(self, exclude: frozenset[tuple[str, str]] = frozenset()) -> InUse:
        """Devices allocated by claims in the state, except the claims being (re)allocated."""
        exclude = frozenset(exclude & self._allocated_claims)
        found = self._in_use.get(exclude)
        if found is None:
            key = (self._allocated_ids, exclude, self.features.consumable_capacity)
            entry = _IN_USE.get(key)
            if entry is None:
                if len(_IN_USE) >= 16:
                    _IN_USE.clear()
                entry = _IN_USE[key] = (self._allocated, gather_in_use(self._allocated, exclude, self.features.consumable_capacity))
            found = self._in_use[exclude] = entry[1]
        return found

    def pools_for(self, node: Mapping[str, Any]) -> tuple[list[Pool], list[Pool]]:
        """See :meth:`SliceIndex.pools_for`."""
        return self.index.pools_for(node)

    def available_counters(self, pool: Pool, in_use: InUse) -> dict[str, dict[str, int]]:
        """The pool's counters minus what allocated devices consume (may go negative), in 1n units."""
        key = (self.index.serial, pool.id)
        found = in_use.counters.get(key)
        if found is None:
            found = {name: {c: nanos(q) for c, q in counters.items()} for name, counters in pool.counter_sets.items()}
            for sv in pool.slices + pool.other_slices:
                for d in sv.devices:
                    if not d.consumes or not in_use.allocated(d.id):
                        continue
                    for cc in d.consumes:
                        per_set = found.get(cc.counter_set)
                        if per_set is None:
                            continue
                        for name, v in cc.values.items():
                            if name in per_set:
                                per_set[name] -= v
            in_use.counters[key] = found
        return found

    def compat_baseline(self, pool: Pool, in_use: InUse) -> dict[str, tuple[bool, bool, frozenset[str], str]]:
        """Per counter set, the compatibility-group intersection of already allocated devices:
        (any device there, all without groups, the intersection, the first device there)."""
        key = (self.index.serial, pool.id)
        found = in_use.compat.get(key)
        if found is None:
            found = {}
            for sv in pool.slices + pool.other_slices:
                for d in sv.devices:
                    if not d.consumes or not in_use.allocated(d.id):
                        continue
                    for cc in d.consumes:
                        has, empty, groups, first = found.get(cc.counter_set, (False, False, frozenset(), ""))
                        if not has:
                            found[cc.counter_set] = (True, cc.groups is None, cc.groups or frozenset(), d.uid)
                        elif not empty and cc.groups is not None:
                            found[cc.counter_set] = (True, False, groups & cc.groups, first)
            in_use.compat[key] = found
        return found

    @staticmethod
    def node_declares(node: Mapping[str, Any], feature: str) -> bool:
        """Whether the Node lists ``feature`` in status.declaredFeatures."""
        return feature in ((node.get("status") or {}).get("declaredFeatures") or ())

    # -- the public call ------------------------------------------------------------------

    def allocate(self, node: dict[str, Any], claims: list[dict[str, Any]], *, tracer: Tracer | None = None,
                 deadline: float | None = None) -> AllocationOutcome:
        """Allocate ``claims`` together for ``node`` (first-fit, as the scheduler does).

        Raises :class:`~kubectl_dra.errors.AllocationError` where upstream's Allocate
        returns an error, :class:`~kubectl_dra.errors.AllocationTimeout` once ``deadline``
        (a ``time.monotonic()`` value; None: no limit) has passed; returns
        ``allocated=False`` when the claims do not fit.
        """
        ids = tuple(map(id, claims))
        entry = self._in_use_for.get(ids)
        if entry is None or entry[0] != claims:
            if len(self._in_use_for) > 64:
                self._in_use_for.clear()
            entry = self._in_use_for[ids] = (list(claims), self.in_use(frozenset(claim_key(c) for c in claims)))
        in_use = entry[1]
        pools, problems = self.index.pools_for_node(node)
        if tracer is not None:
            for pool in problems:
                if pool.incomplete_gate:
                    tracer.pool_skipped(pool.driver, pool.name, Rejection(
                        RejectionCode.POOL_INCOMPLETE,
                        f"resource pool {pool.uid} uses {GATED_POOL_FEATURES[pool.incomplete_gate]}, which the "
                        f"scheduler cannot honour with {pool.incomplete_gate} off: treated as incomplete",
                        {"gate": pool.incomplete_gate}))
                elif pool.incomplete:
                    tracer.pool_skipped(pool.driver, pool.name, Rejection(
                        RejectionCode.POOL_INCOMPLETE, f"resource pool {pool.uid} is incomplete (being updated)", {}))
                elif pool.invalid:
                    tracer.pool_skipped(pool.driver, pool.name, Rejection(
                        RejectionCode.POOL_INVALID, f"resource pool {pool.uid} is invalid: {pool.invalid_reason}",
                        {"reason": pool.invalid_reason}))
        search = Search(self, node, claims, pools, in_use, tracer, problems, deadline)
        search.prepare()
        found = search.run()
        #: calls of the per-device search step in the last allocate (upstream's allocateOne count)
        self.last_search_steps = search.steps
        if not found:
            for pool in problems:
                if pool.invalid:
                    from ..errors import AllocationError

                    raise AllocationError("invalid resource pools were encountered")
            return AllocationOutcome(allocated=False, results=[], score=0)
        results = build_results(search, node_name(node))
        return AllocationOutcome(allocated=True, results=results, score=score_of(search))
