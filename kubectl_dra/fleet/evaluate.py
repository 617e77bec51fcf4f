"""One pod's question, asked the way ``kubectl dra preview pod/X`` and ``explain pod/X`` ask
it: the pod's claims resolved by the preview's resolver, then the preview's per-node loop
(whatever filters it runs, it runs here too), with explain's one-line reason per node.

Before the search, the DRA states that keep a pod waiting however many nodes there are, as
kube-scheduler's DynamicResources PreFilter finds them: a named claim that does not exist, a
claim being deleted, a claim reserved by other pods up to the reservedFor limit, a request
for a DeviceClass that does not exist. A claim from a template that the controller has not
created yet also keeps the pod waiting, but the pod is still evaluated with the claim the
template would give, so that the answer says what happens once it is created.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
import time

import orjson
from typing import TYPE_CHECKING, Hashable, Sequence

from ..errors import DraError
from ..limits import FILTER_TIMEOUT
from ..model.nodes import node_name
from ..gates import BASE_GATE, effective_gates
from ..preview.run import ALLOCATED, ERROR, NodeClaims, NodeOutcome, \
    evaluate_node, run_preview
from ..preview.targets import PreviewPlan, Resolver
from ..state import ClusterState
from ..state.snapshot import object_key
from ..types import Obj
from ..explain.verdict import NodeReasons
from ..preview.pods import PlanPods
from ..scheduling import SchedulingIndex
from .nodeclass import NodeClasses
from .pods import claim_entries, pod_key

if TYPE_CHECKING:
    from ..allocation import Allocator
    from ..allocation.index import ClusterIndex
    from ..allocation.inuse import InUse
    from ..scheduling.nodeinfo import NodeInfo
    from ..gates import FeatureGates

#: upstream's ResourceClaimReservedForMaxSize
RESERVED_FOR_LIMIT = 256

#: statuses of a pod's answer
FITS = "Fits"
UNSCHEDULABLE = "Unschedulable"
WAITING = "Waiting"
FAILED = "Error"


def node_reason(outcome: NodeOutcome) -> str:
    """Explain's one-line reason for a node of a preview run with ``explain_failures``
    (``fits``, the node's blockers or explain's reason, ``error: …``)."""
    if outcome.status == ALLOCATED:
        return "fits"
    if outcome.status == ERROR:
        return f"error: {outcome.error or 'allocation failed'}"
    return "; ".join(outcome.reasons) or "cannot allocate all claims"


@dataclass
class PodAnswer:
    """The answer for one pod (and every pod with the same spec)."""

    status: str
    #: the one-line answer: ``0/120 nodes fit: 100 …; 20 …``, ``would fit now on 3/120 nodes (best: n)``
    reason: str
    #: the reason the pod is grouped under in the summary
    headline: str
    fit: int | None = None
    total: int | None = None
    #: nodes that fit, best first
    nodes: list[str] = field(default_factory=list)
    #: (reason, nodes) for the nodes that do not fit, most frequent first
    reasons: list[tuple[str, int]] = field(default_factory=list)
    #: DRA states before the search (waiting for a claim, a claim being deleted, …)
    waiting: list[str] = field(default_factory=list)
    #: the claims the pod's answer covers (namespace/name, as the preview names them)
    claims: list[str] = field(default_factory=list)
    #: the plan behind the answer (None when no search ran): for gang and drain
    plan: PreviewPlan | None = field(default=None, repr=False, compare=False)

    @property
    def fits(self) -> bool:
        return self.status == FITS


def summary_of(fit: int, total: int, counts: Sequence[tuple[str, int]]) -> str:
    """``0/120 nodes fit: 100 reason; 20 reason`` (explain's summary words)."""
    head = f"{fit}/{total} node{'s' if total != 1 else ''} fit"
    return head + (": " + "; ".join(f"{n} {reason}" for reason, n in counts) if counts else "")


class PodEvaluator:
    """Asks pods' questions against one state: one index and allocator for every pod."""

    def __init__(self, state: ClusterState, gates: "FeatureGates", candidates: Sequence[Obj],
                 timeout: float | None = FILTER_TIMEOUT, index: "ClusterIndex | None" = None,
                 allocator: "Allocator | None" = None) -> None:
        from ..allocation import Allocator
        from ..allocation.index import ClusterIndex

        self.state = state
        self.gates = gates
        self.candidates = list(candidates)
        self.timeout = timeout
        self.index = index if index is not None else ClusterIndex(state)
        self.allocator = allocator if allocator is not None else Allocator(state, gates, self.index)
        self.claims: dict[tuple[str, str], Obj] = {}
        for claim in state.resource_claims:
            ns, name = object_key(claim)
            self.claims[(ns or "default", name)] = claim
        #: PodGroups as placing pods left them (their shared claims created), by (namespace, name)
        self.groups: dict[tuple[str, str], Obj] = {}
        self.templates: dict[str, list[Obj]] = {}
        for template in state.resource_claim_templates:
            self.templates.setdefault(object_key(template)[0] or "default", []).append(template)
        self.class_names = {object_key(c)[1] for c in state.device_classes}
        #: the reasons every command gives for a node (one per run over this snapshot)
        self.reasons = NodeReasons(state, gates, self.index)
        #: the snapshot's NodeInfo (bound pods per node) for the scheduler's other filters
        self.scheduling = SchedulingIndex.of_state(state, self.candidates)
        #: node names by id of the node object (the object held beside it), placement keys by node
        self._names: dict[int, str] = {}
        self._named: dict[int, Obj] = {}
        self._placements: dict[tuple[str, tuple[str, ...]], Hashable] = {}
        #: what the filters read of each node's NodeInfo (dropped for a node when a pod is (un)bound there)
        self._signatures: dict[str, Hashable] = {}
        #: the node classes under the snapshot's in-use devices (see run)
        self.classes = NodeClasses(self.allocator)

    # -- before the search

    def waiting(self, pod: Obj) -> tuple[list[str], list[str]]:
        """(states that stop the scheduler before any node is tried, claims not created yet)."""
        ns, _ = pod_key(pod)
        uid = (pod.get("metadata") or {}).get("uid")
        statuses = {s.get("name"): s.get("resourceClaimName")
                    for s in (pod.get("status") or {}).get("resourceClaimStatuses") or () if isinstance(s, dict)}
        hard: list[str] = []
        soft: list[str] = []
        for entry in claim_entries(pod):
            named = entry.get("resourceClaimName")
            name = named or statuses.get(entry.get("name"))
            claim = self.claims.get((ns, str(name))) if name else None
            if claim is None:
                if named:
                    hard.append(f'resourceclaim "{named}" not found')
                else:
                    soft.append(f"claim {entry.get('name')} from template {entry.get('resourceClaimTemplateName')} "
                                "not created yet")
                continue
            meta = claim.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                hard.append(f'resourceclaim "{name}" is being deleted')
                continue
            status = claim.get("status") or {}
            reserved = [r for r in status.get("reservedFor") or () if isinstance(r, dict)]
            if status.get("allocation") and len(reserved) >= RESERVED_FOR_LIMIT and \
                    not any(r.get("uid") == uid and uid for r in reserved):
                hard.append(f'resourceclaim "{name}" is in use: reserved by {len(reserved)} consumers, the limit')
            hard.extend(self._unknown_classes(claim, str(name)))
        return hard, soft

    def _unknown_classes(self, claim: Obj, name: str) -> list[str]:
        """``request R: device class C does not exist`` for an unallocated claim's requests."""
        if (claim.get("status") or {}).get("allocation"):
            return []
        found = []
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if not isinstance(request, dict):
                continue
            options = [request.get("exactly") or {}, *(request.get("firstAvailable") or ())]
            for option in options:
                cls = option.get("deviceClassName") if isinstance(option, dict) else None
                if cls and cls not in self.class_names:
                    found.append(f'resourceclaim "{name}", request {request.get("name")}: device class {cls} '
                                 "does not exist")
        return found

    # -- the search

    def plan_for(self, pod: Obj) -> PreviewPlan:
        """The pod's plan, resolved as ``preview pod/X`` resolves it (the state's pod is not changed)."""
        ns, _ = pod_key(pod)
        copy = {**pod, "metadata": {**(pod.get("metadata") or {}), "namespace": ns}}
        resolver = Resolver(self.state, ns, self.gates, support=self._referenced(copy, ns))
        resolver.add_pod(copy)
        return resolver.plan

    def _referenced(self, pod: Obj, ns: str) -> list[Obj]:
        """The state's claims, templates and PodGroup the pod names: the resolver finds them
        among these first (instead of a walk over every object of the state per lookup)."""
        found: list[Obj] = []
        statuses = [s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
                    if isinstance(s, dict)]
        extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        names = [e.get("resourceClaimName") for e in claim_entries(pod)] + statuses + [extended]
        for name in names:
            claim = self.claims.get((ns, str(name))) if name else None
            if claim is not None:
                found.append(claim)
        templates = {e.get("resourceClaimTemplateName") for e in claim_entries(pod)} - {None}
        group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        for obj in self.templates.get(ns, ()):
            if object_key(obj)[1] in templates:
                found.append(obj)
        if group:
            groups = [self.groups[(ns, group)]] if (ns, group) in self.groups else self.state.pod_groups
            for g in groups:
                if object_key(g) == (ns, group):
                    found.append(g)
                    for entry in (g.get("status") or {}).get("resourceClaimStatuses") or ():
                        claim = self.claims.get((ns, str(entry.get("resourceClaimName")))) \
                            if isinstance(entry, dict) else None
                        if claim is not None:
                            found.append(claim)
                    found.extend(t for t in self.templates.get(ns, ()) if t not in found)
        return found

    def run(self, plan: PreviewPlan, nodes: Sequence[Obj] | None = None, in_use: "InUse | None" = None,
            classes: NodeClasses | None = None) -> "Groups":
        """The preview's per-node evaluation of ``plan`` on ``nodes`` (default: the candidates),
        with explain's reasons for nodes that do not fit, as groups of nodes with one answer.

        Each node's own checks (node selector, affinity, taints, claims allocated elsewhere)
        run on that node, or once for nodes alike in what those checks read
        (:func:`placement_keys`); the allocation runs once per node class
        (:mod:`kubectl_dra.fleet.nodeclass`) and stands for the class's other nodes.
        ``in_use``/``classes``: the allocator's in-use devices and the classes under them
        (default: the snapshot's)."""
        nodes = self.candidates if nodes is None else nodes
        gates = effective_gates(self.gates)
        if not gates.enabled(BASE_GATE) or not nodes:
            result = run_preview(self.state, plan, gates, nodes, allocator=self.allocator, index=self.index,
                                 timeout=self.timeout, explain_failures=True)
            return Groups([(o, [o.node]) for o in result.nodes], len(result.nodes))
        if classes is None:
            classes = self.classes
        if in_use is None:
            in_use = self.allocator.in_use()
        deadline = time.monotonic() + self.timeout if self.timeout else None
        same = NodeClaims.of(plan, nodes[0]) if not plan.extended else None
        pods = PlanPods(self.scheduling, plan) if plan.pods else None
        interacts = pods is not None and any(f.interacts for f in pods.filters)
        # the node's own checks read only some labels, its taints, unschedulable and (for
        # pods) its NodeInfo: nodes alike in those, and in their class, get one answer
        placement = placement_keys(plan) if same is not None and not interacts else None
        groups: dict[Hashable, tuple[NodeOutcome, list[str]]] = {}
        refused: dict[Hashable, bool] = {}
        names = self._names
        for node in nodes:
            name = names.get(id(node))
            if name is None or self._named[id(node)] is not node:
                name = names[id(node)] = node_name(node)
                self._named[id(node)] = node
            if placement is not None:
                own: Hashable = (self._placement(node, name, placement),
                                 None if pods is None else self._signature(name))
                blocked = refused.get(own)
                if blocked is None:
                    blocked = refused[own] = (pods.filter(name) is not None or bool(plan.claim_blockers(node))) \
                        if pods is not None else bool(plan.blockers(node))
                key: Hashable = ("refused", own) if blocked else ("class", classes.key(node, in_use, name))
            else:
                blocked = (pods.filter(name) is not None or bool(plan.claim_blockers(node))) if pods is not None \
                    else bool(plan.blockers(node))
                key = ("refused", name) if blocked else \
                    ("class", classes.key(node, in_use, name), None if same is not None else name)
            group = groups.get(key)
            if group is None:
                groups[key] = (self.evaluate_node(plan, node, deadline, same, pods), [name])
            else:
                group[1].append(name)
        return Groups(list(groups.values()), len(nodes))

    def _signature(self, name: str) -> Hashable:
        """:func:`_info_signature` of a node, remembered until :meth:`touched` says it changed."""
        found = self._signatures.get(name)
        if found is None:
            found = self._signatures[name] = _info_signature(self.scheduling.get(name))
        return found

    def touched(self, node: str) -> None:
        """A pod was bound to or unbound from ``node`` in the NodeInfo index."""
        self._signatures.pop(node, None)

    def _placement(self, node: Obj, name: str, keys: tuple[str, ...]) -> Hashable:
        """:func:`node_placement`, remembered per node and keys."""
        found = self._placements.get((name, keys))
        if found is None:
            found = self._placements[(name, keys)] = node_placement(node, keys)
        return found

    def evaluate_node(self, plan: PreviewPlan, node: Obj, deadline: float | None = None,
                      claims: NodeClaims | None = None, pods: "PlanPods | None" = None) -> NodeOutcome:
        """The preview's evaluation of one node (the scheduler's filters for the plan's pods,
        then the allocation), with the reason every command gives for a node that does not fit."""
        outcome = evaluate_node(self.allocator, plan, node, explain_failures=True, deadline=deadline, claims=claims,
                                reasons=self.reasons, pods=pods)
        outcome.tracer = None  # (the trace is not kept: answers hold only their words)
        return outcome

    def evaluate(self, pod: Obj) -> PodAnswer:
        """The answer for ``pod`` alone in the state."""
        hard, soft = self.waiting(pod)
        if hard:
            return PodAnswer(WAITING, "; ".join(hard), hard[0], waiting=hard)
        try:
            plan = self.plan_for(pod)
        except DraError as exc:
            return PodAnswer(FAILED, exc.message, f"error: {exc.message}")
        claims = [f"{r['namespace']}/{r['name']}" for r in plan.claim_refs()]
        result = self.run(plan)
        return answer_from(result, plan, claims, soft)


def placement_keys(plan: PreviewPlan) -> tuple[str, ...] | None:
    """The node label keys the plan's pods' own node checks read (node selector, required node
    affinity), when those checks read nothing else of a node but its taints and whether it is
    unschedulable; None when they may read the node's name (a pod bound by name, a field
    selector, a claim allocated with a node selector)."""
    keys: set[str] = set()
    for claim in plan.claims:
        if claim.allocation is not None and claim.allocation.get("nodeSelector"):
            return None
    for pod in plan.pods:
        spec = pod.get("spec") or {}
        if spec.get("nodeName"):
            return None
        keys.update(str(k) for k in (spec.get("nodeSelector") or {}))
        required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                    .get("requiredDuringSchedulingIgnoredDuringExecution")) or {}
        for term in required.get("nodeSelectorTerms") or ():
            if not isinstance(term, dict) or term.get("matchFields"):
                return None
            keys.update(str(e.get("key")) for e in term.get("matchExpressions") or () if isinstance(e, dict))
    return tuple(sorted(keys))


