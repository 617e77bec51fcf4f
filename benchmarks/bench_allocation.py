"""Allocation benchmark: whole-cluster previews through the public preview core and the CLI.

(a) 500 nodes x 10 devices, half in use: preview of a template-style claim with a class
    CEL selector on every node; previews/s warm (in process) and cold CLI wall time.
(b) 5,000 nodes x 8 partitionable devices with shared counters: warm preview time, and
    the time to load the state from a JSON dump.

``python -m benchmarks.bench_allocation [--profile] [--scale F]`` (``--profile`` prints the
hottest functions of one warm preview of each case, for the allocator's authors; ``--scale``
multiplies the node counts, e.g. 0.2 for a quick run).
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks import synthetic

REPO = Path(__file__).resolve().parent.parent
TARGET = f"template/{synthetic.NAMESPACE}/one-gpu"


def _gates() -> Any:
    from kubectl_dra.gates import FeatureGates

    return FeatureGates.default()


def _preview_once(state: Any, gates: Any, target: str = TARGET, index: Any = None) -> Any:
    """One whole-cluster preview, as the CLI runs it (targets, allocator, every node, ranking);
    with ``index`` (a ClusterIndex the caller keeps), what was derived from the state is reused."""
    from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview

    plan = resolve_targets(state, [target], namespace=synthetic.NAMESPACE, gates=gates)
    return run_preview(state, plan, gates, candidate_nodes(state), index=index)


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time of ``repeat`` runs, and the last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _timed_cpu(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Best wall time and best CPU time of this thread over ``repeat`` runs, and the last result.

    On a shared machine the CPU time is the steadier figure (other processes stretch the
    wall time, not the work done)."""
    best_wall = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.thread_time()
        result = fn()
        best_cpu = min(best_cpu, time.thread_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - start)
    return best_wall, best_cpu, result


def _profile(label: str, fn: Callable[[], Any]) -> None:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(18)
    print(f"-- profile: {label}\n{out.getvalue()}")


