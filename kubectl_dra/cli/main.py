"""Entry point of ``kubectl-dra``.

Subcommands live in their own modules and are imported only when invoked, so that
``kubectl dra --help`` and each command start fast (cold start matters for a plugin).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from .. import __version__
from ..errors import DraError

#: command name -> (module, attribute, one-line help shown in ``kubectl dra --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "preview": ("kubectl_dra.cli.preview", "preview", "Show which node and devices claims would be allocated."),
    "explain": ("kubectl_dra.cli.explain", "explain", "Explain per node and device why claims do not fit."),
    "usage": ("kubectl_dra.cli.usage", "usage", "Show free and used devices, counters and capacity."),
    "validate": ("kubectl_dra.cli.validate", "validate", "Apply the API server's DRA rules to files offline."),
    "metadata": ("kubectl_dra.cli.metadata", "metadata", "Read and check device metadata files (KEP-5304)."),
}


class CommandFailed(click.ClickException):
    """A :class:`DraError` carried through click, so that its exit code and one-line message
    survive both the real entry point and in-process invocations (CliRunner)."""

    def __init__(self, error: DraError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code
        self.error = error

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module on first use."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DraError as exc:
            raise CommandFailed(exc) from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        return getattr(module, entry[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="kubectl-dra")
def cli() -> None:
    """Preview, explain and validate Kubernetes Dynamic Resource Allocation (resource.k8s.io/v1).

    Every command reads a live cluster through your kubeconfig (like kubectl) or,
    with --state, files and dumps offline:

    \b
      kubectl get nodes,deviceclasses,resourceslices,resourceclaims,\\
        resourceclaimtemplates,pods -A -o yaml > state.yaml

    \b
    Examples:
      kubectl dra preview claim/my-claim              # where would it go?
      kubectl dra preview -f claim.yaml --state dump/ # offline, from a dump
      kubectl dra explain pod/trainer-0               # why is my pod Pending?
      kubectl dra usage                               # what is free?
      kubectl dra validate -f slices.yaml             # is my driver's output valid?

    Exit codes: 0 success; 1 does not fit / invalid; 2 usage, input or access error.
    """


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; every :class:`DraError` becomes one line on stderr and its exit code."""
    try:
        return cli.main(args=argv, prog_name="kubectl-dra", standalone_mode=True)
    except DraError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug: still one line, unless debugging was asked for
        if os.environ.get("KUBECTL_DRA_DEBUG"):
            raise
        click.echo(
            f"internal error: {type(exc).__name__}: {exc} "
            "(set KUBECTL_DRA_DEBUG=1 for a traceback and please report it)",
            err=True,
        )
        sys.exit(70)


if __name__ == "__main__":  # pragma: no cover
    main()
