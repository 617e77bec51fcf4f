"""Options and helpers shared by the commands: cluster-state sources, feature gates,
output formats and kubectl-style aligned tables."""

from __future__ import annotations

import contextlib
import gc
import sys
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

import click

from ..errors import ClusterAccessError, FeatureGateError, UsageError
from ..model.jsoncopy import dumps_json
from ..state import ClusterState, load_state
from .options import Duration
from .terminal import escape_terminal

F = TypeVar("F", bound=Callable[..., Any])

OUTPUT_FORMATS = ("table", "wide", "json", "yaml")


def output_option(formats: Sequence[str] = OUTPUT_FORMATS, default: str = "table") -> Callable[[F], F]:
    """``-o/--output`` as kubectl spells it."""
    return click.option(
        "-o", "--output", "output", type=click.Choice(list(formats)), default=default, show_default=True,
        help="Output format.",
    )


def no_headers_option(f: F) -> F:
    return click.option("--no-headers", is_flag=True, help="Do not print table headers.")(f)


def state_options(f: F) -> F:
    """Where cluster state comes from: --state files, or the live cluster (kubeconfig)."""
    options = [
        click.option(
            "--state", "state_paths", multiple=True, metavar="PATH", type=click.Path(allow_dash=True),
            help="Read cluster state from files instead of a live cluster: YAML/JSON, multi-document, "
            "`kind: List`, directories, or - for stdin. Repeatable.",
        ),
        click.option("--kubeconfig", metavar="FILE", type=click.Path(dir_okay=False), help="Path to the kubeconfig file (live cluster)."),
        click.option("--context", "kube_context", metavar="NAME", help="The kubeconfig context to use."),
        click.option("--request-timeout", type=Duration(), default="30s", show_default=True, metavar="DURATION",
                     help="How long one request to the API server may take in all (connection, credentials, "
                     "the whole answer), as kubectl's flag: 30s, 2m, a bare number of seconds; 0: no limit."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def namespace_options(f: F) -> F:
    """``-n/--namespace`` and ``-A/--all-namespaces`` for commands that look targets up by name."""
    f = click.option(
        "-A", "--all-namespaces", is_flag=True,
        help="Find a target that names no namespace in whichever namespace holds it (an error when "
        "several do). Not with -n.",
    )(f)
    return click.option("-n", "--namespace", metavar="NS", help="Namespace of the targets (default: the kubeconfig's, else default).")(f)


def check_namespace_flags(namespace: str | None, all_namespaces: bool) -> None:
    """-n and -A together are a usage error: one names a namespace, the other says any."""
    if all_namespaces and namespace is not None:
        raise UsageError("--namespace and --all-namespaces cannot be used together: -n looks in one namespace, "
                         "-A in every one")


def name_output(kind: str, names: Iterable[str]) -> str:
    """``kind/NAME`` per line, as kubectl's ``-o name`` prints objects."""
    return "\n".join(f"{kind}/{name}" for name in names)


def gate_options(f: F) -> F:
    """--feature-gates and --kubernetes-version, as the API server and scheduler take them."""
    f = click.option(
        "--kubernetes-version", metavar="1.34…1.37",
        help="Use that release's default feature gates (ask: would this work on our older cluster?).",
    )(f)
    return click.option(
        "--feature-gates", metavar="A=true,B=false",
        help="Feature gates in Kubernetes syntax, applied on top of the release defaults; "
        "AllAlpha/AllBeta are accepted and a gate set to false is off even when GA.",
    )(f)


def resolve_gates(feature_gates: str | None, kubernetes_version: str | None) -> Any:
    """The effective :class:`~kubectl_dra.gates.FeatureGates` for the command; a bad value
    is a :class:`FeatureGateError` that names the flag (exit status 2)."""
    from ..gates import DRA_GATES, FeatureGates

    if kubernetes_version is not None and not kubernetes_version.strip():
        raise FeatureGateError("--kubernetes-version: empty value: give a release such as 1.35, or leave the flag "
                               "out for this release's defaults")
    try:
        gates = FeatureGates.for_version(kubernetes_version) if kubernetes_version else FeatureGates.default()
    except FeatureGateError as exc:
        raise FeatureGateError(f"--kubernetes-version: {exc}") from None
    if feature_gates:
        for item in feature_gates.split(","):
            if item.strip().startswith("="):
                raise FeatureGateError(f"--feature-gates: {item.strip()!r} has no gate name "
                                       "(expected Name=true or Name=false)")
        try:
            gates = gates.with_overrides(feature_gates)
        except FeatureGateError as exc:
            message = f"--feature-gates: {exc}"
            if "unrecognized feature gate" in message and "did you mean" not in message:
                message += f" (DRA gates: {', '.join(sorted(DRA_GATES))}, AllAlpha, AllBeta)"
            raise FeatureGateError(message) from None
    return gates


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around a computation that keeps most of what it builds
    (a fit count keeps every replica's allocation; a preview, explain or usage run the views of
    every device and the per-node results until it prints them): its young-generation passes
    over those objects would free nothing (on a 5,000-node preview they cost ~25 % of the run).
    A command's setting, restored afterwards; the garbage the run leaves goes at the next pass."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_cluster(state_paths: Iterable[str], kubeconfig: str | None = None, kube_context: str | None = None,
                 request_timeout: float = 30.0) -> ClusterState:
    """Cluster state from --state files when given, else from the live cluster."""
    paths = list(state_paths)
    if paths:
        with cyclic_gc_paused():  # decoding builds acyclic objects the command keeps
            state = load_state(paths)
            gc.freeze()  # before the GC resumes, or its first pass walks every object just built
    else:
        import yaml  # (the kubernetes client loads it anyway)

        from ..state.live import load_live_state  # imports the kubernetes client only when needed

        try:
            state = load_live_state(kubeconfig=kubeconfig, context=kube_context, timeout=request_timeout)
        except yaml.YAMLError as exc:  # a kubeconfig that is not YAML: the user's file, not our bug
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
            name = kubeconfig or getattr(mark, "name", None) or "the kubeconfig"
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ClusterAccessError(f"{name}:{where} malformed YAML: {problem}") from None
    for warning in state.warnings:
        warn(warning)
    from .whatif import apply_requested  # --add-nodes / --cordon of the command, if any

    state = apply_requested(state)
    # The state lives as long as the command: keep the cyclic GC from walking it again and
    # again while the command works (interpreter-wide, so here at the command's edge).
    gc.freeze()
    return state


def default_namespace(namespace: str | None, state_paths: Iterable[str], kubeconfig: str | None,
                      kube_context: str | None) -> str:
    """-n when given; else the kubeconfig context's namespace for live clusters; else ``default``."""
    if namespace:
        return namespace
    if not list(state_paths):
        try:
            from ..state.live import kubeconfig_namespace

            ns = kubeconfig_namespace(kubeconfig=kubeconfig, context=kube_context)
            if ns:
                return ns
        except Exception:  # no kubeconfig: fall back like kubectl does
            pass
    return "default"


def every_node_failed(errors: Sequence[str | None]) -> None:
    """The ``error:`` line on stderr for exit status 2 when every node ended in an error: the
    first error, and how many others the output shows (a script reading only stderr, or
    output with --no-headers, must still learn why the command failed)."""
    distinct = list(dict.fromkeys(e for e in errors if e))
    if not distinct:
        return
    others = f" (and {len(distinct) - 1} other error{'s' if len(distinct) > 2 else ''}; the output names each node's)" \
        if len(distinct) > 1 else ""
    prefix = "every node ended in an error: " if len(errors) > 1 else ""
    click.echo(f"error: {escape_terminal(prefix + distinct[0])}{others}", err=True)


def warn(message: str) -> None:
    """``warning: ...`` on stderr, with any control character from input shown, not obeyed."""
    click.echo(f"warning: {escape_terminal(message)}", err=True)


def dump(doc: Any, fmt: str) -> str:
    """A document as JSON (2-space indent, key order kept) or YAML (block style)."""
    if fmt == "json":
        return dumps_json(doc, indent=2, ensure_ascii=False)  # any depth a claim's parameters may have
    if fmt == "yaml":
        import yaml  # (loaded for YAML output only)

        try:
            return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True).rstrip("\n")
        except RecursionError:  # nested deeper than PyYAML's emitter recurses: JSON is YAML too
            return dumps_json(doc, indent=2, ensure_ascii=False)
    raise UsageError(f"unknown output format {fmt!r}")


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], no_headers: bool = False) -> str:
    """Aligned columns separated by three spaces, as kubectl prints them."""
    table = [[str(c) for c in headers]] if not no_headers else []
    table.extend([["" if c is None else str(c) for c in row] for row in rows])
    if not table:
        return ""
    widths = [max(len(r[i]) for r in table if i < len(r)) for i in range(max(len(r) for r in table))]
    lines = []
    for row in table:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("   ".join(cells).rstrip())
    return "\n".join(lines)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
