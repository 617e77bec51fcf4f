"""fit of a target whose replicas take no device says it is not limited by devices (issue 23),
instead of stopping at one replica per node."""

from __future__ import annotations

from kubectl_dra.fit import RANKED, SPREAD, FitResult, count_fit, fit_document, stop_reasons, summary
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets
from kubectl_dra.state import ClusterState

GPU = "gpu.example.com"


def _state(*extra: dict) -> ClusterState:
    """Two nodes; n1 has two GPUs, n2 one; a claim ``shared`` holds n1's gpu-0."""
    objs = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}},
        *({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node},
           "status": {"allocatable": {"pods": "3", "cpu": "4", "memory": "8Gi"}}} for node in ("n1", "n2")),
        *({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node},
           "spec": {"driver": GPU, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{i}"} for i in range(count)]}} for node, count in (("n1", 2), ("n2", 1))),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
         "status": {"allocation": {
             "devices": {"results": [{"request": "r", "driver": GPU, "pool": "n1", "device": "gpu-0"}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}},
        *extra,
    ]
    state = ClusterState()
    state.extend(objs)
    return state


def _count(state: ClusterState, target: str, limit: int | None = None, placement: str = RANKED) -> FitResult:
    plan = resolve_targets(state, [target])
    nodes = candidate_nodes(state)
    result = count_fit(state, plan, FeatureGates.default(), nodes, limit=limit, placement=placement)
    stop_reasons(state, result, nodes)
    return result


def test_a_request_for_no_device_is_not_limited_by_devices() -> None:
    """A stored claim asking for count 0 (never defaulted): every replica takes nothing."""
    zero = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "zero", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 0}}]}}}
    result = _count(_state(zero), "zero")
    assert result.unlimited and result.stopped == "NotLimitedByDevices"
    text = summary(result)
    assert text.startswith("not limited by devices") and "stops at" not in text
    doc = fit_document(result)
    assert doc["replicas"] is None and doc["stopped"] == "NotLimitedByDevices"
    assert [n["replicas"] for n in doc["nodes"]] == [None, None]


def test_a_pod_sharing_an_allocated_claim_is_not_limited_by_devices() -> None:
    """Replicas of a pod that only names an allocated claim share it: none takes a device.
    They can go only where the claim's devices are (n1), as many as the node takes pods (3):
    the count is the scheduler's other filters', and the summary says devices do not bound it."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}}
    result = _count(_state(pod), "pod/p")
    assert (result.count, result.per_node) == (3, {"n1": 3, "n2": 0})
    assert result.takes_nothing_on == "n1" and not result.unlimited
    assert "Too many pods" in result.reasons["n1"] and result.reasons["n2"] != "fits"
    assert "not limited by devices" in summary(result)


def test_with_a_limit_the_limit_fits() -> None:
    zero = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "zero", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 0}}]}}}
    result = _count(_state(zero), "zero", limit=5)
    assert (result.count, result.stopped) == (5, "Limit")
    assert fit_document(result)["replicas"] == 5
    spread = _count(_state(zero), "zero", limit=5, placement=SPREAD)
    assert spread.per_node == {"n1": 3, "n2": 2}  # the nodes take turns


def test_a_claim_that_takes_devices_still_stops() -> None:
    """The usual case is untouched: one GPU claim fits as often as there are free GPUs (2)."""
    want = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "want", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}
    result = _count(_state(want), "want")
    assert (result.count, result.stopped) == (2, "NoNodeFits")
    assert summary(result).startswith("stops at 2")
