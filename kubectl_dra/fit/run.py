"""How many more replicas of a preview target fit: allocate again and again, committing each
result as in use, until no node fits.

Each replica is one preview on one node: the allocator's first-fit answer for that node in
the state left by the replicas before it. Its devices are then added to an in-use overlay
(exclusive devices, shares of multi-allocatable devices with their consumed capacity, and so
the shared counters they consume), exactly as the scheduler sees them after binding. Only
the nodes that see a pool the replica used are evaluated again: for node-local devices that
is the one node, so a replica costs one allocation, not a pass over the cluster.

Replica ``i``'s copy of a per-replica claim ``NAME`` is named ``NAME-fit-i`` (in explain's
words about devices held, and in :func:`final_state`).

Placement: by default each replica goes where the preview ranks best (prioritized-list
score, then node name); with ``spread`` the nodes take turns, in that ranking's order.
"""

from __future__ import annotations

import copy
import heapq
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..types import Obj
from ..allocation import Allocator
from ..allocation.pools import Pool
from ..gates import FeatureGates, effective_gates
from ..allocation.inuse import InUse
from ..state import ClusterState
from ..preview.nodes import node_name
from ..preview.pods import PlanPods, plan_pods
from ..preview.run import ERROR, UNSCHEDULABLE, NodeOutcome, evaluate_node, rank
from ..preview.targets import PreviewClaim, PreviewPlan

PoolID = tuple[str, str]

#: placement orders
RANKED = "ranked"
SPREAD = "spread"

#: filters whose refusal a later replica can lift (its domain gains a pod, the global minimum rises)
REVIVABLE = ("PodTopologySpread", "InterPodAffinity")

#: why the count stopped
EXHAUSTED = "NoNodeFits"
LIMIT = "Limit"
#: a replica takes no device (requests of count 0, only claims allocated before, admin
#: access) and binds no pod the scheduler's other filters count: nothing bounds the count
UNLIMITED = "NotLimitedByDevices"


class _OverlayAllocator(Allocator):
    """The allocator, seeing the cluster's in-use devices plus those of the replicas so far."""

    overlay: InUse | None = None

    def in_use(self, exclude: frozenset[tuple[str, str]] = frozenset()) -> InUse:
        if self.overlay is None:
            self.overlay = super().in_use(exclude).copy()
        return self.overlay


class _StablePlan(PreviewPlan):
    """A plan whose per-node claim lists are made once per node: the same claim objects every
    time let the allocator reuse what it prepared for them (the implicit extended-resource
    claim would otherwise be a new object on every call)."""

    def __init__(self, plan: PreviewPlan) -> None:
        super().__init__(claims=plan.claims, extended=plan.extended, pods=plan.pods)
        self._claims_for: dict[str, list[PreviewClaim]] = {}
        self._blockers: dict[str, list[str]] = {}
        self._claim_blockers: dict[str, list[str]] = {}

    def claims_for(self, node: Obj) -> list[PreviewClaim]:
        name = node_name(node)
        found = self._claims_for.get(name)
        if found is None:
            found = self._claims_for[name] = super().claims_for(node)
        return found

    def blockers(self, node: Obj) -> list[str]:
        name = node_name(node)
        found = self._blockers.get(name)
        if found is None:
            found = self._blockers[name] = super().blockers(node)
        return found

    def claim_blockers(self, node: Obj) -> list[str]:
        name = node_name(node)
        found = self._claim_blockers.get(name)
        if found is None:
            found = self._claim_blockers[name] = super().claim_blockers(node)
        return found


@dataclass(slots=True)
class Replica:
    """One replica placed: its node and the allocation of each of its claims."""

    index: int
    node: str
    score: int
    #: (claim name the replica's copy is stored under, the claim, its AllocationResult)
    allocations: list[tuple[str, PreviewClaim, Obj]]
    #: the replica's pods, bound to ``node`` (none for a claim or template target)
    pods: list[Obj] = field(default_factory=list)


@dataclass
class PoolCount:
    """What the replicas took from one pool."""

    driver: str
    pool: str
    #: nodes (of those considered) that see the pool; more than one: shared by nodes
    nodes: int
    replicas: int = 0
    devices: int = 0

    @property
    def shared(self) -> bool:
        return self.nodes > 1


