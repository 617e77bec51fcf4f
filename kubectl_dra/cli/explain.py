"""``kubectl dra explain``: per node and per request, why claims do (not) fit.

Contract used by ``preview --explain`` (kubectl_dra/cli/preview.py)::

    render_explanation(state, gates, plan, *, nodes=None, output="table", no_headers=False,
                       target="") -> tuple[str, int]

``state`` is the ClusterState, ``gates`` the FeatureGates, ``plan`` the
:class:`kubectl_dra.preview.PreviewPlan` from target resolution, ``nodes`` the node names
asked for with ``--node`` (None: every candidate node), ``output`` one of
table|wide|json|yaml, ``target`` the label of the summary line (e.g. ``pod/default/p``).
Returns (text for stdout, exit code: 0 some node fits, 1 none, 2 every node errs).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

import click

from ..errors import DraError, UsageError
from .common import (
    default_namespace, dump, format_table, gate_options, load_cluster, no_headers_option, output_option,
    resolve_gates, state_options, stderr_is_terminal, warn,
)

Obj = dict[str, Any]

#: device rows shown per request and reason in the default table (-o wide shows all)
DEVICES_PER_REASON = 3

EPILOG = """\b
Examples:
  kubectl dra explain pod/trainer-0                  # why is my pod Pending?
  kubectl dra explain claim/gpu-claim --node node-7  # every device on one node, and why not
  kubectl dra explain -f claim.yaml --state dump/    # offline, against a cluster dump
  kubectl dra explain claim/a -o json                # structured, for scripts
"""


def explain_plan(state: Any, gates: Any, plan: Any, nodes: Sequence[str] | None = None, target: str = "",
                 progress: Callable[[int, int], None] | None = None) -> Any:
    """Run the preview's per-node loop with an explain tracer on every node; an Explanation."""
    from ..allocation.explain import ExplainTracer, SelectionRefiner, explain_node, explanation
    from ..preview import candidate_nodes, run_preview
    from ..preview.nodes import node_name

    candidates = candidate_nodes(state, nodes, warn=warn)
    if not candidates:
        raise UsageError("the cluster state has no nodes to explain (no Node objects and no node-local slices); "
                         "use --node NAME")
    by_name = {node_name(n): n for n in candidates}
    refiner = SelectionRefiner(state)
    result = run_preview(state, plan, gates, candidates, progress=progress,
                         tracer_factory=lambda node: ExplainTracer(node_name(node), refine=refiner))
    explained = []
    for outcome in result.nodes:
        claims = plan.claims_for(by_name[outcome.node])
        results: list[Obj | None] = [alloc for _, alloc in outcome.allocations] if outcome.allocated else []
        explained.append(explain_node(
            outcome.node, outcome.status, [c.claim for c in claims], outcome.tracer,
            results=results, reasons=outcome.reasons, error=outcome.error))
    return explanation(target, explained, every_node=not nodes)


def render_explanation(state: Any, gates: Any, plan: Any, *, nodes: Sequence[str] | None = None,
                       output: str = "table", no_headers: bool = False, target: str = "",
                       limit: int = 5) -> tuple[str, int]:
    """Explain ``plan`` on ``nodes`` and render it; (text, exit code 0 fits somewhere / 1 not / 2 all errors)."""
    show_progress = stderr_is_terminal() and len(state.nodes) > 200
    exp = explain_plan(state, gates, plan, nodes, target, progress=_progress if show_progress else None)
    if show_progress:
        click.echo("\r\x1b[K", err=True, nl=False)
    if output in ("json", "yaml"):
        from ..allocation.explain import explanation_to_dict
        from ..preview.document import gates_dict

        text = dump(explanation_to_dict(exp, gates_dict(gates)), output)
    else:
        detail = len(exp.nodes) if nodes else limit
        text = render_table(exp, wide=(output == "wide"), no_headers=no_headers, limit=detail)
    return text, exit_code(exp)


def exit_code(exp: Any) -> int:
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


def detail_nodes(exp: Any, limit: int) -> list[Any]:
    """Nodes to show in detail: one per distinct reason first (most frequent reason first), then
    the rest by name, up to ``limit`` (0: all)."""
    chosen: list[Any] = []
    failing = [n for n in exp.nodes if not n.fits]
    for reason, _count in exp.reason_counts():
        first = next(n for n in failing if n.reason == reason)
        chosen.append(first)
    if not failing:
        chosen.extend(exp.fitting[:1])
    rest = [n for n in exp.nodes if n not in chosen]
    chosen.extend(rest)
    return chosen if limit <= 0 else chosen[:limit]


