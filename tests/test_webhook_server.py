"""``dra-webhook serve`` for real: granian over TLS on loopback, AdmissionReviews over HTTPS.

A sample of the shared admission scenarios (every kind, several gate sets) is sent as real
AdmissionReviews; the answer must match each scenario exactly (allowed, error field paths, and
the submitted object with our JSONPatch applied equal to ``expect.object``). Namespace labels
come from the fake API server through the kubernetes client. Bad requests, metrics over several
workers, a failed namespace lookup, and a certificate rotation under load are checked too.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest
from cryptography import x509
from prometheus_client.parser import text_string_to_metric_families

from kubectl_dra.gates import FeatureGates
from tests.admission_scenarios import check_decision, load_admission_scenarios, scenario_id, skip_reason
from tests.conftest import corpus
from tests.fake_apiserver import FakeAPIServer
from tests.webhook_support import (
    SERVER_NAME,
    WebhookClient,
    admission_review,
    check_response_shape,
    decision_from_responses,
    scenario_review,
)
from webhook import certs
from webhook.certs import Bundle, Policy

pytestmark = pytest.mark.slow

NAMESPACED = {"ResourceClaim", "ResourceClaimTemplate", "PodGroup", "Pod"}


# --- the sample --------------------------------------------------------------------------------

#: gate set -> take every n-th scenario of each kind (sorted by name), at least 2 per kind
SAMPLE_PLAN: dict[tuple[str, ...], int] = {
    (): 5,
    ("DRAAdminAccess",): 1,
    ("DRAWorkloadResourceClaims",): 2,
    ("DRAConsumableCapacity",): 4,
}


def sample_scenarios() -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """The scenarios sent over HTTPS, grouped by gate set (one server per gate set)."""
    by_group: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for scenario in sorted(load_admission_scenarios(), key=scenario_id):
        if skip_reason(scenario):
            continue
        group = tuple(sorted(scenario.get("features") or []))
        if group in SAMPLE_PLAN:
            by_group.setdefault(group, []).append(scenario)
    sample: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for group, scenarios in by_group.items():
        kinds: dict[str, list[dict[str, Any]]] = {}
        for scenario in scenarios:
            kinds.setdefault(scenario["object"]["kind"], []).append(scenario)
        step = SAMPLE_PLAN[group]
        chosen = []
        for members in kinds.values():
            picked = members[::step]
            if len(picked) < 2:
                picked = members[:2]
            chosen.extend(picked)
        sample[group] = chosen
    return sample


SAMPLE = sample_scenarios()


@corpus
def test_sample_is_big_and_covers_every_kind() -> None:
    scenarios = [s for group in SAMPLE.values() for s in group]
    assert len(scenarios) >= 50
    kinds = {s["object"]["kind"] for s in scenarios}
    assert {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "PodGroup"} <= kinds
    assert any(s.get("operation") == "UPDATE" for s in scenarios)
    assert any(s.get("namespaceLabels") for s in scenarios)
    assert any(not s["expect"]["allowed"] for s in scenarios) and any(s["expect"]["allowed"] for s in scenarios)


# --- servers -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_certificates(directory: Path, now: dt.datetime | None = None, stored: Bundle | None = None) -> Bundle:
    """A CA and serving certificate for the webhook Service, written as files."""
    policy = Policy(dns_names=certs.service_dns_names("dra-webhook", "dra-system"))
    bundle = certs.ensure_bundle(stored or Bundle(), policy, now).bundle
    certs.write_dir(directory, bundle)
    return bundle


def dra_webhook_command() -> list[str]:
    """The installed console script, else the module."""
    script = Path(sys.executable).parent / "dra-webhook"
    return [str(script)] if script.exists() else [sys.executable, "-m", "webhook.cli"]


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    cert_dir: Path
    log: Path
    clients: list[WebhookClient] = field(default_factory=list)

    @property
    def ca_file(self) -> str:
        return str(self.cert_dir / "ca.crt")

    def client(self, **kwargs: Any) -> WebhookClient:
        client = WebhookClient(self.port, self.ca_file, **kwargs)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(workdir: Path, *, gates: FeatureGates, kubeconfig: Path | None, mode: str = "enforce",
                 cert_dir: Path | None = None, workers: int = 2, log_level: str = "warning",
                 wait_for: str = "/readyz", extra_args: list[str] | None = None) -> Server:
    """``dra-webhook serve`` on a free loopback port; returns once ``wait_for`` answers 200.
    Without ``kubeconfig`` the server has no cluster configuration at all (no kubeconfig file, not in a pod)."""
    workdir.mkdir(parents=True, exist_ok=True)
    if cert_dir is None:
        cert_dir = workdir / "tls"
        write_certificates(cert_dir)
    port = free_port()
    log = workdir / "server.log"
    args = dra_webhook_command() + [
        "serve", "--bind", f"127.0.0.1:{port}", "--cert-file", str(cert_dir / "tls.crt"),
        "--key-file", str(cert_dir / "tls.key"), "--workers", str(workers), "--threads", "4", "--mode", mode,
        "--feature-gates", gates.to_flag(), "--namespace-cache-ttl", "0",
        "--log-level", log_level, "--metrics-dir", str(workdir / "metrics"),
    ] + (["--kubeconfig", str(kubeconfig)] if kubeconfig else []) + (extra_args or [])
    env = {k: v for k, v in os.environ.items()
           if k not in ("KUBERNETES_SERVICE_HOST", "PROMETHEUS_MULTIPROC_DIR", "KUBECONFIG")}
    if kubeconfig is None:
        env["HOME"] = str(workdir)  # no ~/.kube/config either
    with open(log, "wb") as sink:
        process = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT, env=env)
    server = Server(process, port, cert_dir, log)
    deadline = time.monotonic() + 120
    probe = WebhookClient(port, server.ca_file, timeout=2)
    while True:
        if process.poll() is not None:
            raise AssertionError(f"dra-webhook serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            status, _ = probe.request("GET", wait_for)
            if status == 200:
                break
        except OSError:
            probe.close()
        if time.monotonic() > deadline:
            server.stop()
            raise AssertionError(f"dra-webhook serve: {wait_for} not 200 after 120s:\n{log.read_text()}")
        time.sleep(0.1)
    probe.close()
    return server


@pytest.fixture(scope="module")
def apiserver() -> Iterator[FakeAPIServer]:
    with FakeAPIServer([], token="webhook-token") as server:
        yield server


@pytest.fixture(scope="module")
def kubeconfig(apiserver: FakeAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return apiserver.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")


@pytest.fixture(scope="module")
def servers(kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``servers(features)``: one running server per gate set for this module (started on first use)."""
    running: dict[tuple[str, ...], Server] = {}

    def get(features: tuple[str, ...]) -> Server:
        if features not in running:
            workdir = tmp_path_factory.mktemp("server-" + ("-".join(features) or "ga"))
            running[features] = start_server(workdir, gates=FeatureGates.only(features), kubeconfig=kubeconfig)
        return running[features]

    yield get
    for server in running.values():
        server.stop()