def _cold_cli(path: Path) -> tuple[float, int]:
    """Wall time of ``kubectl-dra preview --state PATH TARGET -o json`` in a fresh process."""
    exe = REPO / ".venv" / "bin" / "kubectl-dra"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubectl_dra"]
    start = time.perf_counter()
    proc = subprocess.run([*cmd, "preview", "--state", str(path), TARGET, "-o", "json"],
                          capture_output=True, text=True, env={**os.environ, "KUBECONFIG": "/dev/null"})
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        print(f"   CLI failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
    return elapsed, proc.returncode


def case_a(tmp: Path, profile: bool, scale: float = 1.0) -> None:
    from kubectl_dra.state import load_state

    nodes, devices = max(1, int(500 * scale)), 10
    path = synthetic.write_json(synthetic.cluster(nodes, devices, in_use=0.5), tmp / "a.json")
    state = _as_the_cli(load_state([str(path)]))
    gates = _gates()
    from kubectl_dra.allocation.index import ClusterIndex

    first, _ = _timed(lambda: _as_the_command(lambda: _preview_once(state, gates)), repeat=1)  # CEL compiled here
    print(f"(a) first preview in the process after loading (index built, CEL compiled; cyclic GC paused, as the "
          f"command runs it): {first * 1000:.0f} ms")
    again, _ = _timed(lambda: _preview_once(state, gates), repeat=3)
    print(f"(a) a preview that builds its own index again (CEL programs already compiled): {again * 1000:.0f} ms")
    index = ClusterIndex(state)
    best, cpu, result = _timed_cpu(lambda: _preview_once(state, gates, index=index), repeat=10)
    fits = len(result.fitting)
    print(f"(a) {nodes} nodes x {devices} devices, half in use: repeated preview of the same claim with the "
          f"caller's index {best * 1000:.0f} ms ({1 / best:.2f} previews/s, {nodes / best:.0f} nodes/s; "
          f"CPU {cpu * 1000:.0f} ms, {1 / cpu:.2f}/s); {fits}/{nodes} nodes fit")
    # a different claim each time: no CEL result of an earlier preview can be reused
    fresh = 8
    for i in range(fresh):
        state.resource_claim_templates.append(synthetic.template(
            f"fresh-{i}", selector=f'device.attributes["{synthetic.DRIVER}"].index >= {i % 4}'))
    start, cpu = time.perf_counter(), time.thread_time()
    for i in range(fresh):
        _preview_once(state, gates, f"template/{synthetic.NAMESPACE}/fresh-{i}", index=index)
    per = (time.perf_counter() - start) / fresh
    per_cpu = (time.thread_time() - cpu) / fresh
    print(f"(a) with the caller's index, a new claim (new request selector) each time: {per * 1000:.0f} ms per preview "
          f"({1 / per:.2f} previews/s; CPU {per_cpu * 1000:.0f} ms, {1 / per_cpu:.2f}/s)")
    cold, code = _cold_cli(path)
    print(f"(a) cold CLI wall time (process start, load {path.stat().st_size / 1e6:.1f} MB JSON, preview, "
          f"print JSON): {cold:.2f} s (exit {code})")
    if profile:
        _profile("case a warm preview", lambda: _preview_once(state, gates))


def case_b(tmp: Path, profile: bool, scale: float = 1.0) -> None:
    from kubectl_dra.state import load_state

    nodes, devices = max(1, int(5000 * scale)), 8
    path = synthetic.write_json(synthetic.cluster(nodes, devices, in_use=0.25, partitionable=True), tmp / "b.json")
    load_time, state = _timed(lambda: load_state([str(path)]), repeat=2)
    state = _as_the_cli(state)
    print(f"(b) state load from JSON dump ({path.stat().st_size / 1e6:.1f} MB, {sum(1 for _ in state)} objects): "
          f"{load_time:.2f} s")
    gates = _gates()
    from kubectl_dra.allocation.index import ClusterIndex

    first, _ = _timed(lambda: _as_the_command(lambda: _preview_once(state, gates)), repeat=1)
    print(f"(b) first preview after loading (index built, CEL compiled; cyclic GC paused, as the command runs it): "
          f"{first:.2f} s")
    index = ClusterIndex(state)
    best, cpu, result = _timed_cpu(lambda: _preview_once(state, gates, index=index), repeat=2)
    print(f"(b) {nodes} nodes x {devices} partitionable devices with counters: repeated preview with the "
          f"caller's index {best:.2f} s ({nodes / best:.0f} nodes/s; CPU {cpu:.2f} s); "
          f"{len(result.fitting)}/{nodes} nodes fit")
    if profile:
        _profile("case b warm preview", lambda: _preview_once(state, gates))


def _as_the_command(run: Callable[[], Any]) -> Any:
    """``run()`` as the preview command runs its computation: with the cyclic GC paused
    (cli.common.cyclic_gc_paused; the repeats below run as a library caller's would, without)."""
    from kubectl_dra.cli.common import cyclic_gc_paused

    with cyclic_gc_paused():
        return run()


def _as_the_cli(state: Any) -> Any:
    """The process settings the CLI makes around a loaded state (cli.main.tune_process, and
    the state frozen out of the cyclic GC by cli.common.load_cluster), so that in-process
    figures are what a CLI user pays."""
    import gc

    gc.freeze()
    return state


def main(argv: list[str] | None = None) -> None:
    """Run both cases and print the figures."""
    from kubectl_dra.cli.main import tune_process

    tune_process()
    args = sys.argv[1:] if argv is None else argv
    profile = "--profile" in args
    scale = float(args[args.index("--scale") + 1]) if "--scale" in args else 1.0
    with tempfile.TemporaryDirectory(prefix="kubectl-dra-bench-") as tmp:
        case_a(Path(tmp), profile, scale)
        case_b(Path(tmp), profile, scale)


if __name__ == "__main__":
    main()
