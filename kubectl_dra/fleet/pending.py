"""Every pending pod and why: each distinct pod spec asked once (see
:mod:`kubectl_dra.fleet.evaluate`), the answer applied to every pod with that spec, pods
grouped by their reason; and the stranded devices that nobody running uses.

``PendingReport.to_dict()`` is the ``kind: Pending`` document (``kubectl dra pending -o
json|yaml``)::

    apiVersion, kind   kubectl-dra/v1, Pending
    summary            the first line of the table
    featureGates       the gates the allocator ran with
    nodes              nodes considered
    hypotheticalNodes  {node: the node it copies} (--add-nodes), cordoned: [node] (--cordon)
    specs              distinct pod specs evaluated
    groups             [{reason, pods}] most pods first
    pods               [{namespace, name, status (Fits|Unschedulable|Waiting|Error), reason,
                         fit, total, nodes (that fit, best first), reasons [{reason, nodes}],
                         waiting [DRA states before the search], claims, priority, spec}]
    gangs              [{name, status (Fits|FitsJointlyOnly|DoesNotFit|Undecided), summary, pods,
                         podByPod [{namespace, name, node, devices, reason}], joint (same, or
                         null), searched, timedOut, steps}] per PodGroup with pending pods
    stranded           [{namespace, name, devices, why, since, ageSeconds}]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Callable, Sequence

from ..state import ClusterState
from ..types import Obj
from .evaluate import FITS, PodAnswer, PodEvaluator
from .gang import GangResult, place_gang
from .placement import Placer
from .pods import DraUse, is_pending, pod_key, priority, queue_order, spec_signature
from .stranded import StrandedClaim, stranded_claims

#: nodes that fit listed per pod in the document (the count is exact)
NODES_LISTED = 20


@dataclass
class PendingPod:
    """One pending pod and the answer for its spec."""

    namespace: str
    name: str
    priority: int
    spec: int
    answer: PodAnswer

    def to_dict(self) -> Obj:
        a = self.answer
        return {"namespace": self.namespace, "name": self.name, "status": a.status, "reason": a.reason,
                "fit": a.fit, "total": a.total, "nodes": a.nodes[:NODES_LISTED],
                "reasons": [{"reason": r, "nodes": n} for r, n in a.reasons], "waiting": list(a.waiting),
                "claims": list(a.claims), "priority": self.priority, "spec": self.spec}


@dataclass
class PendingReport:
    """The pending pods, their groups and the stranded claims."""

    pods: list[PendingPod]
    specs: int
    nodes: int
    stranded: list[StrandedClaim] = field(default_factory=list)
    gates: Obj = field(default_factory=dict)
    hypothetical: dict[str, str] = field(default_factory=dict)
    cordoned: list[str] = field(default_factory=list)
    #: every pending pod (True) or only those with DRA claims (False)
    all_pods: bool = False
    #: the PodGroups with pending pods, placed as gangs
    gangs: list[GangResult] = field(default_factory=list)

    def groups(self) -> list[tuple[str, int]]:
        """(reason, pods) most pods first, then by reason."""
        counts = Counter(p.answer.headline for p in self.pods)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    @property
    def blocked(self) -> list[PendingPod]:
        """Pods that cannot be placed now."""
        return [p for p in self.pods if not p.answer.fits]

    def summary(self) -> str:
        what = "pending pod" + ("s" if len(self.pods) != 1 else "") + ("" if self.all_pods else " with DRA claims")
        if not self.pods:
            return f"no {what}"
        return f"{len(self.pods)} {what}: " + "; ".join(f"{n} {reason}" for reason, n in self.groups())

    def to_dict(self) -> Obj:
        return {"apiVersion": "kubectl-dra/v1", "kind": "Pending", "summary": self.summary(),
                "featureGates": self.gates, "nodes": self.nodes, "hypotheticalNodes": dict(self.hypothetical),
                "cordoned": list(self.cordoned), "specs": self.specs,
                "groups": [{"reason": r, "pods": n} for r, n in self.groups()],
                "pods": [p.to_dict() for p in self.pods], "gangs": [g.to_dict() for g in self.gangs],
                "stranded": [c.to_dict() for c in self.stranded]}


def pending_pods(state: ClusterState, evaluator: PodEvaluator, namespace: str | None,
                 all_pods: bool = False) -> list[Obj]:
    """The pending pods to report: in ``namespace`` (None: every namespace), with DRA claims
    unless ``all_pods``."""
    uses = DraUse(state, evaluator.gates)
    return [p for p in state.pods if is_pending(p) and (namespace is None or pod_key(p)[0] == namespace)
            and (all_pods or uses.uses(p))]


def pending_report(state: ClusterState, evaluator: PodEvaluator, namespace: str | None, *, all_pods: bool = False,
                   now: datetime | None = None, progress: Callable[[int, int], None] | None = None,
                   gang_timeout: float | None = 10.0) -> PendingReport:
    """Every pending pod of ``namespace`` (None: all) with its answer; each distinct spec is
    evaluated once."""
    pods = pending_pods(state, evaluator, namespace, all_pods)
    by_spec: dict[bytes, int] = {}
    answers: list[PodAnswer] = []
    out: list[PendingPod] = []
    for pod in pods:
        signature = spec_signature(pod, evaluator.claims)
        spec = by_spec.get(signature)
        if spec is None:
            spec = by_spec[signature] = len(answers)
            answers.append(evaluator.evaluate(pod))
            if progress is not None:
                progress(len(answers), len(pods))
        ns, name = pod_key(pod)
        out.append(PendingPod(ns, name, priority(pod), spec, _own_claims(answers[spec], pod)))
    order = {reason: i for i, (reason, _) in enumerate(Counter(p.answer.headline for p in out).most_common())}
    out.sort(key=lambda p: (order[p.answer.headline], p.namespace, p.name))
    stranded = [c for c in stranded_claims(state, now) if namespace is None or c.namespace == namespace]
    report = PendingReport(out, len(answers), len(evaluator.candidates), stranded, all_pods=all_pods)
    report.gangs = pending_gangs(evaluator, pods, gang_timeout)
    return report


def pending_gangs(evaluator: PodEvaluator, pods: Sequence[Obj], timeout: float | None) -> list[GangResult]:
    """For every PodGroup with pending pods among ``pods``: the gang's answer (its pending pods
    placed pod by pod, then jointly when that fails)."""
    groups: dict[tuple[str, str], list[Obj]] = {}
    for pod in pods:
        group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if group:
            groups.setdefault((pod_key(pod)[0], str(group)), []).append(pod)
    results = []
    for (ns, group), members in sorted(groups.items()):
        placer = Placer(evaluator, evaluator.candidates)
        results.append(place_gang(placer, queue_order(members), f"podgroup/{ns}/{group}", timeout))
    return results


def _own_claims(answer: PodAnswer, pod: Obj) -> PodAnswer:
    """The spec's answer with this pod's claim names (claims from templates are named after the pod)."""
    names = claim_names(pod)
    return answer if names == answer.claims else replace(answer, claims=names)


def claim_names(pod: Obj) -> list[str]:
    """The pod's claims as people know them: the claim's name when it exists, else
    ``template/NAME`` for a claim not created yet."""
    statuses = {s.get("name"): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or () if isinstance(s, dict)}
    names = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(entry, dict):
            continue
        name = entry.get("resourceClaimName") or statuses.get(entry.get("name"))
        names.append(str(name) if name else f"template/{entry.get('resourceClaimTemplateName')}")
    return names


def fits_count(pods: Sequence[PendingPod]) -> int:
    return sum(1 for p in pods if p.answer.status == FITS)