def set_namespace(apiserver: FakeAPIServer, name: str, labels: dict[str, str]) -> None:
    apiserver.delete("Namespace", name)
    apiserver.add({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}})


# --- the scenario sample over HTTPS ------------------------------------------------------------


@corpus
@pytest.mark.parametrize("features", sorted(SAMPLE), ids=lambda f: "-".join(f) or "ga-only")
def test_scenario_sample_over_https(features: tuple[str, ...], servers: Any, apiserver: FakeAPIServer) -> None:
    server = servers(features)
    client = server.client()
    failures = []
    for scenario in SAMPLE[features]:
        obj = scenario["object"]
        if obj["kind"] in NAMESPACED:
            set_namespace(apiserver, obj["metadata"].get("namespace") or "default",
                          dict(scenario.get("namespaceLabels") or {}))
        doc = scenario_review(scenario)
        replies = {}
        for path in ("/validate", "/mutate"):
            status, reply = client.post_json(path, doc)
            assert status == 200, f"{scenario_id(scenario)} {path}: HTTP {status} {reply}"
            replies[path] = check_response_shape(doc, reply)
        assert replies["/mutate"]["allowed"] is True
        try:
            check_decision(scenario, decision_from_responses(obj, replies["/validate"], replies["/mutate"]))
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, f"{len(failures)} of {len(SAMPLE[features])} scenarios differ:\n" + "\n".join(failures)


# --- protocol edges over HTTPS ------------------------------------------------------------------


