"""``--add-nodes NODE=N`` and ``--cordon NODE`` on every read command: parsed into the
command's click context, applied by :func:`~kubectl_dra.cli.common.load_cluster` to the
state it loads (a new state; see :mod:`kubectl_dra.fleet.whatif`)."""

from __future__ import annotations

from typing import Any, Callable, Protocol, TypeVar

import click

from ..fleet.whatif import WhatIf, WhatIfState, apply_whatif, check_node_list, parse_add_nodes
from ..state import ClusterState

F = TypeVar("F", bound=Callable[..., Any])

#: key of the what-if in the click context's ``meta`` (the command's own invocation)
_META_KEY = "kubectl_dra.whatif"
_APPLIED_KEY = "kubectl_dra.whatif.applied"


def _store_add(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    current = ctx.meta.get(_META_KEY) or WhatIf()
    ctx.meta[_META_KEY] = WhatIf(tuple(parse_add_nodes(value)), current.cordon)


def _store_cordon(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    current = ctx.meta.get(_META_KEY) or WhatIf()
    ctx.meta[_META_KEY] = WhatIf(current.add, tuple(check_node_list("--cordon", list(value))))


def whatif_options(f: F) -> F:
    """The two what-if flags (not passed to the command function: load_cluster applies them)."""
    f = click.option("--cordon", "cordon", multiple=True, metavar="NODE", expose_value=False, callback=_store_cordon,
                     help="What if NODE were cordoned: leave it (and the devices bound to it) out of consideration. "
                     "Repeatable.")(f)
    return click.option("--add-nodes", "add_nodes", multiple=True, metavar="NODE=N", expose_value=False,
                        callback=_store_add,
                        help="What if there were N more nodes like NODE: hypothetical copies of it and its node-local "
                        "ResourceSlices (named NODE-hypothetical-K). Repeatable.")(f)


def apply_requested(state: ClusterState) -> ClusterState:
    """``state`` with the command's what-ifs applied (itself when there are none); notes on stderr."""
    ctx = click.get_current_context(silent=True)
    whatif = ctx.meta.get(_META_KEY) if ctx is not None else None
    if not whatif:
        return state
    applied = apply_whatif(state, whatif)
    ctx.meta[_APPLIED_KEY] = applied  # type: ignore[union-attr]  # (ctx is set when whatif is)
    for line in applied.notes():
        click.echo(line, err=True)
    return applied.state


def current() -> WhatIfState | None:
    """The what-if the command's load_cluster applied, if any (to mark hypothetical nodes)."""
    ctx = click.get_current_context(silent=True)
    found = ctx.meta.get(_APPLIED_KEY) if ctx is not None else None
    return found if isinstance(found, WhatIfState) else None


class _MarkedReport(Protocol):
    """A fleet report that names the hypothetical and cordoned nodes it was computed with."""

    hypothetical: dict[str, str]
    cordoned: list[str]


def mark_report(report: _MarkedReport) -> None:
    """Record on ``report`` the what-ifs the command applied (none: the report is left as it is)."""
    applied = current()
    if applied is not None:
        report.hypothetical, report.cordoned = dict(applied.hypothetical), list(applied.cordoned)


def hypothetical_nodes() -> dict[str, str]:
    """The command's --add-nodes copies, {node: the node it copies} (to mark them in output)."""
    applied = current()
    return dict(applied.hypothetical) if applied is not None else {}
