"""Static worst-case cost estimate (placeholder until the estimator lands)."""

from __future__ import annotations

from typing import Any


def estimate_cost(checked: Any) -> int:
    """Estimated worst-case cost of a checked expression."""
    return 0
