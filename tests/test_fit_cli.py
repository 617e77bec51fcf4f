"""``kubectl dra fit`` on the command line: outputs, exit codes, options, live and offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from kubectl_dra.demo import cluster_path
from kubectl_dra.state import load_documents
from tests.fake_apiserver import FakeAPIServer

CLAIMS = Path(cluster_path()).parent / "claims"
STATE = ["--state", str(cluster_path()), "-n", "ml-team"]
MIG = ["-f", str(CLAIMS / "02-mig-slices.yaml")]


def run(*args: str) -> object:
    return CliRunner().invoke(cli, ["fit", *STATE, *args], catch_exceptions=False)


def test_table_and_summary() -> None:
    result = run(*MIG)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NODE", "REPLICAS", "NO", "MORE", "BECAUSE"]
    counts = {line.split()[0]: int(line.split()[1]) for line in lines[1:]}
    total = sum(counts.values())
    assert total > 0 and counts["cpu-node-1"] == 0
    assert result.stderr.startswith(f"stops at {total}: ")


def test_json_matches_yaml_and_counts() -> None:
    as_json = json.loads(run(*MIG, "-o", "json").stdout)
    as_yaml = yaml.safe_load(run(*MIG, "-o", "yaml").stdout)
    assert as_json == as_yaml
    assert as_json["kind"] == "Fit" and as_json["apiVersion"] == "kubectl-dra/v1"
    assert as_json["replicas"] == sum(n["replicas"] for n in as_json["nodes"])
    assert "upper bound" in as_json["modelled"]


def test_wide_lists_pools_with_shared_network_pool() -> None:
    result = run("-f", str(CLAIMS / "04-fabric-bandwidth.yaml"), "-o", "wide")
    assert result.exit_code == 0
    pools = result.stdout.split("\n\n")[1].splitlines()
    assert pools[0].split() == ["POOL", "NODES", "REPLICAS", "DEVICES"]
    (fabric,) = [line.split() for line in pools[1:] if line.startswith("fabric.example.com/")]
    assert int(fabric[1]) > 1  # network-attached: seen by several nodes


def test_replicas_answers_yes_or_no() -> None:
    total = json.loads(run(*MIG, "-o", "json").stdout)["replicas"]
    yes = run(*MIG, "--replicas", str(total))
    assert yes.exit_code == 0 and yes.stderr.strip() == f"{total} more fit"
    no = run(*MIG, "--replicas", str(total + 1))
    assert no.exit_code == 1 and no.stderr.startswith(f"only {total} of {total + 1} fit: stops at {total}")
    capped = json.loads(run(*MIG, "--max", "1", "-o", "json").stdout)
    assert capped["replicas"] == 1 and capped["stopped"] == "Limit" and capped["limit"] == 1


def test_node_and_spread() -> None:
    only = json.loads(run(*MIG, "--node", "gpu-node-3", "-o", "json").stdout)
    assert [n["node"] for n in only["nodes"]] == ["gpu-node-3"]
    spread = json.loads(run(*MIG, "--spread", "-o", "json").stdout)
    ranked = json.loads(run(*MIG, "-o", "json").stdout)
    assert spread["placement"] == "spread" and ranked["placement"] == "ranked"
    # node-local devices only: the order of placement does not change the count
    assert spread["replicas"] == ranked["replicas"]


def test_does_not_fit_exits_1_with_reason() -> None:
    result = run("-f", str(CLAIMS / "09-does-not-fit.yaml"))
    assert result.exit_code == 1
    assert result.stderr.startswith("stops at 0: ")


def test_gates_change_the_answer() -> None:
    default = json.loads(run(*MIG, "-o", "json").stdout)
    with_groups = json.loads(run(*MIG, "-o", "json", "--feature-gates", "DRADeviceCompatibilityGroups=true").stdout)
    assert with_groups["featureGates"]["DRADeviceCompatibilityGroups"] is True
    assert with_groups["replicas"] > default["replicas"]  # gpu-node-2's pool becomes usable
    old = run(*MIG, "--kubernetes-version", "1.34", "-o", "json")
    assert old.exit_code in (0, 1) and json.loads(old.stdout)["kind"] == "Fit"


def test_usage_errors_exit_2() -> None:
    assert run().exit_code == 2
    assert run("claim/no-such-claim").exit_code == 2
    assert run(*MIG, "--replicas", "0").exit_code == 2


def test_every_node_in_error_exits_2(tmp_path: Path) -> None:
    claim = tmp_path / "c.yaml"
    claim.write_text(yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                     "metadata": {"name": "c"},
                                     "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                         "deviceClassName": "no-such-class"}}]}}}))
    result = run("-f", str(claim))
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and "no-such-class" in result.stderr


def test_help_says_what_is_modelled() -> None:
    text = CliRunner().invoke(cli, ["fit", "--help"]).stdout
    assert "NodeResourcesFit" in text and "InterPodAffinity" in text and "upper bound" in text
    assert "Volumes (PVCs) and preemption are not modelled" in text
    for option in ("--replicas", "--max", "--node", "--spread", "--feature-gates", "--kubernetes-version", "--state"):
        assert option in text


@pytest.mark.slow
def test_live_matches_offline(tmp_path: Path) -> None:
    with FakeAPIServer(load_documents([str(cluster_path())]), token="t0ken", max_page_size=5) as server:
        kubeconfig = str(server.write_kubeconfig(tmp_path / "config", namespace="ml-team"))
        live = CliRunner().invoke(cli, ["fit", "--kubeconfig", kubeconfig, *MIG, "-o", "json"], catch_exceptions=False)
    offline = run(*MIG, "-o", "json")
    assert live.exit_code == offline.exit_code == 0, live.stderr
    assert json.loads(live.stdout) == json.loads(offline.stdout)
