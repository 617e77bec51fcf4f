"""Entry point: index the cluster once, then allocate claims for any node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..model.nodes import node_name
from . import counters
from .celcache import CelCache
from .index import ClusterIndex, NodePools, SliceIndex
from ..types import claim_key
from .inuse import InUse
from .outcome import AllocationOutcome
from .pools import Pool
from .results import build_results, score_of
from .preparation import PreparedClaims
from .search import Search
from . import rejections as why
from .trace import Tracer

from ..gates import Gate, effective_gates

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
    #: DRAFractionalCapacityRange: a valid range's rounding in thousandths (off: integers)
    fractional_capacity_range: bool

    @classmethod
    def from_gates(cls, gates: "FeatureGates") -> "Features":
        on = gates.enabled
        return cls(
            admin_access=on(Gate.ADMIN_ACCESS),
            prioritized_list=on(Gate.PRIORITIZED_LIST),
            partitionable=on(Gate.PARTITIONABLE_DEVICES),
            device_taints=on(Gate.DEVICE_TAINTS),
            binding_conditions=on(Gate.DEVICE_BINDING_CONDITIONS) and on(Gate.RESOURCE_CLAIM_DEVICE_STATUS),
            consumable_capacity=on(Gate.CONSUMABLE_CAPACITY),
            list_type_attributes=on(Gate.LIST_TYPE_ATTRIBUTES),
            derived_attributes=on(Gate.DERIVED_ATTRIBUTES),
            compatibility_groups=on(Gate.DEVICE_COMPATIBILITY_GROUPS),
            optional_node_operations=on(Gate.OPTIONAL_NODE_OPERATIONS),
            fractional_capacity_range=on(Gate.FRACTIONAL_CAPACITY_RANGE),
        )


def stored_claim_keys(claims: Sequence[Mapping[str, Any]]) -> frozenset[tuple[str, str]]:
    """(namespace, name) of every claim in a claim list."""
    return frozenset(claim_key(c) for c in claims)


class Allocator:
    """Allocates claims for any node of one snapshot (upstream ``Allocator``).

    ``index`` is what the allocator derives from the snapshot (slice views, pools per
    node, classes, in-use devices); pass the same :class:`ClusterIndex` to every
    Allocator over one snapshot to derive it once. Without one, the Allocator builds its own.
    """

    def __init__(self, state: "ClusterState", gates: "FeatureGates | None", index: ClusterIndex | None = None) -> None:
        self.state = state
        self.gates = effective_gates(gates)
        self.features = Features.from_gates(self.gates)
        self.cluster = index if index is not None else ClusterIndex(state)
        self.cel = CelCache()
        self.classes = self.cluster.classes
        #: the slices and pools as these features see them
        self.index: SliceIndex = self.cluster.slices(self.features)
        self.slices = self.index.slices
        #: the claims of recent allocate calls, prepared (see prepared_claims)
        self._prepared: dict[tuple[int, ...], PreparedClaims] = {}
        #: the list of claims last asked about and its PreparedClaims (held, so never a reused id)
        self._last_prepared: tuple[list[dict[str, Any]], PreparedClaims] | None = None
        self.last_search_steps = 0

    # -- indexes --------------------------------------------------------------------------

    def in_use(self, exclude: frozenset[tuple[str, str]] = frozenset()) -> InUse:
        """Devices allocated by claims in the state, except the claims being (re)allocated."""
        return self.cluster.in_use(exclude, self.features.consumable_capacity)

    def prepared_claims(self, claims: list[dict[str, Any]]) -> PreparedClaims:
        """What allocating ``claims`` needs on any node, kept for the next node with the same
        claims (the same objects in the same order; at most 64 lists are kept). Like the
        index, it describes the claims as they were when first given: a caller that changes a
        claim passes a new object, as the preview and fit do."""
        last = self._last_prepared
        if last is not None and last[0] is claims and last[1].claims == claims:
            return last[1]  # (a preview hands every node the same list)
        ids = tuple(map(id, claims))
        found = self._prepared.get(ids)
        if found is None or found.claims != claims:
            if len(self._prepared) >= 64:
                self._prepared.clear()
            # claims being allocated are left out of the in-use devices by key, so a claim
            # from a file does not compete with its stored namesake
            in_use = self.in_use(frozenset(claim_key(c) for c in claims))
            found = self._prepared[ids] = PreparedClaims(list(claims), in_use)
        self._last_prepared = (claims, found)
        return found

    def pools_for(self, node: Mapping[str, Any]) -> NodePools:
        """See :meth:`SliceIndex.pools_for`."""
        return self.index.pools_for(node)

    def note_allocated(self, in_use: InUse, pool: Pool, names: list[str]) -> None:
        """See :func:`kubectl_dra.allocation.counters.note_allocated` (this allocator's pool views)."""
        counters.note_allocated(in_use, self.index.serial, pool, names)

    @staticmethod
    def node_declares(node: Mapping[str, Any], feature: str) -> bool:
        """Whether the Node lists ``feature`` in status.declaredFeatures."""
        return feature in ((node.get("status") or {}).get("declaredFeatures") or ())

    # -- the public call ------------------------------------------------------------------

    def allocate(self, node: dict[str, Any], claims: list[dict[str, Any]], *, tracer: Tracer | None = None,
                 deadline: float | None = None, name: str | None = None) -> AllocationOutcome:
        """Allocate ``claims`` together for ``node`` (first-fit, as the scheduler does).

        Raises :class:`~kubectl_dra.errors.AllocationError` where upstream's Allocate
        returns an error, :class:`~kubectl_dra.errors.AllocationTimeout` once ``deadline``
        (a ``time.monotonic()`` value; None: no limit) has passed; returns
        ``allocated=False`` when the claims do not fit. ``name`` is the node's name when the
        caller has it already.
        """
        if name is None:
            name = node_name(node)
        prepared = self.prepared_claims(claims)
        seen = self.index.pools_for(node, name)
        if tracer is not None:
            # a slice ignored for a gate first: it is also why its pool may look incomplete
            for sv in seen.hidden:
                tracer.pool_skipped(sv.driver, sv.pool, why.slice_hidden_by_gate(sv))
            for pool in seen.problems:
                tracer.pool_skipped(pool.driver, pool.name, why.pool_skipped(pool))
        search = Search(self, prepared, node, seen, tracer, deadline)
        search.prepare()
        found = search.run()
        #: calls of the per-device search step in the last allocate (upstream's allocateOne count)
        self.last_search_steps = search.steps
        if not found:
            for pool in seen.problems:
                if pool.invalid:
                    from ..errors import AllocationError

                    raise AllocationError("invalid resource pools were encountered")
            return AllocationOutcome(False, [], 0)
        return AllocationOutcome(True, build_results(search, name), score_of(search))
