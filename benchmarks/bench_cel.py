"""CEL selector evaluation speed: µs per device-selector evaluation.

Three selectors (E1 capacity compare, E2 attribute equality, E3 semver + second
domain; see the CEL research note) over 10,000 synthetic devices (seed 1, 10% of
them from another driver), against a plain Python predicate over pre-converted
values as a lower bound. Prints compile time, conversion time and µs/eval
(min of 3 runs).
"""

from __future__ import annotations

import gc
import random
import time
from typing import Any, Callable

from kubectl_dra.cel import compile_expression, make_device_input
from kubectl_dra.cel.compiler import _compiled
from kubectl_dra.errors import CELRuntimeError
from kubectl_dra.quantity import Quantity
from kubectl_dra.semver import Version

N_DEVICES = 10_000
REPEATS = 3
GPU = "gpu.example.com"
EXPRESSIONS = {
    "E0": "true",  # fixed per-evaluation overhead of the engine binding
    "E1": f'device.driver == "{GPU}" && '
          f'device.capacity["{GPU}"].memory.compareTo(quantity("16Gi")) >= 0',
    "E2": f'device.attributes["{GPU}"].model == "H100"',
    "E3": f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("535.0.0")) && '
          'device.attributes["numa.example.com"].node == 1',
}


def synthetic_devices(n: int = N_DEVICES, seed: int = 1) -> list[tuple[str, dict[str, Any]]]:
    """(driver, device) pairs shaped like a GPU ResourceSlice device."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        driver = GPU if rng.random() >= 0.1 else "other.example.com"
        out.append((driver, {
            "name": f"dev-{i}",
            "attributes": {
                "model": {"string": rng.choice(["H100", "A100", "L4"])},
                "index": {"int": i % 8},
                "uuid": {"string": f"GPU-{i:08x}"},
                "driverVersion": {"version": rng.choice(["535.104.5", "550.54.15", "470.1.0"])},
                "numa.example.com/node": {"int": rng.randrange(2)},
                "numa.example.com/pcieRoot": {"string": f"pci000{rng.randrange(4)}"},
            },
            "capacity": {"memory": {"value": rng.choice(["16Gi", "40Gi", "80Gi", "8Gi"])},
                         "cores": {"value": str(rng.choice([64, 128]))}},
        }))
    return out


def _plain(driver: str, dev: dict[str, Any]) -> dict[str, Any]:
    """Pre-converted values for the Python predicates."""
    attrs = dev["attributes"]
    return {
        "driver": driver,
        "model": attrs["model"]["string"] if driver == GPU else None,
        "version": Version.parse(attrs["driverVersion"]["version"]) if driver == GPU else None,
        "node": attrs["numa.example.com/node"]["int"],
        "memory": Quantity.parse(dev["capacity"]["memory"]["value"]).value if driver == GPU else None,
    }


_SIXTEEN_GI = Quantity.parse("16Gi").value
_V535 = Version.parse("535.0.0")
PREDICATES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "E0": lambda d: True,
    "E1": lambda d: d["driver"] == GPU and d["memory"] >= _SIXTEEN_GI,
    "E2": lambda d: d["model"] == "H100",
    "E3": lambda d: d["version"] is not None and d["version"] > _V535 and d["node"] == 1,
}


def _best(fn: Callable[[], None]) -> float:
    """Minimum wall time of REPEATS runs."""
    times = []
    for _ in range(REPEATS):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _eval_all(compiled: Any, inputs: list[Any]) -> None:
    for dev in inputs:
        try:  # noqa: SIM105  # try/except costs less than suppress() in this timed loop
            compiled.matches(dev)
        except CELRuntimeError:
            pass


def main() -> None:
    devices = synthetic_devices()
    start = time.perf_counter()
    inputs = [make_device_input(d, dev) for d, dev in devices]
    convert = (time.perf_counter() - start) / len(inputs) * 1e6
    start = time.perf_counter()
    for dev in inputs:
        dev.activation()
    activation = (time.perf_counter() - start) / len(inputs) * 1e6
    plain = [_plain(d, dev) for d, dev in devices]
    print(f"devices: {len(inputs)}; conversion {convert:.1f} µs/device + activation "
          f"{activation:.1f} µs/device (once per device, cached)")
    print(f"{'expr':<5}{'compile ms':>12}{'CEL µs/eval':>14}{'evals/s':>11}{'Python µs/eval':>16}"
          f"{'ratio':>8}{'matches':>9}{'errors':>8}")
    for name, expression in EXPRESSIONS.items():
        _compiled.clear()
        start = time.perf_counter()
        compiled = compile_expression(expression)
        compile_ms = (time.perf_counter() - start) * 1e3
        cel_s = _best(lambda: _eval_all(compiled, inputs))  # noqa: B023  # _best calls it before the loop moves on
        predicate = PREDICATES[name]
        py_s = _best(lambda: [predicate(d) for d in plain])  # noqa: B023  # _best calls it before the loop moves on
        matches = errors = 0
        for dev in inputs:
            try:
                matches += compiled.matches(dev)
            except CELRuntimeError:
                errors += 1
        cel_us, py_us = cel_s / len(inputs) * 1e6, py_s / len(inputs) * 1e6
        print(f"{name:<5}{compile_ms:>12.2f}{cel_us:>14.2f}{1e6 / cel_us:>11.0f}{py_us:>16.2f}"
              f"{cel_us / py_us:>8.1f}{matches:>9}{errors:>8}")


if __name__ == "__main__":
    main()