@dataclass
class FitResult:
    """The count, where the replicas went, and (filled by :func:`stop_reasons`) why it stopped."""

    plan: PreviewPlan
    gates: FeatureGates | None
    placement: str
    limit: int | None
    replicas: list[Replica]
    #: node names considered, in the preview's ranking before the first replica
    nodes: list[str]
    #: node -> replicas placed there
    per_node: dict[str, int]
    pools: list[PoolCount]
    stopped: str
    #: node -> why no further replica fits there (explain's one-line node reason)
    reasons: dict[str, str] = field(default_factory=dict)
    #: node -> the allocation error that keeps every replica off it (before the first replica)
    errors: dict[str, str] = field(default_factory=dict)
    #: the allocator the count ran on, its overlay holding every replica (explains the final state)
    allocator: Allocator | None = field(default=None, repr=False, compare=False)
    #: the node the next replica could not go to after the last one was placed (ranked
    #: placement: the node of the last replica; spread: the last node in its turn)
    last_node: str | None = None
    #: a replica placed on this node took no device: as many more fit there (see UNLIMITED)
    takes_nothing_on: str | None = None

    @property
    def count(self) -> int:
        """Replicas placed (with :data:`UNLIMITED`, those placed before one took nothing)."""
        return len(self.replicas)

    @property
    def unlimited(self) -> bool:
        """Whether nothing bounds the count (``stopped`` is :data:`UNLIMITED`)."""
        return self.stopped == UNLIMITED

    def bound_pods(self) -> list[Obj]:
        """The replicas' pods as they would be bound, in replica order."""
        return [pod for replica in self.replicas for pod in replica.pods]

    def stored_claims(self) -> list[Obj]:
        """The ResourceClaims the replicas would be once allocated, in replica order."""
        return [stored_claim(claim, name, allocation)
                for replica in self.replicas for name, claim, allocation in replica.allocations]


def per_replica(claim: PreviewClaim, pod_target: bool) -> bool:
    """Whether every replica needs its own copy of the claim.

    A claim named as a target or given in a file: yes, each replica is a copy (an allocated
    one included: the copies are new claims). A pod's claim from a template: yes; a claim
    the pod names (resourceClaimName), or that already exists for it: no, every replica
    shares it. A PodGroup's claims serve every pod of the group, so replicas of a pod share
    them; replicas of the group itself get their own from templates.
    """
    origin = str(claim.origin or "")
    if origin.startswith("podgroup/"):
        return claim.generated and not pod_target
    if origin.startswith("pod/"):
        return claim.generated
    return True


def fit_plan(plan: PreviewPlan, stored: frozenset[tuple[str, str]]) -> PreviewPlan:
    """The plan a replica is allocated with: per-replica claims without status, renamed
    ``NAME-fit`` when a stored claim has their name (so that it keeps its devices)."""
    claims = []
    for claim in plan.claims:
        if per_replica(claim, bool(plan.pods)) and (claim.claim.get("status") or claim.key in stored):
            obj = copy.deepcopy(claim.claim)
            obj.pop("status", None)
            if claim.key in stored:
                obj["metadata"]["name"] = f"{claim.name}-fit"
            claim = PreviewClaim(obj, origin=claim.origin, generated=claim.generated)
        claims.append(claim)
    return PreviewPlan(claims=claims, extended=list(plan.extended), pods=list(plan.pods))


def stored_claim(claim: PreviewClaim, name: str, allocation: Obj) -> Obj:
    """The ResourceClaim as it would be stored once allocated (for explain on the final state)."""
    obj = {key: value for key, value in claim.claim.items() if key != "status"}
    obj["metadata"] = {**(claim.claim.get("metadata") or {}), "name": name, "namespace": claim.namespace}
    obj["status"] = {"allocation": allocation}
    return obj


