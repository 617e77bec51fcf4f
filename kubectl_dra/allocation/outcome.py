"""What one allocation attempt for one node returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AllocationOutcome:
    """``allocated`` with one AllocationResult dict per claim (in the order asked), or not.

    ``score`` is the scheduler-style preference for this node (higher is better); see
    :func:`kubectl_dra.allocation.results.score_of` for how it is computed.
    """

    allocated: bool
    results: list[dict[str, Any]] = field(default_factory=list)
    score: int = 0
