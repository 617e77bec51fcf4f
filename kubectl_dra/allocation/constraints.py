"""Claim constraints: matchAttribute and distinctAttribute (upstream ``constraint.go``).

Constraints are checked as devices are added during the search and undone on
backtracking, so each keeps a stack. With DRAListTypeAttributes, values are sets
(a scalar is a one-element set): matchAttribute keeps the running intersection of all
devices' values and needs it non-empty; distinctAttribute needs every pair of devices
disjoint. Without the gate, values are compared as scalars and a list value is not
usable.
"""

from __future__ import annotations

from typing import Any, Callable

from ..model.attributes import AttrValue

#: looks up the value of the constraint's attribute for a device of a request;
#: returns None when the device does not have it, raises AllocationError on errors
Lookup = Callable[[Any, Any, str], "AttrValue | None"]


def _applies(names: frozenset[str], request_name: str, parent_name: str | None) -> bool:
    """Whether a constraint limited to ``names`` covers this request or subrequest."""
    if not names:
        return True
    if parent_name is None:
        return request_name in names
    return parent_name in names or f"{parent_name}/{request_name}" in names


class MatchAttribute:
    """All devices of the covered requests must share a value of the attribute."""

    kind = "matchAttribute"

    def __init__(self, attribute: str, requests: list[str], list_types: bool) -> None:
        self.attribute = attribute
        self.requests = frozenset(requests)
        self.list_types = list_types
        self._stack: list[Any] = []  # per added device: the running value after adding it

    def fresh(self) -> "MatchAttribute":
        """The same constraint with nothing added yet (for the next search)."""
        return MatchAttribute(self.attribute, list(self.requests), self.list_types)

    def applies(self, request_name: str, parent_name: str | None) -> bool:
        return _applies(self.requests, request_name, parent_name)

    @property
    def current(self) -> Any:
        """The value (scalar) or running intersection (set) devices must match, if any."""
        return self._stack[-1] if self._stack else None

    def check(self, value: AttrValue | None) -> Any:
        """The new running value if a device with ``value`` may join, else None."""
        if value is None:
            return None
        is_list, elements = value
        if not self.list_types:
            if is_list:
                return None
            if not self._stack:
                return elements[0]
            return elements[0] if elements[0] == self._stack[-1] else None
        new = frozenset(elements)
        if self._stack:
            new = new & self._stack[-1]
        return new or None

    def push(self, running: Any) -> None:
        self._stack.append(running)

    def state(self) -> Any:
        """What decides the constraint's later checks: the value devices must match."""
        return self._stack[-1] if self._stack else None

    def pop(self) -> None:
        self._stack.pop()


class DistinctAttribute:
    """No two devices of the covered requests may share a value of the attribute."""

    kind = "distinctAttribute"

    def __init__(self, attribute: str, requests: list[str], list_types: bool) -> None:
        self.attribute = attribute
        self.requests = frozenset(requests)
        self.list_types = list_types
        self._stack: list[Any] = []  # values of the added devices

    def fresh(self) -> "DistinctAttribute":
        """The same constraint with nothing added yet (for the next search)."""
        return DistinctAttribute(self.attribute, list(self.requests), self.list_types)

    def applies(self, request_name: str, parent_name: str | None) -> bool:
        return _applies(self.requests, request_name, parent_name)

    def conflict(self, value: AttrValue) -> Any:
        """The value already taken that ``value`` collides with, or None when distinct."""
        is_list, elements = value
        if not self.list_types:
            if is_list:
                return elements
            for other in self._stack:
                if other == elements[0]:
                    return other
            return None
        new = frozenset(elements)
        for other in self._stack:
            if new & other:
                return other
        return None

    def check(self, value: AttrValue | None) -> Any:
        """The entry to push if a device with ``value`` may join, else None."""
        if value is None or self.conflict(value) is not None:
            return None
        is_list, elements = value
        return frozenset(elements) if self.list_types else elements[0]

    def push(self, entry: Any) -> None:
        self._stack.append(entry)

    def state(self) -> Any:
        """What decides the constraint's later checks: the values taken so far."""
        return frozenset(self._stack)

    def pop(self) -> None:
        self._stack.pop()


Constraint = MatchAttribute | DistinctAttribute


def describe_value(value: Any) -> Any:
    """A JSON-friendly rendering of a constraint value for explain details."""
    if value is None:
        return None
    if isinstance(value, frozenset):
        return sorted((v for _, v in value), key=str)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return value[1]
    if isinstance(value, tuple):
        return [describe_value(v) for v in value]
    return value
