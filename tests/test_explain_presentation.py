"""Explain as people read it: the summary's subject, the default view focused on failure
(no devices of other classes, no detail for nodes that fit), backtracking artifacts in plain
words with the shortfall, the order of detail blocks, and the JSON document's contract."""

from __future__ import annotations

import json
from typing import Any

from kubectl_dra.explain import DOCUMENT_KEYS
from kubectl_dra.preview.explained import subject_of
from kubectl_dra.cli.main import cli
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import resolve_targets
from tests.test_explain import (
    DRIVER, by_node, claim, device_class, explain, gpu, mixed_cluster, node, resource_slice, state_of, write_state,
)

NIC = "nic.example.com"


def nic_slice(node_name: str, *names: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-nics"},
            "spec": {"driver": NIC, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": n} for n in names]}}


def two_request_claim(name: str = "pair") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": r, "exactly": {"deviceClassName": "gpu", "count": 1}}
                                              for r in ("a", "b")]}}}


def run(cli_runner: Any, tmp_path: Any, state: Any, *args: str) -> Any:
    path = write_state(tmp_path, state)
    return cli_runner.invoke(cli, ["explain", "--state", str(path), *args])


def plan_for(state: Any, *targets: str) -> Any:
    return resolve_targets(state, list(targets), namespace="default", gates=FeatureGates.default())


# --------------------------------------------------------------------------- 1. the subject


def test_subject_names_the_claims_not_the_command_line(tmp_path, cli_runner):
    state = mixed_cluster()
    assert subject_of(plan_for(state, "claim/train")) == "ResourceClaim default/train"
    assert subject_of(plan_for(state, "claim/train", "claim/holder-2")) == "claims default/train, default/holder-2"
    many = [f"claim/{n}" for n in ("train", "holder-2", "holder-3", "mig-user")]
    assert subject_of(plan_for(state, *many)) == ("claims default/train, default/holder-2, default/holder-3 "
                                                  "and 1 more")
    claim_file = tmp_path / "c.yaml"
    claim_file.write_text(json.dumps(claim("from-file")))
    result = run(cli_runner, tmp_path, state, "-f", str(claim_file))
    assert result.stdout.splitlines()[0].startswith("ResourceClaim default/from-file: 1/6 nodes fit: ")
    assert str(claim_file) not in result.stdout


def test_subject_of_pods_and_templates():
    state = mixed_cluster()
    state.pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer-0", "namespace": "default"},
                       "spec": {"containers": [{"name": "c", "image": "x"}],
                                "resourceClaims": [{"name": "gpu", "resourceClaimName": "train"}]}})
    state.extend([{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": {"name": "one-gpu", "namespace": "default"},
                   "spec": {"spec": claim()["spec"]}}])
    exp = explain(state, target="pod/trainer-0")
    assert exp.summary().startswith("pod default/trainer-0: 1/6 nodes fit: ")
    assert exp.claims == [("default", "train")]
    assert subject_of(plan_for(state, "template/one-gpu")) == "ResourceClaimTemplate default/one-gpu"


def test_preview_explain_speaks_of_the_claim_too(tmp_path, cli_runner):
    path = write_state(tmp_path, mixed_cluster())
    result = cli_runner.invoke(cli, ["preview", "claim/train", "--state", str(path), "--explain"])
    assert result.exit_code == 0, result.output
    assert any(line.startswith("ResourceClaim default/train: 1/6 nodes fit: ") for line in result.stdout.splitlines())


# --------------------------------------------------------------------------- 2. noise


def noisy_cluster() -> Any:
    """node-1: two NICs (not GPUs) and one GPU held by another claim; node-2: NICs only."""
    return state_of(device_class(), node("node-1"), node("node-2"),
                    resource_slice("node-1", [gpu("gpu-0")]), nic_slice("node-1", "nic-0", "nic-1"),
                    nic_slice("node-2", "nic-0", "nic-1", "nic-2"),
                    claim("holder", allocated_on=("node-1", "gpu-0")), claim("train"))