class _Fitter:
    """The state of one count: allocator with its overlay, current outcome per node."""

    def __init__(self, state: ClusterState, plan: PreviewPlan, gates: FeatureGates | None, nodes: Sequence[Obj]) -> None:
        from ..allocation.allocator import stored_claim_keys

        self.plan = _StablePlan(fit_plan(plan, stored_claim_keys(state.resource_claims)))
        # (claims being allocated are left out of the in-use devices by key, as in a preview)
        self.allocator = _OverlayAllocator(state, gates)
        self.consumable = self.allocator.features.consumable_capacity
        self.nodes = {node_name(n): n for n in nodes}
        #: pool -> names of the nodes that see it
        self.seen_by: dict[PoolID, list[str]] = {}
        for name, node in self.nodes.items():
            seen = self.allocator.pools_for(node)
            for pool_id in dict.fromkeys(p.id for p in (*seen.pools, *seen.problems)):
                self.seen_by.setdefault(pool_id, []).append(name)
        #: the scheduler's other filters for the plan's pods, over the snapshot's bound pods
        self.pods: PlanPods | None = plan_pods(state, plan, nodes)
        #: node -> the DynamicResources answer in the current state (kept while no pool it sees changes)
        self._dra: dict[str, NodeOutcome] = {}
        #: bumped when a replica may change the pods' filter answers beyond its own node (spread,
        #: pod affinity, anti-affinity): a node's answer from an earlier epoch is checked again
        #: when it is next looked at, not every node after every replica
        self.epoch = 0
        self._seen_epoch: dict[str, int] = {}
        #: node -> the filter (spread, pod affinity) refusing it now, which a later replica may lift
        self._revivable: dict[str, str] = {}
        self.outcomes: dict[str, NodeOutcome] = {}
        self.replicas: list[Replica] = []
        #: the node of the first replica that took no device (the count has no device bound)
        self.takes_nothing_on: str | None = None
        #: a replica changed nothing at all (no device, no pod to bind): nothing bounds the count
        self.unbounded = False
        self.pool_counts: dict[PoolID, PoolCount] = {}
        #: id(plan claim) -> (the claim, what commit needs to know of it); lives as long as the count
        self._claims: dict[int, tuple[PreviewClaim, bool, bool, str, str]] = {}
        #: pool -> one node's view of it (None: no node considered sees it)
        self._views: dict[PoolID, Pool | None] = {}

    def evaluate(self, name: str) -> NodeOutcome:
        """The preview's outcome for one node in the current state: the pods' filters, then
        the allocator (whose answer is kept until a pool the node sees changes)."""
        if self.pods is not None:
            self._seen_epoch[name] = self.epoch
            status = self.pods.filter(name)
            if status is not None:
                outcome = NodeOutcome(name, UNSCHEDULABLE, reasons=status.reasons, plugin=status.plugin,
                                      detail=status.detail, scheduler_reasons=status.reasons)
                self.outcomes[name] = outcome
                if status.plugin in REVIVABLE:
                    self._revivable[name] = status.plugin
                else:
                    self._revivable.pop(name, None)
                return outcome
            self._revivable.pop(name, None)
        outcome = self._dra.get(name) or evaluate_node(self.allocator, self.plan, self.nodes[name],
                                                       explain_failures=False)
        self._dra[name] = self.outcomes[name] = outcome
        return outcome

    def stale(self, name: str) -> bool:
        """Whether the node's answer predates a replica that may have changed it (see ``epoch``)."""
        return self.pods is not None and self._seen_epoch.get(name, -1) < self.epoch

    def _replica_pods(self, index: int, node: str) -> list[Obj]:
        """Copies of the plan's pods for replica ``index``, bound to ``node`` and running."""
        pods = []
        for pod in self.plan.pods:
            meta = dict(pod.get("metadata") or {})
            meta["name"] = f"{meta.get('name') or 'pod'}-fit-{index}"
            pods.append({**pod, "metadata": meta, "spec": {**(pod.get("spec") or {}), "nodeName": node},
                         "status": {"phase": "Running"}})
        return pods

    def _about(self, claim: PreviewClaim) -> tuple[bool, bool, str, str]:
        """(to be allocated, one per replica, namespace, name) of a plan claim, worked out once."""
        entry = self._claims.get(id(claim))
        if entry is None or entry[0] is not claim:
            entry = self._claims[id(claim)] = (claim, claim.allocation is None,
                                               per_replica(claim, bool(self.plan.pods)),
                                               claim.namespace, claim.name)
        return entry[1:]

    def _pool_view(self, pool_id: PoolID) -> Pool | None:
        """One node's view of a pool the replicas use (every view charges the same counters)."""
        if pool_id not in self._views:
            seen_by = self.seen_by.get(pool_id)
            seen = self.allocator.pools_for(self.nodes[seen_by[0]]) if seen_by else None
            self._views[pool_id] = next((p for p in (*seen.pools, *seen.problems) if p.id == pool_id), None) \
                if seen is not None else None
        return self._views[pool_id]

    def commit(self, outcome: NodeOutcome) -> set[str]:
        """Place one replica where ``outcome`` says; returns the nodes whose answer may change."""
        index = len(self.replicas) + 1
        overlay = self.allocator.in_use()
        touched: dict[PoolID, int] = {}
        fresh: dict[PoolID, list[str]] = {}
        allocations = []
        newly_shared: list[PreviewClaim] = []
        takes = False
        for claim, allocation in outcome.allocations:
            is_new, own, namespace, name = self._about(claim)
            if not is_new:
                continue  # allocated before: shared by the replicas, nothing new is taken
            results = (allocation.get("devices") or {}).get("results") or ()
            takes = takes or not own or any(not r.get("adminAccess") for r in results)
            if own:
                name = f"{name}-fit-{index}"
            for device in overlay.add_allocation(f"{namespace}/{name}", allocation, self.consumable):
                fresh.setdefault(device[:2], []).append(device[2])
            for result in (allocation.get("devices") or {}).get("results") or ():
                pool = (str(result.get("driver") or ""), str(result.get("pool") or ""))
                touched[pool] = touched.get(pool, 0) + 1
            allocations.append((name, claim, allocation))
            if not own:
                newly_shared.append(claim)
        bound = self._replica_pods(index, outcome.node) if self.pods is not None else []
        self.replicas.append(Replica(index, outcome.node, outcome.score, allocations, bound))
        if not takes and self.takes_nothing_on is None:
            # no device bounds the count; without pods to bind (a claim or template target),
            # the next replica there finds the cluster as this one did: nothing bounds it
            self.takes_nothing_on = outcome.node
            self.unbounded = self.pods is None
        for pool_id, names in fresh.items():
            view = self._pool_view(pool_id)
            if view is not None:
                self.allocator.note_allocated(overlay, view, names)
        dirty: set[str] = set()
        for pool_id, devices in touched.items():
            count = self.pool_counts.get(pool_id)
            if count is None:
                count = self.pool_counts[pool_id] = PoolCount(pool_id[0], pool_id[1], len(self.seen_by.get(pool_id, ())))
            count.replicas += 1
            count.devices += devices
            dirty.update(self.seen_by.get(pool_id, ()))
        if newly_shared:
            self._share(newly_shared, {c.key: a for _, c, a in allocations})
            dirty.update(self.nodes)
        for name in dirty:
            self._dra.pop(name, None)
        dirty.add(outcome.node)
        if self.pods is not None:
            minimums = self.pods.spread_minimums()
            self.pods.bind(bound, outcome.node)
            if self.pods.interacts:
                self.epoch += 1
                # nodes refused by spread (when a global minimum rose) or by pod affinity may
                # take the next replica: asked now
                lift = {"PodTopologySpread"} if self.pods.spread_minimums() != minimums else set()
                if self.pods.has_affinity:
                    lift.add("InterPodAffinity")
                if lift:
                    dirty.update(n for n, plugin in self._revivable.items() if plugin in lift and n in self.nodes)
        return dirty

    def _share(self, claims: list[PreviewClaim], allocations: dict[tuple[str, str], Obj]) -> None:
        """A claim the replicas share got its devices with the first replica: from now on it
        is allocated, and its node selector limits where the next replicas may go."""
        keys = {c.key for c in claims}
        updated = []
        for claim in self.plan.claims:
            if claim.key in keys:
                obj = dict(claim.claim)
                obj["status"] = {**(obj.get("status") or {}), "allocation": allocations[claim.key]}
                claim = PreviewClaim(obj, origin=claim.origin, generated=claim.generated)
            updated.append(claim)
        self.plan = _StablePlan(PreviewPlan(claims=updated, extended=self.plan.extended, pods=self.plan.pods))


