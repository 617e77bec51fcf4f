"""Hostile input, round 2 (issue 23): inputs that used to hang, take unbounded memory or end
in an internal error (exit 70). Each must end with one ``error:`` line that says what is wrong
and exit status 2 (1 where the input is a valid file that the API server would refuse)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_dra.cli.options import Duration
from kubectl_dra.limits import MAX_INTEGER_DIGITS
from tests.cli_support import run

REPO = Path(__file__).resolve().parent.parent
DEMO = str(REPO / "kubectl_dra" / "demo" / "cluster.yaml")
CLAIM = "claim/ml-team/trainer-a-gpu"

CLASS_HEAD = '{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"'


def one_error_line(err: str) -> str:
    """The single ``error:`` line of stderr (warnings may precede it)."""
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    return errors[0]


def cli(*argv: str, stdin: int | None = None, stdout: int | None = None, cwd: str | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI as a separate process (for file descriptors the in-process runner cannot fake)."""
    return subprocess.run([sys.executable, "-m", "kubectl_dra", *argv], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, "KUBECTL_DRA_DEBUG": ""})


# --------------------------------------------------------------------------- decoding files


def test_json_nested_2000_deep_inside_a_list_is_an_input_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 2000 + "]" * 2000)
    code, _, err = run(capsys, "validate", "-f", str(path))
    assert code == 2 and "list inside a list" in one_error_line(err) and str(path) in err


def test_lists_nested_2000_deep_by_kind_list_are_an_input_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "lists.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [' * 2000 + CLASS_HEAD + "}}" + "]}" * 2000)
    code, out, err = run(capsys, "validate", "-f", str(path))
    assert code == 0 and "DeviceClass/x: ok" in out, err  # within the depth bound: read, no recursion


@pytest.mark.parametrize("suffix,text", [
    (".json", CLASS_HEAD + ', "generation": ' + "9" * 5000 + "}}"),
    (".yaml", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: x\n  generation: " + "9" * 5000),
])
def test_integers_of_more_than_4300_digits_are_an_input_error(tmp_path: Path, capsys, suffix: str, text: str) -> None:
    path = tmp_path / f"big{suffix}"
    path.write_text(text)
    code, _, err = run(capsys, "validate", "-f", str(path))
    line = one_error_line(err)
    assert code == 2 and f"more than {MAX_INTEGER_DIGITS} digits" in line and "line " in line


def test_a_lone_surrogate_in_a_name_becomes_the_replacement_character(tmp_path: Path, capsys) -> None:
    """Go's JSON decoder turns an unpaired surrogate escape into U+FFFD; the name is then invalid."""
    path = tmp_path / "surrogate.json"
    path.write_text(CLASS_HEAD.replace('"x"', '"x\\ud800"') + "}}")
    code, out, err = run(capsys, "validate", "-f", str(path))
    assert code == 1 and "\ufffd" in out and "metadata.name: Invalid value" in out, (out, err)
    out.encode("utf-8")  # printable


def test_trailing_comma_json_is_refused_as_the_api_server_refuses_it(tmp_path: Path, capsys) -> None:
    path = tmp_path / "trailing.json"
    path.write_text(CLASS_HEAD + ",}}")
    code, _, err = run(capsys, "validate", "-f", str(path))
    assert code == 2 and "malformed JSON" in one_error_line(err) and "column" in err


def test_an_empty_file_name_is_not_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "class.yaml").write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: x}\n")
    for argv in (["validate", "-f", ""], ["usage", "--state", ""]):
        result = cli(*argv, cwd=str(tmp_path), stdout=subprocess.PIPE)
        assert result.returncode == 2 and "empty file name" in one_error_line(result.stderr), result.stderr


