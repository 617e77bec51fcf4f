"""A snapshot of cluster objects as the API server returns them (plain dicts).

Objects are kept exactly as found: loading never validates, defaults or drops
fields, because the allocator must see what is stored, including fields of gates
that are now disabled.

A state is filled once, by the source that loads it (:meth:`ClusterState.add`), and only
read after that. Whatever needs a different state (fit's state after placing replicas, a
what-if with nodes added or drained) derives a new one with :meth:`ClusterState.with_objects`,
:meth:`ClusterState.without` or :meth:`ClusterState.replacing`; every state owns its lists
(a copy made any way, ``dataclasses.replace`` or ``copy.copy`` included, shares none), so
no state can be changed through another. The objects themselves are shared, never written to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Iterable, Iterator

from ..types import Obj
from ..convert import to_v1
from ..errors import NotFoundError


#: kind -> (attribute on ClusterState, namespaced?)
KINDS: dict[str, tuple[str, bool]] = {
    "Node": ("nodes", False),
    "Namespace": ("namespaces", False),
    "DeviceClass": ("device_classes", False),
    "ResourceSlice": ("resource_slices", False),
    "ResourceClaim": ("resource_claims", True),
    "ResourceClaimTemplate": ("resource_claim_templates", True),
    "Pod": ("pods", True),
    "PodGroup": ("pod_groups", True),
}

#: short names accepted in targets such as ``claim/NAME``
KIND_ALIASES: dict[str, str] = {
    "node": "Node", "nodes": "Node", "no": "Node",
    "namespace": "Namespace", "ns": "Namespace",
    "deviceclass": "DeviceClass", "deviceclasses": "DeviceClass", "class": "DeviceClass",
    "resourceslice": "ResourceSlice", "resourceslices": "ResourceSlice", "slice": "ResourceSlice",
    "resourceclaim": "ResourceClaim", "resourceclaims": "ResourceClaim", "claim": "ResourceClaim",
    "claims": "ResourceClaim",
    "resourceclaimtemplate": "ResourceClaimTemplate", "resourceclaimtemplates": "ResourceClaimTemplate",
    "template": "ResourceClaimTemplate", "templates": "ResourceClaimTemplate",
    "pod": "Pod", "pods": "Pod", "po": "Pod",
    "podgroup": "PodGroup", "podgroups": "PodGroup",
}


def object_key(obj: Obj) -> tuple[str, str]:
    """(namespace, name) of an object; namespace is "" for cluster-scoped kinds."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return ("", "")
    ns, name = meta.get("namespace"), meta.get("name")
    return (ns if isinstance(ns, str) else "", name if isinstance(name, str) else "")


def _identity(obj: Obj, namespaced: bool) -> tuple[str, str, str]:
    ns, name = object_key(obj)
    return (str(obj.get("kind")), ns if namespaced else "", name)


def describe(obj: Obj) -> str:
    """``Kind ns/name`` (or ``Kind name``) for messages."""
    ns, name = object_key(obj)
    name = name or "?"
    kind = obj.get("kind", "object")
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