def count_fit(state: ClusterState, plan: PreviewPlan, gates: FeatureGates | None, nodes: Sequence[Obj], *,
              limit: int | None = None, placement: str = RANKED,
              progress: Callable[[int], None] | None = None) -> FitResult:
    """Place replicas of ``plan`` on ``nodes`` until none fits (or ``limit`` are placed).

    Raises what the allocator raises for malformed claims only through the per-node
    outcomes: a node whose allocation errs takes no replica.
    """
    gates = effective_gates(gates)
    fitter = _Fitter(state, plan, gates, nodes)
    ranked = rank(fitter.evaluate(name) for name in fitter.nodes)
    errors = {o.node: o.error or "" for o in ranked if o.status == ERROR}
    order = [o.node for o in ranked]
    alive = [o.node for o in ranked if o.allocated]
    last_node: str | None = None
    if placement == SPREAD:
        last_node = _spread(fitter, alive, limit, progress)
    else:
        last_node = _ranked(fitter, ranked, limit, progress)
    if fitter.unbounded and fitter.takes_nothing_on is not None and limit is not None:
        # a plan that takes nothing on one node takes nothing on any: the rest of the limit
        # goes where the placement puts it (spread: the fitting nodes in turn), nothing searched
        takers = [fitter.outcomes[fitter.takes_nothing_on]]
        if placement == SPREAD:
            takers = [fitter.outcomes[n] for n in order if n in fitter.outcomes and fitter.outcomes[n].allocated]
        turn = len(fitter.replicas)
        while len(fitter.replicas) < limit:
            fitter.commit(takers[turn % len(takers)])
            turn += 1
    per_node = {name: 0 for name in order}
    for replica in fitter.replicas:
        per_node[replica.node] += 1
    if limit is not None and len(fitter.replicas) >= limit:
        stopped = LIMIT
    else:
        stopped = UNLIMITED if fitter.unbounded else EXHAUSTED
    pools = sorted(fitter.pool_counts.values(), key=lambda p: (p.driver, p.pool))
    return FitResult(plan=fitter.plan, gates=gates, placement=placement, limit=limit, replicas=fitter.replicas,
                     nodes=order, per_node=per_node, pools=pools, stopped=stopped, errors=errors, allocator=fitter.allocator,
                     last_node=last_node, takes_nothing_on=fitter.takes_nothing_on)


