"""A snapshot of cluster objects as the API server returns them (plain dicts).

Objects are kept exactly as found: loading never validates, defaults or drops
fields, because the allocator must see what is stored, including fields of gates
that are now disabled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

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
    _positions: dict[tuple[str, str, str], int] = field(default_factory=dict, repr=False, compare=False)

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
