"""The core's admission decision alone: ``review()`` of a 64-device ResourceSlice, in-process.

Every call gets a NEW object, built before the clock starts, whose device names, attribute
values, capacities, slice, node and pool names differ from every other call's, so no memo keyed
by what a body holds can answer from an earlier call. Two variants:

- ``same driver``: one driver domain throughout (attribute and capacity keys repeat, as they
  do for the slices one driver writes);
- ``new driver``: the driver domain, and with it every attribute and capacity key, differs
  per call as well.

Target (issue 9 item 9): <= 1 ms per review() of a 64-device slice with a new body every call.
Run: ``python -m benchmarks.run review`` (or ``python -m benchmarks.bench_review``).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

CALLS = 400
WARMUP = 40


def varied_slice(k: int, new_driver: bool) -> dict[str, Any]:
    """The 64-GPU slice of ``bench_admission.slice_64`` with names and values unique to ``k``."""
    domain = f"gpu{k}.example.com" if new_driver else "gpu.example.com"
    devices = []
    for i in range(64):
        devices.append({
            "name": f"gpu-{k}-{i}",
            "attributes": {
                f"{domain}/model": {"string": f"a100-{k}"},
                f"{domain}/index": {"int": k * 64 + i},
                f"{domain}/driverVersion": {"version": f"550.{k}.{i}"},
                "example.com/pcieRoot": {"string": f"pci-{k}-{i // 8}"},
                f"{domain}/mig": {"bool": bool((k + i) % 2)},
            },
            "capacity": {f"{domain}/memory": {"value": f"{80 + k % 997}Gi"},
                         f"{domain}/sm": {"value": str(108 + k * 64 + i)}},
        })
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{k}-{domain}"},
        "spec": {"driver": domain, "nodeName": f"node-{k}",
                 "pool": {"name": f"node-{k}", "generation": 1, "resourceSliceCount": 1}, "devices": devices},
    }


def measure(new_driver: bool, calls: int = CALLS) -> dict[str, float]:
    """Milliseconds per ``review()`` over ``calls`` distinct bodies (after a warm-up on others)."""
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.validation.admission import review

    gates = FeatureGates.default()
    bodies = [varied_slice(k, new_driver) for k in range(calls + WARMUP)]
    for obj in bodies[:WARMUP]:
        assert review(obj, gates=gates).allowed
    times = []
    for obj in bodies[WARMUP:]:
        start = time.perf_counter()
        decision = review(obj, gates=gates)
        times.append(time.perf_counter() - start)
        assert decision.allowed, decision.status_message()
    times.sort()
    return {"median": statistics.median(times) * 1000, "mean": statistics.fmean(times) * 1000,
            "p90": times[int(len(times) * 0.9)] * 1000}


def main() -> None:
    for label, new_driver in (("same driver", False), ("new driver", True)):
        r = measure(new_driver)
        print(f"review() of a 64-device ResourceSlice, new body every call, {label}: "
              f"median {r['median']:.3f} ms, mean {r['mean']:.3f} ms, p90 {r['p90']:.3f} ms (target <= 1 ms)")


if __name__ == "__main__":
    main()
