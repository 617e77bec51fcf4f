"""``kubectl dra preview`` end to end on the bundled demo cluster: outcomes, exit codes, tables, errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from kubectl_dra.demo import DEMO_DIR, cluster_path, example_paths
from kubectl_dra.state import load_state

CLAIMS = DEMO_DIR / "claims"
GATES = ("DRAPartitionableDevices=true,DRADeviceCompatibilityGroups=false,DRAConsumableCapacity=true,"
         "DRADeviceTaints=true,DRAExtendedResource=true,DRAWorkloadResourceClaims=true,DRAPrioritizedList=true")


def preview(*args: str, gates: str | None = GATES) -> tuple[int, str, str]:
    argv = ["preview", "--state", str(cluster_path()), "-n", "ml-team", *args]
    if gates is not None:
        argv += ["--feature-gates", gates]
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def preview_json(*args: str, gates: str | None = GATES) -> tuple[int, dict[str, Any]]:
    code, out, err = preview(*args, "-o", "json", gates=gates)
    assert code in (0, 1, 2), err
    return code, json.loads(out)


def by_node(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["node"]: n for n in doc["nodes"]}


def devices(entry: dict[str, Any], claim: int = 0) -> list[str]:
    return [r["device"] for r in entry["allocations"][claim]["allocation"]["devices"]["results"]]


def test_demo_state_loads_cleanly() -> None:
    state = load_state([str(cluster_path())])
    assert len(state.nodes) == 4 and not state.warnings
    assert {c["metadata"]["name"] for c in state.resource_claims if c.get("status")} >= {
        "trainer-a-gpu", "notebook-mig", "render-vgpu", "ingest-fabric"}
    assert len(example_paths()) >= 8


def test_single_gpu_where_counters_are_free() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "01-single-gpu.yaml"))
    assert code == 0
    nodes = by_node(doc)
    assert nodes["gpu-node-1"]["status"] == "Allocated" and devices(nodes["gpu-node-1"]) == ["gpu-1"]
    assert nodes["gpu-node-3"]["status"] == "Allocated" and devices(nodes["gpu-node-3"]) == ["gpu-0"]
    # gpu-node-2's GPUs both serve partitions already: the whole device's counters do not fit
    assert nodes["gpu-node-2"]["status"] == "Unschedulable" and nodes["gpu-node-2"]["reasons"]
    assert nodes["cpu-node-1"]["status"] == "Unschedulable"
    # ranked: fitting nodes first
    assert [n["status"] for n in doc["nodes"][:2]] == ["Allocated", "Allocated"]
    alloc = nodes["gpu-node-1"]["allocations"][0]
    assert alloc == {"namespace": "ml-team", "name": "single-gpu", "allocation": alloc["allocation"]}
    assert alloc["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["gpu-node-1"]


def test_document_contract_keys() -> None:
    _, doc = preview_json("-f", str(CLAIMS / "01-single-gpu.yaml"))
    assert list(doc) == ["apiVersion", "kind", "featureGates", "claims", "nodes", "modelled"]
    assert doc["apiVersion"] == "kubectl-dra/v1" and doc["kind"] == "Preview"
    assert doc["claims"] == [{"namespace": "ml-team", "name": "single-gpu"}]
    assert doc["featureGates"]["DRAPartitionableDevices"] is True
    assert doc["featureGates"]["DRADeviceCompatibilityGroups"] is False
    for entry in doc["nodes"]:
        expected = {"Allocated": ["node", "status", "score", "allocations"],
                    "Unschedulable": ["node", "status", "reasons"], "Error": ["node", "status", "error"]}
        assert list(entry) == expected[entry["status"]]


def test_yaml_output_is_the_same_document() -> None:
    import yaml

    code, out, _ = preview("-f", str(CLAIMS / "01-single-gpu.yaml"), "-o", "yaml")
    _, doc = preview_json("-f", str(CLAIMS / "01-single-gpu.yaml"))
    assert code == 0 and yaml.safe_load(out) == doc


def test_nothing_fits_exit_1_with_specific_reasons() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "09-does-not-fit.yaml"))
    assert code == 1 and all(n["status"] == "Unschedulable" for n in doc["nodes"])
    # each node says why in its own terms (explain's one-liner), not only the generic message
    reasons = {n["node"]: n["reasons"] for n in doc["nodes"]}
    assert all(len(r) == 1 and "gpu.example.com" in r[0] for r in reasons.values())
    assert reasons["gpu-node-1"] != reasons["gpu-node-3"]


def test_node_option_limits_and_orders() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "01-single-gpu.yaml"), "--node", "gpu-node-2", "--node", "gpu-node-3")
    assert code == 0 and [n["node"] for n in doc["nodes"]] == ["gpu-node-3", "gpu-node-2"]
    code, doc = preview_json("-f", str(CLAIMS / "01-single-gpu.yaml"), "--node", "gpu-node-2")
    assert code == 1


def test_prioritized_list_first_choice() -> None:
    _, doc = preview_json("-f", str(CLAIMS / "05-prioritized-list.yaml"),
                          gates=GATES.replace("DRADeviceCompatibilityGroups=false", "DRADeviceCompatibilityGroups=true"))
    nodes = by_node(doc)
    results = nodes["gpu-node-3"]["allocations"][0]["allocation"]["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [("accel/whole", "gpu-0")]
    # gpu-node-2: one 3g slice fits on gpu-0; gpu-1 serves a vGPU, which MIG may not join
    assert nodes["gpu-node-2"]["status"] == "Unschedulable"


def test_mig_template_and_compatibility_groups() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "02-mig-slices.yaml"))
    assert code == 0
    assert doc["claims"] == [{"namespace": "ml-team", "name": "two-mig-slices-preview"}]
    nodes = by_node(doc)
    # gpu-0 of gpu-node-1 is used whole: its partitions have no counters left
    assert devices(nodes["gpu-node-1"]) == ["gpu-1-mig-1g-10gb-0", "gpu-1-mig-1g-10gb-1"]
    # gpu-node-2's pool declares compatibility groups: unusable without the gate
    assert nodes["gpu-node-2"]["status"] == "Unschedulable"
    _, strict = preview_json("-f", str(CLAIMS / "02-mig-slices.yaml"),
                             gates=GATES.replace("DRADeviceCompatibilityGroups=false",
                                                 "DRADeviceCompatibilityGroups=true"))
    assert devices(by_node(strict)["gpu-node-2"]) == ["gpu-0-mig-1g-10gb-1", "gpu-0-mig-1g-10gb-2"]


def test_pod_with_node_selector_and_aligned_devices() -> None:
    code, doc = preview_json("pod/trainer-b")
    assert code == 0
    nodes = by_node(doc)
    assert doc["claims"] == [{"namespace": "ml-team", "name": "trainer-b-accel-preview"}]
    assert nodes["gpu-node-3"]["reasons"] == ["node(s) didn't match Pod's node affinity/selector"]
    assert nodes["cpu-node-1"]["status"] == "Unschedulable"
    # gpu-1 and nic-1 share PCIe root pci0000:10; the NIC carries the class's opaque config
    assert devices(nodes["gpu-node-1"]) == ["gpu-1", "nic-1"]
    config = nodes["gpu-node-1"]["allocations"][0]["allocation"]["devices"]["config"]
    assert config[0]["source"] == "FromClass" and config[0]["opaque"]["driver"] == "nic.example.com"


def test_consumable_capacity_share() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "04-fabric-bandwidth.yaml"))
    assert code == 0
    nodes = by_node(doc)
    assert {n for n, e in nodes.items() if e["status"] == "Allocated"} == {"gpu-node-1", "gpu-node-2"}
    (result,) = nodes["gpu-node-1"]["allocations"][0]["allocation"]["devices"]["results"]
    assert result["device"] == "link-0" and result["shareID"]
    assert result["consumedCapacity"] == {"bandwidth": "50G"}


def test_taints_and_tolerations() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "07-tolerate-maintenance.yaml"))
    assert code == 0
    fitting = [n for n in doc["nodes"] if n["status"] == "Allocated"]
    assert [n["node"] for n in fitting] == ["gpu-node-3"] and devices(fitting[0]) == ["gpu-0", "gpu-1"]


def test_extended_resource_pod() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "06-extended-resource-pod.yaml"))
    assert code == 0
    entry = by_node(doc)["gpu-node-1"]
    (result,) = entry["allocations"][0]["allocation"]["devices"]["results"]
    assert result["request"] == "container-0-request-0" and result["device"] == "gpu-1"
    code, _, err = preview("-f", str(CLAIMS / "06-extended-resource-pod.yaml"),
                           gates=GATES.replace("DRAExtendedResource=true", "DRAExtendedResource=false"))
    # gate off: no DRA claim; the scheduler counts example.com/gpu as a device-plugin resource no node has
    assert code == 1 and "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector" not in err
    assert "Insufficient example.com/gpu" in err


def test_pod_group_shares_claim() -> None:
    code, doc = preview_json("-f", str(CLAIMS / "08-pod-group.yaml"))
    assert code == 0
    assert doc["claims"] == [{"namespace": "ml-team", "name": "gang-fabric-preview"},
                             {"namespace": "ml-team", "name": "gang-0-gpu-preview"}]
    assert by_node(doc)["gpu-node-1"]["status"] == "Allocated"


def test_several_targets_allocated_together() -> None:
    _, doc = preview_json("-f", str(CLAIMS / "01-single-gpu.yaml"), "-f", str(CLAIMS / "04-fabric-bandwidth.yaml"))
    assert doc["claims"] == [{"namespace": "ml-team", "name": "single-gpu"},
                             {"namespace": "ml-team", "name": "fabric-50g"}]
    nodes = by_node(doc)
    # a free GPU: gpu-node-1 and gpu-node-3; the fabric: zone-a only. Together: gpu-node-1.
    assert [n for n, e in nodes.items() if e["status"] == "Allocated"] == ["gpu-node-1"]
    assert devices(nodes["gpu-node-1"], 0) == ["gpu-1"] and devices(nodes["gpu-node-1"], 1) == ["link-0"]
    assert nodes["gpu-node-3"]["status"] == "Unschedulable"


def test_already_allocated_claim_is_honoured() -> None:
    code, doc = preview_json("claim/trainer-a-gpu")
    assert code == 0
    nodes = by_node(doc)
    assert [n for n, e in nodes.items() if e["status"] == "Allocated"] == ["gpu-node-1"]
    assert devices(nodes["gpu-node-1"]) == ["gpu-0"]
    assert "already allocated" in nodes["gpu-node-2"]["reasons"][0]


def test_table_and_wide() -> None:
    code, out, err = preview("-f", str(CLAIMS / "04-fabric-bandwidth.yaml"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NODE", "STATUS", "CLAIM", "REQUEST", "DEVICE", "CAPACITY"]
    assert lines[1].split() == ["gpu-node-1", "Allocated", "ml-team/fabric-50g", "link",
                                "fabric.example.com/fabric-zone-a/link-0", "bandwidth=50G"]
    # columns are aligned: DEVICE starts at the same offset on every device row
    assert len({line.index("fabric.example.com") for line in lines[1:3]}) == 1
    assert "fit on 2 of 4 nodes; best: gpu-node-1" in err
    code, out, _ = preview("-f", str(CLAIMS / "04-fabric-bandwidth.yaml"), "-o", "wide", "--no-headers")
    first = out.splitlines()[0]
    assert not first.startswith("NODE") and "share=" in first and "topology.kubernetes.io/zone=zone-a" in first


@pytest.mark.parametrize("args,message", [
    (("claim/nope",), "ResourceClaim 'nope' not found in namespace 'ml-team'"),
    (("pod/nope",), "Pod 'nope' not found"),
    (("template/nope",), "ResourceClaimTemplate 'nope' not found"),
    (("slice/x",), "cannot be previewed"),
    ((), "nothing to preview"),
    (("claim/trainer-a-gpu", "--node", "nope"), "Node 'nope' not found"),
])
def test_usage_errors_one_line_exit_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = preview(*args)
    assert code == 2 and out == ""
    assert err.strip().startswith("error:") and message in err and len(err.strip().splitlines()) == 1


def test_malformed_yaml_and_unknown_gate(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ResourceClaim\nmetadata: {name: [\n")
    code, _, err = preview("-f", str(bad))
    assert code == 2 and "malformed YAML" in err and "Traceback" not in err
    code, _, err = preview("claim/trainer-a-gpu", gates="NoSuchGate=true")
    assert code == 2 and "NoSuchGate" in err and len(err.strip().splitlines()) == 1


def test_unknown_class_is_one_error_line(tmp_path: Path) -> None:
    claim = tmp_path / "c.yaml"
    claim.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                     "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: no-such-class}}]}}\n")
    code, out, err = preview("-f", str(claim))
    assert code == 2 and out == "" and "no-such-class" in err and len(err.strip().splitlines()) == 1
    code, doc = preview_json("-f", str(claim))
    assert code == 2 and {n["status"] for n in doc["nodes"]} == {"Error"}
    assert "no-such-class" in doc["nodes"][0]["error"]


def test_kubernetes_version_gates() -> None:
    """1.34 had partitionable devices in alpha (off): every demo GPU consumes counters, so none
    is usable; turning the gate on over the 1.34 defaults brings them back."""
    single = str(CLAIMS / "01-single-gpu.yaml")
    code, doc = preview_json("-f", single, "--kubernetes-version", "1.34", gates=None)
    assert code == 1 and doc["featureGates"]["DRAPartitionableDevices"] is False
    code, doc = preview_json("-f", single, "--kubernetes-version", "1.34", gates="DRAPartitionableDevices=true")
    assert code == 0 and doc["featureGates"]["DRAPartitionableDevices"] is True


def test_explain_flag_appends_explanation() -> None:
    code, out, _ = preview("-f", str(CLAIMS / "09-does-not-fit.yaml"), "--explain")
    assert code == 1
    table, _, explanation = out.partition("\n\n")
    assert table.splitlines()[0].split()[:2] == ["NODE", "STATUS"]
    assert "0/4 nodes" in explanation
    code, out, _ = preview("-f", str(CLAIMS / "01-single-gpu.yaml"), "--explain", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["apiVersion"] == "kubectl-dra/v1" and doc["kind"] == "Explanation"


def test_demo_module_prints_paths() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "kubectl_dra.demo"], capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()) == cluster_path()
    out = subprocess.run([sys.executable, "-m", "kubectl_dra.demo", "--claims"], capture_output=True, text=True,
                         check=True)
    assert [Path(p) for p in out.stdout.split()] == example_paths()


@pytest.mark.slow
def test_installed_executable_on_demo() -> None:
    import shutil
    import subprocess

    exe = Path(sys.executable).parent / "kubectl-dra"
    exe_path = str(exe) if exe.exists() else shutil.which("kubectl-dra")
    if exe_path is None:
        pytest.skip("the kubectl-dra executable is not installed beside this python nor on PATH "
                    "(pip install -e . installs it)")
    proc = subprocess.run([exe_path, "preview", "--state", str(cluster_path()), "claim/ml-team/nope"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == "error: ResourceClaim 'nope' not found in namespace 'ml-team'"
    proc = subprocess.run([exe_path, "preview", "--state", str(cluster_path()), "-n", "ml-team", "pod/trainer-b",
                           "--no-headers"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.split()[:2] == ["gpu-node-1", "Allocated"]


def test_nodes_ranked_by_prioritized_list_choice(tmp_path: Path) -> None:
    """A node that serves the first choice ranks above one that serves only the second,
    whatever the names."""
    import yaml

    def node(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}

    def device_slice(node_name: str, kind: str) -> dict[str, Any]:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node_name},
                "spec": {"driver": "d.example.com", "nodeName": node_name,
                         "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": "dev-0", "attributes": {"kind": {"string": kind}}}]}}

    def device_class(kind: str) -> dict[str, Any]:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": kind},
                "spec": {"selectors": [{"cel": {"expression": f'device.attributes["d.example.com"].kind == "{kind}"'}}]}}

    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
                 {"name": "big", "deviceClassName": "big"}, {"name": "small", "deviceClassName": "small"}]}]}}}
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all([device_class("big"), device_class("small"), node("a-node"), node("b-node"),
                                         device_slice("a-node", "small"), device_slice("b-node", "big"), claim]))
    result = CliRunner().invoke(cli, ["preview", "--state", str(state), "claim/c", "-o", "json"],
                                catch_exceptions=False)
    doc = json.loads(result.stdout)
    assert result.exit_code == 0
    assert [(n["node"], n["allocations"][0]["allocation"]["devices"]["results"][0]["request"]) for n in doc["nodes"]] \
        == [("b-node", "r/big"), ("a-node", "r/small")]
    assert doc["nodes"][0]["score"] > doc["nodes"][1]["score"]


def test_shell_completion_offers_target_kinds_and_names() -> None:
    from kubectl_dra.cli.completion import complete_target
    from kubectl_dra.cli.preview import preview as command

    ctx = click_context(command)
    values = lambda word: [item.value for item in complete_target(ctx, command.params[0], word)]  # noqa: E731
    assert values("po") == ["pod/", "podgroup/"]
    assert values("") == ["claim/", "template/", "pod/", "podgroup/"]
    ctx.params.update({"state_paths": (str(cluster_path()),), "namespace": "ml-team"})
    assert "claim/trainer-a-gpu" in values("claim/tr")


def click_context(command: Any) -> Any:
    import click

    return click.Context(command)


def test_template_and_podgroup_targets_from_state() -> None:
    code, doc = preview_json("template/gpu-with-nic", "podgroup/allreduce")
    assert code == 0
    assert doc["claims"] == [{"namespace": "ml-team", "name": "gpu-with-nic-preview"},
                             {"namespace": "ml-team", "name": "allreduce-fabric-preview"}]
    nodes = by_node(doc)
    # the GPU+NIC pair fits on gpu-node-1 and gpu-node-3; the fabric share only in zone-a
    assert [n for n, e in nodes.items() if e["status"] == "Allocated"] == ["gpu-node-1"]
    assert devices(nodes["gpu-node-1"], 1) == ["link-0"]
    # a pod of the group shares the group's claim and adds its own
    _, pod_doc = preview_json("pod/allreduce-1")
    assert pod_doc["claims"] == [{"namespace": "ml-team", "name": "allreduce-fabric-preview"},
                                 {"namespace": "ml-team", "name": "allreduce-1-gpu-preview"}]


def test_unschedulable_reason_names_the_disabled_gate_that_skips_a_pool() -> None:
    """The demo's gpu-node-2 pool uses compatibility groups; with the gate off (the default)
    the allocator treats it as incomplete, and preview's one-line reason says why."""
    code, doc = preview_json("-f", str(DEMO_DIR / "claims" / "02-mig-slices.yaml"))
    node = next(n for n in doc["nodes"] if n["node"] == "gpu-node-2")
    assert node["status"] == "Unschedulable"
    assert "DRADeviceCompatibilityGroups" in " ".join(node["reasons"])