@dataclass
class ClusterState:
    """Every object of the kinds in :data:`KINDS`, in the order the source gave them."""

    nodes: list[Obj] = field(default_factory=list)
    namespaces: list[Obj] = field(default_factory=list)
    device_classes: list[Obj] = field(default_factory=list)
    resource_slices: list[Obj] = field(default_factory=list)
    resource_claims: list[Obj] = field(default_factory=list)
    resource_claim_templates: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)
    pod_groups: list[Obj] = field(default_factory=list)
    #: human-readable notes about objects that were skipped or look odd
    warnings: list[str] = field(default_factory=list)
    #: (kind, namespace, name) -> index in its kind's list, so an object given twice is kept once
    _positions: dict[tuple[str, str, str], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Own every list (a state made from another's lists must not share them)."""
        self._positions = {}
        for kind, (attr, namespaced) in KINDS.items():
            objects = list(getattr(self, attr))
            setattr(self, attr, objects)
            for i, obj in enumerate(objects):
                ns, name = object_key(obj)
                if name:
                    self._positions[(kind, ns if namespaced else "", name)] = i
        self.warnings = list(self.warnings)

    def __copy__(self) -> ClusterState:
        return self._derived({})

    def _derived(self, lists: dict[str, list[Obj]]) -> ClusterState:
        """A new state with ``lists`` (attribute -> objects) in place of this state's."""
        current = {attr: lists.get(attr, getattr(self, attr)) for attr, _ in KINDS.values()}
        return ClusterState(**current, warnings=self.warnings)

    def with_objects(self, objs: Iterable[Obj]) -> ClusterState:
        """A new state with ``objs`` added; one with the kind, namespace and name of an object
        already there takes its place (a what-if, so without a warning). This state is unchanged."""
        state = self._derived({})
        for obj in objs:
            obj = to_v1(obj)
            entry = KINDS.get(obj.get("kind") or "")
            if entry is None:
                raise ValueError(f"{describe(obj)}: kind not used by kubectl-dra")
            objects: list[Obj] = getattr(state, entry[0])
            ns, name = object_key(obj)
            identity = (str(obj.get("kind")), ns if entry[1] else "", name)
            position = state._positions.get(identity) if name else None
            if position is not None:
                objects[position] = obj
            else:
                if name:
                    state._positions[identity] = len(objects)
                objects.append(obj)
        return state

    def without(self, kind: str, keys: Collection[tuple[str, str]]) -> ClusterState:
        """A new state without the objects of ``kind`` whose (namespace, name) is in ``keys``
        (namespace "" for cluster-scoped kinds, as :func:`object_key` gives). This state is unchanged."""
        attr = KINDS[kind][0]
        return self._derived({attr: [o for o in getattr(self, attr) if object_key(o) not in keys]})

    def without_nodes(self, names: Collection[str]) -> ClusterState:
        """A new state without the Nodes called ``names``."""
        return self.without("Node", {("", name) for name in names})

    def replacing(self, kind: str, objects: Iterable[Obj]) -> ClusterState:
        """A new state whose objects of ``kind`` are ``objects`` (in that order). This state is unchanged."""
        return self._derived({KINDS[kind][0]: list(objects)})

    def add(self, obj: Obj, origin: str | None = None) -> bool:
        """Add one object; returns False (and records a warning) for kinds we do not use.

        An object with the kind, namespace and name of one already added is kept once, as the
        API server holds one object per name: an identical copy is dropped silently, a different
        one replaces the earlier (the last one wins) with a warning naming the object.
        """
        obj = to_v1(obj)  # a dump of older resource.k8s.io versions is read as the API serves v1
        kind = obj.get("kind") or ""
        entry = KINDS.get(kind)
        if entry is None:
            self.warnings.append(f"ignored {describe(obj)}: kind not used by kubectl-dra")
            return False
        objects: list[Obj] = getattr(self, entry[0])
        ns, name = object_key(obj)
        identity = (kind, ns if entry[1] else "", name)
        position = self._positions.get(identity) if name else None
        if position is not None and position < len(objects) and _identity(objects[position], entry[1]) == identity:
            if objects[position] != obj:
                objects[position] = obj
                where = f" (the last one, from {origin}, is used)" if origin else " (the last one is used)"
                self.warnings.append(f"{describe(obj)} is given more than once with different contents{where}")
            return True
        if name:
            self._positions[identity] = len(objects)
        objects.append(obj)
        return True

    def extend(self, objs: Iterable[Obj]) -> None:
        for obj in objs:
            self.add(obj)

    def objects(self, kind: str) -> list[Obj]:
        """All objects of ``kind`` (a Kind name such as ``ResourceClaim``)."""
        return getattr(self, KINDS[kind][0])

    def __iter__(self) -> Iterator[Obj]:
        for attr, _ in KINDS.values():
            yield from getattr(self, attr)

    def find(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """The object of ``kind`` with that name (and namespace, for namespaced kinds)."""
        namespaced = KINDS[kind][1]
        for obj in self.objects(kind):
            ns, n = object_key(obj)
            if n == name and (not namespaced or namespace is None or ns == namespace):
                return obj
        return None

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        """Like :meth:`find` but raises :class:`NotFoundError` naming what is missing."""
        obj = self.find(kind, name, namespace)
        if obj is None:
            where = f" in namespace {namespace!r}" if namespace and KINDS[kind][1] else ""
            raise NotFoundError(f"{kind} {name!r} not found{where}")
        return obj

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """Labels of a Namespace object in the state (empty when it is not there)."""
        ns = self.find("Namespace", namespace)
        labels = ((ns or {}).get("metadata") or {}).get("labels")
        return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
