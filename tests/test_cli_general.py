"""The command line as a demanding user meets it: every mistake is one ``error:`` line naming
the file, object, field or flag, exit status 2 for usage and input errors, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubectl_dra.cli.main import COMMANDS
from tests.cli_support import run

BIN = Path(sys.executable).parent
DEMO = str(Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml")


def put(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    return str(path)


def test_bare_command_prints_help_and_succeeds(capsys) -> None:
    code, out, err = run(capsys)
    assert code == 0 and out.startswith("Usage: kubectl-dra") and err == ""
    assert "_KUBECTL_DRA_COMPLETE=bash_source" in out  # completion is documented


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_short_help_with_examples(capsys, command: str) -> None:
    code, out, _ = run(capsys, command, "-h")
    assert code == 0
    assert "Examples:" in out and "kubectl dra " + command in out


@pytest.mark.parametrize(
    ("argv", "message", "see"),
    [
        (["frobnicate"], "error: no such command 'frobnicate'.", "kubectl-dra"),
        (["validate"], "error: missing option '-f' / '--filename'.", "kubectl-dra validate"),
        (["validate", "-f", "x.yaml", "-o", "wide"], "error: invalid value for '-o' / '--output': 'wide' is not one of",
         "kubectl-dra validate"),
        (["usage", "--bogus"], "error: no such option '--bogus'", "kubectl-dra usage"),
        (["usage", "--state", DEMO, "-o", "xml"], "error: invalid value for '-o' / '--output'", "kubectl-dra usage"),
    ],
)
def test_usage_mistakes_are_kubectl_style(capsys, argv: list[str], message: str, see: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith(message)
    assert lines[1] == f"See '{see} --help' for usage."
    assert len(lines) == 2


@pytest.mark.parametrize(
    ("gates", "expected"),
    [
        ("Foo=true", "error: --feature-gates: unrecognized feature gate: Foo (DRA gates: DRAAdminAccess,"),
        ("DRAAdminAcess=true", "error: --feature-gates: unrecognized feature gate: DRAAdminAcess "
                               "(did you mean DRAAdminAccess?)"),
        ("DRAAdminAccess=maybe", 'error: --feature-gates: invalid value of DRAAdminAccess=maybe'),
        ("=true", "error: --feature-gates: '=true' has no gate name (expected Name=true or Name=false)"),
        ("DRAAdminAccess", "error: --feature-gates: missing bool value for DRAAdminAccess"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "usage"])
def test_feature_gate_mistakes_name_the_flag(capsys, tmp_path: Path, gates: str, expected: str,
                                             command: str) -> None:
    source = ["-f", put(tmp_path, "c.yaml", "kind: ConfigMap\nmetadata: {name: x}\n")] if command == "validate" \
        else ["--state", DEMO]
    code, out, err = run(capsys, command, *source, "--feature-gates", gates)
    assert code == 2 and out == ""
    assert err.startswith(expected) and len(err.splitlines()) == 1


def test_kubernetes_version_mistakes_name_the_flag(capsys) -> None:
    code, _, err = run(capsys, "usage", "--state", DEMO, "--kubernetes-version", "1.20")
    assert code == 2
    assert err.strip() == ("error: --kubernetes-version: unsupported Kubernetes version '1.20': "
                           "supported releases are 1.34, 1.35, 1.36, 1.37")


BAD_FILES = [
    ("tabs.yaml", "kind: ResourceClaim\nmetadata:\n\tname: x\n", "line 3, column 1: malformed YAML"),
    ("quote.yaml", 'kind: "ResourceClaim\n', "malformed YAML"),
    ("trail.json", '{"kind": "ResourceClaim"} x', "malformed JSON: Extra data"),
    ("strings.yaml", "- a\n- b\n", "expected a Kubernetes object"),
    ("nokind.yaml", "metadata: {name: x}\n", "object 'x': kind: Required value"),
    ("items.yaml", "kind: List\nitems: 5\n", "List: items: must be a list"),
    ("binary.yaml", b"\x89PNG\r\n\x1a\n\xff\xfe", "not a YAML or JSON text file"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
@pytest.mark.parametrize("how", ["validate -f", "usage --state", "preview --state", "explain -f"])
def test_bad_files_are_one_line_naming_the_file(capsys, tmp_path: Path, name: str, content: str | bytes,
                                                message: str, how: str) -> None:
    path = put(tmp_path, name, content)
    command, flag = how.split()
    extra = ["--state", DEMO] if how == "explain -f" else (["claim/x"] if command == "preview" else [])
    code, out, err = run(capsys, command, flag, path, *extra)
    assert code == 2, err
    assert out == ""
    assert err.startswith(f"error: {path}: ") and message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", ["validate -f", "usage --state"])
def test_empty_inputs_are_errors_not_empty_answers(capsys, tmp_path: Path, command: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cmd, flag = command.split()
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.txt").write_text("x")
    for source, message in ((put(tmp_path, "empty.yaml", ""), "empty.yaml: no objects found"),
                            (str(tmp_path / "d"), "directory holds no .yaml, .yml or .json files"),
                            (str(tmp_path / "nope.yaml"), "nope.yaml: no such file or directory")):
        code, out, err = run(capsys, cmd, flag, source)
        assert code == 2 and out == "" and message in err, err
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, _, err = run(capsys, cmd, flag, "-")
    assert code == 2 and "<stdin>: no objects found" in err


def test_state_objects_without_names_are_named_errors(capsys, tmp_path: Path) -> None:
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": [1]}
    code, _, err = run(capsys, "usage", "--state", put(tmp_path, "s.yaml", yaml.safe_dump(doc)))
    assert code == 2 and err.strip().endswith("s.yaml: ResourceSlice: metadata: must be a mapping, got a list")


def test_validate_reports_wrong_typed_metadata_instead_of_crashing(capsys, tmp_path: Path) -> None:
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": [1, 2]}
    code, out, err = run(capsys, "validate", "-f", put(tmp_path, "c.yaml", yaml.safe_dump(doc)))
    assert code == 1, err
    assert out.strip() == 'ResourceClaim/?: metadata: Invalid value: "array": must be an object, not array'


def test_internal_errors_are_one_line_with_status_70(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_dra.cli import common

    def boom(*_: object) -> None:
        raise RuntimeError("kaput")

    monkeypatch.setattr(common, "load_state", boom)
    monkeypatch.delenv("KUBECTL_DRA_DEBUG", raising=False)
    code, _, err = run(capsys, "usage", "--state", DEMO)
    assert code == 70
    assert err.startswith("internal error: RuntimeError: kaput (set KUBECTL_DRA_DEBUG=1")


@pytest.mark.slow
def test_real_entry_point_broken_pipe_and_bad_input() -> None:
    """The installed script: a closed pipe is quiet, a bad file is one line and exit 2."""
    script = str(BIN / "kubectl-dra")
    pipeline = subprocess.run(f"'{script}' usage --state '{DEMO}' -o yaml | head -n 1", shell=True,
                              capture_output=True, text=True, timeout=120)
    assert pipeline.stdout.strip() == "apiVersion: kubectl-dra/v1"
    assert "Traceback" not in pipeline.stderr and "BrokenPipe" not in pipeline.stderr
    bad = subprocess.run([script, "validate", "-f", "/nonexistent/x.yaml"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and bad.stderr == "error: /nonexistent/x.yaml: no such file or directory\n"


@pytest.mark.slow
def test_binary_stdin_is_an_input_error() -> None:
    out = subprocess.run([str(BIN / "kubectl-dra"), "validate", "-f", "-"], input=b"\x89PNG\xff\xfe",
                         capture_output=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr == b"error: <stdin>: not a YAML or JSON text file (invalid UTF-8 at byte 0)\n"


def test_malformed_kubeconfig_and_timeouts_are_usage_errors(capsys, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    kubeconfig = put(tmp_path, "kc", "garbage: [")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    code, out, err = run(capsys, "usage", "--kubeconfig", kubeconfig)
    assert code == 2 and out == ""
    assert err.strip() == f"error: {kubeconfig}: line 1, column 11: malformed YAML: expected the node content, " \
                          "but found '<stream end>'"
    code, _, err = run(capsys, "usage", "--state", DEMO, "--request-timeout", "0")  # kubectl's "no limit"
    assert code == 0, err
    code, _, err = run(capsys, "usage", "--state", DEMO, "--request-timeout", "-1")
    assert code == 2 and "'--request-timeout': '-1': a duration must not be negative" in err


def test_internal_error_messages_stay_on_one_line(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_dra.cli import common

    def boom(*_: object) -> None:
        raise RuntimeError("first\nsecond")

    monkeypatch.setattr(common, "load_state", boom)
    monkeypatch.delenv("KUBECTL_DRA_DEBUG", raising=False)
    code, _, err = run(capsys, "usage", "--state", DEMO)
    assert code == 70 and err.count("\n") == 1 and "RuntimeError: first second" in err