def test_default_view_leaves_out_devices_of_other_classes(tmp_path, cli_runner):
    result = run(cli_runner, tmp_path, noisy_cluster(), "claim/train")
    assert result.exit_code == 1
    out = result.stdout
    assert "NOT_IN_CLASS" not in out and f"{NIC}/" not in out
    # node-1: the funnel counts the NICs; the GPU row says why it was rejected
    assert "3 devices → 1 in the class → 0 free" in out
    assert any(line.split()[:3] == [f"{DRIVER}/node-1/gpu-0", "default/train:gpu", "IN_USE"]
               for line in out.splitlines())
    # node-2: no device of the class at all: one line instead of a row per NIC
    assert f"default/train:gpu: no device on this node matches class gpu (3 devices of {NIC})" in out


def test_wide_and_json_keep_every_rejected_device(tmp_path, cli_runner):
    wide = run(cli_runner, tmp_path, noisy_cluster(), "claim/train", "-o", "wide").stdout
    rows = [line.split()[:3] for line in wide.splitlines()]
    assert [f"{NIC}/node-2/nic-2", "default/train:gpu", "NOT_IN_CLASS"] in rows
    assert "no device on this node matches" not in wide
    doc = json.loads(run(cli_runner, tmp_path, noisy_cluster(), "claim/train", "-o", "json").stdout)
    node2 = next(n for n in doc["nodes"] if n["node"] == "node-2")
    (group,) = node2["requests"][0]["rejections"]
    assert group["code"] == "NOT_IN_CLASS" and group["count"] == 3
    assert [d["device"] for d in group["devices"]] == ["nic-0", "nic-1", "nic-2"]


def test_class_note_counts_devices_per_driver():
    state = state_of(device_class("tpu", 'device.driver == "tpu.example.com"'), node("node-1"),
                     resource_slice("node-1", [gpu("gpu-0"), gpu("gpu-1")]), nic_slice("node-1", "nic-0"),
                     claim(cls="tpu"))
    req = by_node(explain(state))["node-1"].requests[0]
    assert req.class_note() == f"no device on this node matches class tpu (2 devices of {DRIVER}, 1 of {NIC})"


# --------------------------------------------------------------------------- 3. nodes that fit


def test_fitting_nodes_get_a_row_with_their_devices_not_a_block(tmp_path, cli_runner):
    result = run(cli_runner, tmp_path, mixed_cluster(), "claim/train")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["NODE", "STATUS", "REASON", "DEVICES"]
    assert lines[2].split() == ["node-5", "Allocated", "fits", f"{DRIVER}/node-5/gpu-0"]
    details = [line for line in lines if line.startswith("Node ")]
    assert details and all("Allocated" not in line for line in details)
    assert "(nodes that fit are not shown in detail; -o wide shows them)" in lines


def test_wide_shows_fitting_nodes_in_detail_after_the_failures(tmp_path, cli_runner):
    result = run(cli_runner, tmp_path, mixed_cluster(), "claim/train", "-o", "wide", "--limit", "0")
    details = [line.split(":")[0] for line in result.stdout.splitlines() if line.startswith("Node ")]
    assert details == [f"Node node-{i}" for i in (0, 1, 2, 3, 4, 5)]
    assert "Node node-5: Allocated: fits" in result.stdout


def test_no_devices_column_when_nothing_fits(tmp_path, cli_runner):
    result = run(cli_runner, tmp_path, noisy_cluster(), "claim/train")
    assert result.stdout.splitlines()[1].split() == ["NODE", "STATUS", "REASON"]


# --------------------------------------------------------------------------- 4. backtracking


def test_device_picked_by_another_request_reads_as_such():
    """Two GPUs, one held elsewhere: request a takes the free one, b finds it "in use"."""
    state = state_of(device_class(), node("node-1"), resource_slice("node-1", [gpu("gpu-0"), gpu("gpu-1")]),
                     claim("holder", allocated_on=("node-1", "gpu-0")), two_request_claim())
    n = by_node(explain(state, target="claim/pair"))["node-1"]
    b = n.requests[1]
    messages = {d[2]: r.message for d, r in b.rejections[next(iter(b.rejections))]}
    assert messages == {"gpu-0": "device is already allocated to claim default/holder",
                        "gpu-1": "already picked for request a of this claim"}
    picked = next(r for d, r in b.rejections[next(iter(b.rejections))] if d[2] == "gpu-1")
    assert picked.details["pickedFor"] == {"claim": "default/pair", "request": "a"}
    assert b.result_text() == "unsatisfied: 1 needed, 0 usable"
    assert n.reason == "no gpu device left: 1 in use, 1 already picked for another request of this attempt"


