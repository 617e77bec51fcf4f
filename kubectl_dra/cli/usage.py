"""``kubectl dra usage``: free and used devices, shared counters and consumable capacity,
per node and pool (or per DeviceClass), kube-capacity style: a cluster ``*`` row first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import click

from ..errors import NotFoundError
from ..state import ClusterState
from .whatif import whatif_options
from .common import (
    check_namespace_flags, cyclic_gc_paused, dump, format_table, gate_options, load_cluster, no_headers_option,
    output_option, resolve_gates, state_options, warn,
)
from .terminal import escape_terminal

if TYPE_CHECKING:
    from ..usage import Amount, Tally, Usage


EPILOG = """\b
Examples:
  kubectl dra usage                       # every node and pool, cluster total first
  kubectl dra usage --by class            # per DeviceClass
  kubectl dra usage --sort free           # most free devices first
  kubectl dra usage --node node-1 -o yaml # one node, structured
  kubectl dra usage -o wide --kubernetes-version 1.34   # which pools would a 1.34 scheduler skip?
"""


def _amounts(amounts: Mapping[str, "Amount"]) -> str:
    """``memory 40Gi/80Gi (50%), sm 10/108 (9%)``; ``-`` when there are none."""
    if not amounts:
        return "-"
    parts = []
    for name, amount in sorted(amounts.items()):
        pct = amount.percent()
        parts.append(f"{name} {amount.consumed_quantity}/{amount.total_quantity}"
                     + (f" ({pct}%)" if pct is not None else ""))
    return ", ".join(parts)


def _device_cells(tally: "Tally") -> list[str]:
    pct = f" ({tally.percent()}%)" if tally.devices else ""
    return [str(tally.devices), f"{tally.allocated}{pct}", str(tally.free)]


def render_table(usage: "Usage", wide: bool = False, no_headers: bool = False) -> str:
    """The cluster row, then one row per node and pool (or per class)."""
    by_class = usage.by == "class"
    head = ["CLASS"] if by_class else ["NODE", "DRIVER", "POOL"]
    headers = head + ["DEVICES", "ALLOCATED", "FREE"]
    if wide:
        headers += ["SHARED", "ADMIN-ACCESS", "NOT-FREE"]
    headers += ([] if by_class else ["COUNTERS"]) + ["CAPACITY"]
    if wide and not by_class:
        headers += ["POOL-STATUS", "NOTES"]

    def row(name_cells: list[str], tally: "Tally", status: str = "-", notes: str = "-") -> list[str]:
        cells = name_cells + _device_cells(tally)
        if wide:
            cells += [str(tally.shared), str(tally.admin_access), _unavailable(tally)]
        if not by_class:
            cells.append(_amounts(tally.counters_by_name()))
        cells.append(_amounts(tally.capacity))
        if wide and not by_class:
            cells += [status, notes]
        return cells

    rows = [row(["*"] * len(head), usage.cluster)]
    for r in usage.rows:
        names = [r.device_class] if by_class else [r.node, r.driver, r.pool]
        status = r.status or ("incomplete" if r.incomplete else "complete")
        rows.append(row(names, r.tally, status, "; ".join(r.notes) or "-"))
    table = format_table(headers, rows, no_headers)
    if usage.consistency:
        table += "\n\n" + render_consistency(usage, no_headers)
    return table


def _unavailable(tally: "Tally") -> str:
    """``3 countersExhausted, 1 tainted``: why devices that are not allocated are not free either."""
    return ", ".join(f"{n} {reason}" for reason, n in sorted(tally.unavailable.items())) or "-"


def render_consistency(usage: "Usage", no_headers: bool = False) -> str:
    """The stored state's inconsistencies, one row each (printed after the usage table)."""
    rows = [[f.kind, f.object, f.message] for f in usage.consistency]
    return format_table(["INCONSISTENCY", "OBJECT", "DETAIL"], rows, no_headers)


@click.command("usage", epilog=EPILOG)
@click.option("--by", type=click.Choice(["node", "class"]), default="node", show_default=True,
              help="Rows per node and pool, or per DeviceClass.")
@click.option("--sort", type=click.Choice(["name", "devices", "allocated", "free", "utilization"]), default="name",
              show_default=True, help="Order of the rows (numbers: largest first).")
@click.option("--node", "nodes", multiple=True, metavar="NAME",
              help="Only rows (and totals) of this node (repeatable); by class, the devices on it.")
@click.option("-A", "--all-namespaces", is_flag=True,
              help="Accepted as kubectl takes it; usage always counts the allocated claims of every namespace.")
