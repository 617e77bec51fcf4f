"""InterPodAffinity: the pod's required pod affinity and anti-affinity, and the required
anti-affinity of the pods already bound (against this pod).

Counts per topology pair (key, value) are made once per pod (the scheduler's PreFilter)
and updated as pods are added, as upstream's preFilterState is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import InputError
from .labels import Requirement, Selector, parse_selector
from .nodeinfo import NodeInfo, PodInfo, SchedulingIndex
from .status import Status

NAME = "InterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
HOSTNAME = "kubernetes.io/hostname"

Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Term:
    """One required PodAffinityTerm, parsed (upstream's AffinityTerm)."""

    selector: Selector
    namespaces: frozenset[str]
    namespace_selector: Selector | None
    topology_key: str

    def matches(self, pod: PodInfo, namespace_labels: Mapping[str, str]) -> bool:
        """The pod is in one of the term's namespaces and its labels match."""
        in_namespace = pod.namespace in self.namespaces or (
            self.namespace_selector is not None and self.namespace_selector.matches(namespace_labels))
        return in_namespace and self.selector.matches(pod.labels)


def parse_terms(pod: Mapping[str, Any], kind: str, where: str) -> list[Term]:
    """The required terms of ``podAffinity`` or ``podAntiAffinity``; :class:`InputError`
    naming the pod and field for an empty topologyKey or a malformed selector."""
    spec = pod.get("spec") or {}
    meta = pod.get("metadata") or {}
    own_ns = str(meta.get("namespace") or "default")
    labels = meta.get("labels") or {}
    raw = ((spec.get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    terms = []
    for i, term in enumerate(raw):
        path = f"{where}: spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"
        term = term or {}
        key = term.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise InputError(f"{path}.topologyKey: Required value: can not be empty")
        selector = parse_selector(term.get("labelSelector"), f"{path}.labelSelector")
        extra = tuple(Requirement(str(k), "In", frozenset([str(labels[k])]))
                      for k in term.get("matchLabelKeys") or [] if k in labels)
        extra += tuple(Requirement(str(k), "NotIn", frozenset([str(labels[k])]))
                       for k in term.get("mismatchLabelKeys") or [] if k in labels)
        ns_selector_raw = term.get("namespaceSelector")
        namespaces = frozenset(str(n) for n in term.get("namespaces") or [])
        ns_selector = None if ns_selector_raw is None else parse_selector(ns_selector_raw, f"{path}.namespaceSelector")
        if not namespaces and ns_selector is None:
            namespaces = frozenset([own_ns])
        terms.append(Term(selector.with_requirements(extra), namespaces, ns_selector, key))
    return terms


def _where(pair: Pair) -> str:
    return "on this node" if pair[0] == HOSTNAME else f"in {pair[0]}={pair[1]}"


class AffinityState:
    """The pod's terms and the topology-pair counts its filter reads (PreFilter state)."""

    def __init__(self, pod: PodInfo, affinity: Sequence[Term], anti_affinity: Sequence[Term],
                 index: SchedulingIndex) -> None:
        self.pod = pod
        self.affinity = list(affinity)
        self.anti_affinity = list(anti_affinity)
        self.index = index
        self.namespace_labels = index.labels_of_namespace(pod.namespace)
        #: pairs where a bound pod's anti-affinity refuses this pod, with one such pod
        self.existing: dict[Pair, int] = {}
        self.existing_by: dict[Pair, str] = {}
        #: pairs holding pods that match all the pod's affinity terms / any anti-affinity term
        self.affinity_counts: dict[Pair, int] = {}
        self.anti_counts: dict[Pair, int] = {}
        self.anti_by: dict[Pair, str] = {}
        for other, node in index.anti_affinity_pods:
            self._existing(other, node)
        if self.affinity or self.anti_affinity:
            for node in index.infos.values():
                for other in node.pods:
                    self._incoming(other, node)

    def _existing(self, other: PodInfo, node: NodeInfo) -> None:
        for term in anti_terms(other):
            value = node.labels.get(term.topology_key)
            if value is not None and term.matches(self.pod, self.namespace_labels):
                pair = (term.topology_key, value)
                self.existing[pair] = self.existing.get(pair, 0) + 1
                self.existing_by.setdefault(pair, other.ref)

    def _incoming(self, other: PodInfo, node: NodeInfo) -> None:
        labels_of_ns = self.index.labels_of_namespace(other.namespace)
        if self.affinity and all(t.matches(other, labels_of_ns) for t in self.affinity):
            for term in self.affinity:
                value = node.labels.get(term.topology_key)
                if value is not None:
                    pair = (term.topology_key, value)
                    self.affinity_counts[pair] = self.affinity_counts.get(pair, 0) + 1
        for term in self.anti_affinity:
            value = node.labels.get(term.topology_key)
            if value is not None and term.matches(other, labels_of_ns):
                pair = (term.topology_key, value)
                self.anti_counts[pair] = self.anti_counts.get(pair, 0) + 1
                self.anti_by.setdefault(pair, other.ref)

    def add_pod(self, other: PodInfo, node: NodeInfo) -> None:
        """Count a pod just bound to ``node`` (upstream's updateWithPod)."""
        self._existing(other, node)
        self._incoming(other, node)

    def filter(self, node: NodeInfo) -> Status | None:
        """Affinity, then the pod's anti-affinity, then the bound pods' anti-affinity."""
        missing = [t.topology_key for t in self.affinity if t.topology_key not in node.labels]
        if missing:
            return Status(NAME, (REASON_AFFINITY,), (f"the node has no label {missing[0]} (a pod affinity topologyKey)",))
        if self.affinity and any(self.affinity_counts.get((t.topology_key, node.labels[t.topology_key]), 0) <= 0
                                 for t in self.affinity):
            if not (not self.affinity_counts and all(t.matches(self.pod, self.namespace_labels) for t in self.affinity)):
                return Status(NAME, (REASON_AFFINITY,),
                              ("no pod matching the required pod affinity runs in the node's topology domain",))
        if self.anti_counts:
            for term in self.anti_affinity:
                value = node.labels.get(term.topology_key)
                pair = (term.topology_key, value or "")
                if value is not None and self.anti_counts.get(pair, 0) > 0:
                    return Status(NAME, (REASON_ANTI_AFFINITY,),
                                  (f"anti-affinity with pod {self.anti_by.get(pair, '?')} {_where(pair)}",))
        if self.existing:
            for key, value in node.labels.items():
                pair = (key, value)
                if self.existing.get(pair, 0) > 0:
                    return Status(NAME, (REASON_EXISTING_ANTI_AFFINITY,),
                                  (f"pod {self.existing_by.get(pair, '?')} {_where(pair)} has required "
                                   "anti-affinity against this pod",))
        return None


def anti_terms(pod: PodInfo) -> list[Term]:
    """A bound pod's required anti-affinity terms, parsed once per PodInfo."""
    found = pod.anti_terms
    if found is None:
        found = pod.anti_terms = parse_terms(pod.pod, "podAntiAffinity", f"Pod {pod.ref}")
    return found
