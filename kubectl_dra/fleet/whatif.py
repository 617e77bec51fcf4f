"""What-ifs on a cluster state: hypothetical copies of existing nodes (``--add-nodes
NODE=N``) and cordoned nodes (``--cordon NODE``), built as a NEW state; the loaded one is
never changed.

A copy of a node is the Node object with a new name (its labels that spelled the old name,
such as ``kubernetes.io/hostname``, spell the new one) and a copy of every ResourceSlice
bound to that node by ``spec.nodeName``, with a new slice name, a new pool name and
generation 1. Network-attached and ``allNodes`` slices are left as they are: whether a copy
reaches them is decided by their node selectors against the copy's labels, as for any node.
Nothing allocated is copied: the copies start empty.

A cordoned node is out of consideration for new placements: its Node object is left out of
the new state (so no command offers it), and so are the ResourceSlices bound to it by name,
so that what is free counts only what can still be handed out. Claims allocated there keep
their allocations (a drain releases them; a cordon does not).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..errors import NotFoundError, UsageError
from ..model.jsoncopy import copy_json
from ..model.nodes import node_name
from ..state import ClusterState
from ..types import Obj

#: annotation on a hypothetical node naming the node it copies
COPY_OF_ANNOTATION = "kubectl-dra.io/hypothetical-copy-of"
#: what the names of copies carry between the node's name and the copy's number
COPY_INFIX = "hypothetical"


@dataclass(frozen=True)
class AddNodes:
    """``NODE=N``: N hypothetical copies of NODE."""

    node: str
    count: int


def parse_add_nodes(values: Iterable[str]) -> list[AddNodes]:
    """``--add-nodes`` values; a malformed one, N not a positive integer or a node named twice
    is a :class:`UsageError` naming it."""
    parsed: list[AddNodes] = []
    seen: set[str] = set()
    for value in values:
        name, sep, count = value.partition("=")
        name, count = name.strip(), count.strip()
        if not sep or not name:
            raise UsageError(f"--add-nodes {value!r}: expected NODE=N (N copies of NODE)")
        if not count.isdigit() or int(count) < 1:
            raise UsageError(f"--add-nodes {value!r}: N must be a positive integer, not {count!r}")
        if name in seen:
            raise UsageError(f"--add-nodes: node {name!r} is named twice")
        seen.add(name)
        parsed.append(AddNodes(name, int(count)))
    return parsed


def check_node_list(flag: str, names: Sequence[str]) -> list[str]:
    """Node names from a repeatable flag or argument list; a name given twice is a :class:`UsageError`."""
    seen: set[str] = set()
    for name in names:
        if not name:
            raise UsageError(f"{flag}: empty node name")
        if name in seen:
            raise UsageError(f"{flag}: node {name!r} is named twice")
        seen.add(name)
    return list(names)


@dataclass(frozen=True)
class WhatIf:
    """The changes to make: copies to add and nodes to cordon."""

    add: tuple[AddNodes, ...] = ()
    cordon: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.add or self.cordon)


@dataclass
class WhatIfState:
    """The state with the what-ifs applied, and which nodes are hypothetical or cordoned."""

    state: ClusterState
    #: hypothetical node name -> the node it copies, in the order made
    hypothetical: dict[str, str] = field(default_factory=dict)
    cordoned: list[str] = field(default_factory=list)

    def mark(self, node: str) -> str:
        """``node`` as output shows it: hypothetical nodes carry `` (hypothetical)``."""
        return f"{node} (hypothetical)" if node in self.hypothetical else node

    def notes(self) -> list[str]:
        """One line per kind of change, for people (stderr)."""
        lines = []
        by_source: dict[str, list[str]] = {}
        for copy, source in self.hypothetical.items():
            by_source.setdefault(source, []).append(copy)
        for source, copies in by_source.items():
            shown = ", ".join(copies) if len(copies) <= 3 else f"{copies[0]} … {copies[-1]}"
            lines.append(f"what-if: {len(copies)} hypothetical node{'s' if len(copies) != 1 else ''} like {source} "
                         f"({shown})")
        if self.cordoned:
            lines.append(f"what-if: cordoned (not considered): {', '.join(self.cordoned)}")
        return lines


def _existing_names(state: ClusterState) -> set[str]:
    names = {node_name(n) for n in state.nodes}
    for s in state.resource_slices:
        spec = s.get("spec") or {}
        if isinstance(spec.get("nodeName"), str):
            names.add(spec["nodeName"])
    return names


def _known_node(state: ClusterState, name: str, flag: str) -> Obj | None:
    """The Node object named ``name`` (None for a node only slices name); unknown: NotFoundError."""
    for n in state.nodes:
        if node_name(n) == name:
            return n
    if any(((s.get("spec") or {}).get("nodeName")) == name for s in state.resource_slices):
        return None
    raise NotFoundError(f"{flag}: node {name!r} not found in the cluster state")


def _renamed(text: str, old: str, new: str, fallback_suffix: str) -> str:
    """``text`` with ``old`` spelled ``new``; when ``text`` does not contain it, ``text-suffix``."""
    if old and old in text:
        return text.replace(old, new)
    return f"{text}-{fallback_suffix}"


def copy_node(node: Obj | None, source: str, new: str) -> Obj:
    """A hypothetical copy of a Node named ``new`` (labels that spelled ``source`` spell ``new``)."""
    if node is None:
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": source}}
    obj = copy_json(node)
    meta = obj.setdefault("metadata", {})
    meta["name"] = new
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(key, None)
    labels = meta.get("labels")
    if isinstance(labels, dict):
        meta["labels"] = {k: (new if v == source else v) for k, v in labels.items()}
    meta["annotations"] = {**(meta.get("annotations") or {}), COPY_OF_ANNOTATION: source}
    return obj


def copy_slice(slice_: Obj, source: str, new: str) -> Obj:
    """A node-local ResourceSlice of ``source`` as it would be published for ``new``: new
    slice and pool names, generation 1, bound to ``new``."""
    obj = copy_json(slice_)
    meta = obj.setdefault("metadata", {})
    meta["name"] = _renamed(str(meta.get("name") or "slice"), source, new, new)
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generateName", "ownerReferences"):
        meta.pop(key, None)
    spec = obj.setdefault("spec", {})
    spec["nodeName"] = new
    pool = spec.setdefault("pool", {})
    pool["name"] = _renamed(str(pool.get("name") or source), source, new, new)
    pool["generation"] = 1
    return obj


def derived_state(state: ClusterState, **changes: list[Obj]) -> ClusterState:
    """A new state: ``state``'s object lists with ``changes`` (kind attribute -> new list)
    in their place; the lists not changed are shared, never changed by us."""
    kept = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)
            if f.init and not f.name.startswith("_")}
    kept.update(changes)
    kept["warnings"] = list(state.warnings)
    return type(state)(**kept)


def apply_whatif(state: ClusterState, whatif: WhatIf) -> WhatIfState:
    """A new state with ``whatif`` applied (the given one is left as it is).

    Unknown nodes (in ``--add-nodes`` or ``--cordon``) are a :class:`NotFoundError`; a node both
    copied and cordoned is fine (the copies stay)."""
    if not whatif:
        return WhatIfState(state)
    sources = {a.node: _known_node(state, a.node, "--add-nodes") for a in whatif.add}
    for name in whatif.cordon:
        _known_node(state, name, "--cordon")
    taken = _existing_names(state)
    hypothetical: dict[str, str] = {}
    new_nodes: list[Obj] = []
    new_slices: list[Obj] = []
    by_node: dict[str, list[Obj]] = {}
    for s in state.resource_slices:
        bound = (s.get("spec") or {}).get("nodeName")
        if isinstance(bound, str) and bound in sources:
            by_node.setdefault(bound, []).append(s)
    for add in whatif.add:
        k = 0
        for _ in range(add.count):
            k += 1
            new = f"{add.node}-{COPY_INFIX}-{k}"
            while new in taken:
                k += 1
                new = f"{add.node}-{COPY_INFIX}-{k}"
            taken.add(new)
            hypothetical[new] = add.node
            new_nodes.append(copy_node(sources[add.node], add.node, new))
            new_slices.extend(copy_slice(s, add.node, new) for s in by_node.get(add.node, ()))
    cordoned = set(whatif.cordon)
    nodes = [n for n in state.nodes if node_name(n) not in cordoned] + new_nodes
    slices = [s for s in state.resource_slices if (s.get("spec") or {}).get("nodeName") not in cordoned]
    if not nodes and (state.nodes or new_nodes):
        raise UsageError("--cordon leaves no node to consider")
    new_state = derived_state(state, nodes=nodes, resource_slices=slices + new_slices)
    return WhatIfState(new_state, hypothetical, list(whatif.cordon))
