"""The default profile's Filter plugins for one pod, in kube-scheduler's order, stopping at
the first that refuses a node (as the framework's RunFilterPlugins does):

NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
(VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone: not modelled),
PodTopologySpread, InterPodAffinity, then DynamicResources — the allocator, which the
caller (preview) runs on the nodes this chain lets through.

:class:`PodFilters` holds what the scheduler's PreFilter works out once per pod; it is
built against a :class:`~.nodeinfo.SchedulingIndex` and follows the pods added to that
index through :meth:`PodFilters.add_pod` (``fit``'s replicas). Preemption is not simulated.
"""

from __future__ import annotations

from typing import AbstractSet, Iterable, Sequence

from ..types import Obj
from .interpodaffinity import AffinityState, parse_terms
from .nodeaffinity import node_affinity
from .nodeinfo import NodeInfo, PodInfo, SchedulingIndex, host_ports, pod_where
from .nodename import node_name_filter
from .noderesources import fits_request
from .nodeports import node_ports
from .nodeunschedulable import node_unschedulable
from .podtopologyspread import SpreadState, parse_constraints
from .resources import pod_requests
from .status import Status
from .tainttoleration import taint_toleration

#: the filters, in the default profile's order (volume filters are not modelled)
FILTER_ORDER = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "DynamicResources")
DYNAMIC_RESOURCES = "DynamicResources"
#: what the chain does not model, for documents' ``modelled`` lists and --help
NOT_MODELLED = ("volumes (VolumeBinding, VolumeZone, NodeVolumeLimits, VolumeRestrictions)", "preemption")
#: what a preview, explain or fit models, for documents' ``modelled`` and --help
MODELLED = ("kube-scheduler's default-profile Filter plugins, in its order: NodeUnschedulable, NodeName, "
            "TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit (cpu, memory, ephemeral-storage, "
            "hugepages, pod count, device-plugin extended resources), PodTopologySpread (DoNotSchedule), "
            "InterPodAffinity (required terms) for pods, and DynamicResources (devices, shared counters, "
            "consumable capacity, shares). Not modelled: volumes (VolumeBinding, VolumeZone, NodeVolumeLimits, "
            "VolumeRestrictions) and preemption.")
VOLUMES_NOTE = ("the pod uses PersistentVolumeClaims: volume filters (VolumeBinding, VolumeZone, NodeVolumeLimits, "
                "VolumeRestrictions) are not modelled, so a node shown as fitting may still be refused for its volumes")


def uses_claimed_volumes(pod: Obj) -> bool:
    """Whether the pod mounts a PersistentVolumeClaim (or a generic ephemeral volume)."""
    return any(isinstance(v, dict) and ("persistentVolumeClaim" in v or "ephemeral" in v)
               for v in (pod.get("spec") or {}).get("volumes") or [])


