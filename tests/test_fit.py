"""``kubectl dra fit``: the count equals successive previews with each result written back.

This is a consistency check between two commands that must agree (fit and preview); the
independent oracle, sharing no code with either, is tests/test_fit_oracle.py. The successive
previews here are deliberately naive: resolve the targets against the current state,
run a whole-cluster preview, take the best node (or, spread, the node whose turn it is),
store every new claim of that node's answer as an allocated ResourceClaim, and start over
from a fresh state. ``count_fit`` must place exactly as many replicas on exactly the same
nodes, and its reasons must be explain's on the final state.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest

from kubectl_dra.preview.explained import explain_plan
from kubectl_dra.fit import RANKED, SPREAD, count_fit, final_state, fit_document, stop_reasons
from kubectl_dra.fit.run import per_replica
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview
from kubectl_dra.state import ClusterState, load_documents, load_state

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "kubectl_dra" / "demo"
Obj = dict[str, Any]

#: a bound on replicas, so that a wrong implementation fails instead of running away
CAP = 60


def _write_back(state: ClusterState, outcome: Any, index: int, pod_target: bool) -> ClusterState:
    """The state after binding one replica: its new claims stored as allocated (a shared claim
    generated for a PodGroup also recorded in the group's status, as the controller does)."""
    claims = list(state.resource_claims)
    groups = list(state.pod_groups)
    for claim, allocation in outcome.allocations:
        if claim.allocation is not None:
            continue
        obj = copy.deepcopy(claim.claim)
        obj.pop("status", None)
        if per_replica(claim, pod_target):  # which claims a replica copies: the rule under test is the count
            obj["metadata"]["name"] = f"{claim.name}-fit-{index}"
        else:
            claims = [c for c in claims if (c["metadata"].get("namespace"), c["metadata"]["name"]) != claim.key]
            if claim.generated and claim.origin.startswith("podgroup/"):
                _, ns, group = claim.origin.split(" ")[0].split("/")
                entry = claim.name[len(group) + 1:-len("-preview")]
                groups = [copy.deepcopy(g) for g in groups]
                for g in groups:
                    if (g["metadata"].get("namespace"), g["metadata"]["name"]) == (ns, group):
                        g.setdefault("status", {}).setdefault("resourceClaimStatuses", []).append(
                            {"name": entry, "resourceClaimName": claim.name})
        obj["metadata"]["namespace"] = claim.namespace
        obj["status"] = {"allocation": allocation}
        claims.append(obj)
    return dataclasses.replace(state, resource_claims=claims, pod_groups=groups, warnings=[])


def successive_previews(state: ClusterState, gates: Any, targets: list[str], objects: list[tuple[Obj, str]],
                        namespace: str, placement: str = RANKED) -> tuple[list[str], ClusterState]:
    """The nodes successive previews place replicas on, and the state after the last one."""
    placed: list[str] = []
    first = resolve_targets(state, targets, objects, namespace, gates)
    pod_target = bool(first.pods)
    order = [o.node for o in run_preview(state, first, gates, candidate_nodes(state)).nodes]
    alive = list(order)
    while len(placed) < CAP and alive:
        if placement == SPREAD:
            still = []
            for name in alive:
                plan = resolve_targets(state, targets, objects, namespace, gates)
                outcome = run_preview(state, plan, gates, candidate_nodes(state, [name])).nodes[0]
                if outcome.allocated and len(placed) < CAP:
                    placed.append(name)
                    state = _write_back(state, outcome, len(placed), pod_target)
                    still.append(name)
            alive = still
            continue
        plan = resolve_targets(state, targets, objects, namespace, gates)
        fitting = run_preview(state, plan, gates, candidate_nodes(state)).fitting
        if not fitting:
            break
        placed.append(fitting[0].node)
        state = _write_back(state, fitting[0], len(placed), pod_target)
    return placed, state


def check(state: ClusterState, gates: Any, targets: list[str], objects: list[tuple[Obj, str]], namespace: str,
          placement: str = RANKED) -> Any:
    """fit == successive previews (count and nodes), and fit's reasons == explain on the final state."""
    plan = resolve_targets(state, targets, objects, namespace, gates)
    nodes = candidate_nodes(state)
    result = count_fit(state, plan, gates, nodes, limit=CAP, placement=placement)
    stop_reasons(state, result, nodes)
    placed, reference_final = successive_previews(state, gates, targets, objects, namespace, placement)
    assert result.count == len(placed)
    assert [r.node for r in result.replicas] == placed
    final_plan = resolve_targets(reference_final, targets, objects, namespace, gates)
    explained = explain_plan(reference_final, gates, final_plan)
    assert result.reasons == {n.node: n.reason for n in explained.nodes}
    # the final state fit builds is the one the reference reached (same devices in use)
    assert _devices(final_state(state, result)) == _devices(reference_final)
    return result


def _devices(state: ClusterState) -> list[tuple[str, str, str, str]]:
    """Every allocated device result (with its consumed capacity), shareIDs aside."""
    out = []
    for claim in state.resource_claims:
        for r in ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
            out.append((r["driver"], r["pool"], r["device"], json.dumps(r.get("consumedCapacity"), sort_keys=True)))
    return sorted(out)


# --------------------------------------------------------------------------- the demo cluster

DEMO_CLAIMS = sorted((DEMO / "claims").glob("*.yaml"))


@pytest.fixture(scope="module")
def demo_state() -> ClusterState:
    return load_state([str(DEMO / "cluster.yaml")])


@pytest.mark.parametrize("path", DEMO_CLAIMS, ids=lambda p: p.stem)
def test_demo_claims_match_successive_previews(demo_state: ClusterState, path: Path) -> None:
    gates = FeatureGates.default()
    objects = [(o, str(path)) for o in load_documents([str(path)])]
    check(demo_state, gates, [], objects, "ml-team")


@pytest.mark.parametrize("gates_text", ["DRADeviceCompatibilityGroups=true", "DRAConsumableCapacity=false"])
def test_demo_with_other_gates(demo_state: ClusterState, gates_text: str) -> None:
    from kubectl_dra.cli.common import resolve_gates

    gates = resolve_gates(gates_text, None)
    for path in DEMO_CLAIMS[:5]:
        objects = [(o, str(path)) for o in load_documents([str(path)])]
        check(demo_state, gates, [], objects, "ml-team")


def test_demo_spread_matches_round_robin_previews(demo_state: ClusterState) -> None:
    gates = FeatureGates.default()
    for path in (DEMO / "claims" / "02-mig-slices.yaml", DEMO / "claims" / "04-fabric-bandwidth.yaml"):
        objects = [(o, str(path)) for o in load_documents([str(path)])]
        check(demo_state, gates, [], objects, "ml-team", placement=SPREAD)


# --------------------------------------------------------------------------- generated clusters


def _quantity_counters(memory_gi: int) -> Obj:
    return {"memory": {"value": f"{memory_gi}Gi"}}


def generated_cluster(seed: int) -> list[Obj]:
    """Nodes in two zones, each with partitionable GPUs (whole, halves, quarters on shared
    counters), a network-attached pool of multi-allocatable links with consumable bandwidth
    (zone-a), and a pool of exclusive NICs every node reaches; some devices already in use."""
    rng = random.Random(seed)
    objs: list[Obj] = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "link"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "fabric.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]}},
    ]
    for i in range(rng.randint(2, 4)):
        name = f"node-{i}"
        objs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "labels": {"zone": "zone-a" if i % 2 == 0 else "zone-b"}}})
        gpus = rng.randint(1, 2)
        pool = {"name": name, "generation": 1, "resourceSliceCount": 2}
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-c"},
                     "spec": {"driver": "gpu.example.com", "nodeName": name, "pool": pool,
                              "sharedCounters": [{"name": f"gpu-{g}", "counters": _quantity_counters(40)}
                                                 for g in range(gpus)]}})
        devices = []
        for g in range(gpus):
            for profile, size, n in (("whole", 40, 1), ("half", 20, 2), ("quarter", 10, 4)):
                for k in range(n):
                    devices.append({"name": f"gpu-{g}-{profile}-{k}",
                                    "attributes": {"profile": {"string": profile}, "gpu": {"int": g}},
                                    "consumesCounters": [{"counterSet": f"gpu-{g}",
                                                          "counters": _quantity_counters(size)}]})
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-d"},
                     "spec": {"driver": "gpu.example.com", "nodeName": name, "pool": pool, "devices": devices}})
        if rng.random() < 0.5:  # something already running there
            device = rng.choice(devices)["name"]
            objs.append(_allocated(f"busy-{name}", "gpu.example.com", name, device, name))
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
                 "spec": {"driver": "fabric.example.com",
                          "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                              {"key": "zone", "operator": "In", "values": ["zone-a"]}]}]},
                          "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": f"link-{k}", "allowMultipleAllocations": True,
                                       "capacity": {"bandwidth": {"value": f"{rng.choice([100, 150])}G",
                                                                  "requestPolicy": {"default": "10G",
                                                                                    "validRange": {"min": "1G",
                                                                                                   "step": "5G"}}}}}
                                      for k in range(rng.randint(1, 2))]}})
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "nics"},
                 "spec": {"driver": "nic.example.com", "allNodes": True,
                          "pool": {"name": "nics", "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": f"nic-{k}"} for k in range(rng.randint(3, 6))]}})
    return objs


