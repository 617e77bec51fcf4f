"""kubectl dra pending: every pending pod's answer equals explain's for that pod alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubectl_dra.preview.explained import explain_plan
from kubectl_dra.fleet.evaluate import FITS, WAITING, PodEvaluator
from kubectl_dra.fleet.pending import pending_report
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets
from kubectl_dra.state import ClusterState, load_state

from . import fleet_clusters as fc
from .cli_support import run

DEMO = str(Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml")


def _state(objs: list[dict]) -> ClusterState:
    state = ClusterState()
    state.extend(objs)
    return state


def _report(state: ClusterState, gates: FeatureGates | None = None):
    gates = gates or FeatureGates.default()
    evaluator = PodEvaluator(state, gates, candidate_nodes(state), timeout=None)
    return pending_report(state, evaluator, None)


@pytest.mark.parametrize("seed", range(40))
def test_pending_equals_explain_of_each_pod_alone(seed: int) -> None:
    state = _state(fc.generated(seed))
    gates = FeatureGates.default()
    report = _report(state, gates)
    pending = [p for p in state.pods if not p["spec"].get("nodeName")]
    assert sorted(p.name for p in report.pods) == sorted(p["metadata"]["name"] for p in pending)
    for row in report.pods:
        plan = resolve_targets(state, [f"pod/{row.namespace}/{row.name}"], gates=gates)
        exp = explain_plan(state, gates, plan, timeout=None)
        a = row.answer
        assert (a.fit, a.total) == (len(exp.fitting), len(exp.nodes)), row.name
        assert set(a.nodes) == {n.node for n in exp.fitting}, row.name
        assert a.reasons == exp.reason_counts(), row.name
        assert (a.status == FITS) == bool(exp.fitting)


def test_identical_specs_are_evaluated_once() -> None:
    objs = [fc.gpu_class(), fc.template(), fc.node("n1", "z0"), fc.gpu_slice("n1", 2)]
    for i in range(5):
        objs += [fc.claim(f"job-{i}-gpu", 3), fc.pod(f"job-{i}", f"job-{i}-gpu")]
    objs += [fc.claim("other-gpu", 1), fc.pod("other", "other-gpu")]
    report = _report(_state(objs))
    assert report.specs == 2
    assert report.summary() == "6 pending pods with DRA claims: 5 gpu: 3 devices needed, 2 usable; 1 would fit now"
    assert [p.name for p in report.pods] == ["job-0", "job-1", "job-2", "job-3", "job-4", "other"]


def test_dra_states_that_keep_pods_waiting() -> None:
    objs = [fc.gpu_class(), fc.template(), fc.node("n1", "z0"), fc.gpu_slice("n1", 2)]
    deleting = fc.claim("deleting-gpu")
    deleting["metadata"]["deletionTimestamp"] = "2026-12-02T00:00:00Z"
    full = fc.allocate(fc.claim("shared-gpu"), "n1", ["gpu-0"], None)
    full["status"]["reservedFor"] = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)]
    objs += [deleting, full, fc.claim("bad-class-gpu", cls="nope")]
    objs.append(fc.pod("a-deleting", "deleting-gpu"))
    named = fc.pod("b-full", None)
    named["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared-gpu"}]
    objs.append(named)
    objs.append(fc.pod("c-bad-class", "bad-class-gpu"))
    missing = fc.pod("d-missing", None)
    missing["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "nowhere"}]
    objs.append(missing)
    objs.append(fc.pod("e-not-created", None))
    report = {p.name: p.answer for p in _report(_state(objs)).pods}
    assert report["a-deleting"].reason == 'resourceclaim "deleting-gpu" is being deleted'
    assert report["b-full"].reason.startswith('resourceclaim "shared-gpu" is in use: reserved by 256')
    assert report["c-bad-class"].reason == ('resourceclaim "bad-class-gpu", request gpu: device class nope '
                                            "does not exist")
    assert report["d-missing"].reason == 'resourceclaim "nowhere" not found'
    created = report["e-not-created"]
    assert created.status == WAITING and created.fit == 1
    assert created.reason.startswith("claim gpu from template one-gpu not created yet; once created: would fit now")
    assert all(a.status == WAITING for a in report.values())


def test_claim_allocated_elsewhere_is_a_node_reason() -> None:
    objs = [fc.gpu_class(), fc.template(), fc.node("n1", "z0"), fc.node("n2", "z1"), fc.gpu_slice("n1", 2)]
    objs.append(fc.allocate(fc.claim("shared-gpu"), "n1", ["gpu-0"], "other"))
    objs.append(fc.pod("other", "shared-gpu", "n1"))
    p = fc.pod("p", None, zone="z1")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared-gpu"}]
    objs.append(p)
    (row,) = _report(_state(objs)).pods
    assert row.answer.fit == 0
    assert "already allocated with devices that node n2 cannot reach" in row.answer.reason


def test_cli_table_json_and_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    objs = [fc.gpu_class(), fc.template(), fc.node("n1", "z0"), fc.gpu_slice("n1", 2)]
    objs += [fc.claim("big-gpu", 3), fc.pod("big", "big-gpu"), fc.claim("small-gpu", 1), fc.pod("small", "small-gpu")]
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    code, out, err = run(capsys, "pending", "-n", fc.NS, "--state", str(path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "2 pending pods with DRA claims: 1 gpu: 3 devices needed, 2 usable; 1 would fit now"
    assert lines[1].split() == ["NAMESPACE", "POD", "CLAIMS", "NODES", "STATUS", "REASON"]
    assert lines[2].split()[:5] == [fc.NS, "big", "big-gpu", "0/1", "Unschedulable"]
    code, out, _ = run(capsys, "pending", "-A", "--state", str(path), "-o", "json")
    doc = json.loads(out)
    assert doc["kind"] == "Pending" and doc["specs"] == 2 and doc["nodes"] == 1
    assert [(p["name"], p["status"], p["fit"]) for p in doc["pods"]] == [("big", "Unschedulable", 0),
                                                                        ("small", "Fits", 1)]
    code, out, _ = run(capsys, "pending", "-A", "--state", str(path), "-o", "name")
    assert out.split() == ["pod/big"]
    code, out, err = run(capsys, "pending", "-A", "--state", str(path), "--add-nodes", "n1=1", "-o", "json")
    doc = json.loads(out)
    assert code == 1 and doc["hypotheticalNodes"] == {"n1-hypothetical-1": "n1"}
    assert {p["name"]: p["fit"] for p in doc["pods"]} == {"big": 0, "small": 2}


def test_pending_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "pending", "-A", "--state", DEMO)
    pending = [p for p in load_state([DEMO]).pods if not p["spec"].get("nodeName") and p["spec"].get("resourceClaims")]
    assert out.splitlines()[0].startswith(f"{len(pending)} pending pods with DRA claims: ")
    assert "ml-team/render-vgpu" in out  # the stranded vGPU
