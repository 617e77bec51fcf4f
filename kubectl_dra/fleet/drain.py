"""Drain-check: as if some nodes were cordoned and their pods evicted, would every pod find
a new home? Nothing is written anywhere: the answer comes from a new state.

The evicted pods are those bound to the drained nodes and not finished, with DRA claims (or
every one of them). Their claims from templates are released: the pod that replaces an
evicted one gets a new claim from the template. A claim pods share by name keeps its
allocation while a pod that is not evicted still holds it; once every pod reserving it is
evicted it is released too (kube-scheduler's PostFilter deallocates a claim nobody reserves
when the pod that needs it cannot be placed). The evicted pods are then placed again one
after another in the scheduler's queue order (priority, then creation time) on the nodes
that are not drained, each committed before the next (:mod:`kubectl_dra.fleet.placement`).

``DrainReport.to_dict()`` is the ``kind: DrainCheck`` document::

    apiVersion, kind   kubectl-dra/v1, DrainCheck
    summary            the first line of the table
    drained            [node]
    featureGates, hypotheticalNodes, cordoned
    released           [namespace/name] claims released by the eviction
    pods               [{namespace, name, priority, from, status (Moves|Stuck), to, devices,
                        claims, reason}] in the order they were placed
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from ..errors import NotFoundError
from ..gates import FeatureGates
from ..limits import FILTER_TIMEOUT
from ..model.nodes import node_name
from ..state import ClusterState
from ..state.snapshot import object_key
from ..types import Obj
from .evaluate import PodEvaluator
from .pods import DraUse, claim_entries, pod_key, priority, queue_order, runs_on
from .placement import Placed, Placer
from .whatif import check_node_list, derived_state

if TYPE_CHECKING:
    from ..allocation.index import ClusterIndex

MOVES = "Moves"
STUCK = "Stuck"


@dataclass
class DrainMove:
    """One evicted pod: where it would go, or why nowhere."""

    placed: Placed
    priority: int
    origin: str

    def to_dict(self) -> Obj:
        p = self.placed
        return {"namespace": p.namespace, "name": p.name, "priority": self.priority, "from": self.origin,
                "status": MOVES if p.placed else STUCK, "to": p.node, "devices": p.devices(),
                "claims": list(p.answer.claims), "reason": None if p.placed else p.answer.reason}


@dataclass
class DrainReport:
    drained: list[str]
    moves: list[DrainMove]
    released: list[str]
    gates: Obj = field(default_factory=dict)
    hypothetical: dict[str, str] = field(default_factory=dict)
    cordoned: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(m.placed.placed for m in self.moves)

    def summary(self) -> str:
        where = ", ".join(self.drained)
        total = len(self.moves)
        if not total:
            return f"drain {where}: no pod with DRA claims to move"
        stuck = sum(1 for m in self.moves if not m.placed.placed)
        head = f"drain {where}: {total - stuck} of {total} pod{'s' if total != 1 else ''} can move"
        return head + (f"; {stuck} cannot" if stuck else "")

    def to_dict(self) -> Obj:
        return {"apiVersion": "kubectl-dra/v1", "kind": "DrainCheck", "summary": self.summary(),
                "drained": list(self.drained), "featureGates": self.gates,
                "hypotheticalNodes": dict(self.hypothetical), "cordoned": list(self.cordoned),
                "released": list(self.released), "pods": [m.to_dict() for m in self.moves]}


def check_nodes(state: ClusterState, names: Sequence[str]) -> list[str]:
    """The drained node names; unknown or repeated: an error naming it."""
    check_node_list("drain-check", names)
    known = {node_name(n) for n in state.nodes}
    known |= {str((s.get("spec") or {}).get("nodeName")) for s in state.resource_slices}
    for name in names:
        if name not in known:
            raise NotFoundError(f"drain-check: node {name!r} not found in the cluster state")
    return list(names)


def _reservations(claim: Obj) -> list[tuple[str, str]]:
    return [(str(r.get("name")), str(r.get("uid") or "")) for r in (claim.get("status") or {}).get("reservedFor") or ()
            if isinstance(r, dict)]


def released_claims(state: ClusterState, evicted: Sequence[Obj]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(namespace, name) of the claims the eviction releases (see the module docstring): those
    the evicted pods own (from templates; deleted with them) and those shared by name."""
    claims = {}
    for claim in state.resource_claims:
        ns, name = object_key(claim)
        claims[(ns or "default", name)] = claim
    gone = {(pod_key(p)[0], pod_key(p)[1], str((p.get("metadata") or {}).get("uid") or "")) for p in evicted}
    gone_names = {(ns, name) for ns, name, _ in gone}
    released: set[tuple[str, str]] = set()
    owned_claims: set[tuple[str, str]] = set()
    for pod in evicted:
        ns, _ = pod_key(pod)
        status = pod.get("status") or {}
        owned = {s.get("name"): s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or ()
                 if isinstance(s, dict)}
        for entry in claim_entries(pod):
            if entry.get("resourceClaimTemplateName") and owned.get(entry.get("name")):
                owned_claims.add((ns, str(owned[entry.get("name")])))
            elif entry.get("resourceClaimName"):
                key = (ns, str(entry["resourceClaimName"]))
                shared = claims.get(key)
                if shared is not None and all((ns, n) in gone_names for n, _ in _reservations(shared)):
                    released.add(key)
        extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if extended:
            owned_claims.add((ns, str(extended)))
    return owned_claims, released


