"""The scheduler's NodeInfo for every node of one snapshot: the pods bound to it, what they
request, the host ports they hold; built once per snapshot and owned by the caller.

Pods count when they are bound (``spec.nodeName`` names a node of the snapshot) and not
finished (phase neither Succeeded nor Failed), as the scheduler's cache holds them. ``fit``
and drain what-ifs add pods with :meth:`SchedulingIndex.add_pod`, which updates the one
node's aggregates in place: nothing is recomputed per node per replica.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..model.nodes import node_labels, node_name
from ..types import Obj
from .labels import labels_of
from .resources import PODS, Requests, add_into, allocatable, pod_requests

if TYPE_CHECKING:
    from ..state import ClusterState

#: pod phases the scheduler's cache leaves out
FINISHED_PHASES = ("Succeeded", "Failed")
DEFAULT_HOST_IP = "0.0.0.0"


def pod_key(pod: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a pod."""
    meta = pod.get("metadata") or {}
    return (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))


def pod_where(pod: Mapping[str, Any]) -> str:
    """``Pod ns/name`` for messages."""
    ns, name = pod_key(pod)
    return f"Pod {ns}/{name}"


def host_ports(pod: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(hostIP, protocol, hostPort) of every container port with a host port: the containers'
    and the restartable init containers' (sidecars), as the scheduler's NodePorts reads them."""
    spec = pod.get("spec") or {}
    if not spec.get("initContainers") and not any((c or {}).get("ports") for c in spec.get("containers") or ()):
        return []  # the usual pod: no port at all
    ports = []
    sidecars = [c for c in spec.get("initContainers") or [] if (c or {}).get("restartPolicy") == "Always"]
    for container in [*sidecars, *(spec.get("containers") or [])]:
        for port in (container or {}).get("ports") or []:
            host_port = (port or {}).get("hostPort")
            if isinstance(host_port, int) and not isinstance(host_port, bool) and host_port > 0:
                ports.append((str(port.get("hostIP") or DEFAULT_HOST_IP), str(port.get("protocol") or "TCP"),
                              host_port))
    return ports


@dataclass(slots=True, eq=False)
class PodInfo:
    """A bound pod as the filters see it."""

    pod: Obj
    namespace: str
    name: str
    labels: Mapping[str, str]
    requests: Requests
    ports: list[tuple[str, str, int]]
    terminating: bool
    #: required anti-affinity terms, parsed when first asked (interpodaffinity.anti_terms)
    anti_terms: Any = None

    @classmethod
    def of(cls, pod: Obj, pod_level: bool = True) -> "PodInfo":
        ns, name = pod_key(pod)
        return cls(pod, ns, name, labels_of(pod), pod_requests(pod, pod_level, f"Pod {ns}/{name}", use_status=True),
                   host_ports(pod),
                   bool((pod.get("metadata") or {}).get("deletionTimestamp")))

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True, eq=False)
class NodeInfo:
    """One node, its allocatable, and the pods bound to it with their aggregates."""

    node: Obj
    name: str
    labels: Mapping[str, str]
    #: status.allocatable in scheduler units; None: the node has none (zero of everything)
    allocatable: Requests | None
    pods: list[PodInfo] = field(default_factory=list)
    requested: Requests = field(default_factory=dict)
    #: hostIP -> {(protocol, port)}
    used_ports: dict[str, set[tuple[str, int]]] = field(default_factory=dict)

    def allocatable_of(self, resource: str) -> int:
        return (self.allocatable or {}).get(resource, 0)

    @property
    def allowed_pods(self) -> int:
        return self.allocatable_of(PODS)

    def add(self, info: PodInfo) -> None:
        """Account for one more pod bound here."""
        self.pods.append(info)
        add_into(self.requested, info.requests)
        for ip, protocol, port in info.ports:
            self.used_ports.setdefault(ip, set()).add((protocol, port))

    def port_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Upstream HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every address."""
        if ip == DEFAULT_HOST_IP:
            return any((protocol, port) in used for used in self.used_ports.values())
        return ((protocol, port) in self.used_ports.get(ip, ()) or
                (protocol, port) in self.used_ports.get(DEFAULT_HOST_IP, ()))


def is_bound_and_running(pod: Mapping[str, Any]) -> bool:
    """Bound to a node and not finished: a pod the scheduler's cache holds."""
    return bool((pod.get("spec") or {}).get("nodeName")) and \
        (pod.get("status") or {}).get("phase") not in FINISHED_PHASES


class SchedulingIndex:
    """Every node's :class:`NodeInfo` for one snapshot, plus the namespaces' labels.

    ``nodes`` are the Node objects (the snapshot's, or bare stand-ins when it has none);
    ``pods`` every pod of the snapshot. Pods bound to nodes not in ``nodes`` are left out,
    as the scheduler has no NodeInfo for them. ``resources_known`` is False for bare
    stand-in nodes: NodeResourcesFit is then not checked (nothing is known of the nodes).
    """

    def __init__(self, nodes: Iterable[Obj], pods: Iterable[Obj] = (),
                 namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
                 pod_level: bool = True, resources_known: bool = True) -> None:
        self.pod_level = pod_level
        self.resources_known = resources_known
        self.namespace_labels = dict(namespace_labels or {})
        self.infos: dict[str, NodeInfo] = {}
        for node in nodes:
            name = node_name(node)
            self.infos[name] = NodeInfo(node, name, node_labels(node),
                                        allocatable(node, f"Node {name}") if resources_known else {})
        #: pods whose required anti-affinity can refuse the pods placed after them
        self.anti_affinity_pods: list[tuple[PodInfo, NodeInfo]] = []
        #: (namespace, name) -> the node a pod is bound to
        self._bound: dict[tuple[str, str], NodeInfo] = {}
        #: bumped whenever a pod is added: per-pod state built before it is stale
        self.version = 0
        for pod in pods:
            if is_bound_and_running(pod):
                info = self.infos.get(str(pod["spec"]["nodeName"]))
                if info is not None:
                    self._place(PodInfo.of(pod, pod_level), info)

    @classmethod
    def of_state(cls, state: "ClusterState", nodes: Iterable[Obj] | None = None,
                 pod_level: bool = True) -> "SchedulingIndex":
        """The index of a snapshot (``nodes``: bare stand-ins when the state has no Node objects)."""
        labels = {str((ns.get("metadata") or {}).get("name") or ""): labels_of(ns) for ns in state.namespaces}
        known = bool(state.nodes)
        return cls(state.nodes if known else list(nodes or ()), state.pods, labels, pod_level, resources_known=known)

    def _place(self, info: PodInfo, node: NodeInfo) -> None:
        node.add(info)
        self._bound[(info.namespace, info.name)] = node
        anti = (((info.pod.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {})
        if anti.get("requiredDuringSchedulingIgnoredDuringExecution"):
            self.anti_affinity_pods.append((info, node))

    def add_pod(self, pod: Obj, node: str, like: PodInfo | None = None) -> PodInfo:
        """Bind one more pod to ``node`` (a replica ``fit`` places, a pod a drain moves);
        ``like``: a PodInfo of a pod with the same spec, whose requests and ports are reused."""
        if like is not None:
            ns, name = pod_key(pod)
            info = PodInfo(pod, ns, name, like.labels, like.requests, like.ports, False, like.anti_terms)
        else:
            info = PodInfo.of(pod, self.pod_level)
        self._place(info, self.infos[node])
        self.version += 1
        return info

    def remove_pod(self, namespace: str, name: str) -> PodInfo | None:
        """Unbind a pod (a drained pod, a bound pod previewed anew); None when it is not bound here."""
        node = self._bound.pop((namespace, name), None)
        if node is None:
            return None
        for i, info in enumerate(node.pods):
            if info.namespace == namespace and info.name == name:
                self._unplace(node, i)
                self.version += 1
                return info
        return None

    def _unplace(self, node: NodeInfo, i: int) -> None:
        info = node.pods.pop(i)
        for k, v in info.requests.items():
            node.requested[k] = node.requested.get(k, 0) - v
        node.used_ports.clear()
        for other in node.pods:
            for ip, protocol, port in other.ports:
                node.used_ports.setdefault(ip, set()).add((protocol, port))
        self.anti_affinity_pods = [(p, n) for p, n in self.anti_affinity_pods if p is not info]

    def get(self, name: str) -> NodeInfo | None:
        return self.infos.get(name)

    def labels_of_namespace(self, namespace: str) -> Mapping[str, str]:
        return self.namespace_labels.get(namespace, {})
