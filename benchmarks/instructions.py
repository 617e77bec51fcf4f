"""Instruction counts of the allocator's hot paths, with callgrind: the same figure on a busy
or an idle machine, where CPU times on the shared VM move by up to 2x within minutes.

Each case runs the measured call in a child process under ``valgrind --tool=callgrind``,
counting only inside ``exec()`` (the child imports everything and compiles its CEL first, on
a small state; the imports, which importlib runs with ``exec()`` too, are the same at both
sizes), with ``PYTHONHASHSEED=0`` and the cyclic GC off. Two sizes are counted and
the difference is divided by the difference in work, so process start, imports and set-up
cancel out:

- ``repeat``: repeated previews (500 x 10 shape, 200 nodes) with the caller's ClusterIndex:
  3 minus 1 previews, per node -- what one more node costs a repeat;
- ``first``: a process's first preview of 5,000 x 8 partitionable shape: 750 minus 250 nodes,
  per node (the index and every device view are built inside);
- ``review``: admission ``review()`` of a 64-device ResourceSlice, a new body every call:
  5 minus 1 calls, per call;
- ``webhook-floor``, ``webhook-claim``, ``webhook-new-spec``: the webhook's whole answer to one
  AdmissionReview body (``AdmissionService.admission``, at ``--log-level info`` with the served
  repeat filter), as ``benchmarks.bench_admission`` sends them: a ConfigMap (the no-op floor), a
  claim made from a template the worker has seen (a new name, the same spec), a claim of a spec
  it has not seen: 13 minus 3 calls, per call.

The previews run without the scheduler's filter timeout: under callgrind (~50x slower) a
10-second budget would end nodes early and count less work.

``make bench-instructions`` (or ``python -m benchmarks.instructions [repeat|first|review]``);
needs valgrind (skipped with a message when it is not installed). Not part of ``make bench``:
each case takes a minute or two.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import synthetic

REPO = Path(__file__).resolve().parent.parent
TARGET = f"template/{synthetic.NAMESPACE}/one-gpu"

#: case -> (small size, large size, unit of work)
CASES: dict[str, tuple[int, int, str]] = {
    "repeat": (1, 3, "node"),
    "first": (250, 750, "node"),
    "review": (1, 5, "call"),
    "webhook-floor": (3, 13, "call"),
    "webhook-claim": (3, 13, "call"),
    "webhook-new-spec": (3, 13, "call"),
}
REPEAT_NODES = 200


def _preview(state: Any, gates: Any, index: Any = None) -> Any:
    """One whole-cluster preview of the benchmark's template claim, as the CLI runs it, but
    without the filter timeout (see the module docstring); every node must fit."""
    from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview

    plan = resolve_targets(state, [TARGET], namespace=synthetic.NAMESPACE, gates=gates)
    result = run_preview(state, plan, gates, candidate_nodes(state), index=index, timeout=None)
    assert len(result.fitting) == len(result.nodes), "every node of the synthetic cluster fits"
    return result


def _load(objs: list[dict[str, Any]], tmp: Path, name: str) -> Any:
    from kubectl_dra.state import load_state

    return load_state([str(synthetic.write_json(objs, tmp / name))])


def child(case: str, size: int) -> None:
    """Set up ``case`` at ``size``, then run the measured part inside ``exec`` (the only code
    callgrind counts)."""
    from kubectl_dra.gates import FeatureGates

    gates = FeatureGates.default()
    with tempfile.TemporaryDirectory(prefix="kubectl-dra-instr-") as name:
        tmp = Path(name)
        scope: dict[str, Any] = {"gates": gates, "preview": _preview}
        if case == "repeat":
            from kubectl_dra.allocation.index import ClusterIndex

            state = _load(synthetic.cluster(REPEAT_NODES, 10, in_use=0.5), tmp, "a.json")
            index = ClusterIndex(state)
            _preview(state, gates, index)
            _preview(state, gates, index)
            scope.update(state=state, index=index, loops=size)
            code = "for _ in range(loops): preview(state, gates, index)"
        elif case == "first":
            _preview(_load(synthetic.cluster(10, 8, in_use=0.25, partitionable=True), tmp, "small.json"), gates)
            scope["state"] = _load(synthetic.cluster(size, 8, in_use=0.25, partitionable=True), tmp, "b.json")
            code = "preview(state, gates)"
        elif case.startswith("webhook-"):
            scope.update(service=_webhook_service(), bodies=_webhook_bodies(case, size))
            code = "for body in bodies: service.admission('validate', body)"
        else:
            from benchmarks.bench_review import varied_slice
            from kubectl_dra.validation.admission import review

            for k in range(5):
                assert review(varied_slice(1000 + k, False), gates=gates).allowed
            scope.update(review=review, bodies=[varied_slice(k, False) for k in range(size)])
            code = "for body in bodies: review(body, gates=gates)"
        gc.freeze()
        gc.disable()
        exec(code, scope)


def _webhook_service() -> Any:
    """An admission service as ``dra-webhook serve`` builds it (info logs into a buffer, the
    served repeat filter), warmed with 300 specs and a ConfigMap like a worker under load."""
    import io

    from benchmarks.bench_admission import FLOOR, review_body, typical_claim
    from webhook.serve import _configure_logging
    from webhook.service import AdmissionService, Settings, warm_up
    from kubectl_dra.gates import FeatureGates

    gates = FeatureGates.default()
    warm_up(gates)
    real_stderr, sys.stderr = sys.stderr, io.StringIO()  # the log handler made now writes to this buffer
    try:
        service = AdmissionService(Settings(gates=gates), log_repeats=_configure_logging("info"))
    finally:
        sys.stderr = real_stderr
    for i in range(300):
        service.admission("validate", review_body(typical_claim(f"-warm-{i}")))
    service.admission("validate", review_body(typical_claim(name="warm")))
    for _ in range(60):
        service.admission("validate", review_body(FLOOR))
    return service


def _webhook_bodies(case: str, size: int) -> list[bytes]:
    """``size`` bodies of ``case``: the ConfigMap, claims of the warm spec, claims of new specs."""
    from benchmarks.bench_admission import FLOOR, review_body, typical_claim

    if case == "webhook-floor":
        return [review_body(FLOOR)] * size
    if case == "webhook-claim":
        return [review_body(typical_claim(name=f"trainer-{i}-gpus")) for i in range(size)]
    return [review_body(typical_claim(f"-{i}")) for i in range(size)]


def _count(case: str, size: int, out: Path) -> int:
    """Instructions callgrind counted inside exec() for one child run."""
    # (the child runs as a script: ``python -m`` would run the whole module inside an exec()
    # and count everything; imports, which importlib also runs with exec(), cancel out)
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=builtin_exec*",
           f"--callgrind-out-file={out}", sys.executable, str(Path(__file__).resolve()), "--child", case, str(size)]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{case} {size}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
    match = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"{case} {size}: no totals in {out}")
    return int(match.group(1))


def measure(case: str) -> float:
    """Instructions per unit of work (node or call) of ``case``."""
    small, large, _ = CASES[case]
    with tempfile.TemporaryDirectory(prefix="kubectl-dra-callgrind-") as name:
        a = _count(case, small, Path(name) / "small.out")
        b = _count(case, large, Path(name) / "large.out")
    units = (large - small) * (REPEAT_NODES if case == "repeat" else 1)
    return (b - a) / units


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--child"]:
        child(args[1], int(args[2]))
        return 0
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    cases = args or list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}; available: {', '.join(CASES)}", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: no instruction counts (Debian: apt-get install valgrind)")
        return 0
    for case in cases:
        print(f"{case}: {measure(case):,.0f} instructions per {CASES[case][2]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