def _ranked(fitter: _Fitter, ranked: list[NodeOutcome], limit: int | None,
            progress: Callable[[int], None] | None) -> str | None:
    """Each replica on the node the preview ranks first (highest score, then name)."""
    version: dict[str, int] = {}
    heap = [(-o.score, o.node, 0) for o in ranked if o.allocated]
    heapq.heapify(heap)
    last: str | None = None
    while heap and (limit is None or len(fitter.replicas) < limit):
        _, name, seen = heapq.heappop(heap)
        if version.get(name, 0) != seen:
            continue  # an older entry of a node evaluated again since
        if fitter.stale(name):  # a replica since may have changed its pods' answer: ask again
            outcome = fitter.evaluate(name)
            version[name] = version.get(name, 0) + 1
            if outcome.allocated:
                heapq.heappush(heap, (-outcome.score, name, version[name]))
            continue
        last = name
        dirty = fitter.commit(fitter.outcomes[name])
        if fitter.unbounded:
            break
        for other in dirty:
            outcome = fitter.evaluate(other)
            version[other] = version.get(other, 0) + 1
            if outcome.allocated:
                heapq.heappush(heap, (-outcome.score, other, version[other]))
        if progress is not None:
            progress(len(fitter.replicas))
    return last


def _spread(fitter: _Fitter, alive: list[str], limit: int | None,
            progress: Callable[[int], None] | None) -> str | None:
    """Round-robin: one replica per node that still fits, in ranking order, round after round."""
    dirty: set[str] = set()
    last: str | None = None
    while alive and (limit is None or len(fitter.replicas) < limit):
        still = []
        placed = len(fitter.replicas)
        for name in alive:
            if limit is not None and len(fitter.replicas) >= limit:
                still.append(name)
                continue
            outcome = fitter.evaluate(name) if name in dirty or fitter.stale(name) else fitter.outcomes[name]
            dirty.discard(name)
            if not outcome.allocated:
                if outcome.plugin in REVIVABLE:
                    still.append(name)  # a later replica may lift a spread or pod affinity refusal
                continue
            last = name
            dirty |= fitter.commit(outcome)
            still.append(name)
            if progress is not None:
                progress(len(fitter.replicas))
            if fitter.unbounded:
                return last
        if len(fitter.replicas) == placed:
            break  # a whole round without a replica: the refusals left are final
        alive = still
    return last


def final_state(state: ClusterState, result: FitResult) -> ClusterState:
    """The cluster state with every replica's claims stored as allocated and its pods bound."""
    stored = result.stored_claims()
    replaced = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in stored}
    kept = [c for c in state.resource_claims if _key(c) not in replaced]
    final = state.replacing("ResourceClaim", [*kept, *stored])
    bound = result.bound_pods()
    return final.replacing("Pod", [*state.pods, *bound]) if bound else final


def _key(claim: Obj) -> tuple[str, str]:
    meta = claim.get("metadata") or {}
    return (meta.get("namespace") or "default", meta.get("name") or "")


def stop_reasons(state: ClusterState, result: FitResult, nodes: Sequence[Obj]) -> dict[str, str]:
    """Why no further replica fits on each node: explain's one-line node reason, from explain
    run on the final state (every replica stored as an allocated claim), so the words are
    exactly those ``kubectl dra explain`` would print there. Fills ``result.reasons``.

    The search runs on the count's own allocator when the result has it (its overlay holds
    exactly the devices the final state's claims hold, and its index already knows every
    device's selector answers); the refiner, which names holders, reads the final state.
    Unlike a preview, no time limit: every node gets its reason."""
    from ..explain import NodeReasons
    from ..preview.run import run_preview

    final = final_state(state, result)
    reasons = NodeReasons(final, result.gates)
    preview = run_preview(final, result.plan, result.gates, list(nodes), allocator=result.allocator, timeout=None,
                          reasons=reasons, tracer_factory=lambda node: reasons.tracer(node_name(node)))
    result.reasons = {outcome.node: outcome.reason for outcome in preview.nodes}
    return result.reasons
