"""Admission throughput and latency of ``dra-webhook serve`` over HTTPS on loopback, side by side
with the stack it replaced (Flask in gunicorn's gthread workers, ``benchmarks.admission_gthread``).

Both servers run as deployed (2 workers; 4 decision threads per worker, 4 threads per gunicorn
worker) and are measured in turn, in rounds (each round runs one stack's loads back to back, then
the other's), with the C load generator ``wrk`` pinned to one core
(``taskset -c 1``) so that it does not take the server's; the servers are not pinned. Loads, each a
full AdmissionReview POSTed to ``/validate`` over keep-alive TLS connections:

- floor: a ConfigMap, which the webhook admits untouched without calling the core (TLS, HTTP,
  JSON in and out): what the serving stack itself costs;
- claim: a typical ResourceClaim (two requests with CEL selectors and a constraint), saturated
  (16 connections) and at a fixed 1,000 requests/s (wrk paced by a schedule: each request has a
  slot 1 ms after the previous one's; latency is wrk's, from send to answer). 1,000 claims
  that differ in name only, sent in turn, as the resourceclaim controller makes them from one
  template, one per pod: the spec is validated once per worker (``SpecMemo``), the rest of the
  pipeline (decoding, defaults, metadata) every time;
- claim, new specs: 1,000 claims with different request names, sent in turn, so that every spec
  is validated again (claims from many templates, or written by hand);
- slice: a ResourceSlice of 64 devices, saturated.

Each figure is the median over the rounds; a claim's share of the floor is the median of each
round's ratio (claim and floor measured seconds apart), with its range; the machine's load average is printed before and
after, as other processes share its cores. Memory (RSS and PSS of the main process and each
worker, after the load) is what ``deploy/base/deployment.yaml`` requests are sized from.

Targets (issue 24): claim saturated >= 70 % of the floor; claim p99 <= 10 ms at 1,000 req/s;
floor >= 1.5x the gthread floor. Needs ``wrk`` and ``taskset`` (``apt-get install wrk``) and, for the
gthread column, ``gunicorn`` (``pip install -e '.[bench]'``).
Run: ``make bench`` or ``python -m benchmarks.run admission``; ``BENCH_ADMISSION_SECONDS`` (default 5)
per run, ``BENCH_ADMISSION_ROUNDS`` (default 3).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

DURATION = int(os.environ.get("BENCH_ADMISSION_SECONDS", "5"))
ROUNDS = int(os.environ.get("BENCH_ADMISSION_ROUNDS", "3"))
SATURATION_CONNECTIONS = 16
RATE = 1000
RATE_CONNECTIONS = 16
#: The core the load generator is pinned to.
WRK_CPU = "1"
SERVER_NAME = "dra-webhook.dra-system.svc"


#: The floor's object: a ConfigMap, which the webhook admits untouched without calling the core.
FLOOR = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ml-team"},
         "data": {"k": "v"}}


def typical_claim(suffix: str = "", name: str = "training-gpus") -> dict[str, Any]:
    """Two requests with CEL selectors (attribute, semver and quantity checks) and a constraint;
    ``suffix`` makes the request names (and so the spec) differ."""
    gpus, nic = f"gpus{suffix}", f"nic{suffix}"
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml-team"},
        "spec": {"devices": {
            "requests": [
                {"name": gpus, "exactly": {
                    "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2,
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100" && '
                                               'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}},
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].driverVersion.isGreaterThan('
                                               'semver("535.0.0"))'}},
                    ]}},
                {"name": nic, "exactly": {
                    "deviceClassName": "nic.example.com",
                    "selectors": [{"cel": {"expression": 'device.driver == "nic.example.com" && '
                                                         'device.attributes["nic.example.com"].rdma == true'}}]}},
            ],
            "constraints": [{"requests": [gpus, nic], "matchAttribute": "example.com/pcieRoot"}],
        }},
    }


def slice_64() -> dict[str, Any]:
    """A ResourceSlice of 64 GPUs with typed attributes and capacities."""
    devices = []
    for i in range(64):
        devices.append({
            "name": f"gpu-{i}",
            "attributes": {
                "gpu.example.com/model": {"string": "a100"},
                "gpu.example.com/index": {"int": i},
                "gpu.example.com/driverVersion": {"version": "550.54.15"},
                "example.com/pcieRoot": {"string": f"pci-{i // 8}"},
                "gpu.example.com/mig": {"bool": False},
            },
            "capacity": {"gpu.example.com/memory": {"value": "80Gi"}, "gpu.example.com/sm": {"value": "108"}},
        })
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpu.example.com"},
        "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                 "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}, "devices": devices},
    }


def largest_slice() -> dict[str, Any]:
    """The largest ResourceSlice a driver realistically writes: 128 devices (the API's limit per
    slice) with 24 string attributes of 60 characters and 8 capacities each."""
    devices = [{"name": f"gpu-{i}",
                "attributes": {f"attr{j}": {"string": "v" * 60} for j in range(24)},
                "capacity": {f"cap{j}": {"value": "80Gi"} for j in range(8)}} for i in range(128)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "largest"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                     "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}, "devices": devices}}


def update_body(obj: dict[str, Any]) -> bytes:
    """An UPDATE review of ``obj`` (object and oldObject: twice the bytes of a CREATE)."""
    review = json.loads(review_body(obj))
    review["request"]["operation"] = "UPDATE"
    review["request"]["oldObject"] = obj
    return json.dumps(review).encode()


def review_body(obj: dict[str, Any]) -> bytes:
    group, _, version = obj["apiVersion"].rpartition("/")
    gvk = {"group": group, "version": version, "kind": obj["kind"]}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": gvk, "resource": {**gvk, "resource": obj["kind"].lower() + "s"},
        "name": obj["metadata"]["name"], "namespace": obj["metadata"].get("namespace", ""),
        "operation": "CREATE", "userInfo": {"username": "bench"}, "object": obj, "oldObject": None,
        "dryRun": False}}).encode()


# --- servers -------------------------------------------------------------------------------------


#: A cluster configuration that is never contacted (the benchmark sends no admin-access claims).
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: bench, user: {token: bench}}]
contexts: [{name: bench, context: {cluster: bench, user: bench}}]
current-context: bench
"""

