"""``kubectl dra preview``: which nodes and devices claims would be allocated.

Exit codes: 0 at least one node fits; 1 no node fits; 2 usage or input error (also when
every node ends in an allocation error, such as an unknown DeviceClass).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Sequence

import click

from ..types import Obj
from ..errors import UsageError
from .completion import complete_target
from .options import timeout_option
from . import whatif as cli_whatif
from .fleet import gang_of_targets, render_gang
from .whatif import whatif_options
from .common import (
    OUTPUT_FORMATS, check_namespace_flags, cyclic_gc_paused, default_namespace, dump, gate_options, load_cluster,
    name_output, namespace_options, no_headers_option, output_option, resolve_gates, state_options,
    every_node_failed, stderr_is_terminal, warn,
)

if TYPE_CHECKING:
    from ..gates import FeatureGates
    from ..preview import PreviewPlan, PreviewResult
    from ..state import ClusterState


EPILOG = """\b
Examples:
  kubectl dra preview claim/gpu-claim                 # which nodes, which devices?
  kubectl dra preview template/mig-slice -n ml        # a claim generated from a template
  kubectl dra preview pod/trainer-0 -o wide           # all claims of a pod, together
  kubectl dra preview -f claim.yaml --state dump/     # offline, against a cluster dump
  kubectl dra preview claim/a claim/b --node node-1   # two claims together on one node
  kubectl dra preview claim/a --kubernetes-version 1.34  # would it work on an older cluster?
  kubectl dra preview template/t -A -o name           # nodes that fit, one node/NAME a line
"""


@click.command("preview", epilog=EPILOG)
@click.argument("targets", nargs=-1, metavar="[TARGET]...", shell_complete=complete_target)
@click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE", type=click.Path(allow_dash=True),
              help="Claims, templates, pods or PodGroups to preview (YAML/JSON, - for stdin). Repeatable.")
@click.option("--node", "nodes", multiple=True, metavar="NAME",
              help="Only try this node (repeatable; default: every node).")
@namespace_options
@gate_options
@click.option("--explain", is_flag=True, help="Explain per node and device why the claims do (not) fit.")
@timeout_option
@output_option((*OUTPUT_FORMATS, "name"))
@no_headers_option
@whatif_options
@state_options
def preview(targets: tuple[str, ...], filenames: tuple[str, ...], nodes: tuple[str, ...], namespace: str | None,
            all_namespaces: bool, feature_gates: str | None, kubernetes_version: str | None, explain: bool, timeout: float,
            output: str, no_headers: bool, state_paths: tuple[str, ...], kubeconfig: str | None,
            kube_context: str | None, request_timeout: float) -> None:
    """Show which nodes and devices claims would be allocated, without allocating anything.

    TARGET is claim/NAME, template/NAME, pod/NAME, podgroup/NAME, a bare claim NAME, or
    KIND/NAMESPACE/NAME. Several targets (and -f files, which come first) are allocated
    together, in order, as the claims of one pod are. Nodes that fit are ranked the way
    the scheduler prefers them. With -A, a target that names no namespace is found in
    whichever namespace holds it (an error naming them when several do).

    A pod (with or without claims) goes through kube-scheduler's default Filter plugins in
    its order: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
    NodeResourcesFit, PodTopologySpread, InterPodAffinity, then DynamicResources; a node's
    reason is the first refusal in the scheduler's words, and when no node fits the summary
    is the scheduler's FailedScheduling line. Not modelled: volumes (a pod with
    PersistentVolumeClaims gets a note) and preemption.

    A podgroup/NAME whose pods have no group claims is placed as a gang: pod by pod as the
    scheduler places them, then (when that fails) a joint placement searched within
    --timeout; -o json|yaml is then a kind: Gang document (status, summary, podByPod, joint).

    -o name prints node/NAME for each node that fits, best first, one a line (nothing
    when none fits; the summary goes to stderr then).

    Exit status: 0 when some node fits, 1 when none does, 2 on usage or input errors
    (also when every node ends in an allocation error, such as an unknown DeviceClass).
    """
    # A DraError becomes one `error:` line and its exit code in the command group (cli/main.py).
    check_namespace_flags(namespace, all_namespaces)
    code = _run(targets, filenames, nodes, namespace, feature_gates, kubernetes_version, explain, output,
                no_headers, state_paths, kubeconfig, kube_context, request_timeout, timeout, all_namespaces)
    sys.exit(code)


def _run(targets: Sequence[str], filenames: Sequence[str], nodes: Sequence[str], namespace: str | None,
         feature_gates: str | None, kubernetes_version: str | None, explain: bool, output: str, no_headers: bool,
         state_paths: Sequence[str], kubeconfig: str | None, kube_context: str | None,
         request_timeout: float, timeout: float, all_namespaces: bool = False) -> int:
    """The command's work; returns the exit code."""
    from ..preview import candidate_nodes, resolve_targets, run_preview
    from ..state import load_documents

    if not targets and not filenames:
        raise UsageError("nothing to preview: name a claim, template/NAME, pod/NAME, podgroup/NAME or use -f FILE "
                         "(see kubectl dra preview --help)")
    if "-" in filenames and "-" in state_paths:
        raise UsageError("standard input can feed either -f - or --state -, not both")
    if explain and output == "name":
        raise UsageError("--explain cannot be combined with -o name (names only): use -o table, wide, json or yaml")
    gates = resolve_gates(feature_gates, kubernetes_version)
    file_objects = [(obj, _origin(path)) for path in filenames for obj in load_documents([path])]
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    ns = default_namespace(namespace, state_paths, kubeconfig, kube_context)
    code, gang = gang_of_targets(state, gates, targets, filenames, ns, all_namespaces, timeout or None, nodes,
                                 output, cli_whatif.hypothetical_nodes(), no_headers)
    if code is not None:
        return code
    plan = resolve_targets(state, targets, file_objects, namespace=ns, gates=gates,
                           explicit_namespace=namespace is not None, warn=warn, all_namespaces=all_namespaces)
    candidates = candidate_nodes(state, nodes, warn=warn)
    if not candidates:
        raise UsageError("the cluster state has no nodes to preview on (no Node objects and no node-local slices); "
                         "use --node NAME")
    if explain and output in ("json", "yaml"):
        # one document: the explanation, which carries the per-node outcomes too
        errors: list[str | None] = []
        text, code = _explanation(state, gates, plan, nodes, output, no_headers, targets, filenames, timeout, errors)
        click.echo(text)
        if code == 2:
            every_node_failed(errors)
        return code
    show_progress = stderr_is_terminal() and len(candidates) > 200
    with cyclic_gc_paused():  # the views, pools and per-node results live until printed
        result = run_preview(state, plan, gates, candidates, progress=_progress if show_progress else None,
                             timeout=timeout)
    if show_progress:
        click.echo("\r" + " " * 40 + "\r", err=True, nl=False)
    for note in result.notes:
        warn(note)
    _emit(result, output, no_headers)
    if explain:
        click.echo("")
        click.echo(_explanation(state, gates, plan, nodes, output, no_headers, targets, filenames, timeout)[0])
    if result.all_errors:
        return 2
    if gang is not None:
        click.echo("")
        click.echo(render_gang(gang, cli_whatif.hypothetical_nodes(), no_headers))
        if not gang.fits:
            return 1
    return 0 if result.fitting else 1



