"""Shell completion for ``kubectl dra`` through kubectl itself (kubectl 1.26+).

kubectl completes a plugin's arguments by running ``kubectl_complete-<plugin> ARG… WORD``
from PATH (kubectl's ``plugin_completion.go``; the word being completed comes last, possibly
empty) and reading cobra's protocol back: one candidate per line (``value`` or
``value<TAB>description``), then a last line ``:<directive>``. This module is
that executable for ``kubectl dra``. Candidates come from click's own completion machinery
(subcommands, options, choices, paths), so both ``kubectl dra <TAB>`` and click's completion
of ``kubectl-dra`` (``_KUBECTL_DRA_COMPLETE=bash_source``) offer the same words; on top of it,
targets (``claim/``, ``template/``, ``pod/``, ``podgroup/`` and, with ``--state``, the names
of the objects in those files), ``--node`` and ``-n`` values are completed from the state.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import click
from click import shell_completion

#: cobra's ShellCompDirective bits
DIRECTIVE_ERROR = 1
DIRECTIVE_NO_SPACE = 2
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_DIRS = 16
DIRECTIVE_DEFAULT = 0  # the shell falls back to completing file names

#: target kind prefix -> (Kind in the state, description)
TARGET_KINDS: dict[str, tuple[str, str]] = {
    "claim/": ("ResourceClaim", "a ResourceClaim"),
    "template/": ("ResourceClaimTemplate", "a claim generated from a ResourceClaimTemplate"),
    "pod/": ("Pod", "all claims of a Pod"),
    "podgroup/": ("PodGroup", "all claims of a PodGroup"),
}

#: commands whose positional arguments are targets
_TARGET_COMMANDS = ("preview", "explain", "fit")

#: option destinations whose values are paths (completed by the shell's file completion)
_PATH_PARAMS = frozenset({"filenames", "state_paths", "old_paths", "kubeconfig", "files", "directory", "dir"})


@dataclass(frozen=True)
class Candidate:
    """One completion: the word and an optional description shown beside it."""

    value: str
    help: str = ""


def complete(args: Sequence[str], incomplete: str) -> tuple[list[Candidate], int]:
    """Candidates and the cobra directive for ``kubectl dra ARGS… INCOMPLETE``."""
    from .main import COMMANDS, cli

    args = list(args)
    try:
        ctx = shell_completion._resolve_context(cli, {}, "kubectl-dra", list(args))
        obj, word = shell_completion._resolve_incomplete(ctx, list(args), incomplete)
        items = obj.shell_complete(ctx, word)
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        return [], DIRECTIVE_ERROR
    candidates = [Candidate(str(item.value), str(item.help or "")) for item in items
                  if item.type not in ("file", "dir")]
    if isinstance(obj, click.Parameter):
        return _complete_parameter(ctx, obj, word, candidates, items)
    if obj is cli:  # subcommands: the one-liners of `kubectl dra --help`, not click's truncated ones
        candidates = [Candidate(c.value, COMMANDS[c.value][2] if c.value in COMMANDS else c.help)
                      for c in candidates]
    return candidates, DIRECTIVE_NO_FILE_COMP


def _complete_parameter(ctx: click.Context, param: click.Parameter, word: str, candidates: list[Candidate],
                        items: Sequence[Any]) -> tuple[list[Candidate], int]:
    """Values of an option or argument: state names where they help, files for path options."""
    if any(item.type == "dir" for item in items):
        return candidates, DIRECTIVE_FILTER_DIRS
    if any(item.type == "file" for item in items) or param.name in _PATH_PARAMS:
        return candidates, DIRECTIVE_DEFAULT
    command = ctx.command.name or ""
    if isinstance(param, click.Argument) and param.name == "targets" and command in _TARGET_COMMANDS:
        found = target_candidates(ctx.params, word)
        directive = DIRECTIVE_NO_FILE_COMP
        if found and all(c.value.endswith("/") for c in found):
            directive |= DIRECTIVE_NO_SPACE
        return found, directive
    if param.name == "feature_gates":
        return gate_candidates(word)
    if param.name == "kubernetes_version":
        from ..gates import RELEASES

        return [Candidate(r, "Kubernetes release") for r in RELEASES if r.startswith(word)], DIRECTIVE_NO_FILE_COMP
    if param.name == "nodes":
        return _names(ctx.params, "Node", word, namespaced=False), DIRECTIVE_NO_FILE_COMP
    if param.name == "namespace" and not candidates:
        return _namespaces(ctx.params, word), DIRECTIVE_NO_FILE_COMP
    return candidates, DIRECTIVE_NO_FILE_COMP


def gate_candidates(word: str) -> tuple[list[Candidate], int]:
    """``--feature-gates A=true,B…``: the gate names (with ``=``, no space), then ``true``/``false``,
    each candidate the whole word so far, as bash hands it over."""
    from ..gates import ALL_ALPHA, ALL_BETA, DRA_GATES

    head, comma, last = word.rpartition(",")
    prefix = head + comma
    name, eq, _ = last.partition("=")
    if eq:
        return [Candidate(f"{prefix}{name}={v}") for v in ("true", "false") if f"{name}={v}".startswith(last)], \
            DIRECTIVE_NO_FILE_COMP | DIRECTIVE_NO_SPACE
    names = sorted(DRA_GATES) + [ALL_ALPHA, ALL_BETA]
    return [Candidate(f"{prefix}{n}=", "feature gate") for n in names if n.startswith(last)], \
        DIRECTIVE_NO_FILE_COMP | DIRECTIVE_NO_SPACE


def target_candidates(params: dict[str, Any], word: str) -> list[Candidate]:
    """``claim/``-style prefixes, or names of that kind from --state (bare names are claims)."""
    prefix, slash, rest = word.partition("/")
    if slash:
        entry = TARGET_KINDS.get(prefix + "/")
        if entry is None:
            return []
        kind = entry[0]
        return [Candidate(f"{prefix}/{c.value}", c.help) for c in _names(params, kind, rest, namespaced=True)]
    out = [Candidate(k, d) for k, (_, d) in TARGET_KINDS.items() if k.startswith(word)]
    if word:  # bare claim names, once the user has started typing one
        out.extend(_names(params, "ResourceClaim", word, namespaced=True))
    return out


def _state(params: dict[str, Any]) -> Any:
    """The --state files as a ClusterState, or None (no files, unreadable, or stdin)."""
    paths = [p for p in params.get("state_paths") or () if p != "-"]
    if not paths:
        return None
    from ..errors import DraError
    from ..state import load_state

    try:
        return load_state(paths)
    except DraError:
        return None


def _names(params: dict[str, Any], kind: str, word: str, namespaced: bool) -> list[Candidate]:
    """Names of ``kind`` in the state starting with ``word`` (in -n's namespace, else default)."""
    state = _state(params)
    if state is None:
        return []
    namespace = params.get("namespace") or "default"
    every = bool(params.get("all_namespaces"))
    out: list[Candidate] = []
    for obj in state.objects(kind):
        meta = obj.get("metadata") or {}
        name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        if not name.startswith(word) or (namespaced and not every and ns != namespace):
            continue
        out.append(Candidate(name, f"{kind} in {ns}" if ns else kind))
    return _unique(out)


def _namespaces(params: dict[str, Any], word: str) -> list[Candidate]:
    """Namespaces that objects in the state live in (and Namespace objects)."""
    state = _state(params)
    if state is None:
        return []
    names = {str((o.get("metadata") or {}).get("namespace") or "") for o in state}
    names |= {str((o.get("metadata") or {}).get("name") or "") for o in state.namespaces}
    return [Candidate(n, "namespace") for n in sorted(names) if n and n.startswith(word)]


def _unique(candidates: Iterable[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        if c.value not in seen:
            seen.add(c.value)
            out.append(c)
    return out


def render(candidates: Iterable[Candidate], directive: int, descriptions: bool = True) -> str:
    """cobra's output: one candidate per line (TAB description), then ``:<directive>``."""
    lines = []
    for c in candidates:
        text = _first_sentence(c.help)
        lines.append(f"{c.value}\t{text}" if descriptions and text else c.value)
    lines.append(f":{directive}")
    return "\n".join(lines) + "\n"


def _first_sentence(text: str, limit: int = 80) -> str:
    """A description short enough for a completion menu: the first sentence, at most ``limit`` chars."""
    text = " ".join(text.split())
    head, dot, _ = text.partition(". ")
    text = head + ("." if dot else "")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def main(argv: list[str] | None = None) -> None:
    """``kubectl_complete-dra ARG… WORD`` as kubectl runs it (kubectl passes the words as they are;
    a leading ``__complete``/``__completeNoDesc``, cobra's own spelling, is accepted too)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["-h"], ["--help"]):
        click.echo("usage: kubectl_complete-dra [__complete] [ARG]... WORD\n"
                   "kubectl (1.26+) runs this to complete `kubectl dra ARG… WORD`; it prints one candidate per "
                   "line (TAB description) and a last line :<cobra directive>.")
        sys.exit(0)
    descriptions = True
    if argv and argv[0] in ("__complete", "__completeNoDesc"):
        descriptions = argv.pop(0) == "__complete"
    words = argv or [""]
    try:
        candidates, directive = complete(words[:-1], words[-1])
    except Exception as exc:  # completion must never spill a traceback into the shell
        click.echo(f"kubectl_complete-dra: {type(exc).__name__}: {exc}", err=True)
        candidates, directive = [], DIRECTIVE_ERROR
    sys.stdout.write(render(candidates, directive, descriptions))
    sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()


def complete_target(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[shell_completion.CompletionItem]:
    """click ``shell_complete`` hook for TARGET arguments (preview, explain): the same
    candidates the kubectl plugin completion offers."""
    return [shell_completion.CompletionItem(c.value, help=c.help or None)
            for c in target_candidates(ctx.params, incomplete)]
