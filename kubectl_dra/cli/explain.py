"""``kubectl dra explain``: per node and per request, why claims do (not) fit.

Contract used by ``preview --explain`` (kubectl_dra/cli/preview.py)::

    render_explanation(state, gates, plan, *, nodes=None, output="table", no_headers=False,
                       target="") -> tuple[str, int]

``state`` is the ClusterState, ``gates`` the FeatureGates, ``plan`` the
:class:`kubectl_dra.preview.PreviewPlan` from target resolution, ``nodes`` the node names
asked for with ``--node`` (None: every candidate node), ``output`` one of
table|wide|json|yaml, ``target`` the summary line's subject only when the plan has neither pods
nor claims (the summary otherwise names them: ``pod ns/p``, ``ResourceClaim ns/c``, ``claims …``).
Returns (text for stdout, exit code: 0 some node fits, 1 none, 2 every node errs).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Sequence

import click

from ..errors import UsageError
from ..explain import Explanation, NodeExplanation, explanation_to_dict, request_results
from ..preview.explained import explain_plan
from ..limits import FILTER_TIMEOUT
from .completion import complete_target
from .options import timeout_option
from . import whatif as cli_whatif
from .fleet import gang_of_targets, render_gang
from .whatif import whatif_options
from .common import (
    OUTPUT_FORMATS, check_namespace_flags, cyclic_gc_paused, default_namespace, dump, format_table, gate_options,
    load_cluster,
    name_output, namespace_options, no_headers_option, output_option, resolve_gates, state_options,
    every_node_failed, stderr_is_terminal, warn,
)

if TYPE_CHECKING:
    from ..gates import FeatureGates
    from ..preview.targets import PreviewPlan
    from ..state import ClusterState

#: device rows shown per request and reason in the default table (-o wide shows all)
DEVICES_PER_REASON = 3
#: devices of a fitting node named in the node table's DEVICES column (-o wide names all)
DEVICES_PER_NODE = 3

EPILOG = """\b
Examples:
  kubectl dra explain pod/trainer-0                  # why is my pod Pending?
  kubectl dra explain claim/gpu-claim --node node-7  # every device on one node, and why not
  kubectl dra explain -f claim.yaml --state dump/    # offline, against a cluster dump
  kubectl dra explain claim/a -o json                # structured, for scripts
  kubectl dra explain template/t -A -o name          # nodes that fit, one node/NAME a line