STACKS = ("gthread", "granian")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(stack: str, workdir: Path) -> tuple[subprocess.Popen, int, str]:
    """One stack on a free loopback port, ready; (process, port, CA file)."""
    from webhook import certs

    workdir.mkdir(parents=True, exist_ok=True)
    policy = certs.Policy(dns_names=certs.service_dns_names("dra-webhook", "dra-system"))
    certs.write_dir(workdir / "tls", certs.ensure_bundle(certs.Bundle(), policy).bundle)
    port = _free_port()
    kubeconfig = workdir / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    common = ["--bind", f"127.0.0.1:{port}", "--cert-file", str(workdir / "tls/tls.crt"),
              "--key-file", str(workdir / "tls/tls.key"), "--kubeconfig", str(kubeconfig),
              "--metrics-dir", str(workdir / "metrics")]
    if stack == "gthread":
        command = [sys.executable, "-m", "benchmarks.admission_gthread", *common]
    else:
        script = Path(sys.executable).parent / "dra-webhook"
        command = [str(script)] if script.exists() else [sys.executable, "-m", "webhook.cli"]
        # no cluster to watch here: the warnings' cache would only retry; their cost is the core's
        command += ["serve", *common, "--workers", "2", "--threads", "4", "--log-level", "info",
                    "--no-apply-warnings"]
    log = open(workdir / "server.log", "wb")  # noqa: SIM115  # the server writes it for as long as it runs
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=Path(__file__).parent.parent)
    ca = str(workdir / "tls/ca.crt")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            conn = _connect(port, ca)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                return process, port, ca
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{stack} did not start:\n" + (workdir / "server.log").read_text())


