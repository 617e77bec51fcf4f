"""Apply-time advice: what a valid object will not get from the cluster as it is now.

The API server accepts a ResourceClaim whose DeviceClass does not exist, or whose selectors
match no device; the user learns it only when the pod stays Pending. :func:`advise` says
so at apply time, as warnings (never errors): for claims and claim templates a missing
DeviceClass, a request that no device matches, a count larger than any one node can reach;
for DeviceClasses selectors that match no device; for ResourceSlices an attribute whose type
differs from the same attribute in the driver's other slices.

The cluster is an :class:`Inventory` of DeviceClasses and prepared ResourceSlices (the
webhook keeps one current from a watch; ``kubectl dra validate`` builds one from ``--state``
or the live cluster). Selector results are kept on each prepared slice, which owns them: a
changed slice is prepared anew, with none. Advice errs
towards silence: a device counts as matching when its CEL cannot be decided, every
generation of a pool counts, network-attached devices count as reachable from every node.
A ``deadline`` (``time.monotonic()`` value) bounds the work: past it, :class:`AdviceTimeout`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .errors import CELError
from .model.claims import ALL, Request, parse_claim

#: Kinds advice is given for.
ADVISED_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice")
#: Longest selector text quoted in a warning.
MAX_QUOTED = 120
#: Most warnings about one object.
MAX_ADVICE = 8
#: Devices examined between two looks at the clock.
CLOCK_EVERY = 64

_ATTRIBUTE_TYPES = ("int", "bool", "string", "version")
_ARTICLE = {"int": "an int", "bool": "a bool", "string": "a string", "version": "a version"}


class AdviceTimeout(Exception):
    """The advice was not complete by its deadline (the caller gives none)."""


@dataclass(frozen=True)
class PreparedDevice:
    """One device: its name, the node it is local to (None: reachable from many nodes), its CEL input."""

    name: str
    node: str | None
    cel: Any  # kubectl_dra.cel.DeviceInput, made on first use


@dataclass(frozen=True)
class PreparedSlice:
    """One ResourceSlice as advice reads it."""

    name: str
    driver: str
    pool: str
    devices: tuple[PreparedDevice, ...]
    #: qualified attribute name -> (type, a device that has it)
    attribute_types: Mapping[str, tuple[str, str]]
    #: (expression, device name) -> whether it matches, filled as advice asks
    results: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def qualified(name: str, driver: str) -> str:
    """An attribute name with its domain (a bare name is in the driver's domain)."""
    return name if "/" in name else f"{driver}/{name}"


def prepare_slice(obj: Mapping[str, Any]) -> PreparedSlice:
    """A ResourceSlice's devices, node and attribute types (CEL inputs are built lazily)."""
    from .cel import make_device_input

    spec = _mapping(obj.get("spec"))
    driver = str(spec.get("driver") or "")
    slice_node = spec.get("nodeName") if isinstance(spec.get("nodeName"), str) and spec.get("nodeName") else None
    devices = []
    types: dict[str, tuple[str, str]] = {}
    for raw in _list(spec.get("devices")):
        device = _mapping(raw)
        name = str(device.get("name") or "")
        own_node = device.get("nodeName") if isinstance(device.get("nodeName"), str) and device.get("nodeName") else None
        shared = device.get("allNodes") is True or isinstance(device.get("nodeSelector"), Mapping)
        node = own_node or (None if shared else slice_node)
        devices.append(PreparedDevice(name, node, _LazyInput(make_device_input, driver, device)))
        for attr_name, value in _mapping(device.get("attributes")).items():
            kind = next((k for k in _ATTRIBUTE_TYPES if k in _mapping(value)), None)
            if kind is not None:
                types.setdefault(qualified(str(attr_name), driver), (kind, name))
    pool = str(_mapping(spec.get("pool")).get("name") or "")
    name = str(_mapping(obj.get("metadata")).get("name") or "")
    return PreparedSlice(name, driver, pool, tuple(devices), types)


class _LazyInput:
    """A device's CEL input, converted on first use (most devices are never asked)."""

    __slots__ = ("_make", "_driver", "_raw", "_value")

    def __init__(self, make: Any, driver: str, raw: Mapping[str, Any]) -> None:
        self._make, self._driver, self._raw, self._value = make, driver, raw, None

    def get(self) -> Any:
        if self._value is None:
            self._value = self._make(self._driver, self._raw)
        return self._value


@dataclass(frozen=True)
class Inventory:
    """DeviceClasses by name and prepared ResourceSlices by name: the cluster advice reads."""

    classes: Mapping[str, Mapping[str, Any]]
    slices: Mapping[str, PreparedSlice]

    @classmethod
    def from_objects(cls, classes: Iterable[Mapping[str, Any]], slices: Iterable[Mapping[str, Any]]) -> "Inventory":
        """From DeviceClass and ResourceSlice objects (as listed from the API)."""
        by_name = {str(_mapping(c.get("metadata")).get("name") or ""): c for c in classes}
        prepared = {}
        for obj in slices:
            ps = prepare_slice(obj)
            prepared[ps.name] = ps
        return cls(by_name, prepared)

    @property
    def device_count(self) -> int:
        return sum(len(s.devices) for s in self.slices.values())

    def matching(self, expressions: tuple[str, ...], deadline: float | None = None) -> list[PreparedDevice]:
        """The devices for which every expression is true (or cannot be decided)."""
        found = []
        seen = 0
        for ps in self.slices.values():
            for device in ps.devices:
                seen += 1
                if deadline is not None and seen % CLOCK_EVERY == 0 and time.monotonic() > deadline:
                    raise AdviceTimeout()
                if all(self._match(expression, ps, device) for expression in expressions):
                    found.append(device)
        return found

    @staticmethod
    def _match(expression: str, ps: PreparedSlice, device: PreparedDevice) -> bool:
        key = (expression, device.name)
        hit = ps.results.get(key)
        if hit is None:
            from .cel import compile_expression

            try:
                hit = bool(compile_expression(expression).matches(device.cel.get()))
            except CELError:
                hit = True  # undecidable here: say nothing rather than something wrong
            ps.results[key] = hit
        return hit


def advise(kind: str, obj: Mapping[str, Any], inventory: Inventory, deadline: float | None = None) -> list[str]:
    """Warnings about a valid object of ``kind`` against the cluster in ``inventory`` (at most
    :data:`MAX_ADVICE`); raises :class:`AdviceTimeout` past ``deadline``."""
    if kind == "ResourceClaim":
        advice = _claim_advice(obj, inventory, deadline)
    elif kind == "ResourceClaimTemplate":
        advice = _claim_advice({"spec": _mapping(_mapping(obj.get("spec")).get("spec"))}, inventory, deadline)
    elif kind == "DeviceClass":
        advice = _class_advice(obj, inventory, deadline)
    elif kind == "ResourceSlice":
        advice = _slice_advice(obj, inventory)
    else:
        advice = []
    return advice[:MAX_ADVICE]


def _quote(expression: str) -> str:
    text = " ".join(expression.split())
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 3] + "..."


