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
from ..gates import Gate
from .gated import gate_hiding_slice
from .pools import Pool, gather_pools, slice_reaches

if TYPE_CHECKING:
    from ..state import ClusterState
    from .allocator import Features

#: slices in the order of the state (what the search's slice order starts from)
_STATE_ORDER = attrgetter("index")


class NodePools:
    """The pools one node sees: ``pools``, those with devices for it or problems, in search
    order; and ``problems``, every pool that blocks "all devices" requests or makes a failed
    search an error (incomplete or invalid), also in search order (worked out when first
    asked, as most searches succeed without it)."""

    __slots__ = ("pools", "_problems", "hidden")

    def __init__(self, pools: list[Pool], hidden: list[SliceView] | None = None) -> None:
        self.pools = pools
        self._problems: list[Pool] | None = None
        #: slices using compatibility groups that reach the node but that pool gathering
        #: skips with DRADeviceCompatibilityGroups off (for explain: why a device is missing)
        self.hidden = hidden or []

    @property
    def problems(self) -> list[Pool]:
        if self._problems is None:
            self._problems = [p for p in self.pools if p.incomplete or p.invalid]
        return self._problems


def _may_reach(sv: SliceView, node: Mapping[str, Any]) -> bool:
    """Whether a slice without nodeName is relevant for the node."""
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
        #: slices naming a node, by node; other slices may reach any node (slices with
        #: shared counters follow node selection like any other, as upstream GatherPools has them)
        self.by_node: dict[str, list[SliceView]] = {}
        self.anywhere: list[SliceView] = []
        self.by_pool: dict[tuple[str, str], list[SliceView]] = {}
        for sv in views:
            self.by_pool.setdefault(sv.pool_id, []).append(sv)
            if sv.node_name:
                self.by_node.setdefault(sv.node_name, []).append(sv)
            else:
                self.anywhere.append(sv)
        #: node name -> (labels, pools) for each label set seen with that name
        self._pools: dict[str, list[tuple[dict[str, Any], NodePools]]] = {}

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
            reaching.sort(key=_STATE_ORDER)
        pools = gather_pools(reaching, self.by_pool, node, partitionable=self.partitionable,
                             compat_groups=self.compat_groups)
        hidden = [] if self.compat_groups else [
            sv for sv in reaching if sv.has_compat_groups and slice_reaches(sv, node)
            and gate_hiding_slice(sv, self.partitionable, False) == Gate.DEVICE_COMPATIBILITY_GROUPS]
        # a complete, valid pool of which the node sees only shared counters offers nothing
        return NodePools([p for p in pools if p.devices or p.incomplete or p.invalid], hidden)


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