def stop_server(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class _Conn(http.client.HTTPSConnection):
    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(sock, server_hostname=SERVER_NAME)


def _connect(port: int, ca: str) -> _Conn:
    return _Conn("127.0.0.1", port, timeout=10, context=ssl.create_default_context(cafile=ca))


def warm(port: int, ca: str, body: bytes, n: int = 200) -> None:
    """Send ``n`` requests on a few connections (both workers' caches)."""
    conns = [_connect(port, ca) for _ in range(4)]
    for i in range(n):
        conn = conns[i % len(conns)]
        conn.request("POST", "/validate", body=body, headers={"Content-Type": "application/json"})
        conn.getresponse().read()
    for conn in conns:
        conn.close()


# --- wrk ---------------------------------------------------------------------------------------------

WRK_SCRIPT = """
-- the body file holds one request body per line; several are sent in turn
local bodies = {{}}
for line in io.lines("{body}") do bodies[#bodies + 1] = line end
wrk.method = "POST"
wrk.body = bodies[1]
wrk.headers["Content-Type"] = "application/json"
if #bodies > 1 then
  local next_body = 0
  function request()
    next_body = next_body % #bodies + 1
    return wrk.format(nil, nil, nil, bodies[next_body])
  end
end
local interval = {interval}
if interval > 0 then
  local ffi = require("ffi")
  ffi.cdef[[ typedef struct {{ long tv_sec; long tv_usec; }} bench_timeval;
             int gettimeofday(bench_timeval *tv, void *tz); ]]
  local tv = ffi.new("bench_timeval")
  local slot = nil
  -- each request gets the next slot of a fixed schedule (interval ms apart); late slots go at once
  function delay()
    ffi.C.gettimeofday(tv, nil)
    local now = tonumber(tv.tv_sec) * 1000 + tonumber(tv.tv_usec) / 1000
    if slot == nil then slot = now end
    local wait = slot - now
    slot = slot + interval
    if wait < 0 then return 0 end
    return wait
  end
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end
"""


def run_wrk(port: int, body_file: Path, connections: int, duration: int, rate: float | None = None) -> dict[str, Any]:
    """wrk (one thread, pinned to :data:`WRK_CPU`) POSTing ``body_file``; saturated, or paced at ``rate``."""
    script = body_file.with_suffix(f".{connections}.{int(rate or 0)}.lua")
    script.write_text(WRK_SCRIPT.format(body=body_file, interval=(1000.0 / rate) if rate else 0))
    command = ["taskset", "-c", WRK_CPU, "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "-s", str(script),
               f"https://127.0.0.1:{port}/validate"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60)
    line = next((row for row in result.stdout.splitlines() if row.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"wrk failed: {result.stdout}\n{result.stderr}")
    requests, duration_us, errors, status_errors, p50, p90, p99, worst = (int(x) for x in line.split()[1:])
    return {"requests": requests, "failures": errors + status_errors,
            "throughput": (requests - errors - status_errors) / (duration_us / 1e6),
            "p50_ms": p50 / 1000, "p90_ms": p90 / 1000, "p99_ms": p99 / 1000, "max_ms": worst / 1000}


def server_processes(server_pid: int) -> list[int]:
    """The gunicorn master and its workers."""
    try:
        children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    except OSError:
        return [server_pid]
    return [server_pid, *map(int, children)]


def server_cpu_seconds(server_pid: int) -> float:
    """CPU seconds (user + system) used so far by the master and its workers together."""
    clock = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in server_processes(server_pid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / clock
    return total


def server_memory_mib(server_pid: int) -> dict[str, Any]:
    """RSS and PSS in MiB of the master and each worker, and their sums (PSS is what the pod is charged)."""
    per_process = []
    for pid in server_processes(server_pid):
        values = {}
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                key, _, rest = line.partition(":")
                if key in ("Rss", "Pss"):
                    values[key.lower()] = int(rest.split()[0]) / 1024
        except OSError:
            continue
        per_process.append({"pid": pid, **{k: round(v, 1) for k, v in values.items()}})
    return {"processes": per_process,
            "rss_sum": round(sum(p.get("rss", 0.0) for p in per_process), 1),
            "pss_sum": round(sum(p.get("pss", 0.0) for p in per_process), 1)}


class PeakMemory:
    """Samples the server's summed PSS every 50 ms in a thread while a load runs; ``peak`` in MiB."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, server_memory_mib(self.server_pid)["pss_sum"])


def resources(process: subprocess.Popen, port: int, files: dict[str, Path]) -> dict[str, Any]:
    """Server CPU per claim (saturated) and peak PSS under the largest slice as UPDATE."""
    before = server_cpu_seconds(process.pid)
    claim = run_wrk(port, files["claims"], SATURATION_CONNECTIONS, DURATION)
    served = claim["requests"] - claim["failures"]
    cpu_ms = (server_cpu_seconds(process.pid) - before) * 1000 / max(served, 1)
    with PeakMemory(process.pid) as memory:
        largest = run_wrk(port, files["largest"], 8, DURATION)
    return {"claim_cpu_ms": round(cpu_ms, 2), "largest_update": largest, "peak_pss_mib": round(memory.peak, 1),
            "after_load": server_memory_mib(process.pid)}


def cache_memory(nodes: int = 500, gpus: int = 8) -> dict[str, Any]:
    """Memory of one worker's watch cache for a cluster of ``nodes`` x ``gpus`` devices (one slice per
    node, five attributes and two capacities per device), as the cache holds it: prepared slices."""
    import tracemalloc

    from kubectl_dra.advice import Inventory, prepare_slice

    slices = []
    for n in range(nodes):
        obj = slice_64()
        obj["metadata"]["name"] = f"node-{n}-gpu"
        obj["spec"]["nodeName"] = f"node-{n}"
        obj["spec"]["devices"] = obj["spec"]["devices"][:gpus]
        slices.append(json.loads(json.dumps(obj)))
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    prepared = {s["metadata"]["name"]: prepare_slice(s) for s in slices}
    del slices  # the cache keeps prepared slices (which keep their devices' dicts), not the list
    inventory = Inventory({}, prepared)
    held = tracemalloc.get_traced_memory()[0] - base
    # once advice has run a selector on every device, each keeps its CEL input and the answer
    assert len(inventory.matching(('device.driver == "gpu.example.com"',))) == nodes * gpus
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {"devices": nodes * gpus, "mib": round(held / 2**20, 1), "mib_after_advice": round(used / 2**20, 1)}


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each figure over the rounds (failures: the sum)."""
    out = {key: statistics.median(r[key] for r in runs) for key in ("throughput", "p50_ms", "p90_ms", "p99_ms", "max_ms")}
    out["failures"] = sum(r["failures"] for r in runs)
    out["spread"] = (min(r["throughput"] for r in runs), max(r["throughput"] for r in runs))
    return out


def paired_ratios(runs: list[dict[str, Any]], floor_runs: list[dict[str, Any]]) -> list[float]:
    """Each round's throughput over the same round's floor: runs seconds apart, where the
    medians of separate rows would compare minutes apart on a VM whose speed drifts."""
    return [run["throughput"] / floor["throughput"] for run, floor in zip(runs, floor_runs, strict=True)]


#: Claims with as many different specs, sent in turn: more than a worker's SpecMemo holds, so
#: every spec is validated again (claims from many templates, or written by hand).
DISTINCT_SPECS = 1000

LOADS = (
    # (name, payload key, connections, rate)
    ("floor, saturated", "floor", SATURATION_CONNECTIONS, None),
    ("claim, saturated", "claim", SATURATION_CONNECTIONS, None),
    ("claim, new specs, saturated", "claims", SATURATION_CONNECTIONS, None),
    (f"claim, {RATE:,} req/s", "claim", RATE_CONNECTIONS, RATE),
    (f"claim, new specs, {RATE:,} req/s", "claims", RATE_CONNECTIONS, RATE),
    ("slice (64 devices), saturated", "slice", SATURATION_CONNECTIONS, None),
)


def main() -> None:
    """Measure both stacks in rounds and print the table (and a JSON line for tooling)."""
    missing = [tool for tool in ("wrk", "taskset") if shutil.which(tool) is None]
    if missing:
        print(f"admission: skipped, {' and '.join(missing)} not installed (Debian: apt-get install wrk)")
        return
    stacks = [s for s in STACKS if s != "gthread" or importlib.util.find_spec("gunicorn")]
    if "gthread" not in stacks:
        print("admission: gthread column skipped, gunicorn not installed (pip install -e '.[bench]')")
    workdir = Path(tempfile.mkdtemp(prefix="bench-admission-"))
    bodies = {"floor": review_body(FLOOR),
              "claim": b"\n".join(review_body(typical_claim(name=f"trainer-{i}-gpus")) for i in range(DISTINCT_SPECS)),
              "claims": b"\n".join(review_body(typical_claim(f"-{i}")) for i in range(DISTINCT_SPECS)),
              "slice": review_body(slice_64()), "largest": update_body(largest_slice())}
    files = {}
    for key, body in bodies.items():
        files[key] = workdir / f"{key}.json"
        files[key].write_bytes(body)
    results: dict[str, Any] = {"cpus": os.cpu_count(), "loadavg_before": os.getloadavg(), "rounds": ROUNDS,
                               "seconds": DURATION}
    servers = {stack: start_server(stack, workdir / stack) for stack in stacks}
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for _, port, ca in servers.values():
            for body in bodies.values():
                warm(port, ca, body.split(b"\n")[0])
        for round_ in range(ROUNDS):
            # one stack's loads back to back, so that a claim's ratio to the floor compares runs
            # seconds apart (the VM's speed drifts by up to 2x over minutes); stacks alternate first
            for stack in (stacks if round_ % 2 == 0 else stacks[::-1]):
                for name, key, connections, rate in LOADS:
                    runs.setdefault((name, stack), []).append(
                        run_wrk(servers[stack][1], files[key], connections, DURATION, rate))
            print(f"round {round_ + 1}/{ROUNDS} done, load average {os.getloadavg()[0]:.2f}", flush=True)
        results["resources"] = {stack: resources(process, port, files) for stack, (process, port, _) in servers.items()}
        results["cache"] = cache_memory()
    finally:
        for process, _, _ in servers.values():
            stop_server(process)
        shutil.rmtree(workdir, ignore_errors=True)
    results["loadavg_after"] = os.getloadavg()
    table = {f"{name} | {stack}": _median(r) for (name, stack), r in runs.items()}
    results["table"] = table
    print(f"\nwrk -t1 pinned to CPU {WRK_CPU}, {DURATION}s per run, median of {ROUNDS} rounds; "
          f"load average before {results['loadavg_before'][0]:.2f}, after {results['loadavg_after'][0]:.2f} "
          f"on {results['cpus']} CPUs")
    header = f"{'load':<32}" + "".join(f"| {stack + ' req/s':>14} {'p50':>7} {'p99':>7} " for stack in stacks)
    print(header)
    for name, _, _, _ in LOADS:
        row = f"{name:<32}"
        for stack in stacks:
            m = table[f"{name} | {stack}"]
            row += f"| {m['throughput']:14.0f} {m['p50_ms']:6.2f}m {m['p99_ms']:6.2f}m "
            if m["failures"]:
                row += f"({m['failures']} failed) "
        print(row)
    granian = {name: table[f"{name} | granian"] for name, _, _, _ in LOADS}
    floor_rate = granian["floor, saturated"]["throughput"]
    results["ratios"] = {}
    for kind in ("claim", "claim, new specs"):
        ratios = paired_ratios(runs[(f"{kind}, saturated", "granian")], runs[("floor, saturated", "granian")])
        results["ratios"][kind] = ratios
        print(f"{kind} saturated / floor: {statistics.median(ratios):.0%} (median of {len(ratios)} rounds, "
              f"{min(ratios):.0%}-{max(ratios):.0%}; target >= 70 %); p99 at {RATE:,} req/s: "
              f"{granian[f'{kind}, {RATE:,} req/s']['p99_ms']:.2f} ms (target <= 10 ms)")
    if "gthread" in stacks:
        ratio = floor_rate / table["floor, saturated | gthread"]["throughput"]
        print(f"floor, granian / gthread: {ratio:.2f}x (target >= 1.5x)")
    for stack, used in results["resources"].items():
        memory = used["after_load"]
        print(f"{stack}: server CPU {used['claim_cpu_ms']:.2f} ms per claim of a new spec; peak PSS {used['peak_pss_mib']:.0f} MiB "
              f"(largest slice as UPDATE, {used['largest_update']['throughput']:.0f} req/s); after the load: " + ", ".join(
                  f"pid {p['pid']} RSS {p.get('rss', 0):.0f} PSS {p.get('pss', 0):.0f}" for p in memory["processes"])
              + f"; sum RSS {memory['rss_sum']:.0f}, sum PSS {memory['pss_sum']:.0f} MiB")
    cache = results["cache"]
    print(f"watch cache of the apply-time warnings, per worker, {cache['devices']:,} devices: {cache['mib']:.1f} MiB "
          f"as listed, {cache['mib_after_advice']:.1f} MiB once every device has been matched")
    print("JSON " + json.dumps(results))


if __name__ == "__main__":
    main()
