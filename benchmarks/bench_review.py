"""The core's admission decision alone: ``review()`` of a 64-device ResourceSlice, in-process.

Every call gets a NEW object, built before the clock starts, whose slice, node, pool and
device names, attribute values and capacities differ from every other call's, so no memo keyed
by what a body holds can answer from an earlier call. Two variants:

- ``per call``: within one body the 64 devices are identical GPUs, as a driver writes them
  (same model, memory and SM count; unique names, indexes and PCIe roots), and the driver
  domain (so the attribute and capacity keys) is the same for every call;
- ``all distinct``: every device of every body has its own capacities, and every call its own
  driver domain, so that every attribute key, capacity key and quantity text is new.

Wall time and the thread's CPU time are both reported: on a shared machine the CPU figure is
the steadier one. Target (issue 9 item 9): <= 1 ms per review() of a 64-device slice with a new body every call.
Run: ``python -m benchmarks.run review`` (or ``python -m benchmarks.bench_review``).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

CALLS = 400
WARMUP = 40


def varied_slice(k: int, distinct: bool) -> dict[str, Any]:
    """The 64-GPU slice of ``bench_admission.slice_64`` with names and values unique to ``k``
    (with ``distinct``: a driver domain of its own and capacities unique to each device)."""
    domain = f"gpu{k}.example.com" if distinct else "gpu.example.com"
    devices = []
    for i in range(64):
        devices.append({
            "name": f"gpu-{k}-{i}",
            "attributes": {
                f"{domain}/model": {"string": f"a100-{k}"},
                f"{domain}/index": {"int": k * 64 + i},
                f"{domain}/driverVersion": {"version": f"550.{k}.{i if distinct else 15}"},
                "example.com/pcieRoot": {"string": f"pci-{k}-{i // 8}"},
                f"{domain}/mig": {"bool": bool((k + i) % 2)},
            },
            "capacity": {f"{domain}/memory": {"value": f"{80 + k % 997}Gi"},
                         f"{domain}/sm": {"value": str(108 + k * 64 + i if distinct else 108 + k)}},
        })
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{k}-{domain}"},
        "spec": {"driver": domain, "nodeName": f"node-{k}",
                 "pool": {"name": f"node-{k}", "generation": 1, "resourceSliceCount": 1}, "devices": devices},
    }


def measure(distinct: bool, calls: int = CALLS) -> dict[str, float]:
    """Milliseconds per ``review()`` over ``calls`` distinct bodies (after a warm-up on others)."""
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.validation.admission import review

    gates = FeatureGates.default()
    bodies = [varied_slice(k, distinct) for k in range(calls + WARMUP)]
    for obj in bodies[:WARMUP]:
        assert review(obj, gates=gates).allowed
    times, cpu = [], []
    for obj in bodies[WARMUP:]:
        start, start_cpu = time.perf_counter(), time.thread_time()
        decision = review(obj, gates=gates)
        cpu.append(time.thread_time() - start_cpu)
        times.append(time.perf_counter() - start)
        assert decision.allowed, decision.status_message()
    times.sort()
    return {"median": statistics.median(times) * 1000, "p90": times[int(len(times) * 0.9)] * 1000,
            "cpu_median": statistics.median(cpu) * 1000}


def main() -> None:
    for label, distinct in (("per call", False), ("all distinct", True)):
        r = measure(distinct)
        print(f"review() of a 64-device ResourceSlice, new body every call, {label}: "
              f"wall median {r['median']:.3f} ms (p90 {r['p90']:.3f} ms), CPU median {r['cpu_median']:.3f} ms "
              "(target <= 1 ms)")


if __name__ == "__main__":
    main()
