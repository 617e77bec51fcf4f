"""Nodes the allocator cannot tell apart: the same answer for any claims.

A fleet is mostly identical nodes. For the allocator, a node is the pools it sees: its own
pools (slices bound to it by name) and pools it shares with other nodes (network-attached,
``allNodes``, node selectors). Two nodes get the same allocation answer, up to the names of
the node and its own pools, when their own pools have the same content apart from those
names (devices, attributes, capacity, counters, taints, generation and slice count), the
same devices of them are in use in the same way, they see the same shared pools, and the
Node fields the allocator reads (allocatable resources for implicit extended-resource
claims, declared features) are equal. Node labels matter only through which shared pools
a node sees, which is part of the class, except for pools that select nodes per device:
then labels are part of it too.

What a node's own filters decide (node selectors, taints, the claims already allocated
elsewhere, the pod filters of the scheduler) is never decided per class: the callers ask
those per node, and use a class's answer only for the allocation itself.

The classes are a cache owned by one caller over one snapshot and one in-use state; a
commit to a node changes that node's class (:meth:`NodeClasses.forget`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Mapping

import orjson

from ..model.nodes import node_name

if TYPE_CHECKING:
    from ..allocation import Allocator
    from ..allocation.inuse import InUse
    from ..allocation.pools import Pool

#: the slice fields that carry the node's and the pool's names (left out of a pool's content)
_NAMED_META = ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generateName",
               "ownerReferences", "labels", "annotations")


class NodeClasses:
    """Per node, a hashable class; nodes of one class get the same allocation answer."""

    def __init__(self, allocator: "Allocator") -> None:
        self.allocator = allocator
        #: id of a pool view -> (the view, held so the id stays its own; its content without names)
        self._content: dict[int, tuple["Pool", bytes]] = {}
        self._keys: dict[str, Hashable] = {}

    def copy(self, allocator: "Allocator") -> "NodeClasses":
        """The same classes for an allocator whose in-use devices are a copy of this one's."""
        other = NodeClasses(allocator)
        other._content = self._content
        other._keys = dict(self._keys)
        return other

    def forget(self, *names: str) -> None:
        """Devices were taken on these nodes (or on pools they see): work their classes out again."""
        for name in names:
            self._keys.pop(name, None)

    def forget_all(self) -> None:
        self._keys.clear()

    def key(self, node: Mapping[str, Any], in_use: "InUse", name: str | None = None) -> Hashable:
        """The node's class under ``in_use`` (``name``: the node's, when the caller has it)."""
        if name is None:
            name = node_name(node)
        found = self._keys.get(name)
        if found is None:
            found = self._keys[name] = self._key(node, name, in_use)
        return found

    def _key(self, node: Mapping[str, Any], name: str, in_use: "InUse") -> Hashable:
        seen = self.allocator.pools_for(node)
        parts: list[Any] = []
        labels_matter = False
        for pool in (*seen.pools, *seen.problems):
            own = all(sv.node_name == name for sv in (*pool.slices, *pool.other_slices))
            if own:
                parts.append((self._pool_content(pool), _usage(pool, in_use)))
            else:
                parts.append(pool.id)
                labels_matter = labels_matter or any(sv.per_device_node_selection for sv in pool.slices)
        status = node.get("status") or {}
        extra = orjson.dumps([status.get("allocatable"), status.get("declaredFeatures"),
                              (node.get("metadata") or {}).get("labels") if labels_matter else None],
                             option=orjson.OPT_SORT_KEYS)
        return (tuple(parts), extra)

    def _pool_content(self, pool: "Pool") -> bytes:
        entry = self._content.get(id(pool))
        if entry is None or entry[0] is not pool:
            slices = []
            for sv in (*pool.slices, *pool.other_slices):
                raw = sv.raw
                spec = dict(raw.get("spec") or {})
                spec.pop("nodeName", None)
                spec["pool"] = {k: v for k, v in (spec.get("pool") or {}).items() if k != "name"}
                slices.append(spec)
            try:
                found = orjson.dumps(slices, option=orjson.OPT_SORT_KEYS)
            except TypeError:  # values orjson does not take (huge integers): never equal to another pool's
                found = repr(id(pool)).encode()
            entry = self._content[id(pool)] = (pool, found)
        return entry[1]


def _usage(pool: "Pool", in_use: "InUse") -> tuple[Any, ...]:
    """Which devices of the pool are in use, and how (exclusively, or the capacity its shares take)."""
    held = in_use.held
    if not held:
        return ()
    out = []
    for sv in (*pool.slices, *pool.other_slices):
        for device in sv.devices:
            if device.id in held:
                shared = in_use.shared_capacity.get(device.id)
                out.append((device.name, device.id in in_use.dedicated,
                            tuple(sorted((k, str(v)) for k, v in shared.items())) if shared else ()))
    return tuple(out)
