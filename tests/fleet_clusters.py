"""Small generated clusters for the fleet tests: nodes with a few GPUs in two zones, some in
use by running pods, pending pods of a few specs (seeded, deterministic)."""

from __future__ import annotations

import random
from typing import Any

Obj = dict[str, Any]
DRIVER = "gpu.example.com"
NS = "team"


def node(name: str, zone: str, taint: bool = False, cpu: str = "8") -> Obj:
    obj: Obj = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
                "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}}}
    if taint:
        obj["spec"] = {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}
    return obj


def gpu_slice(node_name: str, devices: int, model: str = "a") -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{d}", "attributes": {"model": {"string": model}, "index": {"int": d}}}
                                 for d in range(devices)]}}


def gpu_class(name: str = "gpu") -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def claim(name: str, count: int = 1, model: str | None = None, cls: str = "gpu") -> Obj:
    request: Obj = {"deviceClassName": cls, "count": count}
    if model:
        request["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2026-12-01T00:00:00Z"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}


def allocate(obj: Obj, node_name: str, devices: list[str], pod: str | None) -> Obj:
    obj["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node_name, "device": d} for d in devices]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
        "reservedFor": [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}] if pod else []}
    return obj


def pod(name: str, claim_name: str | None, node_name: str | None = None, zone: str | None = None,
        priority: int = 0, created: str = "2026-12-01T00:00:00Z", template: str = "one-gpu",
        group: str | None = None, cpu: str | None = None) -> Obj:
    resources: Obj = {"claims": [{"name": "gpu"}]}
    if cpu:
        resources["requests"] = {"cpu": cpu}
    spec: Obj = {"containers": [{"name": "main", "image": "x", "resources": resources}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}]}
    if node_name:
        spec["nodeName"] = node_name
    if zone:
        spec["nodeSelector"] = {"zone": zone}
    if priority:
        spec["priority"] = priority
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    status: Obj = {"phase": "Running" if node_name else "Pending"}
    if claim_name:
        status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim_name}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": created},
            "spec": spec, "status": status}


def template(name: str = "one-gpu", count: int = 1) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "count": count}}]}}}}


def generated(seed: int) -> list[Obj]:
    """A random small fleet: 3–8 nodes, running pods holding some GPUs, pending pods of 1–4 specs."""
    rng = random.Random(seed)
    objs: list[Obj] = [gpu_class(), template()]
    nodes = rng.randint(3, 8)
    for i in range(nodes):
        name = f"node-{i}"
        devices = rng.choice([0, 2, 4])
        objs.append(node(name, f"z{i % 2}", taint=rng.random() < 0.15, cpu=rng.choice(["4", "8"])))
        if devices:
            objs.append(gpu_slice(name, devices, model=rng.choice("ab")))
        for d in range(devices):
            if rng.random() < 0.4:
                pod_name = f"run-{i}-{d}"
                objs.append(allocate(claim(f"{pod_name}-gpu"), name, [f"gpu-{d}"], pod_name))
                objs.append(pod(pod_name, f"{pod_name}-gpu", name, cpu=rng.choice([None, "2"])))
    specs = [(rng.choice([1, 2, 3]), rng.choice([None, "a", "b"]), rng.choice([None, "z0", "z1"]),
              rng.choice([None, None, "3"])) for _ in range(rng.randint(1, 4))]
    for p in range(rng.randint(1, 6)):
        count, model, zone, cpu = specs[p % len(specs)]
        name = f"job{p % len(specs)}-{p}"
        objs.append(claim(f"{name}-gpu", count, model))
        objs.append(pod(name, f"{name}-gpu", zone=zone, priority=rng.choice([0, 0, 10]),
                        created=f"2026-12-01T00:00:{p:02d}Z", cpu=cpu))
    return objs
