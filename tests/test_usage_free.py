"""``usage`` FREE means "could be allocated now", --node totals only the nodes shown, and the
consistency report names stored state that cannot be (issue 23). Expectations are worked out
by hand from the small clusters below."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from kubectl_dra.cli.main import cli
from kubectl_dra.fit import count_fit
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets
from kubectl_dra.state import ClusterState
from kubectl_dra.usage import compute_usage

GPU = "gpu.example.com"


def _class(name: str = "gpu") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}}


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def _slice(name: str, node: str, devices: list[dict], counters: list[dict] | None = None, pool: str | None = None,
           count: int = 1) -> dict:
    spec: dict[str, Any] = {"driver": GPU, "nodeName": node,
                            "pool": {"name": pool or node, "generation": 1, "resourceSliceCount": count}}
    if devices:
        spec["devices"] = devices
    if counters:
        spec["sharedCounters"] = counters
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def _claim(name: str, *devices: tuple[str, str], **extra: Any) -> dict:
    results = [{"request": "r", "driver": GPU, "pool": pool, "device": device, **extra} for pool, device in devices]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": results}}}}


def _want(count: int = 1) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "want", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": count}}]}}}


def _state(*objs: dict) -> ClusterState:
    state = ClusterState()
    state.extend(objs)
    return state


def _partitioned_gpu(node: str, halves_held: int, groups: bool = False) -> list[dict]:
    """One 80Gi GPU on ``node``: the whole GPU and two 40Gi halves share counter set gpu-0."""
    def uses(amount: str, group: str) -> dict:
        entry: dict[str, Any] = {"counterSet": "gpu-0", "counters": {"memory": {"value": amount}}}
        if groups:
            entry["compatibilityGroups"] = [group]
        return {"consumesCounters": [entry]}

    devices = [{"name": "whole", **uses("80Gi", "whole")}, {"name": "half-a", **uses("40Gi", "half")},
               {"name": "half-b", **uses("40Gi", "half")}]
    objs = [_node(node), _slice(f"{node}-devices", node, devices, count=2),
            _slice(f"{node}-counters", node, [], [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}], count=2)]
    objs += [_claim(f"{node}-half-{i}", (node, name)) for i, name in enumerate(["half-a", "half-b"][:halves_held])]
    return objs


def _fit_count(state: ClusterState) -> int:
    plan = resolve_targets(state, ["want"])
    return count_fit(state, plan, FeatureGates.default(), candidate_nodes(state)).count


def test_a_counter_set_at_100_percent_leaves_nothing_free() -> None:
    """Both halves allocated: the counter set is at 100 %, the whole GPU cannot be had."""
    state = _state(_class(), *_partitioned_gpu("n1", 2), _want())
    report = compute_usage(state)
    (row,) = report.rows
    assert (row.tally.devices, row.tally.allocated, row.tally.free) == (3, 2, 0)
    assert row.tally.unavailable == {"countersExhausted": 1}
    (by_class,) = compute_usage(state, by="class").rows
    assert by_class.tally.free == 0
    assert _fit_count(state) == 0


def test_half_used_counter_set_frees_only_what_fits() -> None:
    """One half allocated: the other half is free, the whole GPU is not (40Gi left of 80Gi)."""
    state = _state(_class(), *_partitioned_gpu("n1", 1), _want())
    (row,) = compute_usage(state).rows
    assert (row.tally.free, row.tally.unavailable) == (1, {"countersExhausted": 1})
    assert _fit_count(state) == 1


def test_compatibility_group_conflict_is_not_free() -> None:
    """With groups, a half allocated and room on the counters: a device of another group is
    refused by the allocator, so it is not free (room made with a bigger counter set)."""
    objs = _partitioned_gpu("n1", 1, groups=True)
    objs[2]["spec"]["sharedCounters"][0]["counters"]["memory"]["value"] = "200Gi"
    state = _state(_class(), *objs, _want())
    gates = FeatureGates.default().with_overrides({"DRADeviceCompatibilityGroups": True})
    (row,) = compute_usage(state, gates=gates).rows
    assert (row.tally.free, row.tally.unavailable) == (1, {"compatibilityConflict": 1})


def test_node_filter_totals_only_the_selected_nodes() -> None:
    state = _state(_class(), *_partitioned_gpu("n1", 0), *_partitioned_gpu("n2", 1),
                   *_partitioned_gpu("n3", 2))
    report = compute_usage(state, nodes=["n1", "n2"])
    assert [r.node for r in report.rows] == ["n1", "n2"]
    assert (report.cluster.devices, report.cluster.allocated, report.cluster.free) == (6, 1, 4)
    (by_class,) = compute_usage(state, by="class", nodes=["n2"]).rows
    assert (by_class.tally.devices, by_class.tally.allocated, by_class.tally.free) == (3, 1, 1)
    assert compute_usage(state, by="class", nodes=["n2"]).cluster.devices == 3


def test_consistency_report() -> None:
    """A device held by two claims, a counter set at 200 %, a share beyond capacity, a device
    no slice publishes: each is named, in the report and its document."""
    shared = {"name": "shared", "allowMultipleAllocations": True, "capacity": {"bw": {"value": "10G"}}}
    objs = [_class(), *_partitioned_gpu("n1", 2),
            _slice("n2", "n2", [{"name": "gpu-0"}, shared]), _node("n2"),
            _claim("whole", ("n1", "whole")),  # with both halves: 160Gi of 80Gi
            _claim("one", ("n2", "gpu-0")), _claim("two", ("n2", "gpu-0")),
            _claim("s1", ("n2", "shared"), shareID="a", consumedCapacity={"bw": "6G"}),
            _claim("s2", ("n2", "shared"), shareID="b", consumedCapacity={"bw": "6G"}),
            _claim("ghost", ("gone", "gpu-9"))]
    report = compute_usage(_state(*objs))
    found = {(f.kind, f.object): f for f in report.consistency}
    assert set(found) == {("CountersOvercommitted", f"{GPU}/n1/gpu-0"), ("DeviceHeldTwice", f"{GPU}/n2/gpu-0"),
                          ("CapacityOvercommitted", f"{GPU}/n2/shared"), ("DeviceNotPublished", f"{GPU}/gone/gpu-9")}
    assert "160Gi of 80Gi (200%)" in found[("CountersOvercommitted", f"{GPU}/n1/gpu-0")].message
    assert found[("DeviceHeldTwice", f"{GPU}/n2/gpu-0")].claims == ("default/one", "default/two")
    assert "12G of 10G" in found[("CapacityOvercommitted", f"{GPU}/n2/shared")].message
    doc = report.to_dict()
    assert {(f["kind"], f["object"]) for f in doc["consistency"]} == set(found)
    assert compute_usage(_state(_class(), *_partitioned_gpu("n1", 1))).to_dict()["consistency"] == []


def test_consistency_in_the_table_and_json(tmp_path: Path, cli_runner: Any) -> None:
    objs = [_class(), _node("n2"), _slice("n2", "n2", [{"name": "gpu-0"}]),
            _claim("one", ("n2", "gpu-0")), _claim("two", ("n2", "gpu-0"))]
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    table = cli_runner.invoke(cli, ["usage", "--state", str(path)])
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("INCONSISTENCY")))
    assert lines[head + 1].split()[:2] == ["DeviceHeldTwice", f"{GPU}/n2/gpu-0"]
    doc = json.loads(cli_runner.invoke(cli, ["usage", "--state", str(path), "-o", "json"]).stdout)
    assert [f["kind"] for f in doc["consistency"]] == ["DeviceHeldTwice"]
