"""Qualified names (``domain/identifier``) as used by attributes, capacities and constraints."""

from __future__ import annotations


def split_qualified(name: str) -> tuple[str, str]:
    """``("domain", "id")`` of a qualified name; the domain is "" when there is none."""
    domain, sep, ident = name.partition("/")
    if not sep:
        return "", name
    return domain, ident


def qualify(name: str, driver: str) -> str:
    """The fully-qualified form: a name without a domain belongs to the device's driver."""
    return name if "/" in name else f"{driver}/{name}"
