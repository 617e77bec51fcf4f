"""Admission latency and throughput of ``dra-webhook serve`` over HTTPS on loopback.

Two objects, each sent to ``/validate`` as a full AdmissionReview:

- a typical ResourceClaim: two requests with CEL selectors and a matchAttribute constraint;
- a ResourceSlice with 64 devices (attributes and capacities);
- as the floor of the serving stack (TLS, gunicorn, Flask, JSON), a ConfigMap, which the
  webhook admits untouched without calling the core;
- and, for memory, the largest ResourceSlice a driver realistically writes (128 devices with 32
  attributes and capacities each) as an UPDATE (object and oldObject), saturated only.

For each: (1) a fixed rate of 300 requests/s from an open-loop generator (Python processes with
keep-alive connections; latency counted from the *scheduled* send time, so a stalled server is
not hidden by a stalled client), and (2) saturation: closed-loop keep-alive connections as fast
as the server answers, with ``wrk`` when it is installed (C, little client overhead) else Python
processes. The server runs as deployed: 2 gunicorn workers x 4 threads. The load generator
shares the machine's cores with the server, so saturated figures are a lower bound for the server.

Resources (what ``deploy/base/deployment.yaml`` requests are sized from): the server's memory after
the load (RSS and PSS of the master and each worker: the forked workers share the master's pages,
so PSS adds up to what the pod's cgroup is charged), and the server's CPU seconds per request
(master and workers, user + system) and the peak of the summed PSS (sampled every 50 ms) during
the saturated Python run of each payload.

Targets: p99 <= 10 ms at 300 req/s; >= 1,000 req/s saturated on 2 cores.
Run: ``python -m benchmarks.run admission`` (or ``python -m benchmarks.bench_admission``).
"""

from __future__ import annotations

import copy
import http.client
import json
import multiprocessing as mp
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

DURATION = float(os.environ.get("BENCH_ADMISSION_SECONDS", "10"))
RATE = 300.0
RATE_PROCESSES = 6
SATURATION_CONNECTIONS = 8
#: Seconds past the end of a fixed-rate run after which unsent requests count as failed.
GRACE = 2.0
SERVER_NAME = "dra-webhook.dra-system.svc"


def typical_claim() -> dict[str, Any]:
    """Two requests with CEL selectors (attribute, semver and quantity checks) and a constraint."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "training-gpus", "namespace": "ml-team"},
        "spec": {"devices": {
            "requests": [
                {"name": "gpus", "exactly": {
                    "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2,
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100" && '
                                               'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}},
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].driverVersion.isGreaterThan('
                                               'semver("535.0.0"))'}},
                    ]}},
                {"name": "nic", "exactly": {
                    "deviceClassName": "nic.example.com",
                    "selectors": [{"cel": {"expression": 'device.driver == "nic.example.com" && '
                                                         'device.attributes["nic.example.com"].rdma == true'}}]}},
            ],
            "constraints": [{"requests": ["gpus", "nic"], "matchAttribute": "example.com/pcieRoot"}],
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


# --- server ------------------------------------------------------------------------------------


#: A cluster configuration that is never contacted (the benchmark sends no admin-access claims).
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: bench, user: {token: bench}}]
contexts: [{name: bench, context: {cluster: bench, user: bench}}]
current-context: bench
"""


def start_server(workdir: Path) -> tuple[subprocess.Popen, int, str]:
    """``dra-webhook serve`` as deployed (2 workers x 4 threads) on a free loopback port."""
    from webhook import certs

    policy = certs.Policy(dns_names=certs.service_dns_names("dra-webhook", "dra-system"))
    bundle = certs.ensure_bundle(certs.Bundle(), policy).bundle
    certs.write_dir(workdir / "tls", bundle)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Readiness needs a cluster configuration (admin-access lookups); none is contacted here.
    kubeconfig = workdir / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    script = Path(sys.executable).parent / "dra-webhook"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "webhook.cli"]
    command += ["serve", "--bind", f"127.0.0.1:{port}", "--cert-file", str(workdir / "tls/tls.crt"),
                "--key-file", str(workdir / "tls/tls.key"), "--workers", "2", "--threads", "4",
                "--log-level", "warning", "--metrics-dir", str(workdir / "metrics"),
                "--kubeconfig", str(kubeconfig)]
    log = open(workdir / "server.log", "wb")  # noqa: SIM115  # the server writes it for as long as it runs
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    ca = str(workdir / "tls/ca.crt")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = _connect(port, ca)
            conn.request("GET", "/readyz")
            if conn.getresponse().status == 200:
                conn.close()
                return process, port, ca
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("dra-webhook serve did not become ready:\n" + (workdir / "server.log").read_text())


class _Conn(http.client.HTTPSConnection):
    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(sock, server_hostname=SERVER_NAME)


def _connect(port: int, ca: str) -> _Conn:
    return _Conn("127.0.0.1", port, timeout=10, context=ssl.create_default_context(cafile=ca))


# --- load generators -----------------------------------------------------------------------------


