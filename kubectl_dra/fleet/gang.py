"""Gangs: pods that must all be placed (a PodGroup's pods, or N replicas of one pod).

First as kube-scheduler places them: one at a time in its queue order, each on the best
node for it and committed before the next (:class:`~kubectl_dra.fleet.placement.Placer`).
When that leaves a pod without a node, a search for a joint placement: depth first over the
pods in the same order, trying for each pod the nodes that fit it in the state the earlier
choices left, best first, and going back on a dead end. Nodes that are interchangeable for
what remains (the same node class, labels and taints) are tried once. The search is bounded
by a deadline; when it runs out, the answer says so (neither found nor ruled out).

A placement the search finds while the scheduler's order fails is a real gap: the scheduler
places a gang pod by pod and can miss a placement that exists.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Hashable, Sequence

import orjson

from ..model.nodes import node_name
from ..types import Obj
from .placement import Placed, Placer
from .pods import pod_key

if TYPE_CHECKING:
    from ..preview.targets import PreviewPlan

#: answers of a gang
FITS = "Fits"
JOINT_ONLY = "FitsJointlyOnly"
NO_PLACEMENT = "DoesNotFit"
UNDECIDED = "Undecided"


class _OutOfTime(Exception):
    """The joint search ran past its deadline."""


@dataclass
class GangResult:
    """Pod by pod, then (when that fails) the joint search."""

    name: str
    #: the scheduler's order: where each pod went, up to the first that found no node
    greedy: list[Placed]
    #: the joint placement found (None: none found)
    joint: list[Placed] | None = None
    #: whether the joint search ran, and whether it ran out of time
    searched: bool = False
    timed_out: bool = False
    steps: int = 0
    pods: list[str] = field(default_factory=list)

    @property
    def greedy_fits(self) -> bool:
        return len(self.greedy) == len(self.pods) and all(p.placed for p in self.greedy)

    @property
    def status(self) -> str:
        if self.greedy_fits:
            return FITS
        if self.joint is not None:
            return JOINT_ONLY
        return UNDECIDED if self.timed_out else NO_PLACEMENT

    @property
    def fits(self) -> bool:
        return self.status in (FITS, JOINT_ONLY)

    def summary(self) -> str:
        n = len(self.pods)
        if self.greedy_fits:
            return f"{self.name}: all {n} pods fit, placed one at a time as the scheduler places them"
        stuck = next((p for p in self.greedy if not p.placed), None)
        failed = (f"pod by pod (the scheduler's order) {len(self.greedy) - 1} of {n} are placed, then "
                  f"{stuck.namespace}/{stuck.name} finds no node ({stuck.answer.reason})") if stuck else \
            f"pod by pod, not all {n} are placed"
        if self.joint is not None:
            return (f"{self.name}: the gang fits, but not in the scheduler's pod-by-pod order: {failed}; "
                    f"a joint placement of all {n} exists (below)")
        if self.timed_out:
            return f"{self.name}: {failed}; no joint placement found before the time limit ({self.steps} tried)"
        return f"{self.name}: the gang does not fit: {failed}; no joint placement exists ({self.steps} tried)"

    def to_dict(self) -> Obj:
        def placed(p: Placed) -> Obj:
            return {"namespace": p.namespace, "name": p.name, "node": p.node, "devices": p.devices(),
                    "reason": None if p.placed else p.answer.reason}

        return {"name": self.name, "status": self.status, "summary": self.summary(), "pods": list(self.pods),
                "podByPod": [placed(p) for p in self.greedy],
                "joint": None if self.joint is None else [placed(p) for p in self.joint],
                "searched": self.searched, "timedOut": self.timed_out, "steps": self.steps}


def label_keys(pods: Sequence[Obj]) -> tuple[str, ...] | None:
    """The node label keys anything in the pods' specs may read (node selectors, affinity,
    topology keys of spreading and pod affinity); None when they may read a node's name."""
    keys: set[str] = set()
    stack: list[object] = []
    for pod in pods:
        spec = pod.get("spec") or {}
        keys.update(str(k) for k in (spec.get("nodeSelector") or {}))
        stack += [spec.get("affinity"), spec.get("topologySpreadConstraints")]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("matchFields"):
                return None
            for field_name in ("key", "topologyKey"):
                if isinstance(item.get(field_name), str):
                    keys.add(item[field_name])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return tuple(sorted(keys))


