"""Explain: per-reason expectations, the summary line, tables and the JSON document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.explain import (
    ExplainTracer, explain_node, explain_request,
)
from kubectl_dra.allocation.trace import Rejection, RejectionCode
from kubectl_dra.cli.explain import render_explanation
from kubectl_dra.preview.explained import explain_plan
from kubectl_dra.cli.main import cli
from kubectl_dra.gates import FeatureGates
from kubectl_dra.model.claims import parse_claim
from tests.conftest import corpus
from kubectl_dra.preview import resolve_targets
from kubectl_dra.state import ClusterState

DRIVER = "gpu.example.com"


def device_class(name: str = "gpu", *expressions: str) -> dict:
    exprs = expressions or (f'device.driver == "{DRIVER}"',)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs]}}


def gpu(name: str, kind: str = "gpu", **extra: Any) -> dict:
    return {"name": name, "attributes": {"type": {"string": kind}}, **extra}


def resource_slice(node: str, devices: list[dict], name: str = "gpus", count: int = 1, **spec: Any) -> dict:
    body = {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
            **({"devices": devices} if devices else {}), **spec}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{name}"},
            "spec": body}


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def claim(name: str = "train", count: int = 1, selectors: list[str] | None = None, cls: str = "gpu",
          allocated_on: tuple[str, str] | None = None) -> dict:
    exactly: dict[str, Any] = {"deviceClassName": cls, "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": name, "namespace": "default"},
                           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}
    if allocated_on:
        pool, device = allocated_on
        obj["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": pool, "device": device}]}}}
    return obj


def state_of(*objs: dict) -> ClusterState:
    state = ClusterState()
    state.extend(objs)
    return state


def explain(state: ClusterState, target: str = "claim/train", nodes: list[str] | None = None,
            gates: Any = None) -> Any:
    gates = gates or FeatureGates.default()
    plan = resolve_targets(state, [target], namespace="default", gates=gates)
    return explain_plan(state, gates, plan, nodes, target=target)


def by_node(exp: Any) -> dict[str, Any]:
    return {n.node: n for n in exp.nodes}


def codes(node_exp: Any) -> set[str]:
    return {c.name for r in node_exp.requests for c in r.rejections}


# --------------------------------------------------------------------------- a mixed cluster


def mixed_cluster() -> ClusterState:
    """node-0/1: no GPU; node-2/3: their GPU in use; node-4: partition needs more memory
    than the counter has left; node-5: a free GPU."""
    counters = [{"name": "gpu-0-memory", "counters": {"memory": {"value": "80Gi"}}}]
    partitions = [
        gpu("gpu-0-mig", kind="mig", consumesCounters=[{"counterSet": "gpu-0-memory",
                                                        "counters": {"memory": {"value": "40Gi"}}}]),
        gpu("gpu-0", consumesCounters=[{"counterSet": "gpu-0-memory", "counters": {"memory": {"value": "80Gi"}}}]),
    ]
    return state_of(
        device_class("gpu", f'device.driver == "{DRIVER}"', 'device.attributes["gpu.example.com"].type == "gpu"'),
        *(node(f"node-{i}") for i in range(6)),
        resource_slice("node-2", [gpu("gpu-0")]), resource_slice("node-3", [gpu("gpu-0")]),
        resource_slice("node-4", partitions, count=2),
        resource_slice("node-4", [], name="counters", count=2, sharedCounters=counters),
        resource_slice("node-5", [gpu("gpu-0")]),
        claim("holder-2", allocated_on=("node-2", "gpu-0")), claim("holder-3", allocated_on=("node-3", "gpu-0")),
        claim("mig-user", allocated_on=("node-4", "gpu-0-mig")),
        claim("train"),
    )


def test_summary_line_counts_nodes_per_reason():
    exp = explain(mixed_cluster())
    assert exp.summary() == ("ResourceClaim default/train: 1/6 nodes fit: 2 all matching devices in use; 2 no gpu device; "
                             "1 counter gpu-0-memory/memory: 80Gi needed, 40Gi left")
    nodes = by_node(exp)
    assert nodes["node-5"].status == "Allocated" and nodes["node-5"].reason == "fits"
    assert nodes["node-5"].requests[0].allocated == [(DRIVER, "node-5", "gpu-0")]
    assert [n.node for n in exp.nodes][0] == "node-5"  # fitting nodes first


def test_in_use_names_the_holder():
    nodes = by_node(explain(mixed_cluster()))
    rejections = nodes["node-2"].requests[0].rejections[RejectionCode.IN_USE]
    assert [(d, r.details["claim"]) for d, r in rejections] == [((DRIVER, "node-2", "gpu-0"), "default/holder-2")]
    assert "default/holder-2" in rejections[0][1].message


def test_in_use_device_of_another_class_reads_as_not_in_class():
    """The search tests availability first; the funnel restates it in selection order."""
    req = by_node(explain(mixed_cluster()))["node-4"].requests[0]
    assert set(req.rejections) == {RejectionCode.CLASS_SELECTOR_FALSE, RejectionCode.COUNTERS_EXHAUSTED}
    (device, rejection), = req.rejections[RejectionCode.CLASS_SELECTOR_FALSE]
    assert device[2] == "gpu-0-mig" and rejection.details["inUse"] is True
    (device, rejection), = req.rejections[RejectionCode.COUNTERS_EXHAUSTED]
    assert rejection.details == {"counterSet": "gpu-0-memory", "counter": "memory", "needed": "80Gi", "left": "40Gi"}
    assert req.funnel_text() == "2 devices → 1 match the class selectors → 0 with counters left"


def test_no_device_of_the_class_anywhere():
    state = state_of(device_class("tpu", 'device.driver == "tpu.example.com"'), node("node-1"), node("node-2"),
                     resource_slice("node-1", [gpu("gpu-0")]), claim(cls="tpu"))
    exp = explain(state)
    assert {n.reason for n in exp.nodes} == {"no tpu device"}
    assert by_node(exp)["node-1"].requests[0].rejections.keys() == {RejectionCode.NOT_IN_CLASS}
    assert exp.cluster == ["no device of class tpu exists in the cluster"]
    assert exp.summary().endswith("0/2 nodes fit: 2 no tpu device (no device of class tpu exists in the cluster)")


def test_second_class_selector_false():
    state = state_of(device_class("gpu", f'device.driver == "{DRIVER}"', 'device.attributes["gpu.example.com"].type == "h100"'),
                     node("node-1"), resource_slice("node-1", [gpu("gpu-0")]), claim())
    n = by_node(explain(state))["node-1"]
    assert codes(n) == {"CLASS_SELECTOR_FALSE"}
    assert n.reason == "no gpu device"
    (_, rejection), = n.requests[0].rejections[RejectionCode.CLASS_SELECTOR_FALSE]
    assert rejection.details["index"] == 1


def test_request_selector_matches_nothing_in_the_cluster():
    state = state_of(device_class(), node("node-1"), node("node-2"),
                     resource_slice("node-1", [gpu("gpu-0")]), resource_slice("node-2", [gpu("gpu-0")]),
                     claim(selectors=['device.attributes["gpu.example.com"].type == "h200"']))
    exp = explain(state)
    assert {n.reason for n in exp.nodes} == {"request gpu: selector matches no gpu device"}
    assert exp.cluster == ["the selectors of request default/train:gpu match no gpu device in the cluster"]
    (_, rejection), = exp.nodes[0].requests[0].rejections[RejectionCode.REQUEST_SELECTOR_FALSE]
    assert rejection.details["expression"] == 'device.attributes["gpu.example.com"].type == "h200"'


def test_cel_runtime_error_is_an_error_with_the_message():
    state = state_of(device_class(), node("node-1"), resource_slice("node-1", [gpu("gpu-0")]),
                     claim(selectors=['device.attributes["gpu.example.com"].memory > 1']))
    gates = FeatureGates.default()
    plan = resolve_targets(state, ["claim/train"], namespace="default", gates=gates)
    text, code = render_explanation(state, gates, plan, output="json")
    doc = json.loads(text)
    assert code == 2
    entry = doc["nodes"][0]
    assert entry["status"] == "Error"
    assert entry["reason"].startswith("error: ") and "CEL runtime error" in entry["reason"]
    assert "no such key" in entry["error"]


def test_not_enough_devices_and_node_mismatch():
    """Per-device node selection: only one of two devices is reachable from node-1."""
    spec = {"driver": DRIVER, "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 1},
            "perDeviceNodeSelection": True,
            "devices": [gpu("gpu-a", nodeName="node-2"), gpu("gpu-b", nodeName="node-1")]}
    state = state_of(device_class(), node("node-1"),
                     {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                      "spec": spec}, claim(count=2))
    n = by_node(explain(state))["node-1"]
    assert n.status == "Unschedulable"
    req = n.requests[0]
    (device, rejection), = req.rejections[RejectionCode.NODE_MISMATCH]
    assert device[2] == "gpu-a" and "not reachable" in rejection.message
    assert n.reason == "gpu: 2 devices needed, 1 usable"


def test_node_selector_blocker_from_the_pod():
    state = mixed_cluster()
    state.pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                       "spec": {"nodeName": "node-2", "containers": [{"name": "c", "image": "x"}],
                                "resourceClaims": [{"name": "gpu", "resourceClaimName": "train"}]}})
    exp = explain(state, target="pod/p")
    assert by_node(exp)["node-5"].status == "Unschedulable"
    assert by_node(exp)["node-5"].reason == "node(s) didn't match the requested node name"


# --------------------------------------------------------------------------- scenarios per reason


#: scenario -> (code that must be among the rejections or skipped pools, or None for no rejection;
#: facts the node's reason must name: the objects, attributes, gates and amounts of the
#: scenario that upstream's allocator stopped at; the wording around them is ours, not checked)
REASONS: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "tainted-two-devices": ("TAINT_NOT_TOLERATED", ("taint-key", "taint-value", "NoSchedule")),
    "kep-compatibility-groups-mig-vgpu-pair-rejected": ("COMPATIBILITY_CONFLICT", ("vgpu", "gpu-0-memory", "mig")),
    "kep-compatibility-groups-foobar-in-use-rejects-baz": (
        "COMPATIBILITY_CONFLICT", ("baz", "device-0-counters", "foobar", "device-0-foo-0")),
    "check-combinations-within-single-request-many-pools": (None, ("class-a", "5", "4")),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": ("IN_USE", ()),
    "with-constraint-not-matching-int-attribute": ("CONSTRAINT_MISMATCH", ("matchAttribute", "driver-a/numa", "2", "1")),
    "with-constraint-not-matching-bool-attribute": (
        "CONSTRAINT_MISMATCH", ("matchAttribute", "driver-a/boolAttribute", "false", "true")),
    "list-attributes-distinct-constraint-scalar-string-values-not-distinct": (
        "CONSTRAINT_MISMATCH", ("distinctAttribute", "driver-a/stringAttribute", "value1")),
    "no-allocation-from-incomplete-pools": ("POOL_INCOMPLETE", ("class-a", "incomplete")),
    "kep-skip-node-operations-disabled": ("GATE_DISABLED", ("DRAOptionalNodeOperations",)),
    "partitionable-devices-disabled-device-consumes-counters": ("GATE_DISABLED", ("DRAPartitionableDevices",)),
    "partitionable-devices-counter-cache-not-crossed-between-driver-schemas": (
        "COUNTERS_EXHAUSTED", ("counter-set-2", "2", "1")),
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": (
        "CAPACITY_SHORT", ("driver-a/capacity-0", "requestPolicy", "2")),
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": (
        "CAPACITY_SHORT", ("driver-a/capacity-0", "requestPolicy", "6")),
    "all-devices-some-allocated": ("IN_USE", ()),
    "not-enough-suitable-devices": ("IN_USE", ()),
    "tainted-prioritized-list": ("TAINT_NOT_TOLERATED", ("req-0", "subReq-0", "class-b", "subReq-1", "taint-key")),
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": ("POOL_INVALID", ("invalid resource pools",)),
}


def _scenario_path(name: str) -> Path:
    from tests.conftest import conformance_dir

    path = conformance_dir() / "allocation" / f"{name}.yaml"
    assert path.exists(), f"scenario {name} is missing"
    return path


@corpus
@pytest.mark.parametrize("name", sorted(REASONS))
def test_reason_from_scenario(name: str):
    from kubectl_dra.allocation import Allocator
    from kubectl_dra.explain import SelectionRefiner
    from kubectl_dra.errors import AllocationError
    from tests.conformance_compare import load_scenario

    code, facts = REASONS[name]
    sc = load_scenario(_scenario_path(name))
    tracer = ExplainTracer("n", refine=SelectionRefiner(sc.state))
    error = None
    try:
        outcome = Allocator(sc.state, FeatureGates.only(sc.features)).allocate(sc.node, sc.claims, tracer=tracer)
        status = "Allocated" if outcome.allocated else "Unschedulable"
    except AllocationError as exc:
        status, error = "Error", exc.message
    n = explain_node("n", status, sc.claims, tracer, error=error)
    seen = codes(n) | {r.code.name for _, _, r in n.pools_skipped}
    if code is None:  # every device was usable: the request simply needs more
        assert not seen, f"{name}: {seen}"
    else:
        assert code in seen, f"{name}: {seen}"
    missing = [fact for fact in facts if fact not in n.reason]
    assert not missing, f"{name}: {n.reason!r} does not name {missing}"


# --------------------------------------------------------------------------- core units


def test_first_rejection_wins_and_final_devices_are_not_rejections():
    tracer = ExplainTracer("n")
    c = claim()
    first = Rejection(RejectionCode.CONSTRAINT_MISMATCH, "first", {})
    tracer.device_rejected(c, "gpu", DRIVER, "p", "d0", first)
    tracer.device_rejected(c, "gpu", DRIVER, "p", "d0", Rejection(RejectionCode.IN_USE, "later", {}))
    tracer.device_rejected(c, "gpu", DRIVER, "p", "d1", Rejection(RejectionCode.IN_USE, "x", {}))
    tracer.device_selected(c, "gpu", DRIVER, "p", "d1")
    trace = tracer.requests[(("default", "train"), "gpu")]
    assert trace.rejected[(DRIVER, "p", "d0")] is first
    spec = parse_claim(c).all_requests[0]
    req = explain_request(("default", "train"), spec, trace, allocated=[(DRIVER, "p", "d1")])
    assert req.candidates == 2
    assert [d for v in req.rejections.values() for d, _ in v] == [(DRIVER, "p", "d0")]


# --------------------------------------------------------------------------- presenters


def write_state(tmp_path: Path, state: ClusterState) -> Path:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(list(state), sort_keys=False))
    return path


def test_cli_json_document(tmp_path, cli_runner):
    path = write_state(tmp_path, mixed_cluster())
    result = cli_runner.invoke(cli, ["explain", "claim/train", "--state", str(path), "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["apiVersion"] == "kubectl-dra/v1" and doc["kind"] == "Explanation"
    assert (doc["fit"], doc["total"]) == (1, 6)
    assert doc["reasons"] == [{"reason": "all matching devices in use", "nodes": 2},
                              {"reason": "no gpu device", "nodes": 2},
                              {"reason": "counter gpu-0-memory/memory: 80Gi needed, 40Gi left", "nodes": 1}]
    node4 = next(n for n in doc["nodes"] if n["node"] == "node-4")
    req = node4["requests"][0]
    assert req["candidates"] == 2 and req["funnel"][-1] == {
        "stage": "with counters left", "code": "COUNTERS_EXHAUSTED", "rejected": 1, "remaining": 0}
    assert req["rejections"][1]["devices"][0]["details"]["left"] == "40Gi"
    assert doc["featureGates"]["DRAPartitionableDevices"] is True


def test_cli_table_and_exit_code(tmp_path, cli_runner):
    state = mixed_cluster()
    state.nodes = [n for n in state.nodes if n["metadata"]["name"] != "node-5"]
    path = write_state(tmp_path, state)
    result = cli_runner.invoke(cli, ["explain", "claim/train", "--state", str(path), "--limit", "2"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == ("ResourceClaim default/train: 0/5 nodes fit: 2 all matching devices in use; 2 no gpu device; "
                        "1 counter gpu-0-memory/memory: 80Gi needed, 40Gi left")
    assert lines[1].split() == ["NODE", "STATUS", "REASON"]
    # one node in detail per reason (the two most frequent reasons, up to --limit), shown by node name
    details = [line for line in lines if line.startswith("Node ")]
    assert details == ["Node node-0: Unschedulable: no gpu device",
                       "Node node-2: Unschedulable: all matching devices in use"]
    assert any(line.split()[:3] == [f"{DRIVER}/node-2/gpu-0", "default/train:gpu", "IN_USE"] for line in lines)
    assert "3 more nodes not shown in detail" in result.stdout


def test_cli_node_flag_shows_every_asked_node(tmp_path, cli_runner):
    path = write_state(tmp_path, mixed_cluster())
    result = cli_runner.invoke(cli, ["explain", "claim/train", "--state", str(path), "--node", "node-4",
                                     "--node", "node-5", "-o", "wide"])
    assert result.exit_code == 0
    assert "Node node-4: Unschedulable: counter gpu-0-memory/memory" in result.stdout
    assert "Node node-5: Allocated: fits" in result.stdout
    assert f"allocated {DRIVER}/node-5/gpu-0" in result.stdout


def test_cli_needs_a_target(cli_runner):
    result = cli_runner.invoke(cli, ["explain", "--state", "/dev/null"])
    assert result.exit_code == 2 and "nothing to explain" in result.output


def test_preview_explain_uses_the_same_explanation(tmp_path, cli_runner):
    path = write_state(tmp_path, mixed_cluster())
    result = cli_runner.invoke(cli, ["preview", "claim/train", "--state", str(path), "--explain"])
    assert result.exit_code == 0, result.output
    assert "ResourceClaim default/train: 1/6 nodes fit: 2 all matching devices in use" in result.stdout


def test_findings_speak_of_the_nodes_asked_for():
    state = state_of(device_class("tpu", 'device.driver == "tpu.example.com"'), node("node-1"), node("node-2"),
                     resource_slice("node-1", [gpu("gpu-0")]), claim(cls="tpu"))
    assert explain(state, nodes=["node-1"]).cluster == ["no device of class tpu exists on the nodes asked for"]