def test_device_picked_by_another_claim_of_the_pod():
    state = state_of(device_class(), node("node-1"), resource_slice("node-1", [gpu("gpu-0")]),
                     claim("first"), claim("second"))
    gates = FeatureGates.default()
    plan = resolve_targets(state, ["claim/first", "claim/second"], namespace="default", gates=gates)
    from kubectl_dra.preview.explained import explain_plan

    n = by_node(explain_plan(state, gates, plan))["node-1"]
    second = n.requests[1]
    ((device, rejection),) = [x for v in second.rejections.values() for x in v]
    assert device[2] == "gpu-0"
    assert rejection.message == "already picked for request gpu of claim default/first (allocated together)"
    assert n.reason == "matching devices taken by the other requests being allocated"


def test_result_shows_the_shortfall_from_the_funnel(tmp_path, cli_runner):
    state = mixed_cluster()
    state.extend([claim("three", count=3)])
    result = run(cli_runner, tmp_path, state, "claim/three", "--node", "node-5")
    rows = [line for line in result.stdout.splitlines() if line.startswith("default/three:gpu")]
    assert rows and rows[0].endswith("unsatisfied: 3 needed, 1 usable")
    doc = json.loads(run(cli_runner, tmp_path, state, "claim/three", "--node", "node-5", "-o", "json").stdout)
    req = doc["nodes"][0]["requests"][0]
    assert (req["needed"], req["usable"], req["result"]) == (3, 1, "unsatisfied: 3 needed, 1 usable")


# --------------------------------------------------------------------------- 6. order


def test_detail_blocks_failures_first_then_by_name(tmp_path, cli_runner):
    state = mixed_cluster()
    state.nodes.append(node("a-node"))  # sorts first by name, no GPU: same reason as node-0/1
    result = run(cli_runner, tmp_path, state, "claim/train", "--limit", "0")
    details = [line.split(":")[0] for line in result.stdout.splitlines() if line.startswith("Node ")]
    assert details == ["Node a-node", "Node node-0", "Node node-1", "Node node-2", "Node node-3", "Node node-4"]


def test_errors_sort_with_the_failures_before_fitting_nodes(tmp_path, cli_runner):
    state = mixed_cluster()
    state.extend([device_class("broken", 'device.attributes["gpu.example.com"].nope > 1')])
    bad = claim("bad", cls="broken")
    state.extend([bad])
    result = run(cli_runner, tmp_path, state, "claim/bad", "-o", "wide", "--limit", "0")
    blocks = [line.split(": ")[:2] for line in result.stdout.splitlines() if line.startswith("Node ")]
    # errors (a GPU free to evaluate) and unschedulable nodes (none, or held) together, by name
    assert blocks == [["Node node-0", "Unschedulable"], ["Node node-1", "Unschedulable"],
                      ["Node node-2", "Unschedulable"], ["Node node-3", "Unschedulable"], ["Node node-4", "Error"],
                      ["Node node-5", "Error"]]


# --------------------------------------------------------------------------- JSON contract


def test_json_document_keys_are_stable_and_documented(tmp_path, cli_runner):
    first = run(cli_runner, tmp_path, mixed_cluster(), "claim/train", "-o", "json").stdout
    second = run(cli_runner, tmp_path, mixed_cluster(), "claim/train", "-o", "json").stdout
    assert first == second
    doc = json.loads(first)
    assert tuple(doc) == DOCUMENT_KEYS
    assert doc["target"] == "ResourceClaim default/train"
    assert doc["claims"] == [{"namespace": "default", "name": "train"}]
    node5 = next(n for n in doc["nodes"] if n["node"] == "node-5")
    assert node5["devices"] == [{"driver": DRIVER, "pool": "node-5", "device": "gpu-0"}]
    help_text = cli_runner.invoke(cli, ["explain", "--help"]).stdout
    for key in DOCUMENT_KEYS:
        assert key in help_text, key


