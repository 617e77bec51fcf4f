"""Run every ``benchmarks/bench_*.py`` module's ``main()`` (or only those named on the
command line: ``python -m benchmarks.run allocation cel``)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def discover() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def main(argv: list[str]) -> int:
    names = argv or discover()
    unknown = [n for n in names if n not in discover()]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(discover())}", file=sys.stderr)
        return 2
    for name in names:
        print(f"== {name}", flush=True)
        start = time.perf_counter()
        importlib.import_module(f"benchmarks.bench_{name}").main()
        print(f"== {name} done in {time.perf_counter() - start:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