def _describe(request: Request) -> str:
    """``gpu: class gpu.example.com, selector …`` as a warning names a request."""
    parts = [f"class {request.device_class}"]
    parts += [f"selector {_quote(e)}" for e in request.expressions]
    return f"{request.name}: " + ", ".join(parts)


def _class_expressions(device_class: Mapping[str, Any]) -> tuple[str, ...]:
    from .model.claims import selector_expression

    spec = _mapping(device_class.get("spec"))
    return tuple(e for e in (selector_expression(s) for s in _list(spec.get("selectors"))) if e)


PENDING = "pods using this claim will stay Pending"


def _claim_advice(claim: Mapping[str, Any], inventory: Inventory, deadline: float | None) -> list[str]:
    advice: list[str] = []
    for entry in parse_claim(claim).requests:
        alternatives = entry.alternatives
        missing = [r for r in alternatives if r.device_class and r.device_class not in inventory.classes]
        for request in missing:
            advice.append(f"DeviceClass {request.device_class} does not exist (request {request.name}); "
                          f"{PENDING} until it is created")
        usable = [r for r in alternatives if r.device_class in inventory.classes]
        if not usable or len(missing) == len(alternatives):
            continue
        outcomes = [(request, _reach(request, inventory, deadline)) for request in usable]
        if all(not matched for _, (matched, _) in outcomes):
            if len(outcomes) == 1:
                advice.append(f"{PENDING}: no device matches {_describe(outcomes[0][0])}")
            else:
                advice.append(f"{PENDING}: no device matches any subrequest of {entry.name} "
                              f"({'; '.join(_describe(r) for r, _ in outcomes)})")
            continue
        for request, (matched, per_node) in outcomes:
            if matched and request.mode != ALL and request.count_is_number and request.count > per_node:
                if len(outcomes) == 1:
                    advice.append(f"{PENDING}: {request.name} asks for {request.count} devices but at most "
                                  f"{per_node} matching devices are reachable from any single node")
    return advice


def _reach(request: Request, inventory: Inventory, deadline: float | None) -> tuple[int, int]:
    """How many devices match the request, and the most of them one node can reach."""
    expressions = _class_expressions(inventory.classes[request.device_class]) + request.expressions
    devices = inventory.matching(expressions, deadline)
    shared = sum(1 for d in devices if d.node is None)
    per_node: dict[str, int] = {}
    for device in devices:
        if device.node is not None:
            per_node[device.node] = per_node.get(device.node, 0) + 1
    return len(devices), max(per_node.values(), default=0) + shared


def _class_advice(device_class: Mapping[str, Any], inventory: Inventory, deadline: float | None) -> list[str]:
    expressions = _class_expressions(device_class)
    if not expressions or inventory.matching(expressions, deadline):
        return []
    name = _mapping(device_class.get("metadata")).get("name") or "this DeviceClass"
    count = inventory.device_count
    return [f"no device in the cluster matches the selectors of DeviceClass {name} "
            f"({count} device{'s' if count != 1 else ''} published); claims using it will stay Pending"]


def _slice_advice(obj: Mapping[str, Any], inventory: Inventory) -> list[str]:
    new = prepare_slice(obj)
    advice = []
    for attribute, (kind, device) in sorted(new.attribute_types.items()):
        for other in inventory.slices.values():
            if other.driver != new.driver or other.name == new.name:
                continue
            seen = other.attribute_types.get(attribute)
            if seen is not None and seen[0] != kind:
                advice.append(f"attribute {attribute} is {_ARTICLE[kind]} on device {device} but "
                              f"{_ARTICLE[seen[0]]} on device {seen[1]} of ResourceSlice {other.name} "
                              f"(driver {new.driver}); selectors that use it fail on one of them")
                break
    return advice
