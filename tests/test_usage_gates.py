"""``kubectl dra usage`` under feature gates: pools and devices the allocator cannot use are
shown as such (POOL-STATUS, NOTES, JSON, a warning), in agreement with the allocator itself,
and the default table for the default gates is what it was."""

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
from kubectl_dra.cli.usage import render_table
from kubectl_dra.gates import FeatureGates
from kubectl_dra.state import ClusterState
from kubectl_dra.usage import compute_usage
from tests.test_usage import GPU, cluster, device_class, rslice

COUNTERS = [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]


def partition(name: str, groups: list[str] | None = None, memory: str = "40Gi") -> dict:
    use: dict[str, Any] = {"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}
    if groups:
        use["compatibilityGroups"] = groups
    return {"name": name, "consumesCounters": [use]}


def partitioned(node: str, devices: list[dict]) -> list[dict]:
    return [rslice(f"{node}-counters", GPU, node, [], pool=node, count=2, sharedCounters=COUNTERS),
            rslice(f"{node}-gpus", GPU, node, devices, pool=node, count=2)]


def state_of(*objs: dict) -> ClusterState:
    state = ClusterState()
    state.extend([device_class("gpu", GPU), *objs])
    return state


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def gates(spec: str = "", version: str | None = None) -> FeatureGates:
    base = FeatureGates.for_version(version) if version else FeatureGates.default()
    return base.with_overrides(spec) if spec else base


def probe(state: ClusterState, node_name: str, gate_set: FeatureGates) -> ExplainTracer:
    """Ask the allocator for one GPU on the node; the tracer says what it made of the pools."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "probe", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}
    tracer = ExplainTracer(node_name)
    Allocator(state, gate_set).allocate(node(node_name), [claim], tracer=tracer)
    return tracer


def row_of(report: Any, pool: str) -> Any:
    (row,) = [r for r in report.rows if r.pool == pool]
    return row


# --------------------------------------------------------------------------- core


def test_compatibility_groups_with_the_gate_off_are_an_incomplete_pool_as_for_the_allocator():
    state = state_of(node("node-1"), *partitioned("node-1", [partition("mig-0", ["mig"]), partition("vgpu-0", ["vgpu"])]))
    off, on = gates(), gates("DRADeviceCompatibilityGroups=true")
    assert not off.enabled("DRADeviceCompatibilityGroups")  # the default this test is about
    report = compute_usage(state, gates=off)
    row = row_of(report, "node-1")
    assert row.status == "incomplete" and "DRADeviceCompatibilityGroups off" in row.notes[0]
    assert row.tally.devices == 2  # counts stay what the slices publish
    assert any("skips 1 pool: gpu.example.com/node-1 (incomplete" in w for w in report.warnings)
    # the allocator agrees: it ignores the slice using compatibility groups with the gate off
    # (so the pool, one of its two slices, is incomplete), uses the pool with the gate on
    skipped = probe(state, "node-1", off).pools
    assert skipped[(GPU, "node-1")].code == RejectionCode.GATE_DISABLED
    assert not probe(state, "node-1", on).pools
    report = compute_usage(state, gates=on)
    assert (row_of(report, "node-1").status, row_of(report, "node-1").notes, report.warnings) == ("complete", [], [])


def test_partitionable_devices_off_refuses_counter_consumers_as_the_allocator_does():
    state = state_of(node("node-1"), *partitioned("node-1", [partition("half-0"), partition("half-1")]),
                     rslice("node-1-plain", GPU, "node-1", [{"name": "plain-0"}], pool="plain"))
    off = gates(version="1.34")
    assert not off.enabled("DRAPartitionableDevices")
    report = compute_usage(state, gates=off)
    assert row_of(report, "node-1").notes == [
        "2 devices consuming shared counters unusable with DRAPartitionableDevices off"]
    assert row_of(report, "plain").notes == []
    assert any("refuses devices of 1 pool: gpu.example.com/node-1" in w for w in report.warnings)
    trace = probe(state, "node-1", gates("DRAPartitionableDevices=false")).requests
    (request,) = trace.values()
    refused = {d[2] for d, r in request.rejected.items() if r.code == RejectionCode.GATE_DISABLED}
    assert refused <= {"half-0", "half-1"}
    assert compute_usage(state, gates=gates()).warnings == []


def test_invalid_and_per_device_gate_notes():
    dup = rslice("dup", GPU, "node-1", [{"name": "a"}, {"name": "a"}], pool="dup")
    bound = rslice("bound", GPU, "node-2", [{"name": "b", "bindingConditions": ["ready"],
                                             "bindingFailureConditions": ["failed"]}], pool="bound")
    missing = rslice("missing", GPU, "node-3", [partition("x")], pool="missing")
    state = state_of(dup, bound, missing)
    report = compute_usage(state, gates=gates("DRADeviceBindingConditions=false"))
    assert (row_of(report, "dup").status, row_of(report, "dup").notes) == ("invalid", ["duplicate device name a"])
    assert (row_of(report, "missing").status, row_of(report, "missing").notes) == (
        "invalid", ["counter set gpu-0 not found"])
    assert row_of(report, "bound").notes == [
        "1 device with binding conditions unusable with DRADeviceBindingConditions off"]
    assert row_of(compute_usage(state, gates=gates()), "bound").notes == []


def test_incomplete_pool_says_how_many_slices_are_there():
    state = state_of(rslice("a", GPU, "node-1", [{"name": "a"}], pool="p", count=3))
    row = row_of(compute_usage(state, gates=gates()), "p")
    assert (row.status, row.notes) == ("incomplete", ["1 of 3 slices published"])


# --------------------------------------------------------------------------- CLI


def write(tmp_path: Path, state: ClusterState) -> Path:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(list(state), sort_keys=False))
    return path


def _write_as(tmp_path: Path, name: str, state: ClusterState) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(list(state), sort_keys=False))
    return str(path)


def test_default_table_unchanged_for_the_default_gates(tmp_path, cli_runner):
    state = cluster()
    result = cli_runner.invoke(cli, ["usage", "--state", str(write(tmp_path, state))])
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip("\n") == render_table(compute_usage(state))
    assert result.stderr == ""


def test_cli_gates_wide_and_json(tmp_path, cli_runner):
    state = state_of(node("node-1"), *partitioned("node-1", [partition("mig-0", ["mig"])]))
    path = str(write(tmp_path, state))
    result = cli_runner.invoke(cli, ["usage", "--state", path, "-o", "wide"])
    assert result.exit_code == 0, result.output
    header, _, row = result.stdout.splitlines()[:3]
    assert header.split()[-2:] == ["POOL-STATUS", "NOTES"]
    status, notes = row[header.index("POOL-STATUS"):].split(None, 1)
    assert (status, "DRADeviceCompatibilityGroups off" in notes) == ("incomplete", True)
    assert "warning: with these feature gates the allocator skips 1 pool" in result.stderr
    result = cli_runner.invoke(cli, ["usage", "--state", path, "-o", "json",
                                     "--feature-gates", "DRADeviceCompatibilityGroups=true"])
    doc = json.loads(result.stdout)
    assert doc["featureGates"]["DRADeviceCompatibilityGroups"] is True
    assert (doc["rows"][0]["status"], doc["rows"][0]["notes"]) == ("complete", [])
    assert result.stderr == ""
    plain = state_of(node("node-2"), *partitioned("node-2", [partition("half-0")]))
    plain_path = _write_as(tmp_path, "plain.yaml", plain)
    result = cli_runner.invoke(cli, ["usage", "--state", plain_path, "--kubernetes-version", "1.34", "-o", "wide"])
    assert "1 device consuming shared counters unusable with DRAPartitionableDevices off" in result.stdout
    default_row = cli_runner.invoke(cli, ["usage", "--state", plain_path, "-o", "wide"]).stdout.splitlines()[2]
    assert default_row.split()[-2:] == ["complete", "-"]
    bad = cli_runner.invoke(cli, ["usage", "--state", path, "--feature-gates", "NoSuchGate=true"])
    assert bad.exit_code == 2 and "NoSuchGate" in bad.stderr


@pytest.mark.slow
def test_usage_with_gates_on_a_big_cluster_counts_every_device():
    """5,000 nodes x 8 partitionable devices under 1.34's gates: every device is counted once
    (its speed is benchmarks/bench_explain_usage.py's to measure: no wall clock in tests)."""
    from benchmarks import synthetic

    state = ClusterState()
    state.extend(synthetic.cluster(5000, 8, in_use=0.25, partitionable=True))
    gate_set = gates(version="1.34")
    report = compute_usage(state, gates=gate_set)
    assert report.cluster.devices == 5000 * 8
    assert report.cluster.allocated == 5000 * 2
    assert compute_usage(state, gates=gate_set).to_dict() == report.to_dict()