def _post(conn: _Conn, body: bytes) -> bool:
    conn.request("POST", "/validate", body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    return response.status == 200 and b'"allowed"' in data


def _paced_worker(port: int, ca: str, body: bytes, rate: float, start: float, duration: float, out: Any) -> None:
    """Send at ``rate`` from ``start`` for ``duration``; latency from the scheduled send time.
    Requests still unsent :data:`GRACE` seconds after the end count as failures."""
    conn = _connect(port, ca)
    latencies: list[float] = []
    failures = 0
    interval = 1.0 / rate
    n = 0
    unsent = 0
    give_up = start + duration + GRACE
    while True:
        scheduled = start + n * interval
        if scheduled >= start + duration:
            break
        if time.perf_counter() > give_up:  # the server cannot keep up: count the rest as not served
            unsent = int((start + duration - scheduled) / interval) + 1
            break
        delay = scheduled - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        try:
            ok = _post(conn, body)
        except (OSError, http.client.HTTPException):
            ok = False
            conn.close()
            conn = _connect(port, ca)
        latencies.append(time.perf_counter() - scheduled)
        failures += not ok
        n += 1
    conn.close()
    out.send((latencies, failures, unsent))


def _closed_loop_worker(port: int, ca: str, body: bytes, start: float, duration: float, out: Any) -> None:
    """Send back-to-back on one keep-alive connection."""
    conn = _connect(port, ca)
    latencies: list[float] = []
    failures = 0
    while time.perf_counter() < start:
        time.sleep(0.001)
    while time.perf_counter() < start + duration:
        sent = time.perf_counter()
        try:
            ok = _post(conn, body)
        except (OSError, http.client.HTTPException):
            ok = False
            conn.close()
            conn = _connect(port, ca)
        latencies.append(time.perf_counter() - sent)
        failures += not ok
    conn.close()
    out.send((latencies, failures, 0))


def _run_processes(target: Any, args_for: list[tuple], duration: float) -> dict[str, Any]:
    """Run load processes; merge their latencies."""
    ctx = mp.get_context("fork")
    pipes, procs = [], []
    for args in args_for:
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=target, args=(*args, child))
        proc.start()
        pipes.append(parent)
        procs.append(proc)
    latencies: list[float] = []
    failures = unsent = 0
    for pipe in pipes:
        lat, fail, missed = pipe.recv()
        latencies.extend(lat)
        failures += fail
        unsent += missed
    for proc in procs:
        proc.join()
    return _summary(latencies, failures, duration, unsent)


def _summary(latencies: list[float], failures: int, duration: float, unsent: int = 0) -> dict[str, Any]:
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1000 if ordered else float("nan")

    return {"requests": len(ordered), "failures": failures, "unsent": unsent,
            "throughput": (len(ordered) - failures) / duration,
            "p50_ms": pct(50), "p99_ms": pct(99), "max_ms": ordered[-1] * 1000 if ordered else float("nan")}


def fixed_rate(port: int, ca: str, body: bytes, rate: float = RATE, duration: float = DURATION) -> dict[str, Any]:
    start = time.perf_counter() + 0.5
    per = rate / RATE_PROCESSES
    args = [(port, ca, body, per, start + i / rate, duration) for i in range(RATE_PROCESSES)]
    return _run_processes(_paced_worker, args, duration)


def saturated_python(port: int, ca: str, body: bytes, duration: float = DURATION) -> dict[str, Any]:
    start = time.perf_counter() + 0.5
    args = [(port, ca, body, start, duration) for _ in range(SATURATION_CONNECTIONS)]
    return _run_processes(_closed_loop_worker, args, duration)


WRK_SCRIPT = """
local f = io.open("{body}", "rb")
wrk.method = "POST"
wrk.body = f:read("*all")
f:close()
wrk.headers["Content-Type"] = "application/json"
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99), latency.max))
end
"""


