"""What preview and explain make of their inputs: a -f object is a create (admitted as the API
server admits it), gates mean the same as in the API server and scheduler, one conversion of
older API versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from kubectl_dra.preview.run import DRA_DISABLED

DEMO = Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, [args[0], "--state", str(DEMO), *args[1:]])


def write(tmp_path: Path, obj: dict[str, Any], name: str = "obj.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj), encoding="utf-8")
    return str(path)


def gpu_claim(exactly: dict[str, Any], version: str = "v1", namespace: str = "ml-team") -> dict[str, Any]:
    request: dict[str, Any] = {"name": "gpu"}
    if version == "v1beta1":
        request.update(exactly)
    else:
        request["exactly"] = exactly
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim",
            "metadata": {"name": "mine", "namespace": namespace},
            "spec": {"devices": {"requests": [request]}}}


@pytest.mark.parametrize("command", ["preview", "explain"])
def test_invalid_file_claim_is_rejected_with_field_errors_not_previewed(command: str, tmp_path: Path) -> None:
    path = write(tmp_path, gpu_claim({"deviceClassName": "gpu.example.com", "count": -1}))
    result = run(command, "-f", path, "-o", "json")
    assert result.exit_code == 1, result.output
    assert "spec.devices.requests[0].exactly.count" in result.stderr
    assert "greater than zero" in result.stderr
    assert not result.stdout.strip(), "an invalid claim gets no preview document"


def test_valid_file_claim_is_previewed_as_stored_after_defaulting(tmp_path: Path) -> None:
    path = write(tmp_path, gpu_claim({"deviceClassName": "gpu.example.com"}))
    result = run("preview", "-f", path, "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    allocated = [n for n in doc["nodes"] if n["status"] == "Allocated"]
    assert allocated and all(len(n["allocations"][0]["allocation"]["devices"]["results"]) == 1 for n in allocated)


def test_v1beta1_file_claim_is_converted_once_and_previewed(tmp_path: Path) -> None:
    beta = write(tmp_path, gpu_claim({"deviceClassName": "gpu.example.com"}, version="v1beta1"), "beta.yaml")
    v1 = write(tmp_path, gpu_claim({"deviceClassName": "gpu.example.com"}), "v1.yaml")
    from_beta, from_v1 = run("preview", "-f", beta, "-o", "json"), run("preview", "-f", v1, "-o", "json")
    assert from_beta.exit_code == 0, from_beta.output
    assert json.loads(from_beta.stdout)["nodes"] == json.loads(from_v1.stdout)["nodes"]


def test_namespace_flag_that_contradicts_the_file_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, gpu_claim({"deviceClassName": "gpu.example.com"}))
    result = run("preview", "-f", path, "-n", "monitoring")
    assert result.exit_code == 2
    assert "'ml-team' does not match the namespace 'monitoring'" in result.stderr
    assert run("preview", "-f", path, "-n", "ml-team").exit_code == 0


@pytest.mark.parametrize("command", ["preview", "explain"])
def test_dra_off_means_nothing_is_allocated_anywhere(command: str) -> None:
    result = run(command, "template/ml-team/gpu-with-nic", "-o", "json",
                 "--feature-gates", "DynamicResourceAllocation=false")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["nodes"] and all(n["status"] == "Unschedulable" for n in doc["nodes"])
    assert DRA_DISABLED in result.stdout


def test_pod_group_claims_need_the_workload_gate() -> None:
    off = run("preview", "podgroup/ml-team/allreduce", "--feature-gates", "DRAWorkloadResourceClaims=false")
    assert off.exit_code == 2
    assert "DRAWorkloadResourceClaims, which is disabled" in off.stderr
    on = run("preview", "podgroup/ml-team/allreduce", "--feature-gates", "DRAWorkloadResourceClaims=true")
    assert on.exit_code in (0, 1) and "Allocated" in on.stdout
