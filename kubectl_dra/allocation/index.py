"""What the allocator derives from one cluster snapshot, built once and owned by the caller.

A :class:`ClusterIndex` holds the views of the ResourceSlices (with the selector answers
remembered on their devices), the pools each node sees per feature set, the DeviceClasses
by name and the devices that allocated claims hold. It describes the snapshot as it was
when the index was built: change the state and build a new index (an Allocator built
without one builds its own). Callers that preview many times over one snapshot (explain,
fit, benchmarks) build it once and hand it to every Allocator.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any, Mapping

import orjson

from ..model.devices import DeviceView, SliceView, slice_view
from ..model.nodes import node_matches, node_name
from ..types import ClaimKey, claim_key
from .inuse import InUse, gather_in_use
from .pools import Pool, gather_pools, pool_order

if TYPE_CHECKING:
    from ..state import ClusterState
    from .allocator import Features

#: slices in the order of the state (what the search's slice order starts from)
_STATE_ORDER = attrgetter("index")


class NodePools:
    """The pools one node sees: ``pools``, those with devices for it, in search order; and
    ``problems``, every pool that blocks "all devices" requests or makes a failed search an
    error (incomplete or invalid), also in search order. ``problems`` includes the pools of
    which the node sees only shared counters; it is worked out when first asked, as most
    searches succeed without it."""

    __slots__ = ("pools", "_index", "_touched", "_problems")

    def __init__(self, pools: list[Pool], index: "SliceIndex", touched: set[tuple[str, str]]) -> None:
        self.pools = pools
        self._index = index
        #: the pools of which the node sees devices (their problems are among ``pools``)
        self._touched = touched
        self._problems: list[Pool] | None = None

    @property
    def problems(self) -> list[Pool]:
        if self._problems is None:
            problems = [p for p in self.pools if p.incomplete or p.invalid]
            problems += [p for p in self._index.counter_only_problems() if p.id not in self._touched]
            problems.sort(key=pool_order)
            self._problems = problems
        return self._problems


def _may_reach(sv: SliceView, node: Mapping[str, Any]) -> bool:
    """Whether a device slice without nodeName offers devices to the node."""
    if sv.all_nodes or sv.node_selector is not None:
        return node_matches(node, "", sv.all_nodes, sv.node_selector)
    if sv.per_device_node_selection:
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in sv.devices)
    return False


class SliceIndex:
    """The slices by node and by pool, and the pools each node sees, for one set of the
    features that change what a pool is (partitionable devices, compatibility groups)."""

    def __init__(self, views: list[SliceView], partitionable: bool, compat_groups: bool) -> None:
        #: tells this index's entries in an InUse's per-pool caches apart from another
        #: feature set's (the owning ClusterIndex keeps the object, and so the id, alive)
        self.serial = id(self)
        self.slices = views
        self.partitionable = partitionable
        self.compat_groups = compat_groups
        #: device slices naming a node, by node; other device slices may reach any node;
        #: slices with shared counters reach every node (upstream includes them always)
        self.by_node: dict[str, list[SliceView]] = {}
        self.anywhere: list[SliceView] = []
        self.counter_slices: dict[tuple[str, str], list[SliceView]] = {}
        self.by_pool: dict[tuple[str, str], list[SliceView]] = {}
        for sv in views:
            self.by_pool.setdefault(sv.pool_id, []).append(sv)
            if sv.shared_counter_names:
                self.counter_slices.setdefault(sv.pool_id, []).append(sv)
            elif sv.node_name:
                self.by_node.setdefault(sv.node_name, []).append(sv)
            else:
                self.anywhere.append(sv)
        self._counter_problems: list[Pool] | None = None
        #: node name -> (labels, pools) for each label set seen with that name
        self._pools: dict[str, list[tuple[dict[str, Any], NodePools]]] = {}

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
                candidates = sorted((sv for group in self.counter_slices.values() for sv in group), key=_STATE_ORDER)
                pools = gather_pools(candidates, self.by_pool, {}, partitionable=True, compat_groups=self.compat_groups)
                self._counter_problems = [p for p in pools if p.incomplete or p.invalid]
        return self._counter_problems

    def pools_for(self, node: Mapping[str, Any], name: str | None = None) -> NodePools:
        """The pools ``node`` (named ``name``, when the caller knows it) sees (see NodePools).

        Remembered per node name and labels (what node selection reads).
        """
        if name is None:
            name = node_name(node)
        labels = (node.get("metadata") or {}).get("labels") or {}
        if not isinstance(labels, dict):
            labels = {}
        known = self._pools.get(name)
        if known is None:
            known = self._pools[name] = []
        for seen, found in known:
            if seen == labels:
                return found
        found = self._gather(node, name)
        known.append((dict(labels), found))
        return found

    def _gather(self, node: Mapping[str, Any], name: str) -> NodePools:
        """Gather the pools of one node (upstream GatherPools; see :meth:`pools_for`)."""
        reaching = list(self.by_node.get(name, ()))
        if self.anywhere:
            reaching += [sv for sv in self.anywhere if _may_reach(sv, node)]
        touched = {sv.pool_id for sv in reaching}
        if self.partitionable:
            for pool_id in touched:
                reaching += self.counter_slices.get(pool_id, ())
        reaching.sort(key=_STATE_ORDER)
        pools = gather_pools(reaching, self.by_pool, node, partitionable=self.partitionable,
                             compat_groups=self.compat_groups)
        return NodePools(pools, self, touched)


def _cel_content(driver: str, device: DeviceView) -> bytes | None:
    """What selectors can see of a device (its driver, attributes, capacity and
    allowMultipleAllocations) and whether it has binding conditions, as one comparable
    value; None when it cannot be written as JSON (the device then keeps its own answers)."""
    raw = device.raw
    try:
        return orjson.dumps([driver, raw.get("attributes"), raw.get("capacity"),
                             bool(raw.get("allowMultipleAllocations")), bool(device.binding_conditions)],
                            option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None


class SharedAnswers:
    """Lets devices that selectors cannot tell apart share one dict of remembered answers
    (CEL results and selectability), so a cluster's many identical devices are evaluated
    once. Every answer kept there depends only on that content (see _cel_content). A device
    asks on its first answer (DeviceView.answers): most devices of a big cluster never do."""

    __slots__ = ("_by_content",)

    def __init__(self) -> None:
        self._by_content: dict[bytes, dict[Any, Any]] = {}

    def __call__(self, device: DeviceView) -> dict[Any, Any]:
        key = _cel_content(device.slice.driver, device)
        if key is None:
            return {}
        found = self._by_content.get(key)
        if found is None:
            found = self._by_content[key] = {}
        return found


class ClusterIndex:
    """Everything the allocator derives from one snapshot (see the module docstring)."""

    def __init__(self, state: "ClusterState") -> None:
        self.state = state
        #: one view per ResourceSlice, in the state's order
        self.slice_views: list[SliceView] = [slice_view(s, i) for i, s in enumerate(state.resource_slices)]
        answers = SharedAnswers()
        for sv in self.slice_views:
            sv.answer_book = answers
        self._slice_indexes: dict[tuple[bool, bool], SliceIndex] = {}
        #: DeviceClasses by name (the first of a name wins, as a lister returns one)
        self.classes: dict[str, Mapping[str, Any]] = {}
        for c in state.device_classes:
            self.classes.setdefault((c.get("metadata") or {}).get("name") or "", c)
        #: claims with an allocation: their devices are in use
        self.allocated_claims = [c for c in state.resource_claims if (c.get("status") or {}).get("allocation")]
        self.allocated_keys = frozenset(claim_key(c) for c in self.allocated_claims)
        self._in_use: dict[tuple[frozenset[ClaimKey], bool], InUse] = {}
        self._tokens: dict[tuple[Any, ...], int] = {}

    def slices(self, features: "Features") -> SliceIndex:
        """The slices and pools as the allocator with ``features`` sees them."""
        key = (features.partitionable, features.compatibility_groups)
        found = self._slice_indexes.get(key)
        if found is None:
            found = self._slice_indexes[key] = SliceIndex(self.slice_views, *key)
        return found

    def in_use(self, exclude: frozenset[ClaimKey], consumable_capacity: bool) -> InUse:
        """Devices that allocated claims hold, except those of the claims in ``exclude``
        (claims being allocated again). The same object for the same question: the search
        keeps per-pool answers on it."""
        key = (exclude & self.allocated_keys, consumable_capacity)
        found = self._in_use.get(key)
        if found is None:
            found = self._in_use[key] = gather_in_use(self.allocated_claims, key[0], consumable_capacity)
        return found

    def token(self, signature: tuple[Any, ...]) -> int:
        """A small int standing for a selectability signature (cheap keys on every device's
        remembered answers); negative, so never one of the CEL cache's own keys."""
        found = self._tokens.get(signature)
        if found is None:
            found = self._tokens[signature] = -1 - len(self._tokens)
        return found