def _allocated(name: str, driver: str, pool: str, device: str, node: str) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {
                "devices": {"results": [{"request": "r", "driver": driver, "pool": pool, "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}}


def _profile(name: str) -> list[Obj]:
    return [{"cel": {"expression": f'device.attributes["gpu.example.com"].profile == "{name}"'}}]


def _claim(name: str, requests: list[Obj], constraints: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


CLAIMS: dict[str, Obj] = {
    "exact-count": _claim("two-halves", [{"name": "g", "exactly": {
        "deviceClassName": "gpu", "count": 2, "selectors": _profile("half")}}]),
    "all": _claim("all-quarters", [{"name": "g", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "All", "selectors": _profile("quarter")}}]),
    "prioritized": _claim("big-or-small", [{"name": "g", "firstAvailable": [
        {"name": "whole", "deviceClassName": "gpu", "selectors": _profile("whole")},
        {"name": "halves", "deviceClassName": "gpu", "count": 2, "selectors": _profile("half")},
        {"name": "quarter", "deviceClassName": "gpu", "selectors": _profile("quarter")}]}]),
    "capacity": _claim("bandwidth", [{"name": "l", "exactly": {
        "deviceClassName": "link", "capacity": {"requests": {"bandwidth": "32G"}}}}]),
    "shared-pool": _claim("gpu-and-nic", [
        {"name": "g", "exactly": {"deviceClassName": "gpu", "selectors": _profile("quarter")}},
        {"name": "n", "exactly": {"deviceClassName": "nic"}}]),
    "everything": _claim("gpu-link-nic", [
        {"name": "g", "firstAvailable": [
            {"name": "half", "deviceClassName": "gpu", "selectors": _profile("half")},
            {"name": "quarter", "deviceClassName": "gpu", "selectors": _profile("quarter")}]},
        {"name": "l", "exactly": {"deviceClassName": "link", "capacity": {"requests": {"bandwidth": "20G"}}}},
        {"name": "n", "exactly": {"deviceClassName": "nic"}}],
        [{"distinctAttribute": "gpu.example.com/gpu", "requests": ["g"]}]),
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", sorted(CLAIMS))
def test_generated_clusters_match_successive_previews(kind: str, seed: int) -> None:
    state = ClusterState()
    state.extend(generated_cluster(seed))
    gates = FeatureGates.default()
    result = check(state, gates, [], [(CLAIMS[kind], "generated")], "default")
    if kind == "capacity":  # the links' pool is seen by every zone-a node
        zone_a = sum(1 for n in state.nodes if n["metadata"]["labels"]["zone"] == "zone-a")
        assert [(p.driver, p.nodes) for p in result.pools] == [("fabric.example.com", zone_a)]


@pytest.mark.parametrize("seed", range(3))
def test_generated_spread_matches_round_robin_previews(seed: int) -> None:
    state = ClusterState()
    state.extend(generated_cluster(seed))
    gates = FeatureGates.default()
    for kind in ("shared-pool", "everything"):
        check(state, gates, [], [(CLAIMS[kind], "generated")], "default", placement=SPREAD)


# --------------------------------------------------------------------------- behaviour


def test_limit_stops_early_and_says_so(demo_state: ClusterState) -> None:
    gates = FeatureGates.default()
    path = DEMO / "claims" / "02-mig-slices.yaml"
    plan = resolve_targets(demo_state, [], [(o, "f") for o in load_documents([str(path)])], "ml-team", gates)
    nodes = candidate_nodes(demo_state)
    full = count_fit(demo_state, plan, gates, nodes)
    capped = count_fit(demo_state, plan, gates, nodes, limit=2)
    assert capped.count == 2 < full.count
    stop_reasons(demo_state, capped, nodes)
    doc = fit_document(capped)
    assert doc["stopped"] == "Limit" and doc["replicas"] == 2
    assert "fits" in {n["reason"] for n in doc["nodes"]}


def test_document_shape(demo_state: ClusterState) -> None:
    gates = FeatureGates.default()
    path = DEMO / "claims" / "04-fabric-bandwidth.yaml"
    plan = resolve_targets(demo_state, [], [(o, "f") for o in load_documents([str(path)])], "ml-team", gates)
    nodes = candidate_nodes(demo_state)
    result = count_fit(demo_state, plan, gates, nodes)
    stop_reasons(demo_state, result, nodes)
    doc = fit_document(result)
    assert list(doc) == ["apiVersion", "kind", "featureGates", "claims", "placement", "limit", "replicas",
                         "stopped", "summary", "lastNode", "reasons", "nodes", "pools", "modelled"]
    assert doc["kind"] == "Fit" and doc["replicas"] == result.count > 0
    assert sum(n["replicas"] for n in doc["nodes"]) == doc["replicas"]
    assert doc["summary"].startswith(f"stops at {result.count}")
    (fabric,) = [p for p in doc["pools"] if p["driver"] == "fabric.example.com"]
    assert fabric["sharedBy"] > 1 and fabric["devices"] == result.count
    assert sum(r["nodes"] for r in doc["reasons"]) == len(doc["nodes"])


def test_results_do_not_depend_on_what_ran_before(demo_state: ClusterState) -> None:
    """A preview after a fit sees the cluster as it is (fit's overlay is its own)."""
    gates = FeatureGates.default()
    path = DEMO / "claims" / "01-single-gpu.yaml"
    objects = [(o, "f") for o in load_documents([str(path)])]
    plan = resolve_targets(demo_state, [], objects, "ml-team", gates)
    before = [(o.node, o.status) for o in run_preview(demo_state, plan, gates, candidate_nodes(demo_state)).nodes]
    first = count_fit(demo_state, plan, gates, candidate_nodes(demo_state))
    after = [(o.node, o.status) for o in run_preview(demo_state, plan, gates, candidate_nodes(demo_state)).nodes]
    second = count_fit(demo_state, plan, gates, candidate_nodes(demo_state))
    assert before == after
    assert first.count == second.count and first.per_node == second.per_node


def test_stored_allocated_claim_as_target_keeps_its_devices(demo_state: ClusterState) -> None:
    """``fit claim/X`` for an allocated X counts new copies of X; X keeps what it holds."""
    gates = FeatureGates.default()
    plan = resolve_targets(demo_state, ["claim/trainer-a-gpu"], [], "ml-team", gates)
    nodes = candidate_nodes(demo_state)
    result = count_fit(demo_state, plan, gates, nodes)
    held = {(r["driver"], r["pool"], r["device"]) for r in next(
        c for c in demo_state.resource_claims if c["metadata"]["name"] == "trainer-a-gpu")["status"]["allocation"]
        ["devices"]["results"]}
    taken = [(r["driver"], r["pool"], r["device"]) for rep in result.replicas for _, _, a in rep.allocations
             for r in a["devices"]["results"]]
    assert len(taken) == result.count > 1 and len(set(taken)) == len(taken) and not held & set(taken)
    # the same count as a fresh copy of the claim from a file
    copy_ = copy.deepcopy(next(c for c in demo_state.resource_claims if c["metadata"]["name"] == "trainer-a-gpu"))
    copy_["metadata"]["name"] = "another"
    from_file = resolve_targets(demo_state, [], [(copy_, "f")], "ml-team", gates)
    assert count_fit(demo_state, from_file, gates, nodes).count == result.count


@pytest.mark.parametrize("target,gates_text", [
    ("pod/trainer-b", ""),
    ("pod/allreduce-0", "DRAWorkloadResourceClaims=true"),
    ("podgroup/allreduce", "DRAWorkloadResourceClaims=true"),
    ("template/gpu-with-nic", ""),
])
def test_pod_and_group_targets_match_successive_previews(demo_state: ClusterState, target: str,
                                                         gates_text: str) -> None:
    from kubectl_dra.cli.common import resolve_gates

    gates = resolve_gates(gates_text or None, None)
    result = check(demo_state, gates, [target], [], "ml-team")
    assert result.count > 0
    if target == "pod/allreduce-0":  # the group's fabric share is allocated once, with the first replica
        fabric = [a for rep in result.replicas for name, _, a in rep.allocations if name.startswith("allreduce-fabric")]
        assert len(fabric) == 1


def test_claim_a_pod_names_is_shared_by_replicas(demo_state: ClusterState) -> None:
    """A pod naming an unallocated claim: the first replica allocates it, the others share it
    (and so must go where its devices can be reached)."""
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "team-fabric", "namespace": "ml-team"},
              "spec": {"devices": {"requests": [{"name": "link", "exactly": {
                  "deviceClassName": "fabric.example.com", "capacity": {"requests": {"bandwidth": "100G"}}}}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": "ml-team"},
           "spec": {"resourceClaims": [{"name": "fabric", "resourceClaimName": "team-fabric"},
                                       {"name": "mig", "resourceClaimTemplateName": "one-mig"}],
                    "containers": [{"name": "c", "image": "x"}]}}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-mig", "namespace": "ml-team"},
                "spec": {"spec": {"devices": {"requests": [{"name": "mig", "exactly": {
                    "deviceClassName": "mig.example.com"}}]}}}}
    state = dataclasses.replace(demo_state, resource_claims=[*demo_state.resource_claims, shared],
                                resource_claim_templates=[*demo_state.resource_claim_templates, template],
                                pods=[*demo_state.pods, pod], warnings=[])
    from kubectl_dra.cli.common import resolve_gates

    result = check(state, resolve_gates("DRADeviceCompatibilityGroups=true", None), ["pod/worker"], [], "ml-team")
    assert result.count > 1
    assert "cannot reach" in result.reasons["gpu-node-3"]  # not in zone-a: the shared link is out of reach
    names = [name for rep in result.replicas for name, _, _ in rep.allocations]
    assert names.count("team-fabric") == 1
