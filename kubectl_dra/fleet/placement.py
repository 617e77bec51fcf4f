"""Placing pods one after another, each committed before the next, as kube-scheduler binds
them: the state the later pods see holds the devices the earlier ones took, and the pods
themselves (their requests, ports and labels, in the NodeInfo index the other filters read).

A :class:`Placer` owns an allocator whose in-use devices are an overlay of the snapshot's
(the snapshot itself is never changed), the node classes under that overlay, and the claims
that became allocated on the way (a claim several pods share is allocated by the first).
Drain-check and gangs place through it; a gang's search for a joint placement copies it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from ..allocation import Allocator
from ..errors import DraError
from ..model.nodes import node_name
from ..preview.pods import PlanPods
from ..preview.run import NodeOutcome, evaluate_node
from ..types import Obj
from .evaluate import PodAnswer, PodEvaluator, answer_from, FAILED, WAITING
from .nodeclass import NodeClasses
from .pods import pod_key
from ..state.snapshot import object_key

if TYPE_CHECKING:
    from ..allocation.inuse import InUse
    from ..preview.targets import PreviewClaim


class OverlayAllocator(Allocator):
    """The allocator, seeing the snapshot's in-use devices plus those committed since."""

    overlay: "InUse | None" = None

    def in_use(self, exclude: frozenset[tuple[str, str]] = frozenset()) -> "InUse":
        if self.overlay is None:
            self.overlay = super().in_use(exclude).copy()
        return self.overlay


@dataclass
class Placed:
    """Where one pod went, or why it could not go anywhere."""

    namespace: str
    name: str
    answer: PodAnswer
    #: the node chosen (None: none fits)
    node: str | None = None
    #: (claim namespace/name, AllocationResult) of the claims allocated for it
    allocations: list[tuple[str, Obj]] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return self.node is not None

    def devices(self) -> list[str]:
        return [f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
                for _, allocation in self.allocations
                for r in (allocation.get("devices") or {}).get("results") or ()]


