"""``kubectl dra validate`` with a cluster (--state, --live): the webhook's apply-time warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli_support import run
from tests.fake_apiserver import FakeAPIServer
from tests.test_advice import GPU_CLASS, claim, exactly, gpu_slice

SELECTOR = 'device.attributes["gpu.example.com"].model == "h100"'


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([GPU_CLASS, gpu_slice("node-a", 2)]))
    objects = tmp_path / "claim.yaml"
    objects.write_text(yaml.safe_dump(claim(exactly("gpu", "gpu.example.com", SELECTOR),
                                            exactly("many", count=3), exactly("tpu", "tpu.example.com"))))
    return cluster, objects


def test_state_files_give_the_webhooks_warnings_and_keep_the_exit_status(capsys: pytest.CaptureFixture[str],
                                                                         files: tuple[Path, Path]) -> None:
    cluster, objects = files
    code, out, err = run(capsys, "validate", "-f", str(objects), "--state", str(cluster))
    assert code == 0 and out == "ResourceClaim/c: ok\n"
    lines = err.splitlines()
    assert ("warning: ResourceClaim/c: pods using this claim will stay Pending: no device matches gpu: class "
            f"gpu.example.com, selector {SELECTOR}") in lines
    assert any("many asks for 3 devices but at most 2" in line for line in lines)
    assert any("DeviceClass tpu.example.com does not exist (request tpu)" in line for line in lines)
    code, out, _ = run(capsys, "validate", "-f", str(objects), "--state", str(cluster), "-o", "json")
    assert code == 0 and len(json.loads(out)["warnings"]) == 3


def test_without_a_cluster_there_is_no_advice(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path]) -> None:
    _, objects = files
    code, out, err = run(capsys, "validate", "-f", str(objects))
    assert code == 0 and "Pending" not in err


def test_invalid_objects_get_their_errors_not_advice(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path],
                                                     tmp_path: Path) -> None:
    cluster, _ = files
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(claim({"name": "gpu", "exactly": {"deviceClassName": "tpu.example.com", "count": -1}})))
    code, out, err = run(capsys, "validate", "-f", str(bad), "--state", str(cluster))
    assert code == 1 and "does not exist" not in err


def test_live_reads_the_clusters_classes_and_slices(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    _, objects = files
    with FakeAPIServer([GPU_CLASS, gpu_slice("node-a", 4)], token="t") as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "config")
        code, _, err = run(capsys, "validate", "-f", str(objects), "--live", "--kubeconfig", str(kubeconfig))
    assert code == 0
    assert "no device matches gpu" in err and "tpu.example.com does not exist" in err
    assert "many asks" not in err  # node-a holds 4 here


def test_live_and_state_together_are_a_usage_error(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path]) -> None:
    cluster, objects = files
    code, _, err = run(capsys, "validate", "-f", str(objects), "--live", "--state", str(cluster))
    assert code == 2 and "--live and --state" in err
    code, _, err = run(capsys, "validate", "-f", str(objects), "--kubeconfig", "x")
    assert code == 2 and "only apply with --live" in err
