"""Device attribute values as comparable Python values.

An attribute in the API is a one-of (``int``, ``bool``, ``string``, ``version``, and the
list forms ``ints``, ``bools``, ``strings``, ``versions`` of DRAListTypeAttributes). Here a
value is a tuple of typed elements ``(kind, value)``; a scalar is a one-element tuple, so
list semantics (intersection, disjointness) and scalar semantics share one representation.
"""

from __future__ import annotations

from typing import Any, Mapping

#: (is_list, elements) -- elements are ("int"|"bool"|"string"|"version", value) pairs
AttrValue = tuple[bool, tuple[tuple[str, Any], ...]]

_SCALARS = ("int", "bool", "string", "version")
_LISTS = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


def attribute_value(attr: Mapping[str, Any] | None) -> AttrValue | None:
    """The typed value of one API attribute, or None when it holds no known value type.

    An empty list also counts as holding no value (it cannot match or be distinct).
    """
    if type(attr) is not dict and not isinstance(attr, Mapping):
        return None
    for kind in _SCALARS:
        v = attr.get(kind)
        if v is not None:
            return (False, ((kind, v),))
    for key, kind in _LISTS.items():
        v = attr.get(key)
        if v:
            return (True, tuple((kind, x) for x in v))
    return None


def lookup_attribute(attributes: Mapping[str, Any] | None, driver: str, name: str) -> Mapping[str, Any] | None:
    """The raw attribute ``name`` (fully qualified) of a device published by ``driver``.

    A device may spell its own driver's attributes without the domain, so
    ``driver/id`` also finds ``id``; other domains must match exactly.
    """
    if not attributes:
        return None
    attr = attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if sep and domain == driver:
        return attributes.get(ident)
    return None


def derived_value(value: Any) -> AttrValue | None:
    """A CEL result of a derived attribute as an attribute value."""
    def element(v: Any) -> tuple[str, Any] | None:
        if isinstance(v, bool):
            return ("bool", v)
        if isinstance(v, int):
            return ("int", int(v))
        if isinstance(v, str):
            return ("string", v)
        if v is None:
            return None
        return ("version", str(v))

    if isinstance(value, (list, tuple)):
        elements = tuple(e for e in (element(v) for v in value) if e is not None)
        return (True, elements) if elements else None
    e = element(value)
    return (False, (e,)) if e is not None else None