def _deallocated(claim: Obj) -> Obj:
    """A claim as it is once deallocated: no allocation, reservations or device status."""
    status = {k: v for k, v in (claim.get("status") or {}).items() if k not in ("allocation", "reservedFor", "devices")}
    return {**claim, "status": status}


def replacement(pod: Obj) -> Obj:
    """The pod its controller creates once ``pod`` is evicted: the same spec, no node, no
    claims of its own yet (they come from the templates again)."""
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"}
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
    return {**pod, "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def drain_state(state: ClusterState, drained: Sequence[str], all_pods: bool,
                gates: FeatureGates) -> tuple[ClusterState, list[Obj], set[tuple[str, str]]]:
    """(the state after the eviction, the evicted pods in queue order, the claims released)."""
    nodes = set(drained)
    uses = DraUse(state, gates)
    evicted = queue_order(p for p in state.pods if runs_on(p, nodes) and (all_pods or uses.uses(p)))
    owned, shared = released_claims(state, evicted)
    claims = []
    for claim in state.resource_claims:
        ns, name = object_key(claim)
        key = (ns or "default", name)
        if key in owned:
            continue  # deleted with its pod; the replacement gets a new one from the template
        claims.append(_deallocated(claim) if key in shared else claim)
    evicted_keys = {pod_key(p) for p in evicted}
    pods = [p for p in state.pods if pod_key(p) not in evicted_keys]
    new = derived_state(state, resource_claims=claims, pods=pods,
                        nodes=[n for n in state.nodes if node_name(n) not in nodes])
    return new, evicted, owned | shared


def drain_check(state: ClusterState, gates: FeatureGates, drained: Sequence[str], *, all_pods: bool = False,
                timeout: float | None = FILTER_TIMEOUT, index: "ClusterIndex | None" = None) -> DrainReport:
    """Evict the pods of ``drained`` and place them again (see the module docstring)."""
    from ..preview import candidate_nodes

    drained = check_nodes(state, drained)
    gone = set(drained)
    uses = DraUse(state, gates)
    evicted = queue_order(p for p in state.pods if runs_on(p, gone) and (all_pods or uses.uses(p)))
    owned, shared = released_claims(state, evicted)
    released = owned | shared
    # the snapshot as loaded, with an overlay: what drain_state writes out as a new state
    # (the released claims' devices free, the drained nodes out), without indexing it again
    candidates = [n for n in candidate_nodes(state) if node_name(n) not in gone]
    evaluator = PodEvaluator(state, gates, candidates, timeout=timeout, index=index)
    for pod in evicted:
        evaluator.scheduling.remove_pod(*pod_key(pod))  # its requests and ports leave the node with it
        evaluator.touched(str((pod.get("spec") or {}).get("nodeName")))
    placer = Placer(evaluator, candidates, frozenset(released))
    for key in owned:
        placer.evaluator.claims.pop(key, None)
    for key in shared:
        claim = placer.evaluator.claims.get(key)
        if claim is not None:
            placer.evaluator.claims[key] = _deallocated(claim)
    moves = []
    for pod in evicted:
        placed = placer.place(replacement(pod))
        moves.append(DrainMove(placed, priority(pod), str((pod.get("spec") or {}).get("nodeName"))))
    return DrainReport(list(drained), moves, sorted(f"{ns}/{name}" for ns, name in released))