def node_table(node: Any, wide: bool, no_headers: bool) -> str:
    """One node: a row per request (its funnel), then a row per rejected or chosen device."""
    req_rows = []
    for req in node.requests:
        label = f"{req.claim[0]}/{req.claim[1]}:{req.spec.name}"
        needed = "all" if req.spec.mode == "All" else str(req.spec.count)
        if not req.evaluated:
            result = "not reached"
        elif req.allocated:
            result = "allocated " + ", ".join(_device_text(d) for d in req.allocated)
        else:
            result = "unsatisfied" if (req.viable < max(1, req.spec.count) or req.unsatisfied) else "satisfiable"
        req_rows.append([label, req.spec.device_class or "-", needed,
                         req.funnel_text() if req.evaluated else "-", result])
    parts = [format_table(["REQUEST", "CLASS", "NEEDED", "FUNNEL", "RESULT"], req_rows, no_headers)]
    dev_rows = []
    for req in node.requests:
        label = f"{req.claim[0]}/{req.claim[1]}:{req.spec.name}"
        for code, devices in req.rejections.items():
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


def render_table(exp: Any, wide: bool = False, no_headers: bool = False, limit: int = 5) -> str:
    """The summary line, one row per node, then a table per node for the nodes shown in detail."""
    out = [exp.summary()]
    overview = [[n.node, n.status, n.reason] for n in exp.nodes]
    out.append(format_table(["NODE", "STATUS", "REASON"], overview, no_headers))
    shown = detail_nodes(exp, limit)
    for node in shown:
        out.append("")
        out.append(f"Node {node.node}: {node.status}: {node.reason}")
        out.append(node_table(node, wide, no_headers))
    hidden = len(exp.nodes) - len(shown)
    if hidden > 0 and any(not n.fits for n in exp.nodes):
        out.append("")
        out.append(f"({hidden} more node{'s' if hidden != 1 else ''} not shown in detail; use --node NAME or "
                   "--limit 0)")
    return "\n".join(out)


# --------------------------------------------------------------------------- command


@click.command("explain", epilog=EPILOG)
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE",
              help="Claims, templates, pods or PodGroups to explain (YAML/JSON, - for stdin). Repeatable.")
@click.option("--node", "nodes", multiple=True, metavar="NAME",
              help="Only explain this node (repeatable; default: every node).")
@click.option("-n", "--namespace", metavar="NS", help="Namespace of the targets (default: the kubeconfig's, else default).")
@click.option("--limit", type=int, default=5, show_default=True,
              help="Nodes shown in detail (one per distinct reason first); 0 shows all.")
@gate_options
@output_option()
@no_headers_option
@state_options
def explain(targets: tuple[str, ...], filenames: tuple[str, ...], nodes: tuple[str, ...], namespace: str | None,
            limit: int, feature_gates: str | None, kubernetes_version: str | None, output: str, no_headers: bool,
            state_paths: tuple[str, ...], kubeconfig: str | None, kube_context: str | None,
            request_timeout: float) -> None:
    """Explain, per node and per request, why claims do not fit (or what they would get).

    For every node and request: a funnel of candidate devices and the first reason each
    device was rejected (not in the class, selector false, CEL error, in use, counters or
    capacity short, taint, compatibility group, constraint, pool incomplete or invalid,
    not reachable, feature gate). The first line sums up all nodes, like the scheduler's
    "0/N nodes are available", but specific. TARGET is as for `kubectl dra preview`.

    Exit codes: 0 some node fits; 1 none fits; 2 usage, input or access error.
    """
    try:
        code = _run(targets, filenames, nodes, namespace, limit, feature_gates, kubernetes_version, output,
                    no_headers, state_paths, kubeconfig, kube_context, request_timeout)
    except DraError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    sys.exit(code)


def _run(targets: Sequence[str], filenames: Sequence[str], nodes: Sequence[str], namespace: str | None,
         limit: int, feature_gates: str | None, kubernetes_version: str | None, output: str, no_headers: bool,
         state_paths: Sequence[str], kubeconfig: str | None, kube_context: str | None,
         request_timeout: float) -> int:
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
    plan = resolve_targets(state, targets, file_objects, namespace=ns, gates=gates)
    label = " ".join([*targets, *(f"-f {f}" for f in filenames)])
    text, code = render_explanation(state, gates, plan, nodes=list(nodes) or None, output=output,
                                    no_headers=no_headers, target=label, limit=limit)
    click.echo(text)
    return code