def _symmetry(placer: Placer, node: Obj, keys: tuple[str, ...] | None) -> Hashable:
    """Nodes with equal keys are interchangeable for the rest of a gang: same class under the
    current devices in use, same values of the labels the gang's pods read (``keys``; None:
    the node's name may matter, so no two nodes are alike), same taints."""
    if keys is None:
        return node_name(node)
    labels = (node.get("metadata") or {}).get("labels") or {}
    spec = node.get("spec") or {}
    return (placer.classes.key(node, placer.in_use, node_name(node)), tuple(labels.get(k) for k in keys),
            orjson.dumps([spec.get("taints"), spec.get("unschedulable")], option=orjson.OPT_SORT_KEYS))


def place_gang(placer: Placer, pods: Sequence[Obj], name: str, timeout: float | None) -> GangResult:
    """Place ``pods`` (in the scheduler's queue order) pod by pod, then search jointly if needed.
    ``placer`` is not changed (the work happens on forks of it)."""
    refs = ["/".join(pod_key(p)) for p in pods]
    greedy: list[Placed] = []
    work = placer.fork()
    for pod in pods:
        placed = work.place(pod)
        greedy.append(placed)
        if not placed.placed:
            break
    work.release()
    result = GangResult(name, greedy, pods=refs)
    if result.greedy_fits:
        return result
    result.searched = True
    deadline = time.monotonic() + timeout if timeout else None
    counter = [0]
    keys = label_keys(pods)

    def search(current: Placer, i: int) -> list[Placed] | None:
        if i == len(pods):
            return []
        if deadline is not None and time.monotonic() > deadline:
            raise _OutOfTime()
        answer = current.answer(pods[i])
        tried: set[Hashable] = set()
        for candidate in answer.nodes:
            key = _symmetry(current, current.by_name[candidate], keys)
            if key in tried:
                continue
            tried.add(key)
            counter[0] += 1
            fork = current.fork()
            placed = fork.place(pods[i], candidate)
            try:
                if not placed.placed:
                    continue
                rest = search(fork, i + 1)
                if rest is not None:
                    return [placed, *rest]
            finally:
                fork.release()  # (the NodeInfo index is shared: leave it as it was)
        return None

    try:
        result.joint = search(placer.fork(), 0)
    except _OutOfTime:
        result.timed_out = True
    result.steps = counter[0]
    return result


def replica_pods(plan: "PreviewPlan", count: int) -> list[Obj]:
    """``count`` replicas of a plan's one pod (its claims from templates made per replica, claims
    it names shared), or of pods using one template's claim; a :class:`UsageError` otherwise."""
    from ..errors import UsageError

    templates = {str(c.origin)[len("template/"):] for c in plan.claims if str(c.origin).startswith("template/")}
    if len(plan.pods) == 1 and not templates:
        base = plan.pods[0]
    elif not plan.pods and len(templates) == 1 and len(plan.claims) == 1:
        ns = plan.claims[0].namespace
        base = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": next(iter(templates)), "namespace": ns},
                "spec": {"resourceClaims": [{"name": "claim", "resourceClaimTemplateName": next(iter(templates))}],
                         "containers": [{"name": "main", "image": "-", "resources": {"claims": [{"name": "claim"}]}}]}}
    else:
        raise UsageError("--gang takes one pod or one template (pod/NAME, template/NAME or a pod in -f)")
    meta = base.get("metadata") or {}
    spec = {k: v for k, v in (base.get("spec") or {}).items() if k != "nodeName"}
    pods = []
    for i in range(1, count + 1):
        name = f"{meta.get('name')}-gang-{i}"
        pods.append({**base, "metadata": {"name": name, "namespace": meta.get("namespace") or "default",
                                          "labels": meta.get("labels") or {}},
                     "spec": spec, "status": {"phase": "Pending"}})
    return pods
