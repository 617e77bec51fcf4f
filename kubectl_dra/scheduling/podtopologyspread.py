"""PodTopologySpread: the pod's DoNotSchedule constraints (maxSkew, minDomains,
nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys); ScheduleAnyway ones only score.

The matching pods per topology domain are counted once per pod (the scheduler's
PreFilter) over every node of the snapshot, and updated as pods are added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..types import Obj
from .labels import Requirement, Selector, parse_selector
from .nodeaffinity import matches_node_affinity
from .nodeinfo import NodeInfo, PodInfo, SchedulingIndex
from .status import Status
from .tainttoleration import untolerated_taint

NAME = "PodTopologySpread"
REASON = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = REASON + " (missing required label)"
#: the global minimum when no domain is eligible (upstream's MaxInt32)
NO_DOMAINS = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Constraint:
    """One DoNotSchedule constraint, parsed."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    honor_affinity: bool
    honor_taints: bool


def _check_key(key: Any, where: str) -> str:
    from ..validation.formats import is_qualified_name  # (only pods with constraints need it)

    if not isinstance(key, str) or not key:
        raise InputError(f"{where}.topologyKey: Required value: can not be empty")
    problems = is_qualified_name(key)
    if problems:
        raise InputError(f"{where}.topologyKey: Invalid value: {key!r}: {problems[0]}")
    return key


def parse_constraints(pod: Mapping[str, Any], where: str) -> list[Constraint]:
    """The pod's DoNotSchedule constraints; :class:`InputError` naming the pod and field for
    what the API server refuses (maxSkew < 1, minDomains < 1, an invalid topologyKey, ...)."""
    out: list[Constraint] = []
    labels = (pod.get("metadata") or {}).get("labels") or {}
    for i, c in enumerate((pod.get("spec") or {}).get("topologySpreadConstraints") or []):
        path = f"{where}: spec.topologySpreadConstraints[{i}]"
        c = c or {}
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or isinstance(skew, bool) or skew < 1:
            raise InputError(f"{path}.maxSkew: Invalid value: {skew!r}: must be greater than zero")
        key = _check_key(c.get("topologyKey"), path)
        when = c.get("whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise InputError(f"{path}.whenUnsatisfiable: Unsupported value: {when!r}: supported values: "
                             '"DoNotSchedule", "ScheduleAnyway"')
        min_domains = c.get("minDomains")
        if min_domains is not None and (not isinstance(min_domains, int) or isinstance(min_domains, bool)
                                        or min_domains < 1):
            raise InputError(f"{path}.minDomains: Invalid value: {min_domains!r}: must be greater than zero")
        policies = {}
        for field, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
            value = c.get(field) or default
            if value not in ("Honor", "Ignore"):
                raise InputError(f"{path}.{field}: Unsupported value: {value!r}: supported values: "
                                 '"Honor", "Ignore"')
            policies[field] = value == "Honor"
        if when != "DoNotSchedule":
            continue
        selector = parse_selector(c.get("labelSelector"), f"{path}.labelSelector")
        extra = tuple(Requirement(str(k), "In", frozenset([str(labels[k])]))
                      for k in c.get("matchLabelKeys") or [] if k in labels)
        out.append(Constraint(skew, key, selector.with_requirements(extra), int(min_domains or 1),
                              policies["nodeAffinityPolicy"], policies["nodeTaintsPolicy"]))
    return out


class SpreadState:
    """Matching pods per topology domain for each constraint of one pod (PreFilter state)."""

    def __init__(self, pod: Obj, namespace: str, constraints: Sequence[Constraint], index: SchedulingIndex) -> None:
        self.pod = pod
        self.namespace = namespace
        self.constraints = list(constraints)
        self.labels = (pod.get("metadata") or {}).get("labels") or {}
        self.tolerations = (pod.get("spec") or {}).get("tolerations") or []
        self.keys = [c.topology_key for c in self.constraints]
        #: per constraint: domain value -> matching pods (a domain per eligible node's value)
        self.counts: list[dict[str, int]] = [{} for _ in self.constraints]
        self._mins: list[int | None] = [None] * len(self.constraints)
        #: (constraint, node) -> the node inclusion policies' answer (a node's labels and taints do not change)
        self._included: dict[tuple[int, str], bool] = {}
        for info in index.infos.values():
            if not self._has_keys(info):
                continue
            for i, c in enumerate(self.constraints):
                if not self._eligible(c, info):
                    continue
                value = info.labels[c.topology_key]
                matched = sum(1 for p in info.pods if self._counts(c, p))
                self.counts[i][value] = self.counts[i].get(value, 0) + matched

    def _has_keys(self, node: NodeInfo) -> bool:
        return all(k in node.labels for k in self.keys)

    def _eligible(self, c: Constraint, node: NodeInfo) -> bool:
        """The constraint's node inclusion policies (affinity: Honor by default; taints: Ignore)."""
        if c.honor_affinity and not matches_node_affinity(self.pod, node.node)[0]:
            return False
        return not (c.honor_taints and untolerated_taint(self.tolerations, node.node) is not None)

    def _counts(self, c: Constraint, pod: PodInfo) -> bool:
        """A pod of the same namespace, not terminating, that the constraint's selector matches."""
        return not pod.terminating and pod.namespace == self.namespace and c.selector.matches(pod.labels)

    def _min(self, i: int) -> int:
        found = self._mins[i]
        if found is None:
            found = self._mins[i] = min(self.counts[i].values()) if self.counts[i] else NO_DOMAINS
        return found

    def minimums(self) -> tuple[int, ...]:
        """Each constraint's global minimum over its domains now."""
        return tuple(self._min(i) for i in range(len(self.constraints)))

    def add_pod(self, pod: PodInfo, node: NodeInfo) -> None:
        """Count a pod just bound to ``node`` (upstream's updateWithPod)."""
        if pod.namespace != self.namespace or not self._has_keys(node):
            return
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(pod.labels):
                continue
            included = self._included.get((i, node.name))
            if included is None:
                included = self._included[(i, node.name)] = self._eligible(c, node)
            if included:
                value = node.labels[c.topology_key]
                self.counts[i][value] = self.counts[i].get(value, 0) + 1
                self._mins[i] = None

    def filter(self, node: NodeInfo) -> Status | None:
        """Refuse a node without a constraint's topology label, or where the pod would make the skew exceed maxSkew."""
        for i, c in enumerate(self.constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                return Status(NAME, (REASON_MISSING_LABEL,), (f"the node has no label {c.topology_key}",))
            domains = len(self.counts[i])
            global_min = self._min(i) if domains >= c.min_domains else 0
            self_match = 1 if c.selector.matches(self.labels) else 0
            matched = self.counts[i].get(value, 0)
            skew = matched + self_match - global_min
            if skew > c.max_skew:
                why = (f"topology domain {c.topology_key}={value} would have skew {skew} > maxSkew {c.max_skew} "
                       f"({matched} matching pod{'s' if matched != 1 else ''} there"
                       f"{' + this one' if self_match else ''}; the fewest in a domain: {global_min}"
                       f"{f', as only {domains} of minDomains {c.min_domains} domains exist' if domains < c.min_domains else ''})")
                return Status(NAME, (REASON,), (why,))
        return None