def test_bad_requests_over_https_are_4xx_never_5xx(servers: Any) -> None:
    client = servers(()).client()
    status, body = client.request("POST", "/validate", b"{oops", {"Content-Type": "application/json"})
    assert status == 400 and b"not valid JSON" in body
    big = json.dumps(admission_review({"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": "c"}, "data": {"x": "a" * (3 * 1024 * 1024)}}))
    status, body = client.request("POST", "/validate", big.encode(), {"Content-Type": "application/json"})
    assert status == 413 and b"larger than" in body
    client.close()
    doc = admission_review({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}})
    status, reply = client.post_json("/mutate", doc)
    assert status == 200 and reply["response"] == {"uid": doc["request"]["uid"], "allowed": True}
    status, _ = client.request("GET", "/nope")
    assert status == 404
    for path in ("/healthz", "/readyz"):
        assert client.request("GET", path)[0] == 200


def _counter(text: str, **labels: str) -> float:
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "dra_webhook_admission_requests_total" and all(
                    sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


def test_metrics_add_up_across_workers(servers: Any) -> None:
    """Requests on many connections land on both workers; /metrics reports their sum."""
    server = servers(())
    reader = server.client()
    before = _counter(reader.request("GET", "/metrics")[1].decode(), endpoint="validate", kind="DeviceClass")
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
    sent = 0
    for _ in range(12):
        client = WebhookClient(server.port, server.ca_file)
        for _ in range(3):
            status, reply = client.post_json("/validate", admission_review(obj))
            assert status == 200 and reply["response"]["allowed"] is True
            sent += 1
        client.close()
    after = _counter(reader.request("GET", "/metrics")[1].decode(), endpoint="validate", kind="DeviceClass")
    assert after - before == sent


def test_failed_namespace_lookup_denies_clearly(servers: Any, apiserver: FakeAPIServer) -> None:
    server = servers(("DRAAdminAccess",))
    client = server.client()
    set_namespace(apiserver, "lab", {"resource.kubernetes.io/admin-access": "true"})
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "lab"},
           "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}]}}}
    status, reply = client.post_json("/validate", admission_review(obj))
    assert status == 200 and reply["response"]["allowed"] is True
    apiserver.fail("/api/v1/namespaces/lab", 503, "etcd is unavailable", times=1)
    status, reply = client.post_json("/validate", admission_review(obj))
    assert status == 200
    response = reply["response"]
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert "spec.devices.requests[0].adminAccess" in message and "'lab'" in message and "503" in message


def test_serve_refuses_unloadable_certificates(tmp_path: Path) -> None:
    result = subprocess.run(dra_webhook_command() + ["serve", "--cert-file", str(tmp_path / "none.crt"),
                                                     "--key-file", str(tmp_path / "none.key")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "cannot serve TLS" in result.stderr and "Traceback" not in result.stderr


# --- certificate rotation under load ------------------------------------------------------------


def served_certificate(port: int, ca_file: str) -> x509.Certificate:
    context = ssl.create_default_context(cafile=ca_file)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock, \
            context.wrap_socket(sock, server_hostname=SERVER_NAME) as tls:
        return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))


