"""Entry point: index the cluster once, then allocate claims for any node."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..gates import FeatureGates
    from ..state import ClusterState
from .outcome import AllocationOutcome
from .trace import Tracer


class Allocator:
    """Reusable across nodes and calls: classes, pools and in-use devices are indexed once."""

    def __init__(self, state: ClusterState, gates: FeatureGates) -> None:
        self.state = state
        self.gates = gates

    def allocate(self, node: dict[str, Any], claims: list[dict[str, Any]], *, tracer: Tracer | None = None) -> AllocationOutcome:
        """Allocate ``claims`` together for ``node`` (first-fit, as the scheduler does)."""
        raise NotImplementedError("allocator not implemented yet")
