"""Target resolution for preview: claims, templates, pods, PodGroups, files, extended resources."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_dra.errors import InputError, NotFoundError, UsageError
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview.targets import (
    EXTENDED_CLAIM_ANNOTATION, extended_requests, parse_target, resolve_targets,
)
from kubectl_dra.state import ClusterState


def Gates(**values: bool) -> FeatureGates:  # noqa: N802 - reads like the gate set it builds
    """The default gate set with ``values`` set on top."""
    return FeatureGates.default().with_overrides(values)


ON = Gates(DRAExtendedResource=True, DRAWorkloadResourceClaims=True)


def claim(name: str, ns: str = "default", allocation: dict | None = None, cls: str = "gpu") -> dict:
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": cls}}]}},
    }
    if allocation is not None:
        obj["status"] = {"allocation": allocation}
    return obj


def template(name: str, ns: str = "default") -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"metadata": {"labels": {"app": "x"}},
                 "spec": {"devices": {"requests": [{"name": "t", "exactly": {"deviceClassName": "gpu"}}]}}},
    }


def pod(name: str, claims: list[dict], ns: str = "default", **spec: Any) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"resourceClaims": claims, "containers": [{"name": "c"}], **spec}}


def node(name: str, labels: dict | None = None, allocatable: dict | None = None) -> dict:
    obj: dict[str, Any] = {"kind": "Node", "metadata": {"name": name, "labels": labels or {}}}
    obj["status"] = {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", **(allocatable or {})}}
    return obj


def state_of(*objs: dict) -> ClusterState:
    state = ClusterState()
    state.extend(objs)
    return state


def names(plan) -> list[tuple[str, str]]:
    return [c.key for c in plan.claims]


@pytest.mark.parametrize("text,expected", [
    ("claim/a", ("ResourceClaim", "ns1", "a")),
    ("a", ("ResourceClaim", "ns1", "a")),
    ("other/a", ("ResourceClaim", "other", "a")),
    ("claim/other/a", ("ResourceClaim", "other", "a")),
    ("resourceclaimtemplate/t", ("ResourceClaimTemplate", "ns1", "t")),
    ("template/t", ("ResourceClaimTemplate", "ns1", "t")),
    ("pod/p", ("Pod", "ns1", "p")),
    ("podgroup/g", ("PodGroup", "ns1", "g")),
])
def test_parse_target(text: str, expected: tuple[str, str, str]) -> None:
    t = parse_target(text, "ns1")
    assert (t.kind, t.namespace, t.name) == expected


@pytest.mark.parametrize("text", ["", "claim/", "a/b/c/d", "slice/x", "bogus/ns/x", "node/n"])
def test_parse_target_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_target(text, "default")


def test_claims_in_order_and_deduplicated() -> None:
    state = state_of(claim("a"), claim("b"))
    plan = resolve_targets(state, ["claim/b", "a", "claim/b"])
    assert names(plan) == [("default", "b"), ("default", "a")]


def test_missing_claim_names_namespace() -> None:
    with pytest.raises(NotFoundError, match="ResourceClaim 'x' not found in namespace 'ns'"):
        resolve_targets(state_of(claim("x")), ["claim/x"], namespace="ns")


def test_nothing_to_preview() -> None:
    with pytest.raises(UsageError):
        resolve_targets(state_of(), [])


def test_template_generates_claim() -> None:
    plan = resolve_targets(state_of(template("t")), ["template/t"])
    (c,) = plan.claims
    assert c.generated and c.name == "t-preview" and c.namespace == "default"
    assert c.claim["spec"]["devices"]["requests"][0]["name"] == "t"
    assert c.claim["metadata"]["labels"] == {"app": "x"}


def test_pod_direct_template_and_status_claims() -> None:
    p = pod("p", [
        {"name": "direct", "resourceClaimName": "shared"},
        {"name": "gen", "resourceClaimTemplateName": "t"},
        {"name": "done", "resourceClaimTemplateName": "t"},
    ])
    p["status"] = {"resourceClaimStatuses": [{"name": "done", "resourceClaimName": "p-done-abcde"}]}
    state = state_of(claim("shared"), template("t"), claim("p-done-abcde"), p)
    plan = resolve_targets(state, ["pod/p"])
    assert names(plan) == [("default", "shared"), ("default", "p-gen-preview"), ("default", "p-done-abcde")]
    assert plan.claims[1].claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gen"
    assert plan.pods and plan.pods[0]["metadata"]["name"] == "p"


def test_pod_group_shared_claim_rule() -> None:
    group = {"kind": "PodGroup", "metadata": {"name": "g", "namespace": "default"},
             "spec": {"resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "t"},
                                         {"name": "other", "resourceClaimName": "c1"}]}}
    p = pod("p", [
        {"name": "shared", "resourceClaimTemplateName": "t"},   # equal in all three fields: the group's
        {"name": "other", "resourceClaimName": "c2"},           # same name, other claim: the pod's own
    ], schedulingGroup={"podGroupName": "g"})
    state = state_of(group, template("t"), claim("c1"), claim("c2"), p)
    plan = resolve_targets(state, ["pod/p"], gates=ON)
    assert names(plan) == [("default", "g-shared-preview"), ("default", "c2")]
    # with the gate off, PodGroup claims are not shared: the template claim is the pod's own
    off = resolve_targets(state, ["pod/p"], gates=Gates(DRAWorkloadResourceClaims=False))
    assert names(off) == [("default", "p-shared-preview"), ("default", "c2")]


def test_pod_group_status_names_generated_claim() -> None:
    group = {"kind": "PodGroup", "metadata": {"name": "g", "namespace": "default"},
             "spec": {"resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "t"}]},
             "status": {"resourceClaimStatuses": [{"name": "shared", "resourceClaimName": "g-shared-xyz"}]}}
    state = state_of(group, template("t"), claim("g-shared-xyz", allocation={"devices": {"results": []}}))
    plan = resolve_targets(state, ["podgroup/g"], gates=ON)
    assert names(plan) == [("default", "g-shared-xyz")]
    assert plan.claims[0].allocation is not None


def test_missing_pod_group_is_reported() -> None:
    p = pod("p", [], schedulingGroup={"podGroupName": "nope"})
    with pytest.raises(NotFoundError, match="PodGroup 'nope'"):
        resolve_targets(state_of(p), ["pod/p"], gates=ON)


def test_allocated_claim_limits_nodes() -> None:
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                        "values": ["n1"]}]}]}
    state = state_of(claim("a", allocation={"devices": {"results": []}, "nodeSelector": selector}), claim("b"))
    plan = resolve_targets(state, ["a", "b"])
    assert plan.blockers(node("n1")) == []
    assert "already allocated" in plan.blockers(node("n2"))[0]
    assert [c.name for c in plan.to_allocate(node("n1"))] == ["b"]


def test_pod_node_filters() -> None:
    state = state_of(claim("a"),
                     pod("p", [{"name": "x", "resourceClaimName": "a"}], nodeSelector={"zone": "z1"}),
                     pod("q", [{"name": "x", "resourceClaimName": "a"}], nodeName="n2"))
    plan = resolve_targets(state, ["pod/p"])
    assert plan.blockers(node("n1", {"zone": "z1"})) == []
    assert plan.blockers(node("n2", {"zone": "z2"})) == ["node(s) didn't match Pod's node affinity/selector"]
    bound = resolve_targets(state, ["pod/q"])
    assert bound.blockers(node("n2")) == []
    assert bound.blockers(node("n1")) == ["node(s) didn't match the requested node name"]


def test_pod_required_node_affinity() -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "Exists"}, {"key": "gen", "operator": "Gt", "values": ["3"]}]}
    ]}}}
    state = state_of(claim("a"), pod("p", [{"name": "x", "resourceClaimName": "a"}], affinity=affinity))
    plan = resolve_targets(state, ["pod/p"])
    assert plan.blockers(node("n1", {"gpu": "", "gen": "4"})) == []
    assert plan.blockers(node("n1", {"gpu": "", "gen": "3"}))
    assert plan.blockers(node("n1", {"gen": "9"}))


def gpu_class(name: str, extended: str | None = None) -> dict:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": "true"}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def test_extended_resource_claim() -> None:
    p = pod("p", [])
    p["spec"]["containers"] = [
        {"name": "a", "resources": {"requests": {"cpu": "1", "example.com/gpu": "2"}}},
        {"name": "b", "resources": {"limits": {"deviceclass.resource.kubernetes.io/nic": "1"}}},
    ]
    state = state_of(gpu_class("gpu", "example.com/gpu"), gpu_class("nic"), p)
    plan = resolve_targets(state, ["pod/p"], gates=ON)
    assert plan.claims == [] and len(plan.extended) == 1
    implicit = plan.claims_for(node("n1"))
    assert len(implicit) == 1
    c = implicit[0].claim
    assert c["metadata"]["annotations"] == {EXTENDED_CLAIM_ANNOTATION: "true"}
    assert c["spec"]["devices"]["requests"] == [
        {"name": "container-0-request-1",
         "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}},
        {"name": "container-1-request-0",
         "exactly": {"deviceClassName": "nic", "allocationMode": "ExactCount", "count": 1}},
    ]
    # a node serving example.com/gpu through a device plugin only needs DRA for the NIC
    partial = plan.claims_for(node("n2", allocatable={"example.com/gpu": "8"}))
    assert [r["name"] for r in partial[0].claim["spec"]["devices"]["requests"]] == ["container-1-request-0"]
    # gate off: no implicit claim; the pod is still previewed (NodeResourcesFit counts example.com/gpu)
    off = resolve_targets(state, ["pod/p"], gates=Gates(DRAExtendedResource=False))
    assert off.claims == [] and off.extended == [] and [p["metadata"]["name"] for p in off.pods] == ["p"]


def test_extended_init_containers_reuse_long_lived_devices() -> None:
    p = pod("p", [])
    p["spec"]["initContainers"] = [
        {"name": "i0", "resources": {"requests": {"example.com/gpu": "3"}}},
        {"name": "i1", "resources": {"requests": {"example.com/gpu": "1"}}},
    ]
    p["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"example.com/gpu": "2"}}}]
    reqs = extended_requests(p, {"example.com/gpu": "gpu"})
    # i0 needs 3, the main container's 2 are reusable: one more; i1 is covered entirely
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [("container-0-request-0", 1),
                                                                   ("container-2-request-0", 2)]


def test_newest_class_wins_extended_name() -> None:
    old = gpu_class("old", "example.com/gpu")
    old["metadata"]["creationTimestamp"] = "2025-01-01T00:00:00Z"
    new = gpu_class("new", "example.com/gpu")
    new["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    p = pod("p", [])
    p["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]
    plan = resolve_targets(state_of(new, old, p), ["pod/p"], gates=ON)
    (c,) = plan.claims_for(node("n"))
    assert c.claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "new"


def test_files_pod_with_its_template_and_group() -> None:
    group = {"kind": "PodGroup", "metadata": {"name": "g"},
             "spec": {"resourceClaims": [{"name": "s", "resourceClaimName": "c"}]}}
    p = pod("p", [{"name": "s", "resourceClaimName": "c"}, {"name": "t", "resourceClaimTemplateName": "t"}],
            schedulingGroup={"podGroupName": "g"})
    del p["metadata"]["namespace"]
    objs = [(template("t", ns=None), "f.yaml"), (claim("c", ns=None), "f.yaml"), (group, "f.yaml"), (p, "f.yaml")]
    for obj, _ in objs:
        obj["metadata"].pop("namespace", None)
    plan = resolve_targets(state_of(), [], objs, namespace="team", gates=ON)
    # the template, claim and group serve the pod: only the pod's two claims are previewed
    assert names(plan) == [("team", "c"), ("team", "p-t-preview")]


def test_file_claim_status_is_dropped_and_kind_checked() -> None:
    c = claim("a", allocation={"devices": {"results": []}})
    plan = resolve_targets(state_of(), [], [(c, "f.yaml")])
    assert plan.claims[0].allocation is None
    with pytest.raises(InputError, match="cannot be previewed"):
        resolve_targets(state_of(), [], [({"kind": "DeviceClass", "metadata": {"name": "x"}}, "f.yaml")])


def test_pod_node_taints_and_cordon() -> None:
    tainted = node("n1")
    tainted["spec"] = {"taints": [{"key": "gpu", "value": "only", "effect": "NoSchedule"},
                                  {"key": "soft", "effect": "PreferNoSchedule"}]}
    cordoned = node("n2")
    cordoned["spec"] = {"unschedulable": True}
    plain = pod("p", [{"name": "x", "resourceClaimName": "a"}])
    tolerant = pod("q", [{"name": "x", "resourceClaimName": "a"}], tolerations=[
        {"key": "gpu", "operator": "Equal", "value": "only", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])
    state = state_of(claim("a"), plain, tolerant)
    plan = resolve_targets(state, ["pod/p"])
    assert plan.blockers(tainted) == ["node(s) had untolerated taint(s)"]
    assert plan.blockers(cordoned) == ["node(s) were unschedulable"]
    ok = resolve_targets(state, ["pod/q"])
    assert ok.blockers(tainted) == [] and ok.blockers(cordoned) == []
    # taints do not matter for claims previewed on their own (no pod to tolerate them)
    assert resolve_targets(state, ["a"]).blockers(tainted) == []


@pytest.mark.parametrize("toleration,matches", [
    ({"operator": "Exists"}, True),
    ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, True),
    ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "k", "value": "v"}, True),
    ({"key": "k", "value": "w"}, False),
    ({"key": "other", "operator": "Exists"}, False),
])
def test_toleration_matches(toleration: dict, matches: bool) -> None:
    from kubectl_dra.preview.nodes import toleration_matches

    assert toleration_matches(toleration, {"key": "k", "value": "v", "effect": "NoSchedule"}) is matches


def test_namespace_name_form_explains_itself_when_nothing_is_found():
    """`foo/bar` is claim bar in namespace foo; when that is missing the message says how it
    was read, because a mistyped kind (`clam/bar`) looks just the same."""
    from kubectl_dra.errors import NotFoundError
    from kubectl_dra.preview.targets import resolve_targets
    from kubectl_dra.state import ClusterState

    with pytest.raises(NotFoundError) as err:
        resolve_targets(ClusterState(), ["clam/bar"], namespace="default")
    assert "ResourceClaim 'bar' not found in namespace 'clam'" in str(err.value)
    assert "read 'clam/bar' as NAMESPACE/NAME" in str(err.value)
