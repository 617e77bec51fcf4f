"""Device → CEL input conversion, done once per device and reused.

Upstream converts the device for every evaluation; converting once and caching the
engine's activation makes each evaluation several times cheaper. A device whose
conversion fails (e.g. an unparsable version) keeps the error: every expression
evaluated against it then fails with that error, as upstream's ``DeviceMatches``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from kubectl_dra.cel._types import make_semver_msg
from kubectl_dra.cel.environment import DEVICE_VAR, runtime_env
from kubectl_dra.cel.library import quantity_msg

_SCALAR_KINDS = ("int", "bool", "string", "version")
_LIST_KINDS = ("ints", "bools", "strings", "versions")
_PLAIN_SCALARS = frozenset(("int", "bool", "string"))
_PLAIN_LISTS = frozenset(("ints", "bools", "strings"))


class DeviceInput:
    """One device, converted for CEL evaluation (driver, attributes, capacity)."""

    __slots__ = ("driver", "name", "data", "error", "_activation")

    def __init__(self, driver: str, name: str, data: dict[str, Any] | None,
                 error: str | None) -> None:
        self.driver = driver
        self.name = name
        #: the ``device`` variable as plain Python data (None when conversion failed)
        self.data = data
        #: conversion error text; evaluating any expression raises it
        self.error = error
        self._activation: Any = None

    def activation(self) -> Any:
        """The engine activation for this device (built on first use, then cached)."""
        act = self._activation
        if act is None:
            act = runtime_env().Activation(data={DEVICE_VAR: self.data})
            self._activation = act
        return act

    def __repr__(self) -> str:
        return f"DeviceInput(driver={self.driver!r}, name={self.name!r})"


def _split_name(name: str, driver: str) -> tuple[str, str]:
    """Split a qualified name at the first '/'; no domain means the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


@lru_cache(maxsize=8192)
def _semver_msg(text: Any) -> Any:
    """Parse a version attribute (strict semver) into a Semver message (cached)."""
    from kubectl_dra.semver import Version

    return make_semver_msg(Version.parse(text))


@lru_cache(maxsize=8192)
def _capacity_msg(raw: Any) -> Any:
    """Decode a capacity value as the API server does into a Quantity message (cached)."""
    from kubectl_dra.quantity import Quantity

    return quantity_msg(Quantity.from_json(raw))


def _attribute_value(attr: Mapping[str, Any]) -> Any:
    """The CEL value of one DeviceAttribute (lists first, as upstream)."""
    if type(attr) is dict and len(attr) == 1:  # the usual shape: one kind, no choice to make
        for kind, value in attr.items():
            if value is not None:
                if kind in _PLAIN_SCALARS:
                    return value
                if kind == "version":
                    return _semver_msg(value)
                if kind in _PLAIN_LISTS:
                    return list(value)
                if kind == "versions":
                    return [_semver_msg(v) for v in value]
    if not isinstance(attr, dict) and not isinstance(attr, Mapping):
        raise ValueError("unsupported attribute value")
    for kind in _LIST_KINDS:
        if attr.get(kind) is not None:
            values = list(attr[kind])
            if kind == "versions":
                return [_semver_msg(v) for v in values]
            return values
    for kind in _SCALAR_KINDS:
        if attr.get(kind) is not None:
            value = attr[kind]
            return _semver_msg(value) if kind == "version" else value
    raise ValueError("unsupported attribute value")


def _convert(driver: str, device: Mapping[str, Any]) -> dict[str, Any]:
    """Build the ``device`` variable; raises ValueError/DraError with upstream-like text."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        try:
            value = _attribute_value(attr)
        except Exception as err:  # noqa: BLE001 - any decoding problem fails the device
            reason = str(err)
            if not reason.startswith("unsupported"):
                reason = f"parse semantic version: {reason}"
            raise ValueError(f"attribute {name}: {reason}") from None
        domain, ident = _split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        raw = cap.get("value") if isinstance(cap, (dict, Mapping)) else None
        try:
            msg = _capacity_msg(raw if isinstance(raw, (str, int, float, type(None))) else str(raw))
        except Exception as err:  # noqa: BLE001
            raise ValueError(f"capacity {name}: {err}") from None
        domain, ident = _split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = msg
    return {
        "driver": driver,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations") or False),
        "attributes": attributes,
        "capacity": capacity,
    }


def make_device_input(driver: str, device: Mapping[str, Any]) -> DeviceInput:
    """Convert one ResourceSlice device (API dict) for evaluation; never raises."""
    name = str(device.get("name", "")) if isinstance(device, (dict, Mapping)) else ""
    try:
        return DeviceInput(driver, name, _convert(driver or "", device), None)
    except Exception as err:  # noqa: BLE001 - reported when an expression is evaluated
        return DeviceInput(driver, name, None, str(err))
