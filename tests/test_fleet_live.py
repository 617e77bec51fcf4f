"""pending and drain-check against a live cluster (the fake HTTPS API server, through the real
kubernetes client): one snapshot read once, the same answers as from the files, also with
thousands of pods."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from tests.fake_apiserver import FakeAPIServer

from . import fleet_clusters as fc


def _big_fleet() -> list[dict]:
    """60 nodes × 4 GPUs, 3,000 running pods (most without claims), pending pods of a few specs."""
    objs: list[dict] = [fc.gpu_class(), fc.template()]
    for i in range(60):
        name = f"node-{i:02d}"
        objs += [fc.node(name, f"z{i % 2}"), fc.gpu_slice(name, 4)]
        for d in range(i % 3):
            pod = f"run-{i}-{d}"
            objs += [fc.allocate(fc.claim(f"{pod}-gpu"), name, [f"gpu-{d}"], pod), fc.pod(pod, f"{pod}-gpu", name)]
    for j in range(3000 - sum(i % 3 for i in range(60))):
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{j}", "namespace": "web"},
                     "spec": {"nodeName": f"node-{j % 60:02d}", "containers": [{"name": "c", "image": "x"}]},
                     "status": {"phase": "Running"}})
    for p in range(40):
        name = f"job{p % 4}-{p}"
        objs += [fc.claim(f"{name}-gpu", 1 + p % 4), fc.pod(name, f"{name}-gpu", zone=f"z{p % 2}")]
    return objs


@pytest.mark.slow
@pytest.mark.parametrize("command", [["pending", "-A", "-o", "json"], ["drain-check", "node-01", "node-02", "-o", "json"]])
def test_live_equals_offline_and_reads_one_snapshot(command: list[str], tmp_path: Path) -> None:
    objs = _big_fleet()
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(objs))
    runner = CliRunner()
    offline = runner.invoke(cli, [*command, "--state", str(state)], catch_exceptions=False)
    with FakeAPIServer(objs, token="t0ken", max_page_size=500) as server:
        kubeconfig = str(server.write_kubeconfig(tmp_path / "config", namespace=fc.NS))
        live = runner.invoke(cli, [*command, "--kubeconfig", kubeconfig], catch_exceptions=False)
        first_pages = Counter(r.path for r in server.requests if "continue" not in r.query)
    assert live.exit_code == offline.exit_code, live.stderr
    assert json.loads(live.stdout) == json.loads(offline.stdout)
    pods = [path for path in first_pages if path.endswith("/pods")]
    assert pods and all(first_pages[path] == 1 for path in first_pages), first_pages
