"""Across nodes: every node's explanation for one target, the summary line, and the
findings that hold on every node."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from .funnel import ERROR, NodeExplanation, RequestExplanation
from ..types import ClaimKey


@dataclass
class Explanation:
    """Every node's explanation for one target, plus cluster-wide findings."""

    target: str
    nodes: list[NodeExplanation]
    #: findings that hold on every node ("no device of class X exists in the cluster")
    cluster: list[str] = field(default_factory=list)
    #: the claims allocated together (namespace, name), in allocation order
    claims: list[ClaimKey] = field(default_factory=list)
    #: for pods that fit nowhere: kube-scheduler's FailedScheduling line
    fit_error: str = ""
    #: what could not be checked for the pods (volumes, unknown node resources)
    notes: list[str] = field(default_factory=list)

    @property
    def fitting(self) -> list[NodeExplanation]:
        return [n for n in self.nodes if n.fits]

    def reason_counts(self) -> list[tuple[str, int]]:
        """(reason, number of nodes) for the nodes that do not fit, most frequent first."""
        counts = Counter(n.reason for n in self.nodes if not n.fits)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def summary(self) -> str:
        """``0/50 nodes fit: 42 no gpu.example.com device; 6 all matching devices in use``."""
        total = len(self.nodes)
        head = f"{len(self.fitting)}/{total} node{'s' if total != 1 else ''} fit"
        parts = [f"{n} {reason}" for reason, n in self.reason_counts()]
        prefix = f"{self.target}: " if self.target else ""
        text = prefix + head + (": " + "; ".join(parts) if parts else "")
        if self.cluster and not self.fitting:
            text += " (" + "; ".join(self.cluster) + ")"
        return text


def cluster_findings(nodes: Sequence[NodeExplanation], every_node: bool = True) -> list[str]:
    """Requests that no node can serve for a cluster-wide reason: no device of the class
    exists on any node, or the request's selectors match none of them. ``every_node``:
    the nodes are the whole cluster (else the findings speak of the nodes asked for)."""
    if any(node.pools_skipped for node in nodes):
        return []  # the skipped pools may hold such devices: no cluster-wide claim
    where = "in the cluster" if every_node else "on the nodes asked for"
    findings: list[str] = []
    by_request: dict[tuple[ClaimKey, str], list[RequestExplanation]] = {}
    for node in nodes:
        if node.status == ERROR:
            continue
        for req in node.requests:
            by_request.setdefault((req.claim, req.spec.name), []).append(req)
    for (claim, name), reqs in by_request.items():
        evaluated = [r for r in reqs if r.evaluated]
        if not evaluated or any(r.allocated for r in reqs):
            continue
        cls = evaluated[0].spec.device_class or "matching"
        if all(r.in_class == 0 for r in evaluated):
            findings.append(f"no device of class {cls} exists {where}")
        elif all(r.matching == 0 for r in evaluated):
            findings.append(f"the selectors of request {claim[0]}/{claim[1]}:{name} match no {cls} device {where}")
    return list(dict.fromkeys(findings))


def explanation(target: str, nodes: Sequence[NodeExplanation], every_node: bool = True,
                claims: Sequence[ClaimKey] = ()) -> Explanation:
    """Aggregate node explanations (ordered: fitting nodes first, then by name)."""
    ordered = sorted(nodes, key=lambda n: (not n.fits, n.node))
    return Explanation(target, ordered, cluster_findings(ordered, every_node), list(claims))