def test_certificate_rotation_without_restart_or_failed_requests(kubeconfig: Path, tmp_path: Path) -> None:
    cert_dir = tmp_path / "tls"
    bundle = write_certificates(cert_dir)
    ca_file = tmp_path / "ca.crt"
    shutil.copy(cert_dir / "ca.crt", ca_file)  # clients keep trusting this CA throughout
    server = start_server(tmp_path / "server", gates=FeatureGates.default(), kubeconfig=kubeconfig, cert_dir=cert_dir)
    try:
        first = served_certificate(server.port, str(ca_file))
        assert first == x509.load_pem_x509_certificate(bundle.tls_cert)
        stop = threading.Event()
        counts = {"ok": 0, "failed": 0, "retried": 0}
        errors: list[str] = []
        lock = threading.Lock()
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}

        def attempt(client: WebhookClient) -> tuple[bool, str]:
            try:
                status, reply = client.post_json("/validate", admission_review(obj))
                return status == 200 and reply["response"]["allowed"] is True, f"HTTP {status}"
            except (OSError, ssl.SSLError, ValueError) as exc:
                client.close()
                return False, repr(exc)

        def load(new_connection_each_time: bool) -> None:
            client = WebhookClient(server.port, str(ca_file), retry_stale=False)
            while not stop.is_set():
                ok, detail = attempt(client)
                retried = not ok and not detail.startswith("HTTP")
                if retried:  # a connection of a respawned worker closed under it: once more, as the API server does
                    ok, detail = attempt(client)
                with lock:
                    counts["ok" if ok else "failed"] += 1
                    counts["retried"] += retried
                    if not ok:
                        errors.append(detail)
                if new_connection_each_time or not ok:
                    client.close()
            client.close()

        threads = [threading.Thread(target=load, args=(i % 2 == 0,)) for i in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        serials = {first.serial_number}
        policy = Policy(dns_names=certs.service_dns_names("dra-webhook", "dra-system"))
        for round_ in range(4):
            # a renewal of the serving certificate under the same CA (as the cert job does when it is due)
            renewed = certs.ensure_bundle(Bundle(bundle.ca_cert, bundle.ca_key, b"", b""), policy).bundle
            assert renewed.ca_cert == bundle.ca_cert and renewed.tls_cert != bundle.tls_cert
            if round_ % 2:
                certs.write_dir(cert_dir, renewed)  # atomic renames, key first
            else:  # in place and cert first: readers see torn and mismatched files for a moment
                (cert_dir / "tls.crt").write_bytes(renewed.tls_cert)
                time.sleep(0.05)
                (cert_dir / "tls.key").write_bytes(renewed.tls_key)
            bundle = renewed
            expected = x509.load_pem_x509_certificate(renewed.tls_cert)
            deadline = time.monotonic() + 30  # (a liveness bound for loaded CI machines, not a speed check)
            while served_certificate(server.port, str(ca_file)) != expected:
                assert time.monotonic() < deadline, "the server did not pick up the new certificate"
                time.sleep(0.05)
            serials.add(expected.serial_number)
            time.sleep(0.4)
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        assert server.process.poll() is None, "the server restarted or died"
        assert counts["failed"] == 0, f"{counts['failed']} failed requests: {errors[:5]}"
        assert counts["ok"] >= 100, counts
        assert counts["retried"] <= counts["ok"] // 20, counts  # only requests racing a worker's respawn
        assert len(serials) == 5
    finally:
        server.stop()


def test_pod_claims_are_checked_over_https(servers: Any) -> None:
    """Pods (sent only when they have resourceClaims) get the DRA checks of their claim references."""
    client = servers(()).client()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "ml"},
           "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]}}
    status, reply = client.post_json("/validate", admission_review(pod))
    assert status == 200 and reply["response"]["allowed"] is True
    pod["spec"]["resourceClaims"][0]["resourceClaimName"] = "shared-gpu"  # both sources: invalid
    status, reply = client.post_json("/validate", admission_review(pod))
    response = reply["response"]
    assert status == 200 and response["allowed"] is False
    assert [c["field"] for c in response["status"]["details"]["causes"]] == ["spec.resourceClaims[0]"]
    assert response["status"]["message"].startswith('Pod "trainer" is invalid')


# --- readiness, deep objects, logs ---------------------------------------------------------------


def test_not_ready_without_a_cluster_configuration(tmp_path: Path) -> None:
    """Without a cluster configuration admin-access claims cannot be decided: /readyz says so (503),
    /healthz stays 200 (the process is fine), and the log says why once at startup."""
    server = start_server(tmp_path / "server", gates=FeatureGates.default(), kubeconfig=None, workers=1,
                          wait_for="/healthz")
    try:
        client = server.client()
        status, body = client.request("GET", "/readyz")
        assert status == 503
        assert b"no usable cluster configuration" in body and b"admin-access" in body
        log = server.log.read_text()
        assert "no usable cluster configuration" in log and "/readyz answers 503" in log
        assert "Traceback" not in log
    finally:
        server.stop()


def _claim_with_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "deep", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}],
                                 "config": [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]}}}


def _nested(depth: int, kind: str) -> Any:
    value: Any = [] if kind == "array" else {}
    for _ in range(depth):
        value = [value] if kind == "array" else {"a": value}
    return value


def _deep_review_body(depth: int, kind: str) -> bytes:
    """The AdmissionReview as JSON text, built without recursion (json.dumps would need ``depth`` frames)."""
    opening, closing = ("[", "]") if kind == "array" else ('{"a":', "}")
    inner = opening * depth + ("[]" if kind == "array" else "{}") + closing * depth
    review = admission_review(_claim_with_parameters({"x": "PLACEHOLDER"}))
    return json.dumps(review).replace('"PLACEHOLDER"', inner).encode()


