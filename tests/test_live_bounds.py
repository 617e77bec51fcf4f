"""Live reads end, whatever the server or the credential plugin does (issue 23): a body that never
ends is refused at the size bound, a server that drips a byte at a time and an exec plugin that
never answers meet the request's total deadline; the command says so on one line, exit 2."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from kubectl_dra.errors import ClusterAccessError
from kubectl_dra.state import live
from kubectl_dra.state.live import load_live_state
from tests.fake_apiserver import FakeAPIServer
from tests.test_live import cluster

pytestmark = pytest.mark.slow


@pytest.fixture
def server():
    with FakeAPIServer(cluster(2)) as srv:
        yield srv


def test_an_endless_body_is_refused_at_the_size_bound(server, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(live, "MAX_RESPONSE_BYTES", 4 * 1024 * 1024)
    server.stream("/api/v1/nodes", "endless")
    kubeconfig = server.write_kubeconfig(tmp_path / "config")
    with pytest.raises(ClusterAccessError, match=r"list nodes.*larger than 4 MiB"):
        load_live_state(kubeconfig=str(kubeconfig), timeout=20)


def test_a_dripping_server_meets_the_request_deadline(server, tmp_path) -> None:
    """Each byte comes well within the read timeout; the request as a whole does not."""
    server.stream("/api/v1/nodes", "drip", drip_interval=0.2)
    kubeconfig = server.write_kubeconfig(tmp_path / "config")
    started = time.monotonic()
    with pytest.raises(ClusterAccessError, match=r"timed out after 1\.5s .*list nodes"):
        load_live_state(kubeconfig=str(kubeconfig), timeout=1.5)
    assert time.monotonic() - started < 10


def _exec_kubeconfig(server: FakeAPIServer, path: Path, script: Path) -> Path:
    config = server.kubeconfig()
    config["users"] = [{"name": "fake", "user": {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable, "args": [str(script)],
        "interactiveMode": "Never"}}}]
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_hanging_exec_credential_plugin_meets_the_deadline(server, tmp_path) -> None:
    script = tmp_path / "plugin.py"
    script.write_text("import time\ntime.sleep(30)\n")
    kubeconfig = _exec_kubeconfig(server, tmp_path / "config", script)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "kubectl_dra", "usage", "--kubeconfig", str(kubeconfig),
                             "--request-timeout", "1s"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "timed out after 1s" in errors[0] and "credential plugin" in errors[0]
    assert time.monotonic() - started < 20  # the plugin's 30 s sleep is not waited for


def test_the_command_ends_with_exit_2_on_a_dripping_server(server, tmp_path) -> None:
    server.stream("/apis/resource.k8s.io/v1/resourceslices", "drip", drip_interval=0.2)
    kubeconfig = server.write_kubeconfig(tmp_path / "config")
    result = subprocess.run([sys.executable, "-m", "kubectl_dra", "usage", "--kubeconfig", str(kubeconfig),
                             "--request-timeout", "1s"], capture_output=True, text=True, timeout=60)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 2 and len(errors) == 1 and "timed out after 1s" in errors[0], result.stderr


def test_no_request_timeout_still_reads(server, tmp_path) -> None:
    kubeconfig = server.write_kubeconfig(tmp_path / "config")
    state = load_live_state(kubeconfig=str(kubeconfig), timeout=0)
    assert len(state.nodes) == 2


@pytest.mark.parametrize("body", [b"[" * 100_000 + b"]" * 100_000, b'{"items": [' + b"9" * 5000 + b"]}"])
def test_hostile_json_bodies_decode_without_a_crash(body: bytes) -> None:
    """Nested past the interpreter's stack, or a number past Python's digit limit: never an
    exception out of the decoder (the caller then reports an unexpected answer, exit 2)."""
    decoded = live._decode(body)
    assert isinstance(decoded, (str, list))
