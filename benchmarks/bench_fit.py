"""``kubectl dra fit`` benchmark (issue 12).

5,000 nodes x 8 partitionable devices (shared counters), nothing in use, a claim template
for one device of the class: the full count (40,000 replicas, each allocated and committed
as in use before the next) must take <= 5 s after loading. Reported separately: the reasons
(explain on the final state, every node) that ``fit`` prints next to the count. Run with the
process settings of ``kubectl dra fit`` (its GC thresholds, the loaded state frozen, the
cyclic GC paused for the count and the reasons), so the figures are what a user pays.

``python -m benchmarks.bench_fit [--profile] [--nodes N]``
"""

from __future__ import annotations

import cProfile
import gc
import io
import pstats
import sys
import time
from typing import Any

from benchmarks import synthetic

BUDGET = 5.0  # seconds for the count, after loading
TEMPLATE = "any-gpu"


def one_device_template() -> dict[str, Any]:
    """A ResourceClaimTemplate asking for one device of the benchmark class, no request selector."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": TEMPLATE, "namespace": synthetic.NAMESPACE},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": synthetic.CLASS}}]}}}}


def _setup(nodes: int, devices: int) -> tuple[Any, Any, Any, list[Any]]:
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.preview import candidate_nodes, resolve_targets
    from kubectl_dra.state import ClusterState

    state = ClusterState()
    state.extend(synthetic.cluster(nodes, devices, in_use=0.0, partitionable=True))
    state.extend([one_device_template()])
    # as the CLI does for a loaded state (cli.common.load_cluster): out of the cyclic GC's walks
    gc.freeze()
    gates = FeatureGates.default()
    plan = resolve_targets(state, [f"template/{synthetic.NAMESPACE}/{TEMPLATE}"], gates=gates)
    return state, gates, plan, candidate_nodes(state)


def run(nodes: int = 5000, devices: int = 8, profile: bool = False) -> None:
    from kubectl_dra.fit import count_fit, stop_reasons, summary

    from kubectl_dra.cli.common import cyclic_gc_paused
    from kubectl_dra.cli.main import tune_process

    tune_process()  # the process settings of `kubectl dra fit`, which pauses the cyclic GC as below
    state, gates, plan, candidates = _setup(nodes, devices)
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    wall, cpu = time.perf_counter(), time.process_time()
    with cyclic_gc_paused():
        result = count_fit(state, plan, gates, candidates)
    count_wall, count_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall, cpu = time.perf_counter(), time.process_time()
    with cyclic_gc_paused():
        stop_reasons(state, result, candidates)
    why_wall, why_cpu = time.perf_counter() - wall, time.process_time() - cpu
    if prof is not None:
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(sys.argv[-1] if sys.argv[-1] in ("tottime", "cumulative") else "cumulative").print_stats(30)
        print(out.getvalue())
    expected = nodes * devices
    status = "ok" if count_wall <= BUDGET else "OVER BUDGET"
    print(f"fit {nodes} nodes x {devices} partitionable devices, 1-device claim: {result.count} replicas "
          f"(expected {expected}) in {count_wall:.2f} s wall / {count_cpu:.2f} s CPU "
          f"({count_wall / max(1, result.count) * 1e6:.0f} us/replica); budget {BUDGET:.0f} s: {status}")
    print(f"  reasons on the final state (explain on every node): {why_wall:.2f} s wall / {why_cpu:.2f} s CPU")
    print(f"  {summary(result)[:160]}")
    if result.count != expected:
        raise SystemExit(f"fit counted {result.count}, expected {expected}")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    nodes = 5000
    if "--nodes" in args:
        nodes = int(args[args.index("--nodes") + 1])
    run(nodes=nodes, profile="--profile" in args)


if __name__ == "__main__":
    main()