def _info_signature(info: "NodeInfo | None") -> Hashable:
    """What the scheduler's resource, port and pod-count filters read of a node's NodeInfo."""
    if info is None:
        return None
    return (len(info.pods), tuple(sorted(info.requested.items())),
            tuple(sorted((info.allocatable or {}).items())) if info.allocatable is not None else None,
            tuple(sorted((ip, tuple(sorted(ports))) for ip, ports in info.used_ports.items())))


def node_placement(node: Obj, keys: tuple[str, ...]) -> Hashable:
    """What a pod's own node checks read of ``node`` (see :func:`placement_keys`)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    spec = node.get("spec") or {}
    taints = spec.get("taints")
    return (tuple(labels.get(k) for k in keys), bool(spec.get("unschedulable")),
            orjson.dumps(taints, option=orjson.OPT_SORT_KEYS) if taints else b"")


def _headline(ordered: Sequence[tuple[str, int]]) -> str:
    """The reason a pod is grouped under: the most frequent among the nodes the pod may go to
    (not refused by its own placement, the scheduler's ``node(s) …`` words), else the most frequent."""
    for reason, _ in ordered:
        if not reason.startswith("node(s) "):
            return reason
    return ordered[0][0] if ordered else "no nodes"


@dataclass
class Groups:
    """A pod's answer per group of nodes: (the answer for the group's first node, every node of
    the group); other nodes' answers are the first's with its name replaced by theirs."""

    groups: list[tuple[NodeOutcome, list[str]]]
    total: int

    def fitting(self) -> list[str]:
        """The nodes that fit, ranked as the preview ranks them (score, then name)."""
        ranked = sorted(((-o.score, name) for o, names in self.groups if o.allocated for name in names))
        return [name for _, name in ranked]

    def reason_counts(self) -> list[tuple[str, int]]:
        """(explain's node reason, nodes) for the nodes that do not fit, most frequent first."""
        counts: Counter[str] = Counter()
        for outcome, names in self.groups:
            if outcome.allocated:
                continue
            reason = node_reason(outcome)
            if outcome.node in reason:  # (a reason naming the node: each node's own words)
                counts.update(reason.replace(outcome.node, name) for name in names)
            else:
                counts[reason] += len(names)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    @property
    def all_errors(self) -> bool:
        return bool(self.groups) and all(o.status == ERROR for o, _ in self.groups)


def answer_from(result: Groups, plan: PreviewPlan, claims: list[str], soft: Sequence[str] = ()) -> PodAnswer:
    """A pod's answer from its evaluation (``soft``: claims not created yet)."""
    total = result.total
    fitting = result.fitting()
    ordered = result.reason_counts()
    waiting = list(soft)
    if fitting:
        status = FITS
        reason = f"would fit now on {len(fitting)}/{total} node{'s' if total != 1 else ''} (best: {fitting[0]})"
        headline = "would fit now"
    else:
        status = FAILED if result.all_errors else UNSCHEDULABLE
        reason = summary_of(0, total, ordered)
        headline = _headline(ordered)
    if waiting:
        # the scheduler waits for the claims first; the search says what happens once they exist
        then = "would fit once created" if fitting else f"then: {headline}"
        reason = "; ".join(waiting) + f"; once created: {reason}"
        headline = f"ResourceClaim from a template not created yet ({then})"
        status = WAITING
    return PodAnswer(status, reason, headline, len(fitting), total, fitting, ordered, waiting, claims, plan=plan)


def node_names(nodes: Sequence[Obj]) -> list[str]:
    return [node_name(n) for n in nodes]
