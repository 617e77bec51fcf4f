"""A filter's verdict on one node, in the scheduler's words, and the FitError summary line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True, slots=True)
class Status:
    """Why one filter refuses a node: ``reasons`` exactly as kube-scheduler writes them (the
    words of ``kubectl describe pod``'s FailedScheduling event), ``detail`` what explain adds
    (amounts, domains, the pods in the way)."""

    plugin: str
    reasons: tuple[str, ...]
    detail: tuple[str, ...] = ()


def fit_error(total: int, node_reasons: Iterable[Sequence[str]]) -> str:
    """The scheduler's FitError line: ``0/5 nodes are available: 2 Insufficient cpu, 3 cannot
    allocate all claims.`` — every reason of every refused node counted, ``"<count> <reason>"``
    sorted as strings, as upstream's reason histogram is."""
    counts: dict[str, int] = {}
    for reasons in node_reasons:
        for reason in reasons:
            counts[reason] = counts.get(reason, 0) + 1
    text = f"0/{total} nodes are available:"
    histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
    if histogram:
        text += " " + ", ".join(histogram) + "."
    return text
