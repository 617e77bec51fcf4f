"""Property (issue 23 deliverable 2): on generated clusters, for every node and class,
``usage`` FREE equals the number of devices of that class a one-device claim of that class
could still get there (asked of the allocator, one device at a time), and ``fit`` of such a
claim never places more replicas than FREE."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from kubectl_dra.allocation import Allocator
from kubectl_dra.fit import count_fit
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import resolve_targets
from kubectl_dra.state import ClusterState
from kubectl_dra.usage import compute_usage

DRIVER = "d.example.com"
KINDS = ("a", "b")


def _class(kind: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": kind},
            "spec": {"selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].kind == "{kind}"'}}]}}


def _claim(name: str, kind: str, uid: str | None = None) -> dict:
    exactly: dict[str, Any] = {"deviceClassName": kind}
    if uid is not None:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].uid == "{uid}"'}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}}


@st.composite
def device_specs(draw: st.DrawFn) -> dict:
    """One device: its kind, what it consumes of the pool's counter set, its group, a taint,
    whether an allocated claim holds it."""
    return {"kind": draw(st.sampled_from(KINDS)),
            "uses": draw(st.sampled_from([0, 0, 1, 2, 3])),
            "group": draw(st.sampled_from([None, "x", "y"])),
            "taint": draw(st.booleans()) and draw(st.booleans()),
            "held": draw(st.booleans())}


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, FeatureGates]:
    """1-3 nodes, each with 0-2 pools of 1-4 devices, some with a shared counter set in a
    slice of its own, some incomplete; some devices allocated, beyond the counters at times."""
    objs: list[dict] = [_class(k) for k in KINDS]
    serial = 0
    for n in range(draw(st.integers(1, 3))):
        node = f"n{n}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
        for p in range(draw(st.integers(0, 2))):
            pool = f"{node}-p{p}"
            devices = draw(st.lists(device_specs(), min_size=1, max_size=4))
            counters = draw(st.sampled_from([None, 1, 3, 6]))
            missing = draw(st.integers(0, 4)) == 0  # the pool announces a slice that is not there
            count = (2 if counters is not None else 1) + missing
            published = []
            for d in devices:
                serial += 1
                uid = f"dev{serial}"
                dev: dict[str, Any] = {"name": uid, "attributes": {"kind": {"string": d["kind"]}, "uid": {"string": uid}}}
                if counters is not None and d["uses"]:
                    use: dict[str, Any] = {"counterSet": "cs", "counters": {"c": {"value": str(d["uses"])}}}
                    if d["group"]:
                        use["compatibilityGroups"] = [d["group"]]
                    dev["consumesCounters"] = [use]
                if d["taint"]:
                    dev["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
                published.append(dev)
                if d["held"]:
                    objs.append({**_claim(f"holds-{uid}", d["kind"]), "status": {"allocation": {"devices": {"results": [
                        {"request": "r", "driver": DRIVER, "pool": pool, "device": uid}]}}}})
            base = {"driver": DRIVER, "nodeName": node, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}}
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": pool},
                         "spec": {**base, "devices": published}})
            if counters is not None:
                objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                             "metadata": {"name": f"{pool}-counters"},
                             "spec": {**base, "sharedCounters": [{"name": "cs", "counters": {"c": {"value": str(counters)}}}]}})
    gates = FeatureGates.default().with_overrides({
        "DRAPartitionableDevices": draw(st.sampled_from([True, True, False])),
        "DRADeviceTaints": draw(st.booleans()),
        "DRADeviceCompatibilityGroups": draw(st.booleans()),
    })
    state = ClusterState()
    state.extend(objs)
    return state, gates


def _devices_on(state: ClusterState, node: str, kind: str) -> list[str]:
    return [d["name"] for s in state.resource_slices if s["spec"].get("nodeName") == node
            for d in s["spec"].get("devices") or [] if d["attributes"]["kind"]["string"] == kind]


@settings(derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_free_is_what_one_device_claims_can_get(case: tuple[ClusterState, FeatureGates]) -> None:
    state, gates = case
    allocator = Allocator(state, gates)
    total_free = {k: 0 for k in KINDS}
    for node in state.nodes:
        name = node["metadata"]["name"]
        free = {r.device_class: r.tally.free for r in compute_usage(state, by="class", nodes=[name], gates=gates).rows}
        for kind in KINDS:
            # the allocator, asked for each device on its own (a selector naming it)
            gettable = sum(allocator.allocate(node, [_claim("probe", kind, uid)]).allocated
                           for uid in _devices_on(state, name, kind))
            assert free.get(kind, 0) == gettable, (name, kind)
            total_free[kind] += gettable
            fit_state = ClusterState()
            fit_state.extend([*state, _claim("want", kind)])
            placed = count_fit(fit_state, resolve_targets(fit_state, ["want"]), gates, [node]).count
            assert placed <= free.get(kind, 0), (name, kind)
    for kind in KINDS:
        (row,) = [r for r in compute_usage(state, by="class", gates=gates).rows if r.device_class == kind]
        assert row.tally.free == total_free[kind]
