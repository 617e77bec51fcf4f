"""Run every ``benchmarks/bench_*.py`` module's ``main()`` (or only those named on the
command line: ``python -m benchmarks.run allocation cel``).

Before and after each benchmark a fixed pure-Python workload is timed (``machine speed``):
the shared VM the figures come from runs the same code up to 50 % slower at some times than
at others, and this line says how fast it was while the figures were taken."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def discover() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def machine_speed() -> float:
    """CPU milliseconds of a fixed workload of dict stores, calls and small objects (best of 3):
    the same on a given machine whatever the project's code does, so figures taken at
    different times can be compared through it."""
    def work() -> None:
        d: dict[int, tuple[int, int]] = {}
        for i in range(300_000):
            d[i & 1023] = (i, len(d))

    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        work()
        best = min(best, time.thread_time() - start)
    return best * 1000


def main(argv: list[str]) -> int:
    names = argv or discover()
    unknown = [n for n in names if n not in discover()]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(discover())}", file=sys.stderr)
        return 2
    for name in names:
        print(f"== {name} (machine speed: reference workload {machine_speed():.1f} ms CPU)", flush=True)
        start = time.perf_counter()
        importlib.import_module(f"benchmarks.bench_{name}").main()
        print(f"== {name} done in {time.perf_counter() - start:.1f}s (machine speed: reference workload "
              f"{machine_speed():.1f} ms CPU)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