class Placer:
    """Commits pods to nodes one by one over one snapshot (see the module docstring)."""

    def __init__(self, evaluator: PodEvaluator, nodes: Sequence[Obj],
                 released: frozenset[tuple[str, str]] = frozenset()) -> None:
        """``released``: claims (namespace, name) whose devices count as free from the start."""
        # a copy of the evaluator, asking through this placer's allocator (the given one is left as it is)
        self.evaluator = copy.copy(evaluator)
        self.evaluator.claims = dict(evaluator.claims)
        self.evaluator.groups = dict(evaluator.groups)
        self.nodes = list(nodes)
        self.by_name = {node_name(n): n for n in self.nodes}
        #: pods this placer bound in the evaluator's NodeInfo index (shared with its forks)
        self.bound: list[tuple[str, str, str]] = []
        self.allocator = OverlayAllocator(evaluator.state, evaluator.gates, evaluator.index)
        self.allocator.overlay = Allocator.in_use(self.allocator, released).copy()
        self.evaluator.allocator = self.allocator
        self.classes = NodeClasses(self.allocator)
        self.evaluator.classes = self.classes

    @property
    def in_use(self) -> "InUse":
        return self.allocator.in_use()

    def answer(self, pod: Obj) -> PodAnswer:
        """The pod's answer in the state committed so far (claims from templates not created
        yet are taken as they will be created: placing is about what happens then)."""
        hard, _ = self.evaluator.waiting(pod)
        if hard:
            return PodAnswer(WAITING, "; ".join(hard), hard[0], waiting=hard)
        try:
            plan = self.evaluator.plan_for(pod)
        except DraError as exc:
            return PodAnswer(FAILED, exc.message, f"error: {exc.message}")
        claims = [f"{r['namespace']}/{r['name']}" for r in plan.claim_refs()]
        result = self.evaluator.run(plan, self.nodes, in_use=self.in_use, classes=self.classes)
        return answer_from(result, plan, claims)

    def place(self, pod: Obj, node: str | None = None) -> Placed:
        """Place ``pod`` on the best node that fits (or on ``node``), committing its devices."""
        ns, name = pod_key(pod)
        answer = self.answer(pod)
        if answer.plan is None or (node is None and not answer.nodes) or (node is not None and node not in answer.nodes):
            return Placed(ns, name, answer)
        chosen = node if node is not None else answer.nodes[0]
        pods = PlanPods(self.evaluator.scheduling, answer.plan) if answer.plan.pods else None
        outcome = evaluate_node(self.allocator, answer.plan, self.by_name[chosen], explain_failures=False, pods=pods)
        if not outcome.allocated:  # (cannot happen: the class answered for this node)
            return Placed(ns, name, answer)
        allocations = self.commit(outcome)
        self.evaluator.scheduling.add_pod(pod, chosen)  # its requests, ports and labels count from now on
        self.evaluator.touched(chosen)
        self.bound.append((ns, name, chosen))
        return Placed(ns, name, answer, chosen, allocations)

    def release(self) -> None:
        """Unbind the pods this placer bound in the (shared) NodeInfo index, last first."""
        while self.bound:
            ns, name, node = self.bound.pop()
            self.evaluator.scheduling.remove_pod(ns, name)
            self.evaluator.touched(node)

    def commit(self, outcome: NodeOutcome) -> list[tuple[str, Obj]]:
        """Take the devices of ``outcome``'s new allocations; claims shared by name become allocated."""
        overlay = self.in_use
        consumable = self.allocator.features.consumable_capacity
        fresh: dict[tuple[str, str], list[str]] = {}
        done: list[tuple[str, Obj]] = []
        for claim, allocation in outcome.allocations:
            if claim.allocation is not None:
                continue  # allocated before: nothing new is taken
            who = f"{claim.namespace}/{claim.name}"
            for device in overlay.add_allocation(who, allocation, consumable):
                fresh.setdefault(device[:2], []).append(device[2])
            done.append((who, allocation))
            group = str(claim.origin or "").startswith("podgroup/")
            if not claim.generated or group:
                stored = copy.copy(claim.claim)
                stored["status"] = {**(claim.claim.get("status") or {}), "allocation": allocation}
                self.evaluator.claims[claim.key] = stored  # the next pods naming it find it allocated
                if claim.generated:
                    self._created_for_group(claim)
        seen = self.allocator.pools_for(self.by_name[outcome.node])
        views = {p.id: p for p in (*seen.pools, *seen.problems)}
        shared = False
        for pool_id, names in fresh.items():
            view = views.get(pool_id)
            if view is not None:
                self.allocator.note_allocated(overlay, view, names)
                shared = shared or any(sv.node_name != outcome.node for sv in view.slices)
        if shared:
            self.classes.forget_all()
        else:
            self.classes.forget(outcome.node)
        return done

    def _created_for_group(self, claim: "PreviewClaim") -> None:
        """A PodGroup's claim from a template, allocated with the group's first pod: the group's
        status names it from now on, so the next pods of the group share it."""
        words = str(claim.origin).split(" ")
        _, ns, group_name = words[0].split("/", 2)
        template = next((w[len("template/"):] for w in words[1:] if w.startswith("template/")), None)
        key = (ns, group_name)
        group = self.evaluator.groups.get(key) or next(
            (g for g in self.evaluator.state.pod_groups if object_key(g) == key), None)
        if group is None:
            return
        entries = [e for e in (group.get("spec") or {}).get("resourceClaims") or ()
                   if isinstance(e, dict) and e.get("resourceClaimTemplateName") == template]
        if len(entries) != 1:
            return  # (several entries from one template: which one this is cannot be told)
        status = dict(group.get("status") or {})
        status["resourceClaimStatuses"] = [*(status.get("resourceClaimStatuses") or ()),
                                           {"name": entries[0].get("name"), "resourceClaimName": claim.name}]
        self.evaluator.groups[key] = {**group, "status": status}

    def fork(self) -> "Placer":
        """A copy to try placements on without touching this one (a gang's search)."""
        # (the NodeInfo index is shared: a fork's binds are undone with its release())
        other = object.__new__(Placer)
        other.evaluator = copy.copy(self.evaluator)
        other.evaluator.claims = dict(self.evaluator.claims)
        other.evaluator.groups = dict(self.evaluator.groups)
        other.evaluator._signatures = self.evaluator._signatures  # (follows the shared NodeInfo index)
        other.nodes = self.nodes
        other.by_name = self.by_name
        other.bound = []
        other.allocator = OverlayAllocator(self.evaluator.state, self.evaluator.gates, self.evaluator.index)
        other.allocator.overlay = self.in_use.copy()
        other.evaluator.allocator = other.allocator
        other.classes = self.classes.copy(other.allocator)
        other.evaluator.classes = other.classes
        return other
