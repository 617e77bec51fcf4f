"""Fleet benchmarks (issue 22): ``pending -A``, ``drain-check`` of a node with 8 pods and a
gang of 16 that the scheduler's pod-by-pod order fails, on 5,000 nodes × 8 GPUs with 20,000
running pods and 2,000 pending pods of 50 distinct specs (benchmarks/fleet_synthetic.py).

Each figure twice: a cold CLI process (start, load the 35 MB JSON dump, answer, print) and,
in one process after loading, the call alone (what a script using the library pays).

``python -m benchmarks.bench_fleet [--nodes N]``
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import fleet_synthetic, synthetic

#: budgets of issue 22 (seconds)
PENDING_BUDGET = 10.0  # including loading
DRAIN_BUDGET = 3.0
GANG_BUDGET = 5.0


def _cli(*args: str) -> tuple[float, float, int, str]:
    """Wall and CPU seconds, exit code and first stdout line of a cold ``kubectl-dra`` process."""
    exe = Path(sys.executable).with_name("kubectl-dra")
    start, before = time.perf_counter(), os.times()
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return time.perf_counter() - start, cpu, proc.returncode, (proc.stdout.splitlines() or [""])[0]


def _timed() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(mark: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - mark[0], time.process_time() - mark[1]


def _verdict(seconds: float, budget: float) -> str:
    return f"budget {budget:g} s: {'ok' if seconds <= budget else 'OVER BUDGET'}"


def run(nodes: int = 5000) -> None:
    from kubectl_dra.cli.common import cyclic_gc_paused
    from kubectl_dra.cli.main import tune_process
    from kubectl_dra.fleet.drain import drain_check
    from kubectl_dra.fleet.evaluate import PodEvaluator
    from kubectl_dra.fleet.gang import place_gang
    from kubectl_dra.fleet.pending import pending_report
    from kubectl_dra.fleet.placement import Placer
    from kubectl_dra.fleet.pods import queue_order
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.preview import candidate_nodes
    from kubectl_dra.state import load_state

    with tempfile.TemporaryDirectory() as tmp:
        path = synthetic.write_json(fleet_synthetic.fleet(nodes=nodes, running=4 * nodes), Path(tmp) / "fleet.json")
        size = path.stat().st_size / 1e6
        drained = "node-00000"
        group = f"podgroup/{fleet_synthetic.NS}/{fleet_synthetic.GANG}"
        print(f"fleet: {nodes} nodes x 8 GPUs, {4 * nodes} running pods, 2000 pending pods of 50 specs, "
              f"a gang of 16; {size:.1f} MB JSON")

        for label, args in (("pending -A", ("pending", "-A")),
                            (f"drain-check {drained} (8 pods)", ("drain-check", drained)),
                            (f"preview {group}", ("preview", group))):
            wall, cpu, code, head = _cli(*args, "--state", str(path))
            print(f"  cold CLI `{label}` (process start, loading, answer): {wall:.2f} s wall / {cpu:.2f} s CPU; "
                  f"exit {code}")
            print(f"    {head[:150]}")

        tune_process()
        mark = _timed()
        with cyclic_gc_paused():
            state = load_state([str(path)])
            gc.freeze()
        load, load_cpu = _since(mark)
        gates = FeatureGates.default()
        print(f"  in one process: load {load:.2f} s wall / {load_cpu:.2f} s CPU")
        with cyclic_gc_paused():
            mark = _timed()
            evaluator = PodEvaluator(state, gates, candidate_nodes(state), timeout=None)
            report = pending_report(state, evaluator, None)
            took, cpu = _since(mark)
        print(f"    pending -A: {took:.2f} s wall / {cpu:.2f} s CPU after loading ({report.specs} distinct specs, "
              f"{len(report.pods)} pods, {len(report.gangs)} gang); with loading {took + load:.2f} s: "
              f"{_verdict(took + load, PENDING_BUDGET)}")
        with cyclic_gc_paused():
            mark = _timed()
            drain = drain_check(state, gates, [drained], timeout=None)
            took, cpu = _since(mark)
        print(f"    drain-check {drained}: {took:.2f} s wall / {cpu:.2f} s CPU after loading ({len(drain.moves)} pods, "
              f"{'all move' if drain.ok else 'some stuck'}; includes indexing the snapshot): "
              f"{_verdict(took, DRAIN_BUDGET)}")
        with cyclic_gc_paused():
            mark = _timed()
            nodes_ = candidate_nodes(state)
            placer = Placer(PodEvaluator(state, gates, nodes_, timeout=None), nodes_)
            pods = queue_order(p for p in state.pods if (p.get("spec") or {}).get("schedulingGroup"))
            gang = place_gang(placer, pods, group, 10.0)
            took, cpu = _since(mark)
        print(f"    gang of {len(pods)}: {took:.2f} s wall / {cpu:.2f} s CPU after loading ({gang.status}, "
              f"{gang.steps} joint tries; includes indexing the snapshot): {_verdict(took, GANG_BUDGET)}")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    nodes = int(args[args.index("--nodes") + 1]) if "--nodes" in args else 5000
    run(nodes=nodes)


if __name__ == "__main__":
    main()
