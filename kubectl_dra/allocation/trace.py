"""Observer hooks for the allocator: why each device was rejected or chosen.

The search calls a :class:`Tracer` only when one is given; without one, every hook
site is a single ``if tracer is not None`` test, so previews pay nothing for explain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol


class RejectionCode(str, Enum):  # noqa: UP042  # StrEnum would change what str() and format() print
    """Why a device (or a whole pool) could not serve a request; every code is one the
    allocator reports (a CEL error is not a rejection: the allocation fails with it)."""

    NOT_IN_CLASS = "device not matched by class driver/selector"
    CLASS_SELECTOR_FALSE = "class selector evaluated to false"
    REQUEST_SELECTOR_FALSE = "request selector evaluated to false"
    IN_USE = "device already in use"
    COUNTERS_EXHAUSTED = "shared counters exhausted"
    CAPACITY_SHORT = "consumable capacity insufficient"
    TAINT_NOT_TOLERATED = "device taint not tolerated"
    COMPATIBILITY_CONFLICT = "compatibility group conflict"
    CONSTRAINT_MISMATCH = "constraint mismatch"
    POOL_INCOMPLETE = "pool incomplete"
    POOL_INVALID = "pool invalid"
    NODE_MISMATCH = "device not reachable from node"
    GATE_DISABLED = "feature gate disabled"


@dataclass(frozen=True)
class Rejection:
    """One reason, as a full sentence with numbers, plus machine-readable details."""

    code: RejectionCode
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def __init__(self, code: RejectionCode, message: str, details: dict[str, Any] | None = None) -> None:
        # explain creates one per rejected device and node: filled in directly, several
        # times faster than the generated frozen __init__ (instances stay immutable)
        fields = self.__dict__
        fields["code"] = code
        fields["message"] = message
        fields["details"] = {} if details is None else details


class Tracer(Protocol):
    """Optional observer of the search (explain implements it)."""

    def device_rejected(
        self, claim: dict, request: str, driver: str, pool: str, device: str, rejection: Rejection
    ) -> None:
        """A device was considered for a request and refused."""

    def device_selected(self, claim: dict, request: str, driver: str, pool: str, device: str) -> None:
        """A device was (tentatively) chosen for a request."""

    def pool_skipped(self, driver: str, pool: str, rejection: Rejection) -> None:
        """A whole pool was left out (incomplete, invalid, not reachable)."""

    def request_unsatisfied(self, claim: dict, request: str, reason: str) -> None:
        """No device combination satisfied a request."""


class NullTracer:
    """A tracer that records nothing (handy base class for partial tracers)."""

    def device_rejected(self, claim: dict, request: str, driver: str, pool: str, device: str, rejection: Rejection) -> None:
        return None

    def device_selected(self, claim: dict, request: str, driver: str, pool: str, device: str) -> None:
        return None

    def pool_skipped(self, driver: str, pool: str, rejection: Rejection) -> None:
        return None

    def request_unsatisfied(self, claim: dict, request: str, reason: str) -> None:
        return None
