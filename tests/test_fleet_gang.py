"""Gangs: pod by pod as the scheduler places them, then a joint placement when that fails."""

from __future__ import annotations

import json

from pathlib import Path

import pytest
import yaml

from kubectl_dra.fleet.evaluate import PodEvaluator
from kubectl_dra.fleet.gang import FITS, JOINT_ONLY, NO_PLACEMENT, place_gang
from kubectl_dra.fleet.placement import Placer
from kubectl_dra.fleet.pods import queue_order
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes
from kubectl_dra.state import ClusterState

from . import fleet_clusters as fc
from .cli_support import run


def _gang_objects(big: int) -> list[dict]:
    """Node a (2 GPUs) sorts before node b (1 GPU); p1 (first in the queue) wants 1 GPU, p2 wants ``big``."""
    objs = [fc.gpu_class(), fc.template(), fc.template("two-gpus", big), fc.node("a", "z0"), fc.node("b", "z0"),
            fc.gpu_slice("a", 2), fc.gpu_slice("b", 1),
            {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": fc.NS},
             "spec": {}}]
    objs.append(fc.pod("p1", None, priority=10, group="g"))
    objs.append(fc.pod("p2", None, template="two-gpus", group="g"))
    return objs


def _gang(objs: list[dict], timeout: float | None = 10.0):
    state = ClusterState()
    state.extend(objs)
    gates = FeatureGates.default()
    nodes = candidate_nodes(state)
    placer = Placer(PodEvaluator(state, gates, nodes, timeout=None), nodes)
    pods = queue_order(p for p in state.pods if p["spec"].get("schedulingGroup"))
    return place_gang(placer, pods, "podgroup/team/g", timeout)


def test_pod_by_pod_fails_but_a_joint_placement_exists() -> None:
    result = _gang(_gang_objects(2))
    assert [(p.name, p.node) for p in result.greedy] == [("p1", "a"), ("p2", None)]
    assert result.status == JOINT_ONLY and result.fits
    assert [(p.name, p.node) for p in result.joint or []] == [("p1", "b"), ("p2", "a")]
    assert "not in the scheduler's pod-by-pod order" in result.summary()


def test_no_joint_placement_exists() -> None:
    result = _gang(_gang_objects(3))
    assert result.status == NO_PLACEMENT and not result.fits and result.joint is None and not result.timed_out
    assert "no joint placement exists" in result.summary()


def test_a_gang_the_scheduler_places() -> None:
    objs = _gang_objects(2)
    objs[6] = fc.gpu_slice("b", 2)  # b has two now: p1 on a, p2 on b
    result = _gang(objs)
    assert result.status == FITS and not result.searched
    assert [(p.name, p.node) for p in result.greedy] == [("p1", "a"), ("p2", "b")]


def test_the_joint_placement_holds_when_written_back() -> None:
    """The joint placement, applied pod by pod at the nodes it names, fits at every step."""
    objs = _gang_objects(2)
    result = _gang(objs)
    state = ClusterState()
    state.extend(objs)
    nodes = candidate_nodes(state)
    placer = Placer(PodEvaluator(state, FeatureGates.default(), nodes, timeout=None), nodes)
    by_name = {p["metadata"]["name"]: p for p in state.pods}
    for placed in result.joint or []:
        again = placer.place(by_name[placed.name], placed.node)
        assert again.node == placed.node and again.devices() == placed.devices()


def test_cli_preview_podgroup_and_fit_gang(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(_gang_objects(2)))
    code, out, _ = run(capsys, "preview", "podgroup/g", "-n", fc.NS, "--state", str(path))
    assert code == 0
    assert "the gang fits, but not in the scheduler's pod-by-pod order" in out
    for command in ("preview", "explain"):  # -o json: a kind: Gang document with both placements
        code, out, _ = run(capsys, command, "podgroup/g", "-n", fc.NS, "--state", str(path), "-o", "json")
        document = json.loads(out)
        assert code == 0 and document["kind"] == "Gang" and document["status"] == "FitsJointlyOnly"
        assert len(document["joint"]) == len(document["pods"]) and all(p["node"] for p in document["joint"])
        assert any(p["reason"] for p in document["podByPod"])
    code, out, _ = run(capsys, "explain", "podgroup/g", "-n", fc.NS, "--state", str(path))
    assert "the gang fits, but not in the scheduler's pod-by-pod order" in out
    code, out, _ = run(capsys, "pending", "-n", fc.NS, "--state", str(path))
    assert "podgroup/team/g: the gang fits, but not in the scheduler's pod-by-pod order" in out
    code, out, _ = run(capsys, "fit", "template/one-gpu", "-n", fc.NS, "--state", str(path), "--gang", "3")
    assert code == 0 and out.startswith("3 replicas of template/one-gpu: all 3 pods fit")
    code, out, _ = run(capsys, "fit", "template/one-gpu", "-n", fc.NS, "--state", str(path), "--gang", "4")
    assert code == 1 and "the gang does not fit" in out
