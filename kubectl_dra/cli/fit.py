"""``kubectl dra fit``: how many more replicas of a target fit, where, and what runs out first.

Exit codes: 0 at least one replica fits (with --replicas N: all N fit); 1 none fits (with
--replicas N: fewer than N); 2 usage or input error (also when every node ends in an
allocation error, such as an unknown DeviceClass).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Sequence

import click

from ..errors import UsageError
from .completion import complete_target
from . import whatif as cli_whatif
from .options import timeout_option
from .whatif import whatif_options
from .common import (
    OUTPUT_FORMATS, check_namespace_flags, cyclic_gc_paused, default_namespace, dump, format_table, gate_options,
    load_cluster, name_output, namespace_options, no_headers_option, output_option, resolve_gates, state_options,
    stderr_is_terminal, warn,
)

if TYPE_CHECKING:
    from ..fit import FitResult


EPILOG = """\b
Examples:
  kubectl dra fit template/one-gpu -n ml              # how many more, and what runs out first?
  kubectl dra fit pod/trainer-0 --replicas 16         # do 16 more of this pod fit? (exit 1: no)
  kubectl dra fit -f claim.yaml --state dump/ -o wide # offline; per pool too
  kubectl dra fit claim/a --spread --node n1 --node n2
  kubectl dra fit template/t --kubernetes-version 1.34  # on our older cluster?
  kubectl dra fit template/t -A -o name               # the nodes that get replicas, one node/NAME a line