class PodFilters:
    """One pod's PreFilter state against one index; :meth:`filter` gives a node's first refusal.

    ``dra_backed``: the extended resources a DeviceClass backs (NodeResourcesFit leaves
    them to DynamicResources on nodes without them in allocatable). Raises
    :class:`~kubectl_dra.errors.InputError` naming the pod and field for malformed input.
    """

    def __init__(self, index: SchedulingIndex, pod: Obj, dra_backed: AbstractSet[str] = frozenset()) -> None:
        self.index = index
        self.pod = pod
        self.info = PodInfo.of(pod, index.pod_level)
        where = pod_where(pod)
        spec = pod.get("spec") or {}
        self.tolerations = spec.get("tolerations") or []
        self.requests = pod_requests(pod, index.pod_level, where)
        self.ports = host_ports(pod)
        self.dra_backed = frozenset(dra_backed)
        self.constraints = parse_constraints(pod, where)
        self.affinity_terms = parse_terms(pod, "podAffinity", where)
        self.anti_terms = parse_terms(pod, "podAntiAffinity", where)
        self.info.anti_terms = self.anti_terms  # (copies bound by fit reuse them)
        #: node -> the answer of the filters that read the node alone (its cordon, name, taints,
        #: labels), which no pod bound later changes
        self._static: dict[str, Status | None] = {}
        self.notes: list[str] = [VOLUMES_NOTE] if uses_claimed_volumes(pod) else []
        if not index.resources_known:
            self.notes.append("the cluster state has no Node objects: cpu, memory and pod counts are not checked")
        self._spread: SpreadState | None = None
        self._affinity: AffinityState | None = None
        self._version = -1

    def _sync(self) -> None:
        """(Re)build the PreFilter counts when the index gained pods this object did not follow."""
        if self._version == self.index.version:
            return
        self._spread = SpreadState(self.pod, self.info.namespace, self.constraints, self.index) \
            if self.constraints else None
        self._affinity = AffinityState(self.info, self.affinity_terms, self.anti_terms, self.index)
        self._version = self.index.version

    @property
    def interacts(self) -> bool:
        """Whether a pod added anywhere may change this pod's answer on other nodes
        (spread constraints, pod affinity, or a bound pod with anti-affinity)."""
        self._sync()
        return bool(self.constraints or self.affinity_terms or self.anti_terms or self.index.anti_affinity_pods)

    def filter(self, node: NodeInfo | str) -> Status | None:
        """The first filter that refuses ``node`` (a NodeInfo or a node name of the index), or None."""
        info = self.index.get(node) if isinstance(node, str) else node
        if info is None:
            return None
        if info.name in self._static:
            status = self._static[info.name]
        else:
            obj = info.node
            status = self._static[info.name] = (
                node_unschedulable(self.tolerations, obj) or node_name_filter(self.pod, info.name)
                or taint_toleration(self.tolerations, obj) or node_affinity(self.pod, obj))
        if status is not None:
            return status
        if self.ports:
            status = node_ports(self.ports, info)
            if status is not None:
                return status
        if self.index.resources_known:
            status = fits_request(self.requests, info, self.dra_backed)
            if status is not None:
                return status
        self._sync()
        if self._spread is not None:
            status = self._spread.filter(info)
            if status is not None:
                return status
        assert self._affinity is not None
        return self._affinity.filter(info)

    def add_pod(self, pod: Obj, node: str) -> PodInfo:
        """Bind ``pod`` to ``node`` in the index and in this pod's counts (a committed replica)."""
        self._sync()
        info = self.index.add_pod(pod, node)
        self.observe(info, node)
        return info

    def observe(self, info: PodInfo, node: str) -> None:
        """Count a pod another caller just bound in the shared index (upstream's AddPod extension)."""
        if self._version != self.index.version - 1:
            self._version = -1  # more changed than this one pod: rebuild when next asked
            return
        node_info = self.index.infos[node]
        if self._spread is not None:
            self._spread.add_pod(info, node_info)
        assert self._affinity is not None
        self._affinity.add_pod(info, node_info)
        self._version = self.index.version

    def spread_minimums(self) -> tuple[int, ...]:
        """The global minimum of each DoNotSchedule constraint (empty without constraints)."""
        self._sync()
        return self._spread.minimums() if self._spread is not None else ()

    def topology_keys(self) -> set[str]:
        """The topology keys of the pod's affinity and anti-affinity terms."""
        return {t.topology_key for t in (*self.affinity_terms, *self.anti_terms)}


def filter_nodes(index: SchedulingIndex, pod: Obj, nodes: Iterable[str] | None = None,
                 dra_backed: AbstractSet[str] = frozenset()) -> dict[str, Status | None]:
    """Node name -> the first non-DRA filter refusing the pod there (None: passes them all)."""
    filters = PodFilters(index, pod, dra_backed)
    names: Sequence[str] = list(nodes) if nodes is not None else list(index.infos)
    return {name: filters.filter(name) for name in names}
