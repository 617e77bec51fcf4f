"""kubectl dra drain-check: equal to re-placing the evicted pods by hand, one preview at a
time, each answer written back into the state before the next."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kubectl_dra.fleet.drain import drain_check, drain_state, replacement
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview
from kubectl_dra.state import ClusterState

from . import fleet_clusters as fc
from .cli_support import run

DEMO = str(Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml")


def _state(objs: list[dict]) -> ClusterState:
    state = ClusterState()
    state.extend(objs)
    return state


def _by_hand(state: ClusterState, gates: FeatureGates, drained: list[str]) -> list[tuple[str, str | None]]:
    """Evict, then for each pod in queue order: `preview pod/X` on the current state, take the
    best node, store its claims as allocated and the pod as bound, and go on with that state."""
    new, evicted, _ = drain_state(state, drained, False, gates)
    objs = [o for o in new]
    objs += [replacement(p) for p in evicted]
    answers = []
    for pod in evicted:
        current = _state(copy.deepcopy(objs))
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        plan = resolve_targets(current, [f"pod/{ns}/{name}"], gates=gates)
        result = run_preview(current, plan, gates, candidate_nodes(current), timeout=None)
        if not result.fitting:
            answers.append((name, None))
            continue
        best = result.fitting[0]
        answers.append((name, best.node))
        for claim, allocation in best.allocations:
            if claim.allocation is not None:
                continue
            stored = {k: v for k, v in claim.claim.items() if k != "status"}
            stored["status"] = {"allocation": allocation,
                                "reservedFor": [{"resource": "pods", "name": name, "uid": f"new-{name}"}]}
            objs = [o for o in objs if not (o["kind"] == "ResourceClaim" and o["metadata"]["name"] == claim.name
                                            and o["metadata"]["namespace"] == claim.namespace)] + [stored]
        objs = [o for o in objs if not (o["kind"] == "Pod" and o["metadata"]["name"] == name)]
        bound = copy.deepcopy(replacement(pod))
        bound["spec"]["nodeName"] = best.node
        bound["status"] = {"phase": "Running"}
        objs.append(bound)
    return answers


@pytest.mark.parametrize("seed", range(30))
def test_drain_check_equals_successive_previews_written_back(seed: int) -> None:
    state = _state(fc.generated(seed))
    gates = FeatureGates.default()
    drained = ["node-0", "node-1"] if seed % 2 else ["node-0"]
    report = drain_check(state, gates, drained, timeout=None)
    got = [(m.placed.name, m.placed.node) for m in report.moves]
    assert got == _by_hand(state, gates, drained)


def _drain_objects() -> list[dict]:
    objs = [fc.gpu_class(), fc.template(), fc.node("a", "z0"), fc.node("b", "z0"), fc.node("c", "z1"),
            fc.gpu_slice("a", 2), fc.gpu_slice("b", 2), fc.gpu_slice("c", 1)]
    for i, (prio, created) in enumerate([(0, "2026-12-01T00:00:02Z"), (100, "2026-12-01T00:00:03Z"),
                                         (0, "2026-12-01T00:00:01Z")]):
        name = f"p{i}"
        if i < 2:
            objs.append(fc.allocate(fc.claim(f"{name}-gpu"), "a", [f"gpu-{i}"], name))
            objs.append(fc.pod(name, f"{name}-gpu", "a", priority=prio, created=created))
    # b is half used; c has one free device, but only z1 pods may go there
    objs.append(fc.allocate(fc.claim("other-gpu"), "b", ["gpu-0"], "other"))
    objs.append(fc.pod("other", "other-gpu", "b"))
    return objs


def test_pods_move_in_queue_order_priority_first() -> None:
    report = drain_check(_state(_drain_objects()), FeatureGates.default(), ["a"], timeout=None)
    assert [(m.placed.name, m.placed.node) for m in report.moves] == [("p1", "b"), ("p0", "c")]
    assert report.ok and report.released == ["team/p0-gpu", "team/p1-gpu"]


def test_a_pod_with_nowhere_to_go_is_stuck_with_the_reason(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    import yaml

    objs = _drain_objects()
    objs = [o for o in objs if not (o["kind"] == "ResourceSlice" and o["metadata"]["name"] == "c-gpus")]
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    code, out, _ = run(capsys, "drain-check", "a", "--state", str(path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "drain a: 1 of 2 pods can move; 1 cannot"
    assert lines[2].split()[:6] == [fc.NS, "p1", "100", "a", "Moves", "b"]
    assert lines[3].split()[:6] == [fc.NS, "p0", "0", "a", "Stuck", "-"]
    assert "0/2 nodes fit" in lines[3]
    code, out, _ = run(capsys, "drain-check", "a", "--state", str(path), "--add-nodes", "b=1", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["kind"] == "DrainCheck"
    assert [(p["name"], p["status"], p["to"]) for p in doc["pods"]] == [("p1", "Moves", "b"),
                                                                       ("p0", "Moves", "b-hypothetical-1")]


def test_a_shared_claim_still_held_elsewhere_stays_where_it_is() -> None:
    objs = [fc.gpu_class(), fc.template(), fc.node("a", "z0"), fc.node("b", "z0"),
            fc.gpu_slice("a", 1), fc.gpu_slice("b", 1)]
    shared = fc.allocate(fc.claim("shared"), "a", ["gpu-0"], "p0")
    shared["status"]["reservedFor"].append({"resource": "pods", "name": "q", "uid": "uid-q"})
    objs.append(shared)
    for name, node in (("p0", "a"), ("q", "a")):
        p = fc.pod(name, None, node)
        p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared"}]
        objs.append(p)
    state = _state(objs)
    report = drain_check(state, FeatureGates.default(), ["a"], timeout=None)
    # both pods on a are evicted: the claim is released and reallocated on b with the first one
    assert [(m.placed.name, m.placed.node) for m in report.moves] == [("p0", "b"), ("q", "b")]
    objs[-1]["spec"]["nodeName"] = "b"  # q runs elsewhere (on b) and still holds the claim on a
    report = drain_check(_state(objs), FeatureGates.default(), ["a"], timeout=None)
    (move,) = report.moves
    assert move.placed.node is None and "already allocated with devices that node b cannot reach" in move.placed.answer.reason


@pytest.mark.parametrize("args, words", [
    (["nope"], "node 'nope' not found"), (["gpu-node-1", "gpu-node-1"], "named twice"),
])
def test_bad_nodes_are_exit_2_with_one_line(args: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "drain-check", *args, "--state", DEMO)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_drain_check_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "drain-check", "gpu-node-1", "--state", DEMO)
    assert code == 0 and out.splitlines()[0] == "drain gpu-node-1: 2 of 2 pods can move"
