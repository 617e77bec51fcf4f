"""Synthetic cluster states for benchmarks: N nodes with M devices each, some in use,
optionally partitionable (devices consuming a shared counter set)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

DRIVER = "gpu.example.com"
CLASS = "gpu.example.com"
NAMESPACE = "bench"


def node(i: int) -> Obj:
    """A Node with zone and rack labels."""
    name = f"node-{i:05d}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": f"zone-{i % 4}"}}}


def device_class(expression: str | None = None) -> Obj:
    """The benchmark DeviceClass with a CEL selector (driver and an attribute test)."""
    expr = expression or f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "model-a"'
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
            "spec": {"selectors": [{"cel": {"expression": expr}}]}}


def plain_slice(node_name: str, devices: int) -> Obj:
    """One node-local slice with ``devices`` GPUs carrying attributes and capacity."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{d}",
                                  "attributes": {"model": {"string": "model-a" if d % 5 else "model-b"},
                                                 "index": {"int": d}, "numaNode": {"int": d % 2},
                                                 "driverVersion": {"version": "1.2.3"}},
                                  "capacity": {"memory": {"value": "80Gi"}}}
                                 for d in range(devices)]}}


def partitionable_slices(node_name: str, devices: int) -> list[Obj]:
    """Two slices of one pool, as drivers publish partitionable devices: the shared counter
    sets (one per physical GPU, four partitions each) and the partitions consuming them."""
    sets = max(1, (devices + 3) // 4)
    pool = {"name": node_name, "generation": 1, "resourceSliceCount": 2}
    counters = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": f"{node_name}-counters"},
                "spec": {"driver": DRIVER, "nodeName": node_name, "pool": pool,
                         "sharedCounters": [{"name": f"gpu-{s}", "counters": {"memory": {"value": "80Gi"},
                                                                              "slices": {"value": "7"}}}
                                            for s in range(sets)]}}
    parts = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
             "metadata": {"name": f"{node_name}-gpus"},
             "spec": {"driver": DRIVER, "nodeName": node_name, "pool": pool,
                      "devices": [{"name": f"gpu-{d // 4}-part-{d % 4}",
                                   "attributes": {"model": {"string": "model-a"}, "index": {"int": d},
                                                  "numaNode": {"int": (d // 4) % 2}},
                                   "capacity": {"memory": {"value": "20Gi"}},
                                   "consumesCounters": [{"counterSet": f"gpu-{d // 4}",
                                                         "counters": {"memory": {"value": "20Gi"},
                                                                      "slices": {"value": "1"}}}]}
                                  for d in range(devices)]}}
    return [counters, parts]


def allocated_claim(node_name: str, device: str, index: int) -> Obj:
    """A claim already allocated to one device of ``node_name`` (marks it in use)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"used-{node_name}-{index}", "namespace": NAMESPACE, "uid": f"uid-{node_name}-{index}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS}}]}},
            "status": {"allocation": {
                "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node_name, "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}}


def template(name: str = "one-gpu", count: int = 1, selector: str | None = None) -> Obj:
    """A ResourceClaimTemplate with one request (and a request-level CEL selector)."""
    request: Obj = {"deviceClassName": CLASS, "count": count}
    request["selectors"] = [{"cel": {"expression": selector or f'device.attributes["{DRIVER}"].numaNode == 1'}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}}


def cluster(nodes: int, devices: int, in_use: float = 0.5, partitionable: bool = False) -> list[Obj]:
    """Every object of a synthetic cluster: nodes, one class, slices, in-use claims, one template.

    ``in_use`` is the fraction of each node's devices already allocated (one claim per device).
    """
    objs: list[Obj] = [device_class(), template()]
    used = int(devices * in_use)
    for i in range(nodes):
        n = node(i)
        name = n["metadata"]["name"]
        objs.append(n)
        slices = partitionable_slices(name, devices) if partitionable else [plain_slice(name, devices)]
        objs.extend(slices)
        for d in range(used):
            objs.append(allocated_claim(name, slices[-1]["spec"]["devices"][d]["name"], d))
    return objs


def with_allocatable(node_obj: Obj) -> Obj:
    """A Node with the status.allocatable a kubelet reports (64 cpus, 512Gi, 110 pods)."""
    return {**node_obj, "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}


def running_pod(node_name: str, index: int) -> Obj:
    """A bound, running pod without claims: cpu and memory requests, an app label (every
    fourth one with a one-per-node anti-affinity, every tenth one with a host port)."""
    app = f"app-{index % 7}"
    spec: Obj = {"nodeName": node_name, "containers": [{
        "name": "main", "image": "example.com/app:1",
        "resources": {"requests": {"cpu": "2", "memory": "8Gi"}},
        **({"ports": [{"containerPort": 8080, "hostPort": 9000 + index % 3}]} if index % 10 == 0 else {})}]}
    if index % 4 == 0:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"run-{node_name}-{index}", "namespace": NAMESPACE, "labels": {"app": app}},
            "spec": spec, "status": {"phase": "Running"}}


def pending_pod(name: str = "trainer", template_name: str = "one-gpu") -> Obj:
    """A pending pod asking for a claim from ``template_name``, 4 cpus and 16Gi, spread over zones."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "trainer"}},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template_name}],
                     "topologySpreadConstraints": [{"maxSkew": 50, "topologyKey": "topology.kubernetes.io/zone",
                                                    "whenUnsatisfiable": "DoNotSchedule",
                                                    "labelSelector": {"matchLabels": {"app": "trainer"}}}],
                     "containers": [{"name": "main", "image": "example.com/train:1",
                                     "resources": {"requests": {"cpu": "4", "memory": "16Gi"},
                                                   "claims": [{"name": "gpu"}]}}]},
            "status": {"phase": "Pending"}}


def with_pods(objs: list[Obj], pods: int) -> list[Obj]:
    """``objs`` with allocatable on every Node and ``pods`` running pods spread evenly over them."""
    nodes = [o["metadata"]["name"] for o in objs if o.get("kind") == "Node"]
    out = [with_allocatable(o) if o.get("kind") == "Node" else o for o in objs]
    out.extend(running_pod(nodes[i % len(nodes)], i) for i in range(pods))
    return out


def write_json(objs: list[Obj], path: Path) -> Path:
    """A ``kind: List`` JSON dump as ``kubectl get -o json`` writes it."""
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    return path


def write_yaml(objs: list[Obj], path: Path) -> Path:
    """A ``kind: List`` YAML dump as ``kubectl get -o yaml`` writes it (block style, keys sorted,
    list items not indented under their key)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with path.open("w", encoding="utf-8") as out:
        yaml.dump({"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}, out,
                  Dumper=dumper, default_flow_style=False, sort_keys=True)
    return path
