"""Options shared by the commands that run the allocator (preview, explain)."""

from __future__ import annotations

import re
from typing import Any, Callable, TypeVar

import click

from ..limits import FILTER_TIMEOUT

F = TypeVar("F", bound=Callable[..., Any])

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


class Duration(click.ParamType):
    """A duration as Kubernetes flags spell it (``10s``, ``1m30s``, ``500ms``; a bare number is
    seconds); ``0`` means no limit."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        text = str(value).strip()
        try:
            return float(text)
        except ValueError:
            pass
        parts = _DURATION.findall(text)
        if not text or "".join(n + u for n, u in parts) != text:
            self.fail(f"{value!r} is not a duration (for example 10s, 1m30s, 500ms, or 0 for no limit)", param, ctx)
        return sum(float(n) * _UNITS[u] for n, u in parts)


def timeout_option(f: F) -> F:
    """``--timeout``: the allocator's deadline, like the scheduler's DRA filter timeout."""
    return click.option(
        "--timeout", type=Duration(), default=f"{FILTER_TIMEOUT:g}s", show_default=True, metavar="DURATION",
        help="Stop the search after this long, as kube-scheduler's DRA filterTimeout does; nodes not "
        "decided by then are reported as errors (\"timed out trying to allocate devices\"). 0: no limit.",
    )(f)
