"""The worst-case searches of ``../shared/conformance/slow/``, beside upstream's figures.

Each scenario makes upstream's allocator search exhaustively (up to 9.2 M ``allocateOne``
calls) before it answers "unschedulable"; the scenario records upstream's call count and
time on a 2-core machine of this kind. Per scenario, in this process (the corpus loaded
first; imports and loading excluded):

- ``answer`` and ``time``: one ``Allocator`` and its first ``allocate`` call with the default
  10 s deadline of ``--timeout`` (what a user of ``preview`` gets), wall and CPU time;
- ``steps``: the search steps that took (upstream counts its allocateOne calls the same way),
  and steps/s;
- ``raw steps/s``: the rate of the search step itself, without the pruning that cuts these
  searches short (``ESCALATE_AFTER`` set out of reach), over 2 s of CPU: the cost of one step
  beside Go's (upstream's calls divided by its time).

``python -m benchmarks.bench_slow`` (or ``make bench``)
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: the default of ``preview --timeout`` (the scheduler's filter timeout)
DEFAULT_TIMEOUT = 10.0
RAW_SECONDS = 2.0


def slow_dir() -> Path:
    base = Path(os.environ.get("KUBECTL_DRA_CONFORMANCE") or REPO.parent / "shared" / "conformance")
    return base / "slow"


def _run(sc: Any, seconds: float) -> tuple[str, int, float, float]:
    """(answer, steps, wall s, CPU s) of one fresh Allocator's first allocate call."""
    from kubectl_dra.allocation import Allocator
    from kubectl_dra.errors import AllocationError, AllocationTimeout
    from kubectl_dra.gates import FeatureGates

    allocator = Allocator(sc.state, FeatureGates.only(sc.features))
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        outcome = allocator.allocate(sc.node, sc.claims, deadline=time.monotonic() + seconds)
        answer = "allocated" if outcome.allocated else "unschedulable"
        steps = allocator.last_search_steps
    except AllocationTimeout as exc:
        answer, steps = "timed out", int(str(exc).split("after ")[-1].split()[0])
    except AllocationError:
        answer, steps = "error", allocator.last_search_steps
    return answer, steps, time.perf_counter() - wall, time.thread_time() - cpu


def main() -> None:
    import sys

    sys.path.insert(0, str(REPO))
    from kubectl_dra.allocation import search
    from tests.conformance_compare import load_scenario

    paths = sorted(slow_dir().glob("slow-*.yaml"))
    if not paths:
        print(f"no slow scenarios under {slow_dir()} (set KUBECTL_DRA_CONFORMANCE)")
        return
    print(f"{'scenario':10} {'expected':>13} {'answer':>13} {'wall s':>8} {'CPU s':>7} {'steps':>8} "
          f"{'steps/s':>9} | {'upstream s':>10} {'calls':>9} {'Go calls/s':>10} | {'raw steps/s':>11}")
    for path in paths:
        sc = load_scenario(path)
        up = sc.raw.get("upstream") or {}
        expected = "unschedulable" if sc.expect.get("unschedulable") else "error" if "error" in sc.expect else "allocated"
        answer, steps, wall, cpu = _run(sc, DEFAULT_TIMEOUT)
        saved = search.ESCALATE_AFTER
        search.ESCALATE_AFTER = float("inf")  # type: ignore[assignment]  # the step without the pruning
        try:
            _, raw_steps, _, raw_cpu = _run(load_scenario(path), RAW_SECONDS)
        finally:
            search.ESCALATE_AFTER = saved
        go_rate = up.get("allocateOneCalls", 0) / up["seconds"] if up.get("seconds") else 0.0
        print(f"{sc.name:10} {expected:>13} {answer:>13} {wall:8.2f} {cpu:7.2f} {steps:8d} "
              f"{steps / max(cpu, 1e-9):9.0f} | {up.get('seconds', 0):10.1f} {up.get('allocateOneCalls', 0):9d} "
              f"{go_rate:10.0f} | {raw_steps / max(raw_cpu, 1e-9):11.0f}", flush=True)


if __name__ == "__main__":
    main()