"""


@click.command("fit", epilog=EPILOG)
@click.argument("targets", nargs=-1, metavar="[TARGET]...", shell_complete=complete_target)
@click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE", type=click.Path(allow_dash=True),
              help="Claims, templates, pods or PodGroups to replicate (YAML/JSON, - for stdin). Repeatable.")
@click.option("--replicas", type=click.IntRange(min=1), metavar="N",
              help="Ask whether N more fit: exit 0 when they do, 1 when not (and say how many did).")
@click.option("--max", "maximum", type=click.IntRange(min=1), metavar="N", help="Stop counting at N replicas.")
@click.option("--spread", is_flag=True,
              help="Place replicas round-robin over the nodes (default: each on the node the preview ranks first).")
@click.option("--node", "nodes", multiple=True, metavar="NAME",
              help="Only place replicas on this node (repeatable; default: every node).")
@click.option("--gang", type=click.IntRange(min=1), metavar="N",
              help="Do N replicas of a pod or template fit together? Placed one at a time as the scheduler "
              "places them, then, when that fails, searched for jointly (bounded by --timeout).")
@timeout_option
@namespace_options
@gate_options
@output_option((*OUTPUT_FORMATS, "name"))
@no_headers_option
@whatif_options
@state_options
def fit(targets: tuple[str, ...], filenames: tuple[str, ...], replicas: int | None, maximum: int | None,
        spread: bool, nodes: tuple[str, ...], gang: int | None, timeout: float, namespace: str | None, all_namespaces: bool, feature_gates: str | None,
        kubernetes_version: str | None, output: str, no_headers: bool, state_paths: tuple[str, ...],
        kubeconfig: str | None, kube_context: str | None, request_timeout: float) -> None:
    """Count how many more replicas of TARGET fit, where, and what runs out first.

    TARGET is what `preview` takes: claim/NAME, template/NAME, pod/NAME, podgroup/NAME, a
    bare claim NAME, KIND/NAMESPACE/NAME, or -f FILE (with -A, a target that names no
    namespace is found in whichever namespace holds it). A replica is one more set of the
    target's claims allocated together (a pod's claims from templates get one claim per
    replica; a claim the pod names is shared by every replica). Replicas are allocated one
    after the other, each committed as in use (devices, shared counters, consumed capacity,
    shares of multi-allocatable devices) as the scheduler sees them after binding, until no
    node fits. The reasons are explain's, on the state with every replica allocated.

    Placement matters only where pools are shared by nodes (network-attached devices): by
    default each replica goes to the node the preview ranks first (prioritized-list score,
    then name); --spread gives the nodes turns.

    \b
    What is modelled: for a pod target, kube-scheduler's default Filter plugins
    (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
    PodTopologySpread, InterPodAffinity) with each replica bound as a pod (its cpu, memory,
    pod count, host ports, labels for spread and anti-affinity), then DynamicResources.
    Volumes (PVCs) and preemption are not modelled: for those the count is an upper bound.

    A target whose replica takes no device (requests of count 0, only claims allocated
    before) is not limited by devices: the headline says so, REPLICAS reads "any" where it
    fits, and the document has replicas null and stopped NotLimitedByDevices.

    -o json/yaml print a kubectl-dra/v1 Fit document: replicas, stopped (NoNodeFits,
    Limit or NotLimitedByDevices), summary, lastNode {node, reason}, reasons [{reason, nodes}], nodes [{node,
    replicas, reason}], pools [{driver, pool, sharedBy, replicas, devices}], placement,
    limit, featureGates, claims, modelled. -o name prints node/NAME for each node that gets
    at least one replica, one a line (the headline goes to stderr as for the table).

    Exit status: 0 when some replica fits (with --replicas N: when all N fit), 1 when none
    does (with --replicas N: when fewer fit), 2 on usage or input errors.
    """
    check_namespace_flags(namespace, all_namespaces)
    if gang is not None:
        sys.exit(_gang(gang, targets, filenames, nodes, namespace, all_namespaces, feature_gates, kubernetes_version,
                       timeout, no_headers, state_paths, kubeconfig, kube_context, request_timeout))
    code = _run(targets, filenames, replicas, maximum, spread, nodes, namespace, feature_gates, kubernetes_version,
                output, no_headers, state_paths, kubeconfig, kube_context, request_timeout, all_namespaces)
    sys.exit(code)


def _gang(count: int, targets: Sequence[str], filenames: Sequence[str], nodes: Sequence[str], namespace: str | None,
          all_namespaces: bool, feature_gates: str | None, kubernetes_version: str | None, timeout: float,
          no_headers: bool, state_paths: Sequence[str], kubeconfig: str | None, kube_context: str | None,
          request_timeout: float) -> int:
    """``fit --gang N``: do N replicas fit together? (0 yes, 1 no)."""
    from ..fleet.evaluate import PodEvaluator
    from ..fleet.gang import place_gang, replica_pods
    from ..fleet.placement import Placer
    from ..preview import candidate_nodes, resolve_targets
    from ..state import load_documents
    from .fleet import render_gang

    gates = resolve_gates(feature_gates, kubernetes_version)
    file_objects = [(obj, "<stdin>" if path == "-" else path) for path in filenames for obj in load_documents([path])]
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    ns = default_namespace(namespace, state_paths, kubeconfig, kube_context)
    plan = resolve_targets(state, targets, file_objects, namespace=ns, gates=gates, all_namespaces=all_namespaces)
    pods = replica_pods(plan, count)
    candidates = candidate_nodes(state, nodes, warn=warn)
    with cyclic_gc_paused():
        placer = Placer(PodEvaluator(state, gates, candidates, timeout=None), candidates)
        label = " ".join([*targets, *(f"-f {f}" for f in filenames)])
        result = place_gang(placer, pods, f"{count} replicas of {label}", timeout or None)
    applied = cli_whatif.current()
    click.echo(render_gang(result, applied.hypothetical if applied is not None else None, no_headers))
    return 0 if result.fits else 1


def _run(targets: Sequence[str], filenames: Sequence[str], replicas: int | None, maximum: int | None, spread: bool,
         nodes: Sequence[str], namespace: str | None, feature_gates: str | None, kubernetes_version: str | None,
         output: str, no_headers: bool, state_paths: Sequence[str], kubeconfig: str | None,
         kube_context: str | None, request_timeout: float, all_namespaces: bool = False) -> int:
    """The command's work; returns the exit code."""
    from ..fit import RANKED, SPREAD, count_fit, fit_document, stop_reasons
    from ..preview import candidate_nodes, resolve_targets
    from ..state import load_documents

    if not targets and not filenames:
        raise UsageError("nothing to fit: name a claim, template/NAME, pod/NAME, podgroup/NAME or use -f FILE "
                         "(see kubectl dra fit --help)")
    if "-" in filenames and "-" in state_paths:
        raise UsageError("standard input can feed either -f - or --state -, not both")
    gates = resolve_gates(feature_gates, kubernetes_version)
    file_objects = [(obj, "<stdin>" if path == "-" else path) for path in filenames for obj in load_documents([path])]
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    ns = default_namespace(namespace, state_paths, kubeconfig, kube_context)
    plan = resolve_targets(state, targets, file_objects, namespace=ns, gates=gates, all_namespaces=all_namespaces)
    candidates = candidate_nodes(state, nodes, warn=warn)
    if not candidates:
        raise UsageError("the cluster state has no nodes to place replicas on (no Node objects and no node-local "
                         "slices); use --node NAME")
    limit = min(x for x in (replicas, maximum) if x is not None) if (replicas or maximum) else None
    show_progress = stderr_is_terminal()
    with cyclic_gc_paused():
        result = count_fit(state, plan, gates, candidates, limit=limit, placement=SPREAD if spread else RANKED,
                           progress=_progress if show_progress else None)
    if show_progress:
        click.echo("\r\x1b[K", err=True, nl=False)
    if result.count == 0 and result.errors and len(result.errors) == len(result.nodes):
        click.echo(f"error: {next(iter(result.errors.values()))}", err=True)
        return 2
    with cyclic_gc_paused():
        stop_reasons(state, result, candidates)
    if output in ("json", "yaml"):
        click.echo(dump(fit_document(result), output))
    elif output == "name":
        text = name_output("node", (node for node in result.nodes if result.per_node.get(node, 0)))
        if text:
            click.echo(text)
        if not no_headers:
            click.echo(headline(result, replicas), err=True)
    else:
        click.echo(render_table(result, wide=(output == "wide"), no_headers=no_headers))
        if not no_headers:
            click.echo(headline(result, replicas), err=True)
    if replicas is not None:
        return 0 if result.count >= replicas else 1
    return 0 if result.count or result.unlimited else 1


