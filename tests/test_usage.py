"""``kubectl dra usage``: accounting that agrees with the allocator, rows, sorting and output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.allocation import Allocator
from kubectl_dra.explain import ExplainTracer
from kubectl_dra.allocation.trace import RejectionCode
from kubectl_dra.cli.main import cli
from kubectl_dra.gates import FeatureGates
from kubectl_dra.state import ClusterState
from kubectl_dra.usage import ALL_NODES, allocated_devices, compute_usage, current_pools

GPU = "gpu.example.com"
NIC = "nic.example.com"


def device_class(name: str, driver: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def rslice(name: str, driver: str, node: str | None, devices: list[dict], pool: str | None = None,
           generation: int = 1, count: int = 1, **spec: Any) -> dict:
    body: dict[str, Any] = {"driver": driver, "pool": {"name": pool or node or name, "generation": generation,
                                                       "resourceSliceCount": count}, **spec}
    if node:
        body["nodeName"] = node
    if devices:
        body["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def allocated_claim(name: str, results: list[dict]) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": results}}}}


def result(driver: str, pool: str, device: str, **extra: Any) -> dict:
    return {"request": "r", "driver": driver, "pool": pool, "device": device, **extra}


def cluster() -> ClusterState:
    """6 devices. node-1: a partitionable GPU (counter set of 80Gi; whole GPU and two halves) and a shared NIC;
    node-2: two plain GPUs. Allocated: one half (consuming), the whole GPU with admin access
    (consuming nothing), two shares of the NIC, one GPU on node-2."""
    half = {"consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}]}
    state = ClusterState()
    state.extend([
        device_class("gpu", GPU), device_class("nic", NIC),
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"}},
        rslice("node-1-gpus", GPU, "node-1", [
            {"name": "gpu-0", "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]},
            {"name": "gpu-0-a", **half}, {"name": "gpu-0-b", **half}], count=2),
        rslice("node-1-counters", GPU, "node-1", [], pool="node-1", count=2,
               sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]),
        rslice("node-1-nic", NIC, "node-1", [{"name": "nic-0", "allowMultipleAllocations": True,
                                              "capacity": {"bandwidth": {"value": "100G"}}}]),
        rslice("node-2-gpus", GPU, "node-2", [{"name": "gpu-0"}, {"name": "gpu-1"}]),
        allocated_claim("half", [result(GPU, "node-1", "gpu-0-a")]),
        allocated_claim("admin", [result(GPU, "node-1", "gpu-0", adminAccess=True)]),
        allocated_claim("share-1", [result(NIC, "node-1", "nic-0", shareID="a", consumedCapacity={"bandwidth": "10G"})]),
        allocated_claim("share-2", [result(NIC, "node-1", "nic-0", shareID="b", consumedCapacity={"bandwidth": "15G"})]),
        allocated_claim("plain", [result(GPU, "node-2", "gpu-1")]),
    ])
    return state


def rows(report: Any) -> dict[tuple[str, str, str], Any]:
    return {(r.node, r.driver, r.pool): r for r in report.rows}


def test_cluster_and_pool_rows():
    report = compute_usage(cluster())
    c = report.cluster
    # free: node-1's gpu-0-b and node-2's gpu-0; node-1's whole gpu-0 needs 80Gi where 40Gi
    # are left, and a new share of the NIC would take its whole 100G beside 25G used
    assert (c.devices, c.allocated, c.free, c.shared, c.admin_access) == (6, 3, 2, 1, 1)
    gpus1 = rows(report)[("node-1", GPU, "node-1")].tally
    assert (gpus1.devices, gpus1.allocated, gpus1.free, gpus1.admin_access) == (3, 1, 1, 1)
    assert gpus1.unavailable == {"countersExhausted": 1}
    amount = gpus1.counters[("gpu-0", "memory")]
    assert (str(amount.consumed_quantity), str(amount.total_quantity)) == ("40Gi", "80Gi")  # admin access consumes nothing
    nic = rows(report)[("node-1", NIC, "node-1")].tally
    assert (nic.devices, nic.allocated, nic.shared) == (1, 1, 1)
    bandwidth = nic.capacity["bandwidth"]
    assert (str(bandwidth.consumed_quantity), str(bandwidth.total_quantity)) == ("25G", "100G")
    assert [(r.node, r.driver) for r in report.rows] == [("node-1", GPU), ("node-1", NIC), ("node-2", GPU)]
    assert report.warnings == []


def test_allocated_agrees_with_the_allocators_in_use():
    """Asking for more GPUs than a node has makes the search look at every one of them: the
    devices usage counts allocated are exactly those the allocator refuses as in use."""
    state = cluster()
    in_use = allocated_devices(state.resource_claims)
    allocator = Allocator(state, FeatureGates.default())
    for node in state.nodes:
        name = node["metadata"]["name"]
        devices = [(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]) for s in state.resource_slices
                   if s["spec"].get("nodeName") == name and s["spec"]["driver"] == GPU
                   for d in s["spec"].get("devices") or []]
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "probe", "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                     "deviceClassName": "gpu", "count": len(devices) + 1}}]}}}
        tracer = ExplainTracer(name)
        assert not allocator.allocate(node, [claim], tracer=tracer).allocated
        (trace,) = tracer.requests.values()
        refused = {d for d, r in trace.rejected.items()  # held by another claim, not by the probe itself
                   if r.code == RejectionCode.IN_USE and r.details.get("claim") != "default/probe"}
        assert set(trace.seen()) >= set(devices)
        assert refused & set(devices) == {d for d in devices if d in in_use.consuming}, name
    report = compute_usage(state)
    assert rows(report)[("node-2", GPU, "node-2")].tally.free == 1
    assert rows(report)[("node-1", GPU, "node-1")].tally.allocated == 1


def test_only_the_newest_generation_counts_and_incomplete_pools_are_flagged():
    state = ClusterState()
    state.extend([
        rslice("old", GPU, "node-1", [{"name": "a"}, {"name": "b"}, {"name": "c"}], pool="p", generation=1),
        rslice("new-1", GPU, "node-1", [{"name": "a"}], pool="p", generation=2, count=2),
    ])
    (pool,) = current_pools(state.resource_slices)
    assert (pool.generation, pool.incomplete) == (2, True)
    report = compute_usage(state)
    (row,) = report.rows
    assert row.tally.devices == 1 and row.incomplete


def test_per_device_nodes_and_network_attached_pools():
    state = ClusterState()
    state.extend([
        rslice("pd", GPU, None, [{"name": "a", "nodeName": "node-1"}, {"name": "b", "nodeName": "node-2"},
                                 {"name": "c", "allNodes": True}], pool="shared", perDeviceNodeSelection=True),
        rslice("fabric", NIC, None, [{"name": "link"}], pool="fabric", allNodes=True),
    ])
    report = compute_usage(state)
    assert sorted((r.node, r.pool, r.tally.devices) for r in report.rows) == [
        (ALL_NODES, "fabric", 1), (ALL_NODES, "shared", 1), ("node-1", "shared", 1), ("node-2", "shared", 1)]
    only = compute_usage(state, nodes=["node-2"])
    assert [(r.node, r.pool) for r in only.rows] == [("node-2", "shared")]
    assert only.cluster.devices == 1  # the total row totals the rows shown


def test_by_class():
    report = compute_usage(cluster(), by="class")  # the classes' CEL selectors, by default
    by_class = {r.device_class: r.tally for r in report.rows}
    assert (by_class["gpu"].devices, by_class["gpu"].allocated) == (5, 2)
    assert (by_class["nic"].devices, by_class["nic"].allocated, by_class["nic"].shared) == (1, 1, 1)
    assert str(by_class["nic"].capacity["bandwidth"].consumed_quantity) == "25G"


def test_sorting():
    report = compute_usage(cluster(), sort="free")
    assert [(r.node, r.driver, r.tally.free) for r in report.rows] == [
        ("node-1", GPU, 1), ("node-2", GPU, 1), ("node-1", NIC, 0)]
    report = compute_usage(cluster(), sort="utilization")
    assert [(r.node, r.driver) for r in report.rows][0] == ("node-1", NIC)
    with pytest.raises(Exception, match="--sort"):
        compute_usage(cluster(), sort="bogus")


def test_stale_allocations_are_reported():
    state = cluster()
    state.resource_claims.append(allocated_claim("ghost", [result(GPU, "gone", "gpu-9")]))
    assert compute_usage(state).warnings == [
        "1 allocated device(s) are not in any current ResourceSlice: gpu.example.com/gone/gpu-9"]


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(list(cluster()), sort_keys=False))
    return path


def test_cli_table(state_file: Path, cli_runner):
    result = cli_runner.invoke(cli, ["usage", "--state", str(state_file)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NODE", "DRIVER", "POOL", "DEVICES", "ALLOCATED", "FREE", "COUNTERS", "CAPACITY"]
    assert lines[1].startswith("*")
    assert "memory 40Gi/80Gi (50%)" in lines[1] and "bandwidth 25G/100G (25%)" in lines[1]
    assert lines[2].split()[:6] == ["node-1", GPU, "node-1", "3", "1", "(33%)"]
    header_cols = [lines[0].index(h) for h in ("DRIVER", "POOL", "DEVICES")]
    assert all(line[c - 1] == " " for line in lines for c in header_cols)  # aligned columns


def test_cli_wide_by_class_and_no_headers(state_file: Path, cli_runner):
    result = cli_runner.invoke(cli, ["usage", "--state", str(state_file), "--by", "class", "-o", "wide",
                                     "--no-headers", "--sort", "allocated"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n\n")[0].splitlines()  # (the stranded claims follow the table)
    assert [line.split()[0] for line in lines] == ["*", "gpu", "nic"]
    assert lines[1].split()[:7] == ["gpu", "5", "2", "(40%)", "2", "0", "1"]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_cli_structured(state_file: Path, cli_runner, fmt: str):
    result = cli_runner.invoke(cli, ["usage", "--state", str(state_file), "-o", fmt])
    assert result.exit_code == 0
    doc = json.loads(result.stdout) if fmt == "json" else yaml.safe_load(result.stdout)
    assert doc["kind"] == "Usage" and doc["by"] == "node"
    assert doc["cluster"]["devices"] == {"total": 6, "allocated": 3, "free": 2, "shared": 1, "adminAccess": 1,
                                         "unavailable": {"countersExhausted": 1}}
    assert doc["cluster"]["counters"] == [{"counterSet": "gpu-0", "counter": "memory", "consumed": "40Gi",
                                           "total": "80Gi"}]
    assert [r["node"] for r in doc["rows"]] == ["node-1", "node-1", "node-2"]


def test_unknown_node_is_an_error_not_an_empty_report(cli_runner):
    """--node with a name the cluster does not have is a mistake, said as such (exit 2)."""
    from kubectl_dra.cli.main import cli
    from kubectl_dra.demo import cluster_path

    result = cli_runner.invoke(cli, ["usage", "--state", str(cluster_path()), "--node", "nosuch"])
    assert result.exit_code == 2
    assert "error: Node 'nosuch' not found" in result.output
    ok = cli_runner.invoke(cli, ["usage", "--state", str(cluster_path()), "--node", "gpu-node-1", "-o", "json"])
    assert ok.exit_code == 0, ok.output



def test_quantities_too_large_to_add_up_are_named_in_a_warning_not_a_silent_zero():
    state = ClusterState()
    shared = [{"name": "mem", "counters": {"bytes": {"value": "1e999999999"}}}]
    state.extend([
        rslice("s", GPU, "node-1", [
            {"name": "big", "allowMultipleAllocations": True,
             "capacity": {"memory": {"value": "1e999999999"}, "cores": {"value": "8"}}},
            {"name": "plain", "capacity": {"memory": {"value": "1e999999999"}}},  # not shared: not added up
        ], sharedCounters=shared),
    ])
    report = compute_usage(state)
    (warning,) = [w for w in report.warnings if "cannot be added up" in w]
    assert warning.startswith("2 quantities cannot be added up and count as 0: ")
    assert f"{GPU}/node-1 counter set mem counter bytes: '1e999999999' (" in warning
    assert f"{GPU}/node-1/big capacity memory: '1e999999999' (quantity 1e999999999 is too large" in warning
    assert "plain" not in warning
    assert report.cluster.capacity["cores"].to_dict() == {"consumed": "0", "total": "8"}


def test_readable_quantities_give_no_such_warning():
    report = compute_usage(cluster())
    assert not [w for w in report.warnings if "cannot be added up" in w]