"""


def render_explanation(state: "ClusterState", gates: "FeatureGates", plan: "PreviewPlan", *,
                       nodes: Sequence[str] | None = None, output: str = "table", no_headers: bool = False, target: str = "",
                       limit: int = 5, timeout: float | None = FILTER_TIMEOUT,
                       errors: list[str | None] | None = None) -> tuple[str, int]:
    """Explain ``plan`` on ``nodes`` and render it; (text, exit code 0 fits somewhere / 1 not / 2 all
    errors). ``errors``, when given, receives each node's error (for the caller's stderr line)."""
    show_progress = stderr_is_terminal() and len(state.nodes) > 200
    with cyclic_gc_paused():  # the views, pools and per-node traces live until printed
        exp = explain_plan(state, gates, plan, nodes, target, progress=_progress if show_progress else None,
                           timeout=timeout, warn=warn)
    if show_progress:
        click.echo("\r\x1b[K", err=True, nl=False)
    if output in ("json", "yaml"):
        from ..preview.document import gates_dict

        text = dump(explanation_to_dict(exp, gates_dict(gates)), output)
    elif output == "name":
        text = name_output("node", (n.node for n in exp.fitting))
        if not text:
            click.echo(exp.summary(), err=True)
    else:
        detail = len(exp.nodes) if nodes else limit
        text = render_table(exp, wide=(output == "wide"), no_headers=no_headers, limit=detail, asked=bool(nodes))
    if errors is not None:
        errors.extend(n.error for n in exp.nodes)
    return text, exit_code(exp)


def exit_code(exp: Explanation) -> int:
    """0 some node fits; 2 every node ended in an error; else 1."""
    if exp.fitting:
        return 0
    if exp.nodes and all(n.status == "Error" for n in exp.nodes):
        return 2
    return 1


def _progress(done: int, total: int) -> None:
    if done % 50 == 0 or done == total:
        click.echo(f"\rexplaining: {done}/{total} nodes", err=True, nl=False)


# --------------------------------------------------------------------------- tables


def _device_text(device: tuple[str, str, str]) -> str:
    return "/".join(device)


def detail_nodes(exp: Explanation, limit: int, fitting: bool = False) -> list[NodeExplanation]:
    """Nodes to show in detail: the nodes that do not fit, one per distinct reason first (most
    frequent reason first), then the rest by name; with ``fitting`` the nodes that fit after
    them. At most ``limit`` (0: all), shown failures first, then by node name."""
    failing = [n for n in exp.nodes if not n.fits]
    chosen: list[NodeExplanation] = []
    for reason, _count in exp.reason_counts():
        chosen.append(next(n for n in failing if n.reason == reason))
    picked = {id(n) for n in chosen}
    chosen.extend(n for n in sorted(failing, key=lambda n: n.node) if id(n) not in picked)
    if fitting:
        chosen.extend(sorted(exp.fitting, key=lambda n: n.node))
    if limit > 0:
        chosen = chosen[:limit]
    return sorted(chosen, key=lambda n: (n.fits, n.node))


def _devices_cell(node: NodeExplanation, wide: bool) -> str:
    """The devices a fitting node would get (``-`` for the others); a few unless ``wide``."""
    if not node.fits:
        return "-"
    devices = [_device_text(d) for r in node.requests for d in r.allocated]
    if not devices:
        return "<none>" if not node.requests else "fits"
    if wide or len(devices) <= DEVICES_PER_NODE:
        return ", ".join(devices)
    return ", ".join(devices[:DEVICES_PER_NODE]) + f" (+{len(devices) - DEVICES_PER_NODE} more)"


def node_table(node: NodeExplanation, wide: bool, no_headers: bool) -> str:
    """One node: a row per request (its funnel and outcome), then a row per rejected device.

    The default view leaves out devices that are not in the request's class (the funnel counts
    them) and says so in one line when no device of the node is in the class; ``wide`` lists all."""
    req_rows = []
    notes = []
    for req, result in zip(node.requests, request_results(node)):
        label = f"{req.claim[0]}/{req.claim[1]}:{req.spec.name}"
        needed = "all" if req.spec.mode == "All" else str(req.spec.count)
        req_rows.append([label, req.spec.device_class or "-", needed,
                         req.funnel_text() if req.evaluated else "-", result])
        note = None if wide else req.class_note()
        if note:
            skipped = " outside the skipped pools below" if node.pools_skipped else ""
            notes.append(f"{label}: {note}{skipped}")
    parts = [format_table(["REQUEST", "CLASS", "NEEDED", "FUNNEL", "RESULT"], req_rows, no_headers), *notes]
    dev_rows = []
    for req in node.requests:
        label = f"{req.claim[0]}/{req.claim[1]}:{req.spec.name}"
        for code, devices in req.rejections.items():
            if code.name == "NOT_IN_CLASS" and not wide:
                continue
            shown = devices if wide else devices[:DEVICES_PER_REASON]
            for device, rejection in shown:
                dev_rows.append([_device_text(device), label, code.name, rejection.message])
            if len(devices) > len(shown):
                dev_rows.append([f"… {len(devices) - len(shown)} more", label, code.name, "(-o wide shows all)"])
    for driver, pool, rejection in node.pools_skipped:
        dev_rows.append([f"{driver}/{pool}/*", "(pool)", rejection.code.name, rejection.message])
    if dev_rows:
        parts.append(format_table(["DEVICE", "REQUEST", "REJECTED-AT", "REASON"], dev_rows, no_headers))
    return "\n".join(p for p in parts if p)


def _reason_cell(node: NodeExplanation) -> str:
    """The node's reason, with the filter's detail when a scheduler filter other than DynamicResources refused it."""
    if node.detail and node.filter != "DynamicResources":
        return f"{node.reason} ({'; '.join(node.detail)})"
    return node.reason


def render_table(exp: Explanation, wide: bool = False, no_headers: bool = False, limit: int = 5,
                 asked: bool = False) -> str:
    """The summary line, one row per node, then a block per node shown in detail.

    Detail goes to the nodes that do not fit (up to ``limit``); nodes that fit get only their
    row, with the devices they would get. ``wide``, or nodes ``asked`` for by name, show the
    nodes that fit in detail too."""
    out = [exp.summary()]
    if exp.fit_error:
        out.append(f"kube-scheduler: {exp.fit_error}")
    out.extend(f"note: {note}" for note in exp.notes)
    any_fits = bool(exp.fitting)
    headers = ["NODE", "STATUS", "REASON"] + (["DEVICES"] if any_fits else [])
    overview = [[n.node, n.status, _reason_cell(n)] + ([_devices_cell(n, wide)] if any_fits else [])
                for n in exp.nodes]
    out.append(format_table(headers, overview, no_headers))
    with_fitting = wide or asked
    shown = detail_nodes(exp, limit, fitting=with_fitting)
    for node in shown:
        out.append("")
        out.append(f"Node {node.node}: {node.status}: {node.reason}")
        if node.filter and node.detail:
            out.append(f"  filter {node.filter}: " + "; ".join(node.detail))
        if node.requests and (not node.filter or node.filter == "DynamicResources"):
            out.append(node_table(node, wide, no_headers))
    eligible = [n for n in exp.nodes if with_fitting or not n.fits]
    hidden = len(eligible) - len(shown)
    if hidden > 0:
        out.append("")
        out.append(f"({hidden} more node{'s' if hidden != 1 else ''} not shown in detail; use --node NAME or "
                   "--limit 0)")
    if any_fits and not with_fitting:
        out.append("")
        out.append("(nodes that fit are not shown in detail; -o wide shows them)")
    return "\n".join(out)


# --------------------------------------------------------------------------- command


@click.command("explain", epilog=EPILOG)
@click.argument("targets", nargs=-1, metavar="[TARGET]...", shell_complete=complete_target)
@click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE", type=click.Path(allow_dash=True),
              help="Claims, templates, pods or PodGroups to explain (YAML/JSON, - for stdin). Repeatable.")
@click.option("--node", "nodes", multiple=True, metavar="NAME",
              help="Only explain this node (repeatable; default: every node).")
@namespace_options
@click.option("--limit", type=int, default=5, show_default=True,
              help="Nodes shown in detail (one per distinct reason first); 0 shows all.")
@timeout_option
@gate_options
@output_option((*OUTPUT_FORMATS, "name"))
@no_headers_option
@whatif_options
@state_options
def explain(targets: tuple[str, ...], filenames: tuple[str, ...], nodes: tuple[str, ...], namespace: str | None,
            all_namespaces: bool, limit: int, timeout: float, feature_gates: str | None, kubernetes_version: str | None, output: str,
            no_headers: bool, state_paths: tuple[str, ...], kubeconfig: str | None, kube_context: str | None,
            request_timeout: float) -> None:
    """Explain, per node and per request, why claims do not fit (or what they would get).

    For every node and request: a funnel of candidate devices and the first reason each
    device was rejected (not in the class, selector false, CEL error, in use, counters or
    capacity short, taint, compatibility group, constraint, pool incomplete or invalid,
    not reachable, feature gate). The first line sums up all nodes, like the scheduler's
    "0/N nodes are available", but specific. TARGET is as for `kubectl dra preview`; with
    -A, a target that names no namespace is found in whichever namespace holds it.

    The default table is about failure: nodes that do not fit get a detail block (up to
    --limit, one per distinct reason first, shown by node name), listing only the devices
    of the request's class that were rejected; nodes that fit get their row with the
    devices they would get. -o wide shows every rejected device (also those of other
    classes) and the nodes that fit in detail too; so do nodes named with --node.

    \b
    -o json|yaml prints a kubectl-dra/v1 Explanation with everything, in a stable order:
      apiVersion, kind  "kubectl-dra/v1", "Explanation"
      target            what the summary speaks of (pod, ResourceClaim, claims, ...)
      summary           the first line of the table
      fit, total        nodes that fit, nodes explained
      featureGates      the gates the allocator ran with
      claims            [{namespace, name}] allocated together
      reasons           [{reason, nodes}] for the nodes that do not fit, most frequent first
      cluster           findings true on every node
      nodes             [{node, status, reason, filter (the scheduler plugin that refused
                        it), detail, devices (nodes that fit), error,
                        requests: [{claim, request, deviceClassName, allocationMode, count,
                        evaluated, candidates, needed, usable, funnel, rejections (every
                        code, NOT_IN_CLASS included), allocated, unsatisfied, result}],
                        poolsSkipped}]
      modelled          the scheduler filters modelled (volumes and preemption are not)
      fitError, notes   for pods: the scheduler's FailedScheduling line when no node fits;
                        what could not be checked (a pod's PersistentVolumeClaims)

    -o name prints node/NAME for each node that fits, one a line (nothing when none fits;
    the summary goes to stderr then).

    Exit codes: 0 some node fits; 1 none fits; 2 usage, input or access error.
    """
    # A DraError becomes one `error:` line and its exit code in the command group (cli/main.py).
    check_namespace_flags(namespace, all_namespaces)
    code = _run(targets, filenames, nodes, namespace, limit, feature_gates, kubernetes_version, output,
                no_headers, state_paths, kubeconfig, kube_context, request_timeout, timeout, all_namespaces)
    sys.exit(code)


def _run(targets: Sequence[str], filenames: Sequence[str], nodes: Sequence[str], namespace: str | None,
         limit: int, feature_gates: str | None, kubernetes_version: str | None, output: str, no_headers: bool,
         state_paths: Sequence[str], kubeconfig: str | None, kube_context: str | None,
         request_timeout: float, timeout: float, all_namespaces: bool = False) -> int:
    """The command's work; returns the exit code."""
    from ..preview import resolve_targets
    from ..state import load_documents

    if not targets and not filenames:
        raise UsageError("nothing to explain: name a claim, template/NAME, pod/NAME, podgroup/NAME or use -f FILE "
                         "(see kubectl dra explain --help)")
    if limit < 0:
        raise UsageError("--limit must be 0 (all) or more")
    gates = resolve_gates(feature_gates, kubernetes_version)
    file_objects = [(obj, "<stdin>" if path == "-" else path) for path in filenames for obj in load_documents([path])]
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    ns = default_namespace(namespace, state_paths, kubeconfig, kube_context)
    code, gang = gang_of_targets(state, gates, targets, filenames, ns, all_namespaces, timeout or None, nodes,
                                 output, cli_whatif.hypothetical_nodes(), no_headers)
    if code is not None:
        return code
    plan = resolve_targets(state, targets, file_objects, namespace=ns, gates=gates,
                           explicit_namespace=namespace is not None, warn=warn, all_namespaces=all_namespaces)
    label = " ".join([*targets, *(f"-f {f}" for f in filenames)])
    errors: list[str | None] = []
    text, code = render_explanation(state, gates, plan, nodes=list(nodes) or None, output=output,
                                    no_headers=no_headers, target=label, limit=limit, timeout=timeout,
                                    errors=errors)
    if text:  # -o name prints nothing when no node fits
        click.echo(text)
    if code == 2:
        every_node_failed(errors)
    if gang is not None:
        click.echo("")
        click.echo(render_gang(gang, no_headers=no_headers))
        if not gang.fits:
            return 1
    return code