def _progress(done: int) -> None:
    if done % 1000 == 0:
        click.echo(f"\rfitting: {done} replicas", err=True, nl=False)


def headline(result: "FitResult", wanted: int | None) -> str:
    """The answer in one line: the count (or whether N fit) and what stopped it."""
    from ..fit import summary

    text = summary(result)
    if wanted is None:
        return text
    if result.count >= wanted:
        return f"{wanted} more fit"
    return f"only {result.count} of {wanted} fit: {text}"


def _replicas_cell(result: "FitResult", node: str) -> str:
    """Replicas placed on the node; ``any`` where a replica takes no device and still fits."""
    if result.unlimited and result.reasons.get(node) == "fits":
        return "any"
    return str(result.per_node.get(node, 0))


def render_table(result: "FitResult", wide: bool = False, no_headers: bool = False) -> str:
    """Per node: replicas placed and why no more fit; -o wide adds the pools the replicas used."""
    headers = ["NODE", "REPLICAS", "NO MORE BECAUSE"]
    rows = [[node, _replicas_cell(result, node), result.reasons.get(node, "")] for node in result.nodes]
    text = format_table(headers, rows, no_headers=no_headers)
    if wide and result.pools:
        pool_rows = [[f"{p.driver}/{p.pool}", str(p.nodes), str(p.replicas), str(p.devices)] for p in result.pools]
        text += "\n\n" + format_table(["POOL", "NODES", "REPLICAS", "DEVICES"], pool_rows, no_headers=no_headers)
    return text