@pytest.mark.parametrize(("depth", "kind", "allowed"), [
    (500, "object", True),     # the case: ~3 KB of parameters
    (1600, "object", True),    # ~9.6 KB: about as deep as objects get within the API server's 10 KiB limit
    (5000, "array", True),     # ~10 KB: as deep as anything gets within the limit
    (9000, "array", False),    # over 10 KiB: refused as too long, as the API server does (not an internal error)
])
def test_deeply_nested_parameters_are_decided_never_internal_errors(depth: int, kind: str, allowed: bool,
                                                                      servers: Any) -> None:
    """Opaque parameters are raw JSON: the API server accepts them nested thousands deep (10 KiB, its
    decoder's depth limit). The webhook decides on them like on any claim: never an InternalError."""
    client = servers(()).client()
    body = _deep_review_body(depth, kind)
    status, data = client.request("POST", "/validate", body, {"Content-Type": "application/json"})
    assert status == 200, data[:300]
    response = json.loads(data)["response"]
    assert response["allowed"] is allowed, response.get("status", {}).get("message", "")[:300]
    if not allowed:
        assert response["status"]["reason"] == "Invalid"
        assert [c["field"] for c in response["status"]["details"]["causes"]] == [
            "spec.devices.config[0].opaque.parameters"]
    status, data = client.request("POST", "/mutate", body, {"Content-Type": "application/json"})
    assert status == 200 and json.loads(data)["response"]["allowed"] is True


def test_decision_logs_are_one_capped_line_each_and_repeats_are_limited(tmp_path: Path, kubeconfig: Path) -> None:
    """At info: one line per decision, never longer than the cap, never an object or a traceback,
    and a flood of the same denial is cut to a few lines."""
    server = start_server(tmp_path / "server", gates=FeatureGates.default(), kubeconfig=kubeconfig, workers=1,
                          log_level="info")
    try:
        client = server.client()
        good = _claim_with_parameters({"x": 1})
        status, reply = client.post_json("/validate", admission_review(good))
        assert status == 200 and reply["response"]["allowed"] is True
        huge = json.loads(json.dumps(good))
        huge["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "x" * 900_000
        huge["metadata"]["name"] = "evil\n[forged] log line"
        status, reply = client.post_json("/validate", admission_review(huge))
        assert status == 200 and reply["response"]["allowed"] is False
        bad = json.loads(json.dumps(good))
        bad["spec"]["devices"]["requests"][0]["name"] = "Not_A_Name"
        for _ in range(40):
            status, reply = client.post_json("/validate", admission_review(bad))
            assert status == 200 and reply["response"]["allowed"] is False
        status, _ = client.request("POST", "/validate", b"{oops", {"Content-Type": "application/json"})
        assert status == 400
        server.stop()
        lines = [line for line in server.log.read_text().splitlines() if "dra_webhook:" in line]
    finally:
        server.stop()
    decisions = [line for line in lines if " validate " in line]
    assert any(" allowed validate CREATE ResourceClaim default/deep " in line for line in decisions)
    assert all(len(line) < 1200 for line in lines), max(len(line) for line in lines)
    assert not any(line.startswith("[forged]") for line in server.log.read_text().splitlines())
    assert "Traceback" not in server.log.read_text()
    huge_lines = [line for line in decisions if "evil" in line]
    assert len(huge_lines) == 1 and "denied" in huge_lines[0] and "..." in huge_lines[0]
    repeated = [line for line in decisions if "Not_A_Name" in line]
    assert 1 <= len(repeated) <= 5, len(repeated)
    assert any(line.split("dra_webhook: ", 1)[1].startswith("malformed validate") for line in lines)


# --- apply-time warnings from the workers' watch caches ---------------------------------------------


def test_apply_time_warnings_follow_the_cluster(servers: Any, apiserver: FakeAPIServer) -> None:
    """Each worker's cache lists and watches the fake API server; a claim for a DeviceClass that
    does not exist is admitted with a warning, and once the class appears the warning is gone."""
    client = servers(()).client()
    name = "advice-e2e.example.com"
    doc = admission_review({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": "advice", "namespace": "default"},
                            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": name}}]}}})

    def warnings() -> list[str]:
        status, reply = client.post_json("/validate", doc)
        assert status == 200 and reply["response"]["allowed"] is True
        return [w for w in reply["response"].get("warnings") or [] if name in w]

    deadline = time.monotonic() + 60  # (a liveness bound: both workers' caches sync and follow the watch)
    while not any("does not exist" in w for w in warnings()):
        assert time.monotonic() < deadline, "no warning about the missing DeviceClass"
        time.sleep(0.1)
    apiserver.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                   "spec": {}})
    try:
        clean = 0
        while clean < 6:  # several answers in a row, from both workers
            assert time.monotonic() < deadline, "the warning stayed after the DeviceClass was created"
            clean = clean + 1 if not any("does not exist" in w for w in warnings()) else 0
            time.sleep(0.05)
    finally:
        apiserver.delete("DeviceClass", name)
