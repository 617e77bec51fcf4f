"""``kubectl dra explain``: per node and per request, why claims do (not) fit.

Contract used by ``preview --explain`` (kubectl_dra/cli/preview.py)::

    render_explanation(state, gates, plan, *, nodes=None, output="table", no_headers=False,
                       target="") -> tuple[str, int]

``state`` is the ClusterState, ``gates`` the FeatureGates, ``plan`` the
:class:`kubectl_dra.preview.PreviewPlan` from target resolution, ``nodes`` the node names
asked for with ``--node`` (None: every candidate node), ``output`` one of
table|wide|json|yaml, ``target`` the label of the summary line (e.g. ``pod/default/p``).
Returns (text for stdout, exit code: 0 when some node fits, else 1).
"""

from __future__ import annotations

from typing import Any, Sequence

import click

from .common import (
    default_namespace, dump, format_table, gate_options, load_cluster, namespace_options, no_headers_option,
    output_option, resolve_gates, state_options,
)


def render_explanation(state: Any, gates: Any, plan: Any, *, nodes: Sequence[str] | None = None,
                       output: str = "table", no_headers: bool = False, target: str = "") -> tuple[str, int]:
    """Explain ``plan`` on ``nodes`` and render it; (text, exit code 0 fits somewhere / 1 not)."""
    raise NotImplementedError("explain is being written")
