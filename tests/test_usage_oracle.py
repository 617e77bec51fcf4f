"""``kubectl dra usage`` on small clusters whose figures were counted by hand from the objects
(devices listed, results in claims' allocations, counters and capacity consumed), through the
command line only: nothing of usage's or the allocator's code computes the expectations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli

GPU = "gpu.example.com"
NET = "net.example.com"


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def rslice(name: str, driver: str, pool: str, devices: list[dict[str, Any]], *, node_name: str | None = None,
           count: int = 1, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                            "devices": devices, **spec}
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def allocated(name: str, *results: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "any"}}]}},
            "status": {"allocation": {"devices": {"results": [{"request": "r", **r} for r in results]}}}}


def usage(tmp_path: Path, objs: list[dict[str, Any]]) -> dict[str, Any]:
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(objs))
    result = CliRunner().invoke(cli, ["usage", "--state", str(state), "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def row(document: dict[str, Any], node_name: str, driver: str) -> dict[str, Any]:
    (found,) = [r for r in document["rows"] if r["node"] == node_name and r["driver"] == driver]
    return found


def test_exclusive_devices_allocated_by_claims(tmp_path: Path) -> None:
    # node-a: 4 GPUs, gpu-1 and gpu-3 in two claims; node-b: 2 GPUs, none in use
    doc = usage(tmp_path, [
        node("node-a"), node("node-b"),
        rslice("a", GPU, "node-a", [{"name": f"gpu-{i}"} for i in range(4)], node_name="node-a"),
        rslice("b", GPU, "node-b", [{"name": "gpu-0"}, {"name": "gpu-1"}], node_name="node-b"),
        allocated("one", {"driver": GPU, "pool": "node-a", "device": "gpu-1"}),
        allocated("two", {"driver": GPU, "pool": "node-a", "device": "gpu-3"}),
    ])
    a, b = row(doc, "node-a", GPU), row(doc, "node-b", GPU)
    assert (a["devices"]["total"], a["devices"]["allocated"], a["devices"]["free"]) == (4, 2, 2)
    assert (b["devices"]["total"], b["devices"]["allocated"], b["devices"]["free"]) == (2, 0, 2)
    assert a["status"] == b["status"] == "complete"
    assert (doc["cluster"]["devices"]["total"], doc["cluster"]["devices"]["allocated"]) == (6, 2)


def test_shared_counters_consumed_by_allocated_partitions(tmp_path: Path) -> None:
    # one GPU as a counter set of 80Gi: the whole (80Gi) or two halves (40Gi each); half-1 in use
    def uses(gi: int) -> list[dict[str, Any]]:
        return [{"counterSet": "gpu-0", "counters": {"memory": {"value": f"{gi}Gi"}}}]

    doc = usage(tmp_path, [
        node("node-a"),
        rslice("c", GPU, "node-a", [], node_name="node-a", count=2,
               sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]),
        rslice("d", GPU, "node-a", [{"name": "whole", "consumesCounters": uses(80)},
                                    {"name": "half-0", "consumesCounters": uses(40)},
                                    {"name": "half-1", "consumesCounters": uses(40)}], node_name="node-a", count=2),
        allocated("half", {"driver": GPU, "pool": "node-a", "device": "half-1"}),
    ])
    a = row(doc, "node-a", GPU)
    assert (a["devices"]["total"], a["devices"]["allocated"]) == (3, 1)
    assert [(c["counterSet"], c["counter"], c["consumed"], c["total"]) for c in a["counters"]] == [
        ("gpu-0", "memory", "40Gi", "80Gi")]


def test_consumable_capacity_of_a_shared_device(tmp_path: Path) -> None:
    # a network link any node reaches, allocatable many times: 100G + 200G of 800G consumed
    link = {"name": "link-0", "allowMultipleAllocations": True, "capacity": {"bandwidth": {"value": "800G"}}}
    doc = usage(tmp_path, [
        node("node-a"),
        rslice("net", NET, "fabric", [link], allNodes=True),
        allocated("x", {"driver": NET, "pool": "fabric", "device": "link-0", "shareID": "00000000-0000-0000-0000-000000000001",
                        "consumedCapacity": {"bandwidth": "100G"}}),
        allocated("y", {"driver": NET, "pool": "fabric", "device": "link-0", "shareID": "00000000-0000-0000-0000-000000000002",
                        "consumedCapacity": {"bandwidth": "200G"}}),
    ])
    (r,) = [r for r in doc["rows"] if r["driver"] == NET]
    assert (r["devices"]["total"], r["devices"]["allocated"], r["devices"]["shared"]) == (1, 1, 1)
    assert [(c["name"], c["consumed"], c["total"]) for c in r["capacity"]] == [("bandwidth", "300G", "800G")]


def test_pool_verdicts(tmp_path: Path) -> None:
    # node-a's pool announces two slices and publishes one: incomplete (the scheduler skips it);
    # node-b's pool lists the same device twice: invalid; node-c's is whole
    doc = usage(tmp_path, [
        node("node-a"), node("node-b"), node("node-c"),
        rslice("a", GPU, "node-a", [{"name": "gpu-0"}], node_name="node-a", count=2),
        rslice("b-1", GPU, "node-b", [{"name": "gpu-0"}], node_name="node-b", count=2),
        rslice("b-2", GPU, "node-b", [{"name": "gpu-0"}], node_name="node-b", count=2),
        rslice("c", GPU, "node-c", [{"name": "gpu-0"}], node_name="node-c"),
    ])
    assert (row(doc, "node-a", GPU)["status"], row(doc, "node-a", GPU)["incomplete"]) == ("incomplete", True)
    assert row(doc, "node-b", GPU)["status"] == "invalid"
    assert row(doc, "node-c", GPU)["status"] == "complete"
