"""A ResourceClaim's device requests, constraints and config, parsed once from the API dict.

Upstream's allocator reads ``spec.devices`` of a claim through typed structs; these small
immutable views play that part for the search, its results and ``explain``, so that every
reader agrees on what a request asks for (for instance ``count``: absent means one device,
``0`` means none). Parsing is lenient: a value of the wrong type reads as absent, and what
the search must refuse (a selector without a CEL expression, a count that is no number) is
kept visible (``None``, ``count_is_number``) for the reader that words the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

EXACT_COUNT = "ExactCount"
ALL = "All"


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> tuple[Any, ...]:
    """The items of a JSON array (none for anything else)."""
    return tuple(value) if isinstance(value, list) else ()


def _text(value: Any) -> str:
    """A string field (empty when absent or not a string)."""
    return value if isinstance(value, str) else ""


def read_count(body: Mapping[str, Any]) -> int | None:
    """``count`` as the search reads it: absent (or null) is 1, ``0`` stays 0; None when it is
    not a number (the search refuses such a request)."""
    count = body.get("count")
    if count is None:
        return 1
    try:
        return int(count)
    except (TypeError, ValueError):
        return None


def selector_expression(selector: Any) -> str | None:
    """The CEL expression of one DeviceSelector (None when it has none)."""
    expression = _mapping(_mapping(selector).get("cel")).get("expression")
    return expression if isinstance(expression, str) else None


@dataclass(frozen=True, slots=True)
class Request:
    """One request without subrequests (``exactly``), or one subrequest of ``firstAvailable``."""

    #: the name results and traces use: ``request`` or ``request/subrequest``
    name: str
    #: the claim's request this belongs to (its own name for an ``exactly`` request)
    request: str
    #: the subrequest's own name (None for an ``exactly`` request)
    subrequest: str | None
    #: position of the request in the claim, and of the subrequest in its list (0 for ``exactly``)
    index: int
    sub_index: int
    device_class: str
    #: the CEL expression of each selector in order (None: a selector with no expression)
    selectors: tuple[str | None, ...]
    #: allocationMode as written; absent reads ExactCount
    mode: str
    #: devices asked for in ExactCount mode (see :func:`read_count`; 1 when not a number)
    count: int
    #: False when ``count`` is written but is no number (the search refuses the request)
    count_is_number: bool
    #: adminAccess as written (None when absent; subrequests have none)
    admin_access: bool | None
    tolerations: tuple[Mapping[str, Any], ...]
    #: capacity.requests as written (quantity texts), None when the request has no capacity
    capacity_requests: Mapping[str, Any] | None
    #: (name, expression) of each derived attribute
    derived_attributes: tuple[tuple[str, str], ...]
    #: the body as written (the ``exactly`` object or the subrequest), for messages that quote it
    body: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def parent(self) -> str | None:
        """The parent request's name of a subrequest (None for an ``exactly`` request)."""
        return self.request if self.subrequest is not None else None

    @property
    def expressions(self) -> tuple[str, ...]:
        """The non-empty selector expressions, in order."""
        return tuple(e for e in self.selectors if e)


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """One entry of ``spec.devices.requests``: an ``exactly`` request or a list of alternatives."""

    name: str
    index: int
    exactly: Request | None
    first_available: tuple[Request, ...]

    @property
    def alternatives(self) -> tuple[Request, ...]:
        """The subrequests in order of preference, or the ``exactly`` request alone."""
        if self.first_available:
            return self.first_available
        return (self.exactly,) if self.exactly is not None else ()


@dataclass(frozen=True, slots=True)
class Constraint:
    """One entry of ``spec.devices.constraints`` (an empty ``requests`` means every request)."""

    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None


@dataclass(frozen=True, slots=True)
class Config:
    """One entry of ``spec.devices.config``: opaque driver parameters for some requests."""

    requests: tuple[str, ...]
    opaque: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class ClaimDevices:
    """``spec.devices`` of a claim: its requests, constraints and config."""

    requests: tuple[ClaimRequest, ...]
    constraints: tuple[Constraint, ...]
    config: tuple[Config, ...]

    @property
    def all_requests(self) -> tuple[Request, ...]:
        """Every request in order, a ``firstAvailable`` request contributing its subrequests."""
        return tuple(r for entry in self.requests for r in entry.alternatives)


def _request(body: Mapping[str, Any], request: str, subrequest: str | None, index: int, sub_index: int) -> Request:
    """One request or subrequest parsed from its body (the ``exactly`` object or a subrequest)."""
    capacity = body.get("capacity")
    count = read_count(body)
    admin = body.get("adminAccess") if subrequest is None else None
    return Request(
        name=f"{request}/{subrequest}" if subrequest is not None else request,
        request=request, subrequest=subrequest, index=index, sub_index=sub_index,
        device_class=_text(body.get("deviceClassName")),
        selectors=tuple(selector_expression(s) for s in _items(body.get("selectors"))),
        mode=_text(body.get("allocationMode")) or EXACT_COUNT,
        count=1 if count is None else count, count_is_number=count is not None,
        admin_access=admin if isinstance(admin, bool) else None,
        tolerations=tuple(t for t in _items(body.get("tolerations")) if isinstance(t, Mapping)),
        capacity_requests=None if capacity is None else _mapping(_mapping(capacity).get("requests")),
        derived_attributes=tuple((_text(d.get("name")), _text(d.get("expression")))
                                 for d in _items(body.get("derivedAttributes")) if isinstance(d, Mapping)),
        body=body,
    )


def _claim_request(body: Mapping[str, Any], index: int) -> ClaimRequest:
    """One entry of ``spec.devices.requests``."""
    name = _text(body.get("name"))
    subs = tuple(_request(_mapping(sub), name, _text(_mapping(sub).get("name")), index, i)
                 for i, sub in enumerate(_items(body.get("firstAvailable"))))
    exactly = None if subs else _request(_mapping(body.get("exactly")), name, None, index, 0)
    return ClaimRequest(name, index, exactly, subs)


def parse_claim(claim: Mapping[str, Any]) -> ClaimDevices:
    """The requests, constraints and config of a claim (or of a template's claim spec)."""
    devices = _mapping(_mapping(claim.get("spec")).get("devices"))
    return ClaimDevices(
        requests=tuple(_claim_request(_mapping(r), i) for i, r in enumerate(_items(devices.get("requests")))),
        constraints=tuple(
            Constraint(tuple(_items(c.get("requests"))), c.get("matchAttribute"), c.get("distinctAttribute"))
            for c in map(_mapping, _items(devices.get("constraints")))),
        config=tuple(Config(tuple(_items(c.get("requests"))), c.get("opaque") if isinstance(c.get("opaque"), Mapping) else None)
                     for c in map(_mapping, _items(devices.get("config")))),
    )


__all__ = ["ALL", "EXACT_COUNT", "ClaimDevices", "ClaimRequest", "Config", "Constraint", "Request",
           "parse_claim", "read_count", "selector_expression"]