@click.option("-n", "--namespace", metavar="NS",
              help="Accepted as kubectl takes it (not with -A); devices belong to no namespace, so usage still "
              "counts the allocated claims of every namespace and says so.")
@gate_options
@output_option()
@no_headers_option
@whatif_options
@state_options
def usage(by: str, sort: str, nodes: tuple[str, ...], all_namespaces: bool, namespace: str | None,
          feature_gates: str | None, kubernetes_version: str | None,
          output: str, no_headers: bool, state_paths: tuple[str, ...],
          kubeconfig: str | None, kube_context: str | None, request_timeout: float) -> None:
    """Show total, allocated and free devices, shared counters and consumable capacity.

    Allocated means what the allocator counts as in use: results of allocated claims;
    admin-access allocations consume nothing; a shared device (allowMultipleAllocations)
    is allocated once it has a share, and its capacity is consumed by the shares'
    consumedCapacity. Only the newest generation of each pool counts. Devices and slices
    are cluster-scoped, so allocations by the claims of every namespace count, with or
    without -A; -n is accepted as kubectl takes it, with a warning that it narrows nothing
    (a device another namespace holds is not free).

    Counts are what the slices publish. Under the feature gates (--feature-gates,
    --kubernetes-version; default: the newest release's) each pool also gets the
    allocator's verdict: POOL-STATUS (-o wide) is incomplete when slices are missing,
    invalid for duplicate names or unknown counters; NOTES names devices the allocator does
    not use because a gate is off (counters, per-device node selection, compatibility
    groups, binding conditions, skipNodeOperations). A warning on stderr names such pools; -o json|yaml gives each row
    "status" and "notes" and the document "featureGates".

    FREE counts the devices a one-device request could get now: not allocated (or, for a
    shared device, with room for one more share), in a pool the allocator uses, not
    refused for a gate that is off, with its shared counters and compatibility groups
    allowing it beside what is allocated, and without an untolerated taint. -o wide's
    NOT-FREE (json/yaml: devices.unavailable) says why the others are not. --node limits
    the rows and the total (by class: the devices on those nodes).

    The stored state is checked too: a device held by two claims that cannot share it,
    counter sets or capacity consumed beyond their totals, and allocations of devices no
    slice publishes are listed after the table (json/yaml: "consistency").

    -o wide also lists stranded devices: allocated claims that no running pod uses (not
    reserved, or reserved only for pods that are gone or finished), with their devices and
    since when (kubectl dra pending lists them too).
    """
    # A DraError becomes one `error:` line and its exit code in the command group (cli/main.py).
    check_namespace_flags(namespace, all_namespaces)
    if namespace is not None:
        warn(f"-n {namespace}: usage counts the allocated claims of every namespace (devices belong to none; "
             "a device another namespace holds is not free)")
    _run(by, sort, nodes, feature_gates, kubernetes_version, output, no_headers, state_paths, kubeconfig,
         kube_context, request_timeout)


def _require_known_nodes(state: ClusterState, nodes: Sequence[str]) -> None:
    """--node names a Node of the cluster, a node some ResourceSlice is published for, or a
    NODE column the table shows for pools of many nodes (``<all-nodes>``, ``<node-selector>``)."""
    from ..usage import ALL_NODES, SELECTED_NODES

    known = {(n.get("metadata") or {}).get("name") for n in state.nodes} | {ALL_NODES, SELECTED_NODES}
    known |= {(s.get("spec") or {}).get("nodeName") for s in state.resource_slices}
    for name in nodes:
        if name not in known:
            raise NotFoundError(f"Node {name!r} not found")


def _run(by: str, sort: str, nodes: Sequence[str], feature_gates: str | None, kubernetes_version: str | None,
         output: str, no_headers: bool, state_paths: Sequence[str], kubeconfig: str | None,
         kube_context: str | None, request_timeout: float) -> None:
    from ..usage import compute_usage

    gates = resolve_gates(feature_gates, kubernetes_version)
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    _require_known_nodes(state, nodes)
    with cyclic_gc_paused():  # the pool verdicts' views of every device: kept until the report is made
        report = compute_usage(state, by=by, sort=sort, nodes=nodes or None, gates=gates)
    for warning in report.warnings:
        click.echo(f"warning: {escape_terminal(warning)}", err=True)
    if output in ("json", "yaml"):
        click.echo(dump(report.to_dict(), output))
        return
    click.echo(render_table(report, wide=(output == "wide"), no_headers=no_headers))
    if output == "wide":
        from ..fleet.stranded import stranded_claims
        from .fleet import render_stranded

        stranded = render_stranded(stranded_claims(state), no_headers)
        if stranded:
            click.echo("")
            click.echo(stranded)