# --------------------------------------------------------------------------- pools skipped for a gate


def compat_pool_cluster() -> Any:
    """node-1's GPU pool declares compatibility groups; the gate is off by default."""
    counters = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-counters"},
                "spec": {"driver": DRIVER, "nodeName": "node-1",
                         "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 2},
                         "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]}}
    mig = gpu("gpu-0", consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}},
                                          "compatibilityGroups": ["mig"]}])
    return state_of(device_class(), node("node-1"), counters, resource_slice("node-1", [mig], count=2),
                    nic_slice("node-1", "nic-0"), claim("train"))


def test_pool_skipped_for_a_disabled_gate_names_the_gate(tmp_path, cli_runner):
    exp = explain(compat_pool_cluster())
    n = by_node(exp)["node-1"]
    assert n.reason == "no usable gpu device (pools skipped: feature gate DRADeviceCompatibilityGroups disabled)"
    ((driver, pool, rejection),) = n.pools_skipped
    # upstream's pool gathering ignores the slice using compatibility groups: the pool is not
    # incomplete, it is what its counter slice makes of it (nothing to allocate)
    assert (driver, pool, rejection.code.name) == (DRIVER, "node-1", "GATE_DISABLED")
    assert "DRADeviceCompatibilityGroups off" in rejection.message
    assert exp.cluster == []  # the skipped pool holds GPUs: no "no device of class gpu exists"
    on = FeatureGates.default().with_overrides("DRADeviceCompatibilityGroups=true")
    assert by_node(explain(compat_pool_cluster(), gates=on))["node-1"].fits
    out = run(cli_runner, tmp_path, compat_pool_cluster(), "claim/train").stdout
    assert "no device on this node matches class gpu (1 device of nic.example.com) outside the skipped pools below" in out


def test_a_really_incomplete_pool_keeps_its_reason():
    state = state_of(device_class(), node("node-1"), resource_slice("node-1", [gpu("gpu-0")], count=2), claim())
    assert by_node(explain(state))["node-1"].reason == "no usable gpu device (devices in incomplete pools)"


def test_a_request_given_up_for_another_reads_satisfiable_on_its_own(tmp_path, cli_runner):
    state = state_of(device_class(), node("node-1"), resource_slice("node-1", [gpu("gpu-0"), gpu("gpu-1")]),
                     claim("holder", allocated_on=("node-1", "gpu-0")), two_request_claim())
    doc = json.loads(run(cli_runner, tmp_path, state, "claim/pair", "-o", "json").stdout)
    results = {r["request"]: r["result"] for r in doc["nodes"][0]["requests"]}
    assert results == {"a": "satisfiable on its own", "b": "unsatisfied: 1 needed, 0 usable"}
    table = run(cli_runner, tmp_path, state, "claim/pair").stdout
    assert any(line.startswith("default/pair:a") and line.endswith("satisfiable on its own")
               for line in table.splitlines())


def test_class_note_when_earlier_stages_took_devices_of_the_class(tmp_path, cli_runner):
    """Partitionable GPUs with the gate off fall out before the class stage: they may be GPUs."""
    mig = gpu("gpu-0", consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}])
    counters = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "c"},
                "spec": {"driver": DRIVER, "nodeName": "node-1",
                         "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 2},
                         "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]}}
    state = state_of(device_class(), node("node-1"), counters, resource_slice("node-1", [mig], count=2),
                     nic_slice("node-1", "nic-0"), claim("train"))
    out = run(cli_runner, tmp_path, state, "claim/train", "--feature-gates", "DRAPartitionableDevices=false").stdout
    assert "default/train:gpu: no device on this node matches" not in out
    assert f"default/train:gpu: the other devices on this node are not of class gpu (1 device of {NIC})" in out
    rows = [line.split()[:3] for line in out.splitlines()]
    assert [f"{DRIVER}/node-1/gpu-0", "default/train:gpu", "GATE_DISABLED"] in rows
    assert "Node node-1: Unschedulable: feature gate DRAPartitionableDevices disabled" in out
