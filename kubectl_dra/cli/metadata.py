"""``kubectl dra metadata``: read, check and predict the device metadata files (KEP-5304)
that DRA drivers expose inside containers."""

from __future__ import annotations

import posixpath
import sys
from typing import Any

import click

from ..errors import MetadataError, UsageError
from ..metadata import (
    CONTAINER_DIR,
    FILE_SUFFIX,
    DecodedStream,
    claim_directory,
    compare_expected,
    decode_stream,
    expected_files,
    parse_location,
)
from ..metadata.check import RULES, check_file
from ..state.container import ExecTarget, MetadataFile, read_container, read_directory, read_files
from .common import default_namespace, dump, format_table, load_cluster, no_headers_option, state_options
from .terminal import escape_terminal

_RULES_HELP = "\n".join(f"  {rule:<14} {text}" for rule, text in RULES.items())


def render_attribute(value: Any) -> str:
    """``{"int": 1}`` → ``1``; lists as ``[a,b]``."""
    if not isinstance(value, dict) or not value:
        return str(value)
    kind, v = next(iter(value.items()))
    if isinstance(v, list):
        return "[" + ",".join(str(x).lower() if isinstance(x, bool) else str(x) for x in v) + "]"
    return str(v).lower() if isinstance(v, bool) else str(v)


def container_path(path: str) -> str:
    """The in-container path a file stands for (its layout read from the path)."""
    loc = parse_location(path)
    if loc.problem or not loc.claim:
        return path
    return posixpath.join(CONTAINER_DIR, loc.subdir or "", loc.claim, loc.request or "", f"{loc.driver}-metadata.json")


def _claim_label(path: str, obj: dict[str, Any]) -> str:
    loc = parse_location(path)
    if loc.from_template:
        return f"template/{loc.claim}"
    if loc.claim:
        return f"claim/{loc.claim}"
    return f"claim/{(obj.get('metadata') or {}).get('name', '?')}"


def _rows(files: list[tuple[MetadataFile, DecodedStream]], wide: bool) -> list[list[str]]:
    rows = []
    for f, decoded in files:
        obj = decoded.object
        for req in obj.get("requests") or []:
            for dev in req.get("devices") or []:
                attrs = sorted((k, render_attribute(v)) for k, v in (dev.get("attributes") or {}).items())
                shown = attrs if wide else attrs[:3]
                text = ",".join(f"{k}={v}" for k, v in shown) + (f",+{len(attrs) - 3}" if not wide and len(attrs) > 3 else "")
                row = [_claim_label(f.path, obj), req.get("name", ""), dev.get("driver", ""), dev.get("pool", ""),
                       dev.get("name", ""), text or "<none>"]
                if wide:
                    net = dev.get("networkData") or {}
                    row += [",".join(net.get("ips") or []) or net.get("interfaceName", "") or "<none>",
                            str((obj.get("metadata") or {}).get("generation", "")), decoded.api_version, f.path]
                rows.append(row)
    return rows


def _read(pod: str | None, container: str | None, directory: str | None, filenames: tuple[str, ...],
          namespace: str | None, kube_context: str | None, kubeconfig: str | None) -> list[MetadataFile]:
    sources = [bool(pod), bool(directory), bool(filenames)]
    if sum(sources) != 1:
        raise UsageError("name exactly one source: a POD, --dir DIR, or -f FILE")
    if container and not pod:
        raise UsageError("-c/--container needs a POD")
    if pod:
        ns = default_namespace(namespace, [], kubeconfig, kube_context) if namespace is None else namespace
        return read_container(ExecTarget(pod.removeprefix("pod/"), ns, container, kube_context, kubeconfig))
    if directory:
        return read_directory(directory, warn=lambda message: click.echo(f"warning: {escape_terminal(message)}", err=True))
    return read_files(list(filenames))


@click.command("metadata", context_settings={"help_option_names": ["-h", "--help"]},
               epilog="\b\nCheck rules (--check):\n" + _RULES_HELP)
@click.argument("pod", required=False, metavar="[POD]")
@click.option("-c", "--container", metavar="NAME", help="Container of POD to read from (default: kubectl's choice).")
@click.option("--dir", "directory", metavar="DIR", help="A local copy of the metadata directory "
              f"({CONTAINER_DIR}), e.g. from `kubectl cp`.")
@click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE", help="A single metadata file. Repeatable.")
@click.option("--check", is_flag=True, help="Report protocol violations, one line each; exit 1 when any.")
@click.option("--expected", "expected_claim", metavar="CLAIM",
              help="Compare with what CLAIM's allocation and the ResourceSlices say the files should contain.")
@click.option("-n", "--namespace", metavar="NS", help="Namespace of POD and CLAIM.")
@click.option("-o", "--output", type=click.Choice(["table", "wide", "json", "yaml"]), default="table",
              show_default=True, help="Output format.")
