"""``kubectl dra drain-check NODE...``: would every pod with DRA claims on these nodes find a
new home if they were drained? Never writes to the cluster.

Exit codes: 0 every pod can move; 1 some cannot; 2 usage, input or cluster-access error.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Sequence

import click

from . import whatif as cli_whatif
from .common import (
    OUTPUT_FORMATS, cyclic_gc_paused, dump, format_table, gate_options, load_cluster, no_headers_option,
    output_option, resolve_gates, state_options,
)
from .options import timeout_option
from .whatif import whatif_options

if TYPE_CHECKING:
    from ..fleet.drain import DrainReport

EPILOG = """\b
Examples:
  kubectl dra drain-check gpu-node-7                      # can its pods move elsewhere?
  kubectl dra drain-check gpu-node-7 gpu-node-8 -o wide   # two nodes at once, with devices
  kubectl dra drain-check gpu-node-7 --add-nodes gpu-node-3=1   # ... if we add one like gpu-node-3
  kubectl dra drain-check gpu-node-7 -o json              # a kubectl-dra/v1 DrainCheck document
"""


@click.command("drain-check", epilog=EPILOG)
@click.argument("nodes", nargs=-1, required=True, metavar="NODE...")
@click.option("--all-pods", is_flag=True, help="Every pod of the nodes, also those without DRA claims.")
@gate_options
@timeout_option
@output_option(OUTPUT_FORMATS)
@no_headers_option
@whatif_options
@state_options
def drain_check(nodes: tuple[str, ...], all_pods: bool, feature_gates: str | None, kubernetes_version: str | None,
                timeout: float, output: str, no_headers: bool, state_paths: tuple[str, ...], kubeconfig: str | None,
                kube_context: str | None, request_timeout: float) -> None:
    """Check whether the pods with DRA claims on NODE... would find a new home if drained.

    As if the nodes were cordoned and their pods evicted: the evicted pods' claims from
    templates are released (their replacements get new ones), claims shared by name stay
    allocated while another pod still holds them. The pods are placed again one after
    another in the scheduler's queue order (priority, then creation time) on the other
    nodes, each committed before the next, as `kubectl dra preview pod/NAME` would place
    it in the state the earlier ones left. Per pod: the new node and devices, or why none.
    Nothing is written to the cluster.

    \b
    -o json|yaml prints a kubectl-dra/v1 DrainCheck document:
      summary, drained, featureGates, hypotheticalNodes, cordoned,
      released  [namespace/name] claims the eviction releases
      pods      [{namespace, name, priority, from, status (Moves|Stuck), to, devices,
                claims, reason}] in the order they were placed

    Exit codes: 0 every pod can move; 1 some cannot; 2 usage, input or access error
    (an unknown node or a node named twice).
    """
    sys.exit(_run(nodes, all_pods, feature_gates, kubernetes_version, timeout, output, no_headers, state_paths,
                  kubeconfig, kube_context, request_timeout))


def _run(nodes: Sequence[str], all_pods: bool, feature_gates: str | None, kubernetes_version: str | None,
         timeout: float, output: str, no_headers: bool, state_paths: Sequence[str], kubeconfig: str | None,
         kube_context: str | None, request_timeout: float) -> int:
    from ..fleet.drain import check_nodes, drain_check as run_check
    from ..fleet.whatif import check_node_list
    from ..preview.document import gates_dict

    check_node_list("drain-check", list(nodes))
    gates = resolve_gates(feature_gates, kubernetes_version)
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    check_nodes(state, list(nodes))
    with cyclic_gc_paused():
        report = run_check(state, gates, list(nodes), all_pods=all_pods, timeout=timeout or None)
    report.gates = gates_dict(gates)
    cli_whatif.mark_report(report)
    if output in ("json", "yaml"):
        click.echo(dump(report.to_dict(), output))
    else:
        click.echo(render_table(report, wide=(output == "wide"), no_headers=no_headers))
    return 0 if report.ok else 1


def render_table(report: "DrainReport", wide: bool = False, no_headers: bool = False) -> str:
    """The summary line, then one row per pod in the order they were placed."""
    out = [report.summary()]
    headers = ["NAMESPACE", "POD", "PRIORITY", "FROM", "STATUS", "TO", "DEVICES" if wide else "REASON"]
    if wide:
        headers.append("REASON")
    rows = []
    for move in report.moves:
        p = move.placed
        to = "-" if p.node is None else (f"{p.node} (hypothetical)" if p.node in report.hypothetical else p.node)
        devices = ", ".join(p.devices()) or "-"
        reason = "-" if p.placed else p.answer.reason
        cells = [p.namespace, p.name, str(move.priority), move.origin, "Moves" if p.placed else "Stuck", to]
        cells += [devices, reason] if wide else [reason]
        rows.append(cells)
    if rows:
        out.append(format_table(headers, rows, no_headers))
    if report.released and wide:
        out += ["", "released claims: " + ", ".join(report.released)]
    return "\n".join(out)
