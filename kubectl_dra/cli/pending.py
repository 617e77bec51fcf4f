"""``kubectl dra pending``: every pending pod, why it waits, and the devices nobody uses.

Exit codes: 0 every pending pod could be placed now (or there is none); 1 some cannot;
2 usage, input or cluster-access error.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Sequence

import click

from ..errors import UsageError
from . import whatif as cli_whatif
from .common import (
    OUTPUT_FORMATS, check_namespace_flags, cyclic_gc_paused, default_namespace, dump, format_table, gate_options,
    load_cluster, name_output, no_headers_option, output_option, resolve_gates, state_options, stderr_is_terminal,
    warn,
)
from .fleet import render_gang, render_stranded
from .options import timeout_option
from .whatif import whatif_options

if TYPE_CHECKING:
    from ..fleet.pending import PendingReport

EPILOG = """\b
Examples:
  kubectl dra pending -A                          # every pending pod with DRA claims, and why
  kubectl dra pending -n ml-team -o wide          # with priorities and the nodes that fit
  kubectl dra pending -A --add-nodes gpu-node-3=4 # would 4 more nodes like gpu-node-3 clear the queue?
  kubectl dra pending -A -o name                  # pod/NAME of each pod that cannot be placed
  kubectl dra pending -A -o json                  # a kubectl-dra/v1 Pending document
"""

#: longest REASON cell in the default table (-o wide shows it whole)
REASON_WIDTH = 160


@click.command("pending", epilog=EPILOG)
@click.option("-n", "--namespace", metavar="NS", help="Pending pods of this namespace (default: the kubeconfig's, "
              "else default).")
@click.option("-A", "--all-namespaces", is_flag=True, help="Pending pods of every namespace.")
@click.option("--all-pods", is_flag=True, help="Every pending pod, also those without DRA claims.")
@gate_options
@timeout_option
@output_option((*OUTPUT_FORMATS, "name"))
@no_headers_option
@whatif_options
@state_options
def pending(namespace: str | None, all_namespaces: bool, all_pods: bool, feature_gates: str | None,
            kubernetes_version: str | None, timeout: float, output: str, no_headers: bool,
            state_paths: tuple[str, ...], kubeconfig: str | None, kube_context: str | None,
            request_timeout: float) -> None:
    """List every pending pod with DRA claims, why it waits, and what would change it.

    A pod is pending when it has no node, has not finished and is not being deleted. For
    each: its claims, how many nodes it fits on (0/120) and the reason, in the words of
    `kubectl dra explain pod/NAME` (the same evaluation: run it for one pod's detail). The
    first line groups the pods by reason, with counts. Before any node is tried, the DRA
    states that keep a pod waiting are named: a claim that does not exist, a claim being
    deleted, a claim reserved by other pods up to the reservedFor limit, a DeviceClass that
    does not exist; a claim from a template that is not created yet is named too, and the
    pod is still evaluated as it will be once the claim exists. A pod that would fit now is
    listed as such, with where: something else holds it back (binding conditions not yet
    met, a scheduler backlog, filters beyond DRA). Pods with identical specs (the replicas
    of one Job) are evaluated once.

    Pods of a PodGroup are also placed together, as a gang: pod by pod in the scheduler's
    order, and when that fails, a search for a joint placement (bounded by --timeout).

    After the pods: stranded devices, allocated claims that no running pod uses.

    \b
    -o json|yaml prints a kubectl-dra/v1 Pending document:
      summary, featureGates, nodes, hypotheticalNodes, cordoned, specs,
      groups   [{reason, pods}]
      pods     [{namespace, name, status (Fits|Unschedulable|Waiting|Error), reason, fit,
               total, nodes (that fit, best first, up to 20), reasons [{reason, nodes}],
               waiting, claims, priority, spec (index of the distinct spec)}]
      gangs    [{name, status, summary, pods, podByPod, joint, searched, timedOut, steps}]
      stranded [{namespace, name, devices, why, since, ageSeconds}]
    -o name prints pod/NAME for each pending pod that cannot be placed now.

    Exit codes: 0 every pending pod could be placed now (or none is pending); 1 some
    cannot; 2 usage, input or access error.
    """
    check_namespace_flags(namespace, all_namespaces)
    sys.exit(_run(namespace, all_namespaces, all_pods, feature_gates, kubernetes_version, timeout, output,
                  no_headers, state_paths, kubeconfig, kube_context, request_timeout))


def _run(namespace: str | None, all_namespaces: bool, all_pods: bool, feature_gates: str | None,
         kubernetes_version: str | None, timeout: float, output: str, no_headers: bool, state_paths: Sequence[str],
         kubeconfig: str | None, kube_context: str | None, request_timeout: float) -> int:
    from ..fleet.evaluate import PodEvaluator
    from ..fleet.pending import pending_report
    from ..preview import candidate_nodes
    from ..preview.document import gates_dict

    gates = resolve_gates(feature_gates, kubernetes_version)
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    ns = None if all_namespaces else default_namespace(namespace, state_paths, kubeconfig, kube_context)
    candidates = candidate_nodes(state, warn=warn)
    if not candidates:
        raise UsageError("the cluster state has no nodes (no Node objects and no node-local slices)")
    show_progress = stderr_is_terminal()
    with cyclic_gc_paused():
        evaluator = PodEvaluator(state, gates, candidates, timeout=timeout or None)
        report = pending_report(state, evaluator, ns, all_pods=all_pods,
                                progress=_progress if show_progress else None, gang_timeout=timeout or None)
    if show_progress:
        click.echo("\r\x1b[K", err=True, nl=False)
    report.gates = gates_dict(gates)
    cli_whatif.mark_report(report)
    if output in ("json", "yaml"):
        click.echo(dump(report.to_dict(), output))
    elif output == "name":
        text = name_output("pod", (p.name for p in report.blocked))
        if text:
            click.echo(text)
        click.echo(report.summary(), err=True)
    else:
        click.echo(render_table(report, wide=(output == "wide"), no_headers=no_headers))
    return 1 if report.blocked else 0


def _progress(done: int, total: int) -> None:
    click.echo(f"\rpending: {done} distinct specs of {total} pods", err=True, nl=False)


def _marked(report: "PendingReport", text: str) -> str:
    """Node names in ``text`` that are hypothetical carry `` (hypothetical)``."""
    for name in report.hypothetical:
        text = text.replace(f"best: {name})", f"best: {name} (hypothetical))")
    return text


def render_table(report: "PendingReport", wide: bool = False, no_headers: bool = False) -> str:
    """The summary line, one row per pod (grouped by reason), then the stranded claims."""
    out = [report.summary()]
    headers = ["NAMESPACE", "POD", "CLAIMS", "NODES", "STATUS", "REASON"]
    if wide:
        headers[4:4] = ["PRIORITY", "SPEC"]
    rows = []
    for pod in report.pods:
        a = pod.answer
        nodes = f"{a.fit}/{a.total}" if a.fit is not None else "-"
        reason = _marked(report, a.reason)
        if not wide and len(reason) > REASON_WIDTH:
            reason = reason[:REASON_WIDTH - 1] + "…"
        cells = [pod.namespace, pod.name, ",".join(a.claims) or "-", nodes, a.status, reason]
        if wide:
            cells[4:4] = [str(pod.priority), str(pod.spec)]
        rows.append(cells)
    if rows:
        out.append(format_table(headers, rows, no_headers))
    for gang in report.gangs:
        out += ["", render_gang(gang, report.hypothetical, no_headers)]
    stranded = render_stranded(report.stranded, no_headers)
    if stranded:
        out += ["", stranded]
    return "\n".join(out)