@no_headers_option
@state_options
def metadata(pod: str | None, container: str | None, directory: str | None, filenames: tuple[str, ...],
             check: bool, expected_claim: str | None, namespace: str | None, output: str, no_headers: bool,
             state_paths: tuple[str, ...], kubeconfig: str | None, kube_context: str | None,
             request_timeout: float) -> None:
    """Read the device metadata files that DRA drivers put inside containers.

    Files live under /var/run/kubernetes.io/dra-device-attributes/ as
    resourceclaims/<claim>/<request>/<driver>-metadata.json (claims named in the pod) or
    resourceclaimtemplates/<podClaimName>/<request>/<driver>-metadata.json (claims from
    templates). Each file is a stream of DeviceMetadata objects, newest API version first;
    a reader takes the first version it knows.

    \b
    Examples:
      kubectl dra metadata trainer-0 -c main          # inside a running container
      kubectl dra metadata --dir ./metadata --check   # a copy made with kubectl cp
      kubectl dra metadata trainer-0 --expected trainer-0-gpu  # compare with the allocation

    Exit codes: 0 fine; 1 violations, differences or undecodable files; 2 usage or access error.
    """
    if check and expected_claim:
        raise UsageError("--check and --expected are separate reports: run them one at a time")
    files = _read(pod, container, directory, filenames, namespace, kube_context, kubeconfig)
    if check:
        sys.exit(_run_check(files, output))
    if expected_claim:
        sys.exit(_run_expected(files, expected_claim, namespace, output, state_paths, kubeconfig, kube_context,
                               request_timeout))
    sys.exit(_run_show(files, output, no_headers, named=bool(filenames)))


def _decode_all(files: list[MetadataFile]) -> tuple[list[tuple[MetadataFile, DecodedStream]], list[str]]:
    good, errors = [], []
    for f in files:
        try:
            good.append((f, decode_stream(f.text, f.path)))
        except MetadataError as exc:
            errors.append(str(exc))
    return good, errors


def _run_show(files: list[MetadataFile], output: str, no_headers: bool, named: bool = False) -> int:
    """The devices of every file (files found in a directory or container that are not
    ``*-metadata.json`` are skipped with a warning, as consumers skip them; ``named`` -f files are not)."""
    metadata_files = [f for f in files if named or posixpath.basename(f.path).endswith(FILE_SUFFIX)]
    for f in files:
        if f not in metadata_files:  # consumers glob *-metadata.json; --check reports such files
            click.echo(escape_terminal(f"warning: skipped {f.path}: not a <driver>{FILE_SUFFIX} file"), err=True)
    files = metadata_files
    good, errors = _decode_all(files)
    if output in ("json", "yaml"):
        doc = {
            "files": [{"path": f.path, "apiVersion": d.api_version, "object": d.object} for f, d in good],
            "errors": errors,
        }
        click.echo(dump(doc, output))
    else:
        if not files:
            click.echo("No metadata files found.", err=True)
        headers = ["CLAIM", "REQUEST", "DRIVER", "POOL", "DEVICE", "ATTRIBUTES"]
        if output == "wide":
            headers += ["NETWORK", "GEN", "VERSION", "FILE"]
        rows = _rows(good, output == "wide")
        if rows:
            click.echo(format_table(headers, rows, no_headers))
        for error in errors:
            click.echo(f"error: {error}", err=True)
    return 1 if errors else 0


def _run_check(files: list[MetadataFile], output: str) -> int:
    violations = []
    for f in files:
        violations.extend(check_file(f.path, f.text)[1])
    if output in ("json", "yaml"):
        click.echo(dump({"files": len(files), "violations": [v.to_dict() for v in violations]}, output))
    else:
        for v in violations:
            click.echo(str(v))
        noun = "file" if len(files) == 1 else "files"
        click.echo(f"{len(files)} {noun} checked, {len(violations)} violation(s)", err=bool(violations))
    return 1 if violations else 0


def _run_expected(files: list[MetadataFile], claim_name: str, namespace: str | None, output: str,
                  state_paths: tuple[str, ...], kubeconfig: str | None, kube_context: str | None,
                  request_timeout: float) -> int:
    state = load_cluster(state_paths, kubeconfig, kube_context, request_timeout)
    ns = default_namespace(namespace, state_paths, kubeconfig, kube_context)
    claim = state.get("ResourceClaim", claim_name.removeprefix("claim/"), ns)
    if not ((claim.get("status") or {}).get("allocation")):
        raise UsageError(f"ResourceClaim {ns}/{claim_name}: not allocated, so no metadata is expected yet")
    expected = expected_files(claim, state.resource_slices)
    actual: dict[str, DecodedStream | str] = {}
    for f in files:
        try:
            actual[container_path(f.path)] = decode_stream(f.text, f.path)
        except MetadataError as exc:
            actual[container_path(f.path)] = str(exc)
    differences = compare_expected(expected, actual, claim_directory(claim))
    if output in ("json", "yaml"):
        doc = {
            "claim": {"namespace": ns, "name": claim_name},
            "expected": [{"path": e.path, "driver": e.driver, "request": e.request,
                          "requests": [{"name": r, "devices": d} for r, d in e.devices.items()]} for e in expected],
            "differences": [d.to_dict() for d in differences],
        }
        click.echo(dump(doc, output))
    else:
        for e in expected:
            devices = ", ".join(f"{d['pool']}/{d['name']}" for devs in e.devices.values() for d in devs)
            click.echo(f"expected {e.path}: {devices}")
        for d in differences:
            click.echo(f"{'note' if d.severity == 'note' else 'differs'}: {d}")
        errors = sum(d.severity == "error" for d in differences)
        click.echo(f"{len(expected)} file(s) expected, {errors} difference(s)", err=bool(errors))
    return 1 if any(d.severity == "error" for d in differences) else 0
