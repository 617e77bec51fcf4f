"""Entry point: index the cluster once, then allocate claims for any node."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping

from ..model.devices import SliceView, slice_view
from ..model.nodes import node_matches, node_name
from .celcache import CelCache
from .inuse import InUse, claim_key, gather_in_use
from .outcome import AllocationOutcome
from .pools import Pool, gather_pools
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


def _pool_order(pool: Pool) -> tuple[bool, str, str]:
    return (pool.has_binding_conditions, pool.name, pool.driver)


def _may_reach(sv: SliceView, node: Mapping[str, Any]) -> bool:
    """Whether a device slice without nodeName offers devices to the node."""
    if sv.all_nodes or sv.node_selector is not None:
        return node_matches(node, "", sv.all_nodes, sv.node_selector)
    if sv.per_device_node_selection:
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in sv.devices)
    return False


class Allocator:
    """Reusable across nodes and calls: classes, slices, pools and in-use devices are indexed once."""

    def __init__(self, state: "ClusterState", gates: "FeatureGates") -> None:
        self.state = state
        self.gates = gates
        self.features = Features.from_gates(gates)
        self.cel = CelCache()
        self.classes: dict[str, Mapping[str, Any]] = {}
        for c in state.device_classes:
            self.classes.setdefault(((c.get("metadata") or {}).get("name") or ""), c)
        self.slices: list[SliceView] = [slice_view(s, i) for i, s in enumerate(state.resource_slices)]
        #: device slices naming a node, by node; other device slices may reach any node;
        #: slices with shared counters reach every node (upstream includes them always)
        self._by_node: dict[str, list[SliceView]] = {}
        self._anywhere: list[SliceView] = []
        self._counter_slices: dict[tuple[str, str], list[SliceView]] = {}
        self._by_pool: dict[tuple[str, str], list[SliceView]] = {}
        for sv in self.slices:
            self._by_pool.setdefault(sv.pool_id, []).append(sv)
            if sv.shared_counter_names:
                self._counter_slices.setdefault(sv.pool_id, []).append(sv)
            elif sv.node_name:
                self._by_node.setdefault(sv.node_name, []).append(sv)
            else:
                self._anywhere.append(sv)
        self._counter_only: list[Pool] | None = None
        self._counter_problems: list[Pool] | None = None
        self._in_use: dict[frozenset[tuple[str, str]], InUse] = {}
        self._allocated_claims = {claim_key(c) for c in state.resource_claims if (c.get("status") or {}).get("allocation")}
        self._counters: dict[tuple[int, tuple[str, str]], dict[str, dict[str, Fraction]]] = {}
        self._compat: dict[tuple[int, tuple[str, str]], dict[str, tuple[bool, bool, frozenset[str]]]] = {}
        self._pools: dict[tuple[str, tuple[tuple[str, str], ...], bool], list[Pool]] = {}

    # -- indexes --------------------------------------------------------------------------

    def in_use(self, exclude: frozenset[tuple[str, str]] = frozenset()) -> InUse:
        """Devices allocated by claims in the state, except the claims being (re)allocated."""
        exclude = frozenset(exclude & self._allocated_claims)
        found = self._in_use.get(exclude)
        if found is None:
            found = self._in_use[exclude] = gather_in_use(self.state.resource_claims, exclude)
        return found

    def _counter_only_pools(self) -> list[Pool]:
        """Pools as a node sees them when none of their device slices reach it.

        Upstream gathers every slice with shared counters for every node; such a pool
        offers no devices to the node but can still be incomplete or invalid, which
        matters for "all devices" requests and for the invalid-pool error. This view
        does not depend on the node, so it is computed once.
        """
        if self._counter_only is None:
            if not self.features.partitionable or not self._counter_slices:
                self._counter_only = []
            else:
                candidates = sorted((sv for group in self._counter_slices.values() for sv in group), key=lambda s: s.index)
                self._counter_only = gather_pools(candidates, self._by_pool, {}, partitionable=True,
                                                  compat_groups=self.features.compatibility_groups)
        return self._counter_only

    def _counter_only_problems(self) -> list[Pool]:
        if self._counter_problems is None:
            self._counter_problems = [p for p in self._counter_only_pools() if p.incomplete or p.invalid]
        return self._counter_problems

    def pools_for(self, node: Mapping[str, Any]) -> tuple[list[Pool], list[Pool]]:
        """Pools for ``node``: those with devices for it in search order, and every pool
        that blocks "all devices" requests (incomplete or invalid), also in search order.

        Cached per node name and labels.
        """
        name = node_name(node)
        labels = (node.get("metadata") or {}).get("labels") or {}
        key = (name, tuple(sorted(labels.items())), True)
        found = self._pools.get(key)
        if found is None:
            reaching = list(self._by_node.get(name, ()))
            if self._anywhere:
                reaching += [sv for sv in self._anywhere if _may_reach(sv, node)]
            touched = {sv.pool_id for sv in reaching}
            if self.features.partitionable:
                for pool_id in touched:
                    reaching += self._counter_slices.get(pool_id, ())
            reaching.sort(key=lambda s: s.index)
            pools = gather_pools(reaching, self._by_pool, node, partitionable=self.features.partitionable,
                                 compat_groups=self.features.compatibility_groups)
            problems = [p for p in pools if p.incomplete or p.invalid]
            problems += [p for p in self._counter_only_problems() if p.id not in touched]
            problems.sort(key=_pool_order)
            found = (pools, problems)
            if len(self._pools) > 20000:
                self._pools.clear()
            self._pools[key] = found
        return found

    def available_counters(self, pool: Pool, in_use: InUse) -> dict[str, dict[str, Fraction]]:
        """The pool's counters minus what allocated devices consume (may go negative)."""
        key = (id(in_use), pool.id)
        found = self._counters.get(key)
        if found is None:
            found = {name: {c: q.value for c, q in counters.items()} for name, counters in pool.counter_sets.items()}
            for sv in pool.slices + pool.other_slices:
                for d in sv.devices:
                    if not d.consumes or not in_use.allocated(d.id):
                        continue
                    for cc in d.consumes:
                        per_set = found.get(cc.counter_set)
                        if per_set is None:
                            continue
                        for name, q in cc.counters.items():
                            if name in per_set:
                                per_set[name] -= q.value
            self._counters[key] = found
        return found

    def compat_baseline(self, pool: Pool, in_use: InUse) -> dict[str, tuple[bool, bool, frozenset[str]]]:
        """Per counter set, the compatibility-group intersection of already allocated devices."""
        key = (id(in_use), pool.id)
        found = self._compat.get(key)
        if found is None:
            found = {}
            for sv in pool.slices + pool.other_slices:
                for d in sv.devices:
                    if not d.consumes or not in_use.allocated(d.id):
                        continue
                    for cc in d.consumes:
                        has, empty, groups = found.get(cc.counter_set, (False, False, frozenset()))
                        if not has:
                            found[cc.counter_set] = (True, True, frozenset()) if cc.groups is None else (True, False, cc.groups)
                        elif not empty and cc.groups is not None:
                            found[cc.counter_set] = (True, False, groups & cc.groups)
            self._compat[key] = found
        return found

    @staticmethod
    def node_declares(node: Mapping[str, Any], feature: str) -> bool:
        """Whether the Node lists ``feature`` in status.declaredFeatures."""
        return feature in ((node.get("status") or {}).get("declaredFeatures") or ())

    # -- the public call ------------------------------------------------------------------

    def allocate(self, node: dict[str, Any], claims: list[dict[str, Any]], *, tracer: Tracer | None = None) -> AllocationOutcome:
        """Allocate ``claims`` together for ``node`` (first-fit, as the scheduler does).

        Raises :class:`~kubectl_dra.errors.AllocationError` where upstream's Allocate
        returns an error; returns ``allocated=False`` when the claims do not fit.
        """
        in_use = self.in_use(frozenset(claim_key(c) for c in claims))
        pools, problems = self.pools_for(node)
        if tracer is not None:
            for pool in problems:
                if pool.incomplete:
                    tracer.pool_skipped(pool.driver, pool.name, Rejection(
                        RejectionCode.POOL_INCOMPLETE, f"resource pool {pool.uid} is incomplete (being updated)", {}))
                elif pool.invalid:
                    tracer.pool_skipped(pool.driver, pool.name, Rejection(
                        RejectionCode.POOL_INVALID, f"resource pool {pool.uid} is invalid: {pool.invalid_reason}",
                        {"reason": pool.invalid_reason}))
        search = Search(self, node, claims, pools, in_use, tracer, problems)
        search.prepare()
        if not search.run():
            for pool in problems:
                if pool.invalid:
                    from ..errors import AllocationError

                    raise AllocationError("invalid resource pools were encountered")
            return AllocationOutcome(allocated=False, results=[], score=0)
        results = build_results(search, node_name(node))
        return AllocationOutcome(allocated=True, results=results, score=score_of(search))