def _origin(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _progress(done: int, total: int) -> None:
    if done % 50 == 0 or done == total:
        click.echo(f"\rpreviewing: {done}/{total} nodes", err=True, nl=False)


def _explanation(state: "ClusterState", gates: "FeatureGates", plan: "PreviewPlan", nodes: Sequence[str], output: str,
                 no_headers: bool, targets: Sequence[str], filenames: Sequence[str],
                 timeout: float, errors: list[str | None] | None = None) -> tuple[str, int]:
    """The explain presenter's text and exit code (see kubectl_dra.cli.explain.render_explanation)."""
    from .explain import render_explanation  # (only for nodes that do not fit: most previews never need it)

    label = " ".join([*targets, *(f"-f {f}" for f in filenames)])
    return render_explanation(state, gates, plan, nodes=list(nodes) or None, output=output,
                              no_headers=no_headers, target=label, timeout=timeout, errors=errors)


# --------------------------------------------------------------------------- output


def _emit(result: "PreviewResult", output: str, no_headers: bool) -> None:
    from ..preview import preview_document

    if output == "name":
        if result.all_errors:
            click.echo(f"error: {result.nodes[0].error}", err=True)
        elif result.fitting:
            click.echo(name_output("node", (n.node for n in result.fitting)))
        else:
            click.echo(summary(result), err=True)
        return
    if output in ("json", "yaml"):
        click.echo(dump(preview_document(result), output))
        if result.all_errors:
            click.echo(f"error: {result.nodes[0].error}", err=True)
        return
    if result.all_errors and len({n.error for n in result.nodes}) == 1:
        click.echo(f"error: {result.nodes[0].error}", err=True)
        return
    text = render_table(result, wide=(output == "wide"), no_headers=no_headers)
    if text:
        click.echo(text)
    if result.all_errors:
        every_node_failed([n.error for n in result.nodes])
    elif not no_headers:
        click.echo(summary(result), err=True)


def summary(result: "PreviewResult") -> str:
    """One line: how many nodes fit and the best one; for a pod that fits nowhere, the
    scheduler's own FailedScheduling line."""
    fitting = result.fitting
    total = len(result.nodes)
    if result.plan.pods and not fitting:
        return result.fit_error()
    if result.plan.pods and not (result.plan.claims or result.plan.extended):
        return f"the pod fits on {len(fitting)} of {total} node{'s' if total != 1 else ''}; best: {fitting[0].node}"
    if not fitting:
        return f"the claims fit on none of {total} node{'s' if total != 1 else ''}"
    return f"the claims fit on {len(fitting)} of {total} node{'s' if total != 1 else ''}; best: {fitting[0].node}"


def _quantities(values: Obj | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((values or {}).items()))


def _node_selector_text(selector: Obj | None) -> str:
    """A core/v1 NodeSelector in one short line (terms separated by `|`)."""
    if not selector:
        return "<any>"
    terms = []
    for term in selector.get("nodeSelectorTerms") or []:
        parts = []
        for req in list(term.get("matchFields") or []) + list(term.get("matchExpressions") or []):
            op, values = req.get("operator"), req.get("values") or []
            if op == "In" and len(values) == 1:
                parts.append(f"{req.get('key')}={values[0]}")
            elif op in ("In", "NotIn"):
                parts.append(f"{req.get('key')} {op.lower()} ({','.join(map(str, values))})")
            elif op in ("Exists",):
                parts.append(str(req.get("key")))
            elif op == "DoesNotExist":
                parts.append(f"!{req.get('key')}")
            else:
                parts.append(f"{req.get('key')} {op} {','.join(map(str, values))}")
        terms.append(",".join(parts))
    return " | ".join(terms) or "<none>"


def _config_text(allocation: Obj, request: str) -> str:
    """The config entries of an allocation that apply to ``request`` (source:driver)."""
    entries = []
    top = request.split("/")[0]
    for cfg in (allocation.get("devices") or {}).get("config") or []:
        reqs = cfg.get("requests") or []
        if reqs and request not in reqs and top not in reqs:
            continue
        driver = ((cfg.get("opaque") or {}).get("driver")) or "?"
        source = "class" if cfg.get("source") == "FromClass" else "claim"
        entries.append(f"{source}:{driver}")
    return ",".join(entries)


def _flags(result: Obj) -> str:
    flags = []
    if result.get("adminAccess"):
        flags.append("admin")
    if result.get("shareID"):
        flags.append(f"share={result['shareID'][:8]}")
    if result.get("bindingConditions"):
        flags.append("binding-conditions=" + "+".join(result["bindingConditions"]))
    if result.get("tolerations"):
        flags.append("tolerates-taints")
    return ",".join(flags)


def table_rows(result: "PreviewResult", wide: bool) -> list[tuple[bool, list[str]]]:
    """(is_message_row, cells) per line: device rows for allocated nodes, message rows otherwise."""
    rows: list[tuple[bool, list[str]]] = []
    for outcome in result.nodes:
        if not outcome.allocated:
            head = [outcome.node, outcome.status] + ([""] if wide else [])
            message = outcome.error if outcome.error is not None else "; ".join(outcome.reasons)
            rows.append((True, head + [message or ""]))
            continue
        if not outcome.allocations:  # a pod without claims: it fits, no device to show
            rows.append((False, [outcome.node, outcome.status] + ([str(outcome.score)] if wide else [])
                         + ["<none>", "", "", ""] + (["", "", ""] if wide else [])))
        for claim, allocation in outcome.allocations:
            label = f"{claim.namespace}/{claim.name}" + (" (allocated)" if claim.allocation is not None else "")
            devices = (allocation.get("devices") or {}).get("results") or []
            head = [outcome.node, outcome.status] + ([str(outcome.score)] if wide else [])
            if not devices:
                rows.append((False, head + [label, "", "<none>", ""]
                             + (["", "", _node_selector_text(allocation.get("nodeSelector"))] if wide else [])))
            for dev in devices:
                cells = head + [label, str(dev.get("request", "")),
                                f"{dev.get('driver')}/{dev.get('pool')}/{dev.get('device')}",
                                _quantities(dev.get("consumedCapacity"))]
                if wide:
                    cells += [_flags(dev), _config_text(allocation, str(dev.get("request", ""))),
                              _node_selector_text(allocation.get("nodeSelector"))]
                rows.append((False, cells))
    return rows


def render_table(result: "PreviewResult", wide: bool = False, no_headers: bool = False) -> str:
    """kubectl-style aligned table; unschedulable/error nodes show their reason after STATUS."""
    headers = ["NODE", "STATUS"] + (["SCORE"] if wide else []) + ["CLAIM", "REQUEST", "DEVICE", "CAPACITY"]
    if wide:
        headers += ["FLAGS", "CONFIG", "NODE-SELECTOR"]
    rows = table_rows(result, wide)
    table: list[tuple[bool, list[str]]] = ([] if no_headers else [(False, headers)]) + rows
    fixed = len(headers) - (4 if not wide else 7)  # columns before CLAIM
    widths = [0] * len(headers)
    for is_message, cells in table:
        limit = fixed if is_message else len(cells)
        for i in range(min(limit, len(cells))):
            widths[i] = max(widths[i], len(cells[i]))
    lines = []
    for is_message, cells in table:
        if is_message:
            line = "   ".join(c.ljust(widths[i]) for i, c in enumerate(cells[:fixed])) + "   " + cells[-1]
        else:
            line = "   ".join(c.ljust(widths[i]) for i, c in enumerate(cells))
        lines.append(line.rstrip())
    return "\n".join(lines)
