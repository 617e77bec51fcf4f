"""Loading big dumps (issue 10 items 2 and 6).

(a) A ~50 MB YAML dump as ``kubectl get -o yaml`` writes it: 2,200 nodes with 64 devices each
    (140,800 devices) and 11 of each node's devices in use (24,200 allocated claims), and the
    same state as JSON. In this process, with the CLI's interpreter settings: decoding the
    YAML text alone through the rapidyaml fast path and through the libyaml event builder it
    falls back to (CPU, once each), then loading each file (best of 2). Then ``usage`` and
    ``preview template/…`` as the installed command runs them (a fresh process each: wall
    time and peak memory; YAML and JSON in turn, twice, the least CPU of each compared).
    Budgets: YAML loads in <= 10 s; YAML commands within 2x of JSON.
(b) A 529-byte YAML alias bomb (10 levels x 9 aliases) given to ``validate -f``: refused with
    exit 2; wall time and peak memory of the process.
(c) The JSON dump of 5,000 nodes x 8 partitionable devices with shared counters (issue 9 item 9,
    the dump of bench_allocation case b): ``load_state`` in a fresh process with the CLI's
    interpreter settings, CPU of the first load (checkers compiled on the way) and the best of
    three, and the process's peak memory; then one load as a command makes it
    (``cli.common.load_cluster``: the cyclic GC paused, the state frozen). Budget: <= 1 s CPU.

``python -m benchmarks.bench_load [--nodes N] [--partitionable-only]``
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import synthetic

NODES = 2200
DEVICES = 64
IN_USE = 11 / 64
YAML_LOAD_BUDGET = 10.0  # seconds
PARTITIONABLE_NODES, PARTITIONABLE_DEVICES = 5000, 8
PARTITIONABLE_LOAD_BUDGET = 1.0  # CPU seconds
COMMAND_RATIO_BUDGET = 2.0  # YAML / JSON
TARGET = f"template/{synthetic.NAMESPACE}/one-gpu"
# runs one command in a fresh interpreter and reports wall seconds, CPU seconds, peak RSS (VmHWM:
# ru_maxrss would start from the parent's size) and the exit code on its last stderr line
_RUNNER = ("import sys, time\n"
           "from kubectl_dra.cli.main import main\n"
           "start, cpu = time.perf_counter(), time.process_time()\n"
           "try:\n    main(sys.argv[1:])\n"
           "except SystemExit as exc:\n    code = exc.code\n"
           "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
           "print(f'{time.perf_counter() - start:.2f} {time.process_time() - cpu:.2f} {int(hwm) // 1024} {code}',"
           " file=sys.stderr)\n")


# loads a dump three times in a fresh interpreter with the CLI's settings; prints the CPU seconds
# of the first load and of the best, and the peak RSS in MB (VmHWM) after the first
_LOAD_RUNNER = ("import sys, time\n"
                "from kubectl_dra.cli.main import tune_process\n"
                "tune_process()\n"
                "from kubectl_dra.state import load_state\n"
                "cpus = []\n"
                "for i in range(3):\n"
                "    cpu = time.process_time()\n"
                "    state = load_state(sys.argv[1:])\n"
                "    cpus.append(time.process_time() - cpu)\n"
                "    del state\n"
                "    if i == 0:\n"
                "        hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
                "print(f'{cpus[0]:.3f} {min(cpus):.3f} {int(hwm) // 1024}', file=sys.stderr)\n")
# loads a dump once as a command does (cli.common.load_cluster: the cyclic GC paused, the state
# frozen); prints the CPU seconds
_CLI_LOAD_RUNNER = ("import sys, time\n"
                    "from kubectl_dra.cli.main import tune_process\n"
                    "tune_process()\n"
                    "from kubectl_dra.cli.common import load_cluster\n"
                    "cpu = time.process_time()\n"
                    "load_cluster(sys.argv[1:])\n"
                    "print(f'{time.process_time() - cpu:.3f}', file=sys.stderr)\n")


def _load_seconds(path: Path) -> tuple[float, float]:
    """Best (wall, CPU) seconds of two loads: CPU time is what the machine's other load disturbs least."""
    from kubectl_dra.state import load_state

    best = (float("inf"), float("inf"))
    for _ in range(2):
        start, cpu = time.perf_counter(), time.process_time()
        load_state([str(path)])
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
    return best


def _decode_seconds(path: Path) -> tuple[str, float, float]:
    """(why the fast path declines or "taken", its CPU seconds, the event builder's CPU seconds)."""
    from kubectl_dra.state import fastyaml, yamltext

    text = path.read_text()
    reason = fastyaml.decline_reason(text) or "taken"
    cpu = time.process_time()
    fast = fastyaml.load_fast(text)
    fast_cpu = time.process_time() - cpu
    cpu = time.process_time()
    built = list(yamltext._Builder().documents(text))
    builder_cpu = time.process_time() - cpu
    if fast is not None and fast != built:
        raise SystemExit("the fast path and the event builder disagree on the dump")
    return reason, fast_cpu, builder_cpu


