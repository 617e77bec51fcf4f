"""A synthetic fleet for the fleet benchmarks (issue 22): nodes with plain GPUs, running pods
holding half of them through their own claims, and pending pods (replicas of a few distinct
specs) whose claims the controller has created. Seeded, deterministic."""

from __future__ import annotations

from typing import Any

from benchmarks import synthetic

Obj = dict[str, Any]
NS = synthetic.NAMESPACE
CREATED = "2026-12-01T00:00:00Z"


def _claim(name: str, count: int, selector: str | None, node: str | None = None, devices: list[str] | None = None,
           pod: tuple[str, str] | None = None) -> Obj:
    request: Obj = {"deviceClassName": synthetic.CLASS, "count": count}
    if selector:
        request["selectors"] = [{"cel": {"expression": selector}}]
    claim: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                  "metadata": {"name": name, "namespace": NS, "creationTimestamp": CREATED},
                  "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}
    if node is not None and devices:
        claim["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": synthetic.DRIVER, "pool": node, "device": d}
                                    for d in devices]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": pod[0], "uid": pod[1]}] if pod else []}
    return claim


def _pod(name: str, claim: str, node: str | None, spec_extra: Obj | None = None, priority: int = 0,
         created: str = CREATED) -> Obj:
    spec: Obj = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
                 "containers": [{"name": "main", "image": "example.com/job:1",
                                 "resources": {"claims": [{"name": "gpu"}]}}]}
    if node:
        spec["nodeName"] = node
    if priority:
        spec["priority"] = priority
    spec.update(spec_extra or {})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": created,
                         "labels": {"app": name.rsplit("-", 1)[0]}},
            "spec": spec,
            "status": {"phase": "Running" if node else "Pending",
                       "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim}]}}


#: the distinct pending specs: (devices, request selector, node selector)
def pending_specs(count: int) -> list[tuple[int, str | None, Obj | None]]:
    specs = []
    for i in range(count):
        devices = (1, 2, 4, 8)[i % 4]
        selector = None if i % 3 == 0 else f'device.attributes["{synthetic.DRIVER}"].index >= {i % 5}'
        zone = {"nodeSelector": {"topology.kubernetes.io/zone": f"zone-{i % 4}"}} if i % 2 else None
        specs.append((devices, selector, zone))
    return specs


def fleet(nodes: int = 5000, devices: int = 8, running: int = 20000, pending: int = 2000,
          specs: int = 50, full: int = 10, empty: int = 15, gang: int = 16) -> list[Obj]:
    """Nodes × devices; ``running`` pods each holding one device, spread evenly over the nodes
    (the first ``full`` nodes hold one pod per device, the last ``empty`` nodes none);
    ``pending`` pods, replicas of ``specs`` distinct specs; and a PodGroup of ``gang`` pending
    pods that each want a whole node (``devices`` GPUs), one more than there are empty nodes."""
    objs: list[Obj] = [synthetic.device_class("true")]
    middle = max(1, nodes - full - empty)
    per_node = max(1, (running - full * devices) // middle)
    for i in range(nodes):
        n = {**synthetic.node(i), "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}
        name = n["metadata"]["name"]
        objs.append(n)
        objs.append(synthetic.plain_slice(name, devices))
        used = devices if i < full else 0 if i >= nodes - empty else min(per_node, devices)
        for d in range(used):
            pod = f"run-{i:05d}-{d}"
            claim = f"{pod}-gpu"
            objs.append(_claim(claim, 1, None, name, [f"gpu-{d}"], (pod, f"uid-{pod}")))
            objs.append(_pod(pod, claim, name, priority=d % 3, created=f"2026-12-01T00:{d:02d}:00Z"))
    shapes = pending_specs(specs)
    for p in range(pending):
        devices_wanted, selector, extra = shapes[p % specs]
        pod = f"job{p % specs:02d}-{p // specs:04d}"
        claim = f"{pod}-gpu"
        objs.append(_claim(claim, devices_wanted, selector))
        objs.append(_pod(pod, claim, None, extra, priority=(p % specs) % 3))
    objs.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                 "metadata": {"name": GANG, "namespace": NS}, "spec": {}})
    for g in range(gang):
        pod = f"{GANG}-{g:02d}"
        claim = f"{pod}-gpu"
        objs.append(_claim(claim, devices, None))
        objs.append(_pod(pod, claim, None, {"schedulingGroup": {"podGroupName": GANG}}))
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": "gpu-template", "namespace": NS},
                 "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                     "deviceClassName": synthetic.CLASS}}]}}}})
    return objs


#: the PodGroup of the gang benchmark
GANG = "gang"
