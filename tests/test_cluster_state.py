"""ClusterState is read-only once loaded: a state derived from another (fit's final state, a
what-if) is a new state, and nothing done to it reaches the state it came from."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

from kubectl_dra.fit import count_fit, final_state
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets
from kubectl_dra.state import ClusterState, load_documents, load_state

DEMO = Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo"


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def _claim(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"devices": {"requests": []}}}


def _state(*objs: dict[str, Any]) -> ClusterState:
    state = ClusterState()
    state.extend(objs)
    return state


def _lists(state: ClusterState) -> str:
    """Everything a state holds, as text (to compare before and after)."""
    return json.dumps({f.name: getattr(state, f.name) for f in dataclasses.fields(state) if not f.name.startswith("_")},
                      sort_keys=True)


def test_fits_final_state_leaves_the_input_untouched() -> None:
    state = load_state([str(DEMO / "cluster.yaml")])
    before = _lists(state)
    objects = [(o, "claim") for o in load_documents([str(DEMO / "claims" / "02-mig-slices.yaml")])]
    gates = FeatureGates.default()
    plan = resolve_targets(state, [], objects, "ml-team", gates)
    result = count_fit(state, plan, gates, candidate_nodes(state), limit=20)
    assert result.count > 0
    final = final_state(state, result)
    assert len(final.resource_claims) > len(state.resource_claims)
    final.nodes.append(_node("added-to-the-copy"))
    final.resource_claims.clear()
    final.warnings.append("a warning of the copy")
    assert _lists(state) == before


def test_copies_made_any_way_share_no_list() -> None:
    state = _state(_node("a"), _claim("c"))
    before = _lists(state)
    for other in (dataclasses.replace(state), dataclasses.replace(state, nodes=state.nodes), copy.copy(state),
                  ClusterState(nodes=state.nodes, resource_claims=state.resource_claims, warnings=state.warnings)):
        other.nodes.append(_node("b"))
        other.add(_claim("d"))
        other.add(_node("a", changed="yes"))  # replaces "a" in the copy (with a warning there)
        other.warnings.append("copy")
        assert _lists(state) == before


def test_with_objects_adds_and_replaces_by_identity_in_a_new_state() -> None:
    state = _state(_node("a"), _node("b"), _claim("c"))
    before = _lists(state)
    derived = state.with_objects([_node("b", zone="z"), _node("n"), _claim("c", "other")])
    assert [n["metadata"]["name"] for n in derived.nodes] == ["a", "b", "n"]
    assert derived.nodes[1]["metadata"]["labels"] == {"zone": "z"}
    assert [(c["metadata"]["namespace"], c["metadata"]["name"]) for c in derived.resource_claims] == [
        ("default", "c"), ("other", "c")]
    assert derived.warnings == state.warnings  # a what-if replaces without "given more than once"
    assert derived.find("Node", "n") is not None and state.find("Node", "n") is None
    assert _lists(state) == before
    # the derived state keeps the one-object-per-name rule for what is added to it later
    derived.add(_node("n", zone="later"))
    assert [n["metadata"]["name"] for n in derived.nodes] == ["a", "b", "n"]


def test_without_and_replacing_make_new_states() -> None:
    state = _state(_node("a"), _node("b"), _claim("c"), _claim("d"))
    before = _lists(state)
    assert [n["metadata"]["name"] for n in state.without_nodes(["a"]).nodes] == ["b"]
    assert [c["metadata"]["name"] for c in state.without("ResourceClaim", {("default", "d")}).resource_claims] == ["c"]
    replaced = state.replacing("ResourceClaim", [_claim("e")])
    assert [c["metadata"]["name"] for c in replaced.resource_claims] == ["e"]
    assert replaced.nodes == state.nodes and replaced.nodes is not state.nodes
    assert _lists(state) == before
