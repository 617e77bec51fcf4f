"""Per-node evaluation, ranking and the Preview document, with a scripted allocator."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from kubectl_dra.allocation import AllocationOutcome
from kubectl_dra.errors import AllocationError, NotFoundError
from kubectl_dra.preview import candidate_nodes, preview_document, resolve_targets, run_preview

from .test_preview_targets import Gates, claim, node, pod, state_of


def result_for(claim_obj: dict, device: str) -> dict:
    return {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": device}]}}


class ScriptedAllocator:
    """Answers per node name: ("ok", score) | "no" | "error"."""

    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.calls: list[tuple[str, list[str]]] = []

    def allocate(self, node: dict, claims: list[dict], tracer: Any = None,
                 deadline: float | None = None, name: str | None = None) -> AllocationOutcome:
        assert name in (None, node["metadata"]["name"])
        name = node["metadata"]["name"]
        self.calls.append((name, [c["metadata"]["name"] for c in claims]))
        answer = self.script[name]
        if answer == "error":
            raise AllocationError("could not retrieve device class gpu")
        if answer == "no":
            return AllocationOutcome(allocated=False)
        return AllocationOutcome(True, [result_for(c, f"{name}-dev") for c in claims], score=answer[1])


def test_ranking_and_document_shape() -> None:
    state = state_of(claim("a"), node("n1"), node("n2"), node("n3"), node("n4"), node("n5"))
    plan = resolve_targets(state, ["a"])
    alloc = ScriptedAllocator({"n1": ("ok", 0), "n2": "no", "n3": ("ok", 5), "n4": "error", "n5": ("ok", 5)})
    gates = Gates(DRAPrioritizedList=False, DRAAdminAccess=True)
    result = run_preview(state, plan, gates, candidate_nodes(state), allocator=alloc,
                         explain_failures=False)
    assert [n.node for n in result.nodes] == ["n3", "n5", "n1", "n2", "n4"]
    doc = preview_document(result)
    assert list(doc) == ["apiVersion", "kind", "featureGates", "claims", "nodes", "modelled"]
    assert doc["apiVersion"] == "kubectl-dra/v1" and doc["kind"] == "Preview"
    assert doc["featureGates"] == gates.as_dict()
    assert doc["featureGates"]["DRAPrioritizedList"] is False and doc["featureGates"]["DRAAdminAccess"] is True
    assert doc["claims"] == [{"namespace": "default", "name": "a"}]
    assert doc["nodes"][0] == {
        "node": "n3", "status": "Allocated", "score": 5,
        "allocations": [{"namespace": "default", "name": "a", "allocation": result_for({}, "n3-dev")}],
    }
    assert doc["nodes"][3] == {"node": "n2", "status": "Unschedulable", "reasons": ["cannot allocate all claims"]}
    assert doc["nodes"][4] == {"node": "n4", "status": "Error", "error": "could not retrieve device class gpu"}
    assert not result.all_errors and len(result.fitting) == 3


def test_all_errors() -> None:
    state = state_of(claim("a"), node("n1"))
    plan = resolve_targets(state, ["a"])
    result = run_preview(state, plan, Gates(), candidate_nodes(state), allocator=ScriptedAllocator({"n1": "error"}))
    assert result.all_errors and not result.fitting


def test_allocated_claims_are_kept_and_not_reallocated() -> None:
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]}
    done = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "old"}]},
            "nodeSelector": sel}
    state = state_of(claim("done", allocation=done), claim("new"), node("n1", {"zone": "z1"}), node("n2"))
    plan = resolve_targets(state, ["done", "new"])
    alloc = ScriptedAllocator({"n1": ("ok", 1), "n2": ("ok", 1)})
    result = run_preview(state, plan, Gates(), candidate_nodes(state), allocator=alloc)
    assert alloc.calls == [("n1", ["new"])]  # n2 is ruled out before the allocator runs
    n1, n2 = result.nodes
    assert n1.node == "n1" and [(c.name, a) for c, a in n1.allocations] == [
        ("done", done), ("new", result_for({}, "n1-dev"))]
    assert n2.status == "Unschedulable" and "already allocated" in n2.reasons[0]


def test_only_allocated_claims_fit_without_allocator_call() -> None:
    done = {"devices": {"results": []}}
    state = state_of(claim("done", allocation=done), node("n1"))
    alloc = ScriptedAllocator({})
    result = run_preview(state, resolve_targets(state, ["done"]), Gates(), candidate_nodes(state), allocator=alloc)
    assert alloc.calls == [] and result.nodes[0].allocated


def test_candidate_nodes() -> None:
    state = state_of(node("b"), node("a"), node("c"))
    assert [n["metadata"]["name"] for n in candidate_nodes(state)] == ["a", "b", "c"]
    assert [n["metadata"]["name"] for n in candidate_nodes(state, ["c", "a", "c"])] == ["c", "a"]
    with pytest.raises(NotFoundError, match="Node 'x'"):
        candidate_nodes(state, ["x"])
    # no Node objects: the nodes that slices name, with a warning
    bare = state_of({"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"nodeName": "w1"}},
                    {"kind": "ResourceSlice", "metadata": {"name": "t"}, "spec": {"allNodes": True}})
    warnings: list[str] = []
    assert [n["metadata"]["name"] for n in candidate_nodes(bare, warn=warnings.append)] == ["w1"]
    assert warnings


def test_a_previewed_claim_does_not_compete_with_its_stored_namesake() -> None:
    """The stored claim of the same name holds the only device; previewed anew, the claim gets
    that very device (the allocator leaves the claims it allocates out of the in-use devices)."""
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "d", "nodeName": "n1", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0"}]}}
    held = {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "gpu-0"}]}}
    stored = claim("a", allocation=held)
    state = state_of(stored, device_class, slice_, node("n1"))
    gates = Gates()
    result = run_preview(state, resolve_targets(state, [], [(claim("a"), "f.yaml")], gates=gates), gates,
                         candidate_nodes(state))
    assert [n.status for n in result.nodes] == ["Allocated"]
    assert result.nodes[0].allocations[0][1]["devices"]["results"][0]["device"] == "gpu-0"


def test_pod_filters_nodes_before_allocating() -> None:
    state = state_of(claim("a"), pod("p", [{"name": "x", "resourceClaimName": "a"}], nodeSelector={"gpu": "yes"}),
                     node("n1", {"gpu": "yes"}), node("n2"))
    alloc = ScriptedAllocator({"n1": ("ok", 0), "n2": ("ok", 0)})
    result = run_preview(state, resolve_targets(state, ["pod/p"]), Gates(), candidate_nodes(state), allocator=alloc)
    assert [c[0] for c in alloc.calls] == ["n1"]
    assert [n.status for n in result.nodes] == ["Allocated", "Unschedulable"]


def test_table_mixes_device_rows_and_reason_rows() -> None:
    from kubectl_dra.cli.preview import render_table

    state = state_of(claim("a"), node("n1"), node("n2"), node("n3"))
    plan = resolve_targets(state, ["a"])
    alloc = ScriptedAllocator({"n1": ("ok", 3), "n2": "no", "n3": "error"})
    result = run_preview(state, plan, Gates(), candidate_nodes(state), allocator=alloc, explain_failures=False)
    lines = render_table(result).splitlines()
    assert lines[0].split() == ["NODE", "STATUS", "CLAIM", "REQUEST", "DEVICE", "CAPACITY"]
    assert lines[1].split() == ["n1", "Allocated", "default/a", "r", "d/p/n1-dev"]
    assert lines[2].split(None, 2) == ["n2", "Unschedulable", "cannot allocate all claims"]
    assert lines[3].split(None, 2) == ["n3", "Error", "could not retrieve device class gpu"]
    # the reason starts where CLAIM starts: NODE and STATUS are aligned on every row
    assert {line.index(word) for line, word in zip(lines, ["CLAIM", "default/a", "cannot", "could"])} == {
        lines[0].index("CLAIM")}
    wide = render_table(result, wide=True, no_headers=True).splitlines()
    assert wide[0].split()[:3] == ["n1", "Allocated", "3"] and len(wide) == 3

_ANSWER = st.one_of(st.just("no"), st.just("error"), st.tuples(st.just("ok"), st.integers(0, 20)))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"n[a-z0-9]{1,6}", fullmatch=True), _ANSWER, min_size=1, max_size=12))
def test_ranking_invariants(script: dict[str, Any]) -> None:
    state = state_of(claim("a"), *(node(n) for n in script))
    plan = resolve_targets(state, ["a"])
    result = run_preview(state, plan, Gates(), candidate_nodes(state), allocator=ScriptedAllocator(script),
                         explain_failures=False)
    assert sorted(n.node for n in result.nodes) == sorted(script)
    order = {"Allocated": 0, "Unschedulable": 1, "Error": 2}
    keys = [(order[n.status], -n.score, n.node) for n in result.nodes]
    assert keys == sorted(keys)
    assert [n.node for n in result.fitting] == [n for n, a in sorted(
        ((n, a) for n, a in script.items() if isinstance(a, tuple)), key=lambda item: (-item[1][1], item[0]))]
    assert result.all_errors == all(a == "error" for a in script.values())
