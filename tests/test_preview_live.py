"""``kubectl dra preview`` against a live cluster (the fake HTTPS API server, through the real
kubernetes client): the same answers as from the files, the kubeconfig's namespace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from kubectl_dra.demo import cluster_path
from kubectl_dra.state import load_documents
from tests.fake_apiserver import FakeAPIServer


@pytest.fixture(scope="module")
def demo_server():
    with FakeAPIServer(load_documents([str(cluster_path())]), token="t0ken", max_page_size=5) as server:
        yield server


@pytest.mark.slow
def test_live_preview_matches_offline(demo_server: FakeAPIServer, tmp_path: Path) -> None:
    kubeconfig = str(demo_server.write_kubeconfig(tmp_path / "config", namespace="ml-team"))
    runner = CliRunner()
    live = runner.invoke(cli, ["preview", "--kubeconfig", kubeconfig, "pod/trainer-b", "-o", "json"],
                         catch_exceptions=False)
    offline = runner.invoke(cli, ["preview", "--state", str(cluster_path()), "-n", "ml-team", "pod/trainer-b",
                                  "-o", "json"], catch_exceptions=False)
    assert live.exit_code == offline.exit_code == 0, live.stderr
    assert json.loads(live.stdout) == json.loads(offline.stdout)


@pytest.mark.slow
def test_live_access_error_is_one_line(demo_server: FakeAPIServer, tmp_path: Path) -> None:
    kubeconfig = demo_server.write_kubeconfig(tmp_path / "config", namespace="ml-team")
    kubeconfig.write_text(kubeconfig.read_text().replace("t0ken", "wrong"))
    result = CliRunner().invoke(cli, ["preview", "--kubeconfig", str(kubeconfig), "claim/x"], catch_exceptions=False)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error:") and len(result.stderr.strip().splitlines()) == 1