def _command(*argv: str) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, peak MB, exit code) of one command in a fresh process (output discarded)."""
    done = subprocess.run([sys.executable, "-c", _RUNNER, *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=1800)
    seconds, cpu, peak, code = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), float(cpu), int(peak), code


def _bomb(directory: Path) -> Path:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    path = directory / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def partitionable_load(directory: Path) -> None:
    """Case (c): the 5,000 x 8 partitionable JSON dump loaded in a fresh process."""
    objs = synthetic.cluster(PARTITIONABLE_NODES, PARTITIONABLE_DEVICES, in_use=0.25, partitionable=True)
    path = synthetic.write_json(objs, directory / "partitionable.json")
    del objs
    first, best, peak = _last_line(_LOAD_RUNNER, path).split()
    as_command = _last_line(_CLI_LOAD_RUNNER, path)
    print(f"(c) {PARTITIONABLE_NODES} nodes x {PARTITIONABLE_DEVICES} partitionable devices, JSON "
          f"{path.stat().st_size / 1e6:.1f} MB: load_state in a fresh process {first} s CPU first "
          f"(best of 3: {best} s), peak {peak} MB; as a command loads it (GC paused) {as_command} s CPU; "
          f"budget {PARTITIONABLE_LOAD_BUDGET:.0f} s: {'ok' if float(first) <= PARTITIONABLE_LOAD_BUDGET else 'OVER'}")


def _last_line(runner: str, path: Path) -> str:
    """The last line a runner script prints on standard error, run on ``path`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", runner, str(path)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=600)
    return done.stderr.strip().splitlines()[-1]


#: YAML and JSON runs of a command alternate this many times; the best CPU of each is compared
#: (this VM's speed moves by up to 2x within minutes: a single run of each compared phases of it)
ROUNDS = 2


def _alternating(argv: list[str], yaml_path: Path, json_path: Path) -> dict[str, tuple[float, float, int, str]]:
    """The command on each dump, YAML and JSON in turn ``ROUNDS`` times: per format the run with
    the least CPU (wall, CPU, peak MB, exit code)."""
    best: dict[str, tuple[float, float, int, str]] = {}
    for _ in range(ROUNDS):
        for fmt, path in (("yaml", yaml_path), ("json", json_path)):
            run = _command(*argv, "--state", str(path))
            if fmt not in best or run[1] < best[fmt][1]:
                best[fmt] = run
    return best


def main(argv: list[str] | None = None) -> None:
    from kubectl_dra.cli.main import tune_process

    tune_process()  # in-process loads run with the CLI's interpreter settings, as a user's command does
    args = list(sys.argv[1:] if argv is None else argv)
    nodes = int(args[args.index("--nodes") + 1]) if "--nodes" in args else NODES
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        partitionable_load(directory)
        if "--partitionable-only" in args:
            return
        objs = synthetic.cluster(nodes, DEVICES, in_use=IN_USE)
        yaml_path = synthetic.write_yaml(objs, directory / "dump.yaml")
        json_path = synthetic.write_json(objs, directory / "dump.json")
        del objs
        devices = nodes * DEVICES
        print(f"(a) {nodes} nodes, {devices:,} devices: YAML {yaml_path.stat().st_size / 1e6:.1f} MB, "
              f"JSON {json_path.stat().st_size / 1e6:.1f} MB")
        reason, fast_cpu, builder_cpu = _decode_seconds(yaml_path)
        print(f"    YAML decoding: rapidyaml fast path {reason}, {fast_cpu:.1f} s CPU; "
              f"libyaml event builder {builder_cpu:.1f} s CPU")
        loads = {fmt: _load_seconds(path) for fmt, path in (("yaml", yaml_path), ("json", json_path))}
        print(f"    load_state: YAML {loads['yaml'][0]:.1f} s ({loads['yaml'][1]:.1f} s CPU), "
              f"JSON {loads['json'][0]:.1f} s ({loads['json'][1]:.1f} s CPU); YAML budget {YAML_LOAD_BUDGET:.0f} s: "
              f"{'ok' if loads['yaml'][1] <= YAML_LOAD_BUDGET else 'OVER'}")
        for name, argv_ in (("usage", ["usage"]), ("preview", ["preview", TARGET])):
            runs = _alternating(argv_, yaml_path, json_path)
            ratio = runs["yaml"][1] / runs["json"][1]
            print(f"    {name:8s} YAML {runs['yaml'][0]:.1f} s ({runs['yaml'][1]:.1f} s CPU) {runs['yaml'][2]} MB, "
                  f"JSON {runs['json'][0]:.1f} s ({runs['json'][1]:.1f} s CPU) {runs['json'][2]} MB: CPU {ratio:.2f}x "
                  f"(budget {COMMAND_RATIO_BUDGET:.0f}x: {'ok' if ratio <= COMMAND_RATIO_BUDGET else 'OVER'}; "
                  f"best of {ROUNDS} alternating) exit {runs['yaml'][3]}/{runs['json'][3]}")
        bomb = _bomb(directory)
        seconds, cpu, peak, code = _command("validate", "-f", str(bomb))
        print(f"(b) alias bomb ({bomb.stat().st_size} bytes): validate -f exit {code} in {seconds:.2f} s "
              f"({cpu:.2f} s CPU), peak {peak} MB")


if __name__ == "__main__":
    main()
