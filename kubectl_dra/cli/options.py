"""Options shared by the commands that run the allocator (preview, explain)."""

from __future__ import annotations

import re
from typing import Any, Callable, TypeVar

import click

from ..limits import FILTER_TIMEOUT

F = TypeVar("F", bound=Callable[..., Any])

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"([0-9]*\.?[0-9]+|[0-9]+\.)(ns|us|µs|μs|ms|s|m|h)")
_BARE_SECONDS = re.compile(r"[0-9]*\.?[0-9]+|[0-9]+\.")
#: the longest duration accepted (Go's time.Duration holds about 292 years)
MAX_DURATION = 290 * 365 * 24 * 3600.0


class Duration(click.ParamType):
    """A duration as kubectl's flags take it (Go's ``time.ParseDuration``: ``10s``, ``1m30s``,
    ``500ms``, ``1ns``; a bare number is seconds); ``0`` means no limit. Negative, infinite or
    absurd values are usage errors, never a limit that is already over or one that is no number."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = float(value)
        else:
            seconds = self._parse(str(value).strip(), value, param, ctx)
        if not 0 <= seconds <= MAX_DURATION:  # also NaN
            self.fail(f"{value!r} is not a duration from 0 (no limit) to {MAX_DURATION / 3600 / 24 / 365:.0f} years",
                      param, ctx)
        return seconds

    def _parse(self, text: str, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if text.startswith("-") and text[1:2].isdigit() or text.startswith("-."):
            self.fail(f"{value!r}: a duration must not be negative (0 means no limit)", param, ctx)
        if _BARE_SECONDS.fullmatch(text):
            return float(text)
        body = text[1:] if text.startswith("+") else text
        parts = _DURATION.findall(body)
        if not body or "".join(n + u for n, u in parts) != body:
            self.fail(f"{value!r} is not a duration (for example 10s, 1m30s, 500ms, or 0 for no limit)", param, ctx)
        return sum(float(n) * _UNITS[u] for n, u in parts)


def timeout_option(f: F) -> F:
    """``--timeout``: the allocator's deadline, like the scheduler's DRA filter timeout."""
    return click.option(
        "--timeout", type=Duration(), default=f"{FILTER_TIMEOUT:g}s", show_default=True, metavar="DURATION",
        help="Stop the search after this long, as kube-scheduler's DRA filterTimeout does; nodes not "
        "decided by then are reported as errors (\"timed out trying to allocate devices\"). 0: no limit.",
    )(f)
