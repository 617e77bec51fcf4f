"""Entry point of ``kubectl-dra``.

Subcommands live in their own modules and are imported only when invoked, so that
``kubectl dra --help`` and each command start fast (cold start matters for a plugin).
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
import sys
from typing import Any

import click

from .. import __version__
from ..errors import DraError
from .terminal import EscapingWriter, escape_terminal

#: command name -> (module, attribute, one-line help shown in ``kubectl dra --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "preview": ("kubectl_dra.cli.preview", "preview", "Show which node and devices claims would be allocated."),
    "drain-check": ("kubectl_dra.cli.drain", "drain_check", "Check whether the pods of nodes would find new homes if drained."),
    "explain": ("kubectl_dra.cli.explain", "explain", "Explain per node and device why claims do not fit."),
    "fit": ("kubectl_dra.cli.fit", "fit", "Count how many more replicas fit, where, and what runs out first."),
    "pending": ("kubectl_dra.cli.pending", "pending", "List every pending pod with DRA claims and why it waits."),
    "usage": ("kubectl_dra.cli.usage", "usage", "Show free and used devices, counters and capacity."),
    "validate": ("kubectl_dra.cli.validate", "validate", "Apply the API server's DRA rules to files offline."),
    "metadata": ("kubectl_dra.cli.metadata", "metadata", "Read and check device metadata files (KEP-5304)."),
}


class CommandFailed(click.ClickException):
    """A :class:`DraError` carried through click, so that its exit code and one-line message
    survive both the real entry point and in-process invocations (CliRunner)."""

    def __init__(self, error: DraError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click reads it from the instance; each error has its own
        self.error = error

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {escape_terminal(self.format_message())}", err=True)


class StdoutClosed(Exception):
    """The reader of stdout went away (``kubectl dra validate -f x | head``)."""


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module on first use."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DraError as exc:
            raise CommandFailed(exc) from exc
        except BrokenPipeError:  # not an OSError any more: click would exit 1 ("invalid") for it
            raise StdoutClosed() from None

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
      kubectl dra fit template/one-gpu                # how many more fit? what runs out?
      kubectl dra usage                               # what is free?
      kubectl dra validate -f slices.yaml             # is my driver's output valid?
      kubectl dra metadata trainer-0 --check          # is the device metadata in my pod right?

    Output: -o table (default), wide, json or yaml (json/yaml are stable documents
    for scripts); --no-headers drops table headers. Run a command with -h for its
    options and examples.

    Exit codes: 0 success; 1 does not fit / invalid; 2 usage, input or access error;
    70 internal error (a bug: KUBECTL_DRA_DEBUG=1 shows the traceback to report).

    \b
    Shell completion (bash; zsh and fish likewise with zsh_source/fish_source):
      eval "$(_KUBECTL_DRA_COMPLETE=bash_source kubectl-dra)"
    `kubectl dra <TAB>` completes through kubectl (1.26+) when kubectl_complete-dra,
    installed with this package, is on PATH.
    """


#: allocations between young-generation collections: a command builds millions of small,
#: acyclic containers (parsed objects, views) and lives for seconds
GC_THRESHOLD = (200_000, 20, 50)


def tune_process() -> None:
    """Interpreter-wide settings for a short-lived command, set here and nowhere in the
    library: fewer cyclic-GC passes over a big cluster state; big YAML files may go to the
    native YAML parser (which mutes standard error while it runs)."""
    from ..state.settings import allow_native_yaml_parser

    gc.set_threshold(*GC_THRESHOLD)
    allow_native_yaml_parser()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit: a :class:`DraError` or a usage mistake becomes one ``error:`` line
    on stderr and exit status 2 (1 for "does not fit"/"invalid"), as kubectl reports them."""
    tune_process()
    stdout = sys.stdout
    if stdout is not None and not isinstance(stdout, EscapingWriter):
        sys.stdout = EscapingWriter(stdout)  # a TextIO in all that click uses
    try:
        rv = cli.main(args=argv, prog_name="kubectl-dra", standalone_mode=False)
        sys.stdout.flush()  # here, so that a full disk is reported like any other failure
    except click.exceptions.NoArgsIsHelpError as exc:  # bare `kubectl dra`: the help, as kubectl does
        click.echo(exc.ctx.get_help() if exc.ctx is not None else str(exc))
        sys.exit(0)
    except click.UsageError as exc:  # unknown flag, bad choice, missing option or argument
        _usage_error(exc)
    except click.ClickException as exc:  # CommandFailed and click's own (e.g. unreadable click.File)
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:  # Ctrl-C
        sys.exit(130)
    except DraError as exc:
        click.echo(f"error: {escape_terminal(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except (BrokenPipeError, StdoutClosed):  # `kubectl dra usage | head`: the reader left; leave quietly
        _silence_stdout()
        sys.exit(141)  # as kubectl, which SIGPIPE ends (128 + 13); never 1, which means "invalid"
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRNOS:
            _internal_error(exc)
        _silence_stdout()
        click.echo(f"error: cannot write the output: {exc.strerror or exc}", err=True)
        sys.exit(2)
    except Exception as exc:  # a bug: still one line, unless debugging was asked for
        _internal_error(exc)
    finally:
        sys.stdout = stdout
    sys.exit(rv if isinstance(rv, int) else 0)


#: write failures of standard output (a full disk, a quota, a file too big, a dead terminal):
#: the user's environment, not our bug; anything read is an input error before it gets here
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS, errno.EBADF})


def _internal_error(exc: Exception) -> None:
    """One line for a bug (exit 70), or the traceback when KUBECTL_DRA_DEBUG is set."""
    if os.environ.get("KUBECTL_DRA_DEBUG"):
        raise exc
    detail = escape_terminal(" ".join(str(exc).split()))  # one line, whatever the exception's message looks like
    click.echo(
        f"internal error: {type(exc).__name__}: {detail} "
        "(set KUBECTL_DRA_DEBUG=1 for a traceback and please report it)",
        err=True,
    )
    sys.exit(70)


def _usage_error(exc: click.UsageError) -> None:
    """``error: <reason>`` and where to read more, as kubectl prints a flag error; exit 2."""
    message = escape_terminal(exc.format_message().replace("\n", " "))
    if message and message[0].isupper() and not message[:2].isupper():
        message = message[0].lower() + message[1:]
    click.echo(f"error: {message}", err=True)
    path = exc.ctx.command_path if exc.ctx is not None else "kubectl-dra"
    click.echo(f"See '{path} --help' for usage.", err=True)
    sys.exit(2)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