def saturated_wrk(port: int, body: bytes, workdir: Path, duration: float = DURATION) -> dict[str, Any] | None:
    """Saturation with wrk (2 threads, keep-alive connections), if wrk is installed."""
    wrk = shutil.which("wrk")
    if not wrk:
        return None
    body_file = workdir / "body.json"
    body_file.write_bytes(body)
    script = workdir / "post.lua"
    script.write_text(WRK_SCRIPT.replace("{body}", str(body_file)))
    result = subprocess.run([wrk, "-t2", f"-c{SATURATION_CONNECTIONS}", f"-d{int(duration)}s", "-s", str(script),
                             f"https://127.0.0.1:{port}/validate"], capture_output=True, text=True, timeout=duration + 30)
    line = next((row for row in result.stdout.splitlines() if row.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"wrk failed: {result.stdout}\n{result.stderr}")
    requests, duration_us, errors, status_errors, p50, p99, worst = (int(x) for x in line.split()[1:])
    return {"requests": requests, "failures": errors + status_errors,
            "throughput": (requests - errors - status_errors) / (duration_us / 1e6),
            "p50_ms": p50 / 1000, "p99_ms": p99 / 1000, "max_ms": worst / 1000}


def worker_cpu_seconds(server_pid: int) -> dict[int, float]:
    """CPU seconds (user + system) used so far by each gunicorn worker of the server."""
    clock = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    try:
        children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    except OSError:  # not Linux: no per-worker figures
        return out
    for pid in map(int, children):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / clock
    return out


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
        self._stop = False
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop = True
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop:
            self.peak = max(self.peak, server_memory_mib(self.server_pid)["pss_sum"])
            time.sleep(0.05)


def core_latency(obj: dict[str, Any], n: int = 300) -> float:
    """Median milliseconds of the core's ``review()`` alone, in-process, for comparison."""
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.validation.admission import review

    gates = FeatureGates.default()
    for _ in range(20):
        review(copy.deepcopy(obj), gates=gates)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        review(obj, gates=gates)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def _row(label: str, r: dict[str, Any]) -> str:
    return (f"  {label:<28} {r['throughput']:8.0f} req/s   p50 {r['p50_ms']:6.2f} ms   p99 {r['p99_ms']:7.2f} ms   "
            f"max {r['max_ms']:7.1f} ms   {r['requests']} requests, {r['failures']} failed"
            + (f", {r['unsent']} not sent (server too slow for the rate)" if r.get("unsent") else ""))


def main() -> None:
    """Run every measurement and print a report (and a JSON line for tooling)."""
    workdir = Path(tempfile.mkdtemp(prefix="bench-admission-"))
    process, port, ca = start_server(workdir)
    results: dict[str, Any] = {"cpus": os.cpu_count(), "loadavg_before": os.getloadavg()[0],
                               "server": "dra-webhook serve, gunicorn gthread 2 workers x 4 threads, TLS"}
    try:
        floor = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ml-team"},
                 "data": {"k": "v"}}
        payloads = (("claim (2 requests, CEL)", typical_claim(), False), ("slice (64 devices)", slice_64(), False),
                    ("floor (unhandled kind)", floor, False), ("largest slice, UPDATE (128 devices)", largest_slice(), True))
        for name, obj, largest in payloads:
            body = update_body(obj) if largest else review_body(obj)
            warm = _connect(port, ca)
            for _ in range(200):  # warm both workers' caches
                _post(warm, body)
            warm.close()
            saturated_python(port, ca, body, duration=1.0)
            entry = {"body_bytes": len(body), "core_review_ms": core_latency(obj)}
            if not largest:  # far beyond the fixed rate: only its cost and memory are measured
                entry["rate_300"] = fixed_rate(port, ca, body)
            cpu_before_all = server_cpu_seconds(process.pid)
            with PeakMemory(process.pid) as memory:
                entry["saturated_python"] = saturated_python(port, ca, body)
            entry["peak_pss_mib"] = memory.peak
            served = entry["saturated_python"]["requests"] - entry["saturated_python"]["failures"]
            entry["server_cpu_ms_per_request"] = round(
                (server_cpu_seconds(process.pid) - cpu_before_all) * 1000 / max(served, 1), 3)
            cpu_before = worker_cpu_seconds(process.pid)
            wrk_result = saturated_wrk(port, body, workdir)
            if wrk_result is not None:
                cpu_after = worker_cpu_seconds(process.pid)
                # keep-alive connections stay on the worker that accepted them: when one worker got
                # them all, the server used one core and the saturated figure is halved
                wrk_result["worker_cpu_s"] = [round(cpu_after[pid] - cpu_before.get(pid, 0.0), 2) for pid in cpu_after]
            results[name] = entry
            print(f"{name}: {len(body)} bytes per AdmissionReview; core review() alone {entry['core_review_ms']:.2f} ms")
            if "rate_300" in entry:
                print(_row("300 req/s (open loop)", entry["rate_300"]))
            print(_row(f"saturated, python x{SATURATION_CONNECTIONS}", entry["saturated_python"])
                  + f"; server CPU {entry['server_cpu_ms_per_request']:.2f} ms per request"
                  + f", peak PSS {entry['peak_pss_mib']:.0f} MiB")
            if wrk_result is not None:
                print(_row(f"saturated, wrk -c{SATURATION_CONNECTIONS}", wrk_result)
                      + f"; CPU s per worker {wrk_result['worker_cpu_s']}")
            sys.stdout.flush()
        memory = server_memory_mib(process.pid)
        results["server_memory_mib"] = memory
        print("server memory after the load (MiB): " + ", ".join(
            f"pid {p['pid']} RSS {p.get('rss', 0):.0f} PSS {p.get('pss', 0):.0f}" for p in memory["processes"])
              + f"; sum RSS {memory['rss_sum']:.0f}, sum PSS {memory['pss_sum']:.0f}")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    results["loadavg_after"] = os.getloadavg()[0]
    print(f"load average before/after: {results['loadavg_before']:.2f} / {results['loadavg_after']:.2f} "
          f"on {results['cpus']} CPUs (the load generator shares them)")
    print("JSON " + json.dumps(results))


if __name__ == "__main__":
    main()