def test_closed_stdin_is_an_input_error() -> None:
    result = cli("validate", "-f", "-", stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and "no objects found" in one_error_line(result.stderr)
    closed = subprocess.run([sys.executable, "-m", "kubectl_dra", "validate", "-f", "-"],  # `<&-`
                            preexec_fn=lambda: os.close(0), stderr=subprocess.PIPE, text=True, timeout=60)
    assert closed.returncode == 2 and "standard input is closed" in one_error_line(closed.stderr)
    gone = subprocess.run([sys.executable, "-c", "import os; os.close(0); "  # closed after the start
                           "from kubectl_dra.cli.main import main; main(['validate', '-f', '-'])"],
                          stderr=subprocess.PIPE, text=True, timeout=60)
    assert gone.returncode == 2 and "<stdin>: cannot read" in one_error_line(gone.stderr)


def test_a_full_disk_on_stdout_is_an_error_not_a_bug() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    for argv in (["usage", "--state", DEMO], ["validate", "-f", DEMO], ["usage", "--state", DEMO, "-o", "json"]):
        with open("/dev/full", "w") as full:
            result = cli(*argv, stdout=full.fileno())
        assert result.returncode == 2 and "No space left" in one_error_line(result.stderr), result.stderr


# --------------------------------------------------------------------------- kubeconfig and flags


def test_a_binary_kubeconfig_is_an_access_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "config"
    path.write_bytes(bytes(range(256)) * 8)
    code, _, err = run(capsys, "usage", "--kubeconfig", str(path))
    assert code == 2 and str(path) in one_error_line(err)


def test_an_unclosed_ipv6_server_url_is_an_access_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://[::1'}\n"
                    "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
                    "users:\n- name: u\n  user: {}\n")
    for timeout in ("30s", "2s", "0"):
        code, _, err = run(capsys, "usage", "--kubeconfig", str(path), "--request-timeout", timeout)
        line = one_error_line(err)
        assert code == 2 and "server" in line and "IPv6" in line, err


@pytest.mark.parametrize("text,seconds", [("2s", 2.0), ("0", 0.0), ("1m", 60.0), ("1.5", 1.5), ("1ns", 1e-9),
                                          ("500ms", 0.5), ("1h2m3.5s", 3723.5), ("3us", 3e-6), ("+2s", 2.0)])
def test_durations_are_read_as_kubectl_reads_them(text: str, seconds: float) -> None:
    assert Duration().convert(text, None, None) == pytest.approx(seconds)


@pytest.mark.parametrize("flag", ["--request-timeout", "--timeout"])
@pytest.mark.parametrize("value", ["inf", "-1", "-2s", "nan", "1e400", "", "2x", "1d", "infinity"])
def test_bad_durations_are_usage_errors(capsys, flag: str, value: str) -> None:
    code, _, err = run(capsys, "preview", "--state", DEMO, CLAIM, flag, value)
    assert code == 2 and flag in one_error_line(err), err


def test_a_tiny_search_timeout_is_accepted(capsys) -> None:
    code, _, err = run(capsys, "preview", "--state", DEMO, CLAIM, "--timeout", "1ns")
    assert "invalid value" not in err and code in (0, 1, 2)


# --------------------------------------------------------------------------- exit 2 says why on stderr


def _every_selector_fails(tmp_path: Path) -> str:
    """The demo state with every GPU class selector failing at run time on every device."""
    text = Path(DEMO).read_text().replace(
        'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].type == "gpu"',
        'quantity("1e999999999").add(quantity("1")).isGreaterThan(quantity("1"))')
    path = tmp_path / "state.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("argv", [
    ["preview"], ["preview", "--no-headers"], ["preview", "-o", "json"], ["preview", "--explain", "-o", "json"],
    ["preview", "-o", "name"], ["explain"], ["explain", "-o", "yaml"], ["fit"],
])
def test_when_every_node_errs_stderr_says_why(tmp_path: Path, capsys, argv: list[str]) -> None:
    claim = str(REPO / "kubectl_dra" / "demo" / "claims" / "01-single-gpu.yaml")
    code, _, err = run(capsys, *argv, "--state", _every_selector_fails(tmp_path), "-f", claim,
                       "--node", "gpu-node-1", "--node", "gpu-node-3")
    assert code == 2
    assert "too large to compute" in one_error_line(err)


def test_usage_takes_namespace_flags_as_kubectl_does(capsys) -> None:
    code, out, err = run(capsys, "usage", "--state", DEMO, "-n", "ml-team")
    assert code == 0 and "gpu-node-1" in out and "every namespace" in err
    code, _, err = run(capsys, "usage", "--state", DEMO, "-n", "ml-team", "-A")
    assert code == 2 and "cannot be used together" in one_error_line(err)
