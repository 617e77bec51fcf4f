"""The scheduler's other filters for pods (issue 21): their cost on a big cluster.

5,000 nodes x 8 partitionable devices, a quarter in use, with allocatable on every node.
Side by side, on the state without pods and on the same state with 20,000 running pods
(cpu/memory requests, app labels, some anti-affinity and host ports):

* the first ``preview`` after loading: of the 1-GPU template on the pod-less state (the
  figure before pods were modelled) and of ``pod/trainer`` (the template's claim, cpu,
  memory, a zone spread constraint) on the state with pods (NodeInfo index built, every filter);
* ``fit`` to exhaustion: of the template on the pod-less state, and of the pod on the state
  with pods (each replica bound as a pod: the NodeInfo index and the spread counts updated,
  not rebuilt).

Budgets: the pod's first preview within 1.5x the template's pod-less one; the pod's fit within
2x the template's. ``python -m benchmarks.bench_pods [--nodes N] [--pods P]``
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any, Callable

from benchmarks import synthetic


def _state(nodes: int, pods: int) -> Any:
    from kubectl_dra.state import ClusterState

    objs = synthetic.cluster(nodes, 8, in_use=0.25, partitionable=True)
    objs = synthetic.with_pods(objs, pods)
    objs.append(synthetic.pending_pod())
    state = ClusterState()
    state.extend(objs)
    gc.freeze()  # as the CLI does for a loaded state
    return state


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result): on a shared VM the CPU time is the
    steadier figure, so the ratios below are of CPU times."""
    from kubectl_dra.cli.common import cyclic_gc_paused

    start, cpu = time.perf_counter(), time.process_time()
    with cyclic_gc_paused():
        result = fn()
    return time.perf_counter() - start, time.process_time() - cpu, result


def _preview(state: Any, target: str) -> Any:
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview

    gates = FeatureGates.default()
    plan = resolve_targets(state, [target], namespace=synthetic.NAMESPACE, gates=gates)
    return run_preview(state, plan, gates, candidate_nodes(state), timeout=None)  # the whole work, whatever the load


def _fit(state: Any, target: str) -> Any:
    from kubectl_dra.fit import count_fit
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.preview import candidate_nodes, resolve_targets

    gates = FeatureGates.default()
    plan = resolve_targets(state, [target], namespace=synthetic.NAMESPACE, gates=gates)
    return count_fit(state, plan, gates, candidate_nodes(state))


#: the four measurements, each in a fresh process (imports, CEL compiled, index built: a first call)
CASES = {
    "preview-template": ("preview", "template", False),
    "preview-pod": ("preview", "pod", True),
    "fit-template": ("fit", "template", False),
    "fit-pod": ("fit", "pod", True),
}


def one(case: str, nodes: int, pods: int) -> float:
    """One measurement in this process: its seconds (printed for the parent)."""
    from kubectl_dra.cli.main import tune_process

    tune_process()
    action, what, with_pods = CASES[case]
    target = f"template/{synthetic.NAMESPACE}/one-gpu" if what == "template" else f"pod/{synthetic.NAMESPACE}/trainer"
    state = _state(nodes, pods if with_pods else 0)
    wall, cpu, result = _timed(lambda: (_preview if action == "preview" else _fit)(state, target))
    size = len(result.fitting) if action == "preview" else result.count
    print(f"{case} {wall:.3f} {cpu:.3f} {size}")
    return cpu


def run(nodes: int = 5000, pods: int = 20000) -> None:
    import subprocess

    figures: dict[str, tuple[float, float, int]] = {}
    for case in CASES:
        out = subprocess.run([sys.executable, "-m", "benchmarks.bench_pods", "--one", case, "--nodes", str(nodes),
                              "--pods", str(pods)], capture_output=True, text=True, check=True).stdout.split()
        figures[case] = (float(out[-3]), float(out[-2]), int(out[-1]))
    (ptw, pt, pt_n), (ppw, pp, pp_n) = figures["preview-template"], figures["preview-pod"]
    (ftw, ft, ft_n), (fpw, fp, fp_n) = figures["fit-template"], figures["fit-pod"]
    print(f"first preview after loading (fresh process), {nodes} nodes x 8 partitionable devices: the 1-GPU template "
          f"without pods {pt:.2f} s CPU ({ptw:.2f} s wall; {pt_n} nodes fit); pod/trainer with {pods} running pods "
          f"{pp:.2f} s CPU ({ppw:.2f} s wall; {pp_n} fit): {pp / pt:.2f}x (budget 1.5x: "
          f"{'ok' if pp <= 1.5 * pt else 'OVER'})")
    print(f"fit to exhaustion (fresh process): the template without pods {ft:.2f} s CPU ({ftw:.2f} s wall; {ft_n} "
          f"replicas); pod/trainer with {pods} running pods {fp:.2f} s CPU ({fpw:.2f} s wall; {fp_n} replicas, each "
          f"bound as a pod): {fp / ft:.2f}x (budget 2x: {'ok' if fp <= 2 * ft else 'OVER'})")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    nodes = int(args[args.index("--nodes") + 1]) if "--nodes" in args else 5000
    pods = int(args[args.index("--pods") + 1]) if "--pods" in args else 4 * nodes
    if "--one" in args:
        one(args[args.index("--one") + 1], nodes, pods)
        return
    run(nodes, pods)


if __name__ == "__main__":
    main()
