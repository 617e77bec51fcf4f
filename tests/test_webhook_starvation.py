"""Slow and silent clients cannot take ``dra-webhook serve`` off the air (real sockets, loopback).

50 slow-loris connections (TLS done, headers trickled a byte at a time), 50 idle TCP
connections (not even a TLS hello) and 10 bodies that declare 1 MB and send 2 bytes are held
open against the server as deployed (2 workers); meanwhile ``/healthz`` and ``/readyz`` are
probed as the kubelet probes them (a new connection each time) and AdmissionReviews are sent.
The deadlines are then seen to fire: the slow headers and bodies are cut off, the slow body with
a 408. Bounded: 110 held sockets, a few seconds, then everything is closed.
"""

from __future__ import annotations

import signal
import socket
import ssl
import statistics
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from kubectl_dra.gates import FeatureGates
from tests.fake_apiserver import FakeAPIServer
from tests.test_webhook_server import Server, start_server
from tests.webhook_support import SERVER_NAME, admission_review

pytestmark = pytest.mark.slow

SLOW_HEADERS = 50
IDLE = 50
SLOW_BODIES = 10
HEADER_TIMEOUT = 3.0
BODY_TIMEOUT = 3.0
#: How fast a probe must be answered while the slow connections are held (the issue's bound).
PROBE_BOUND = 0.100

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with FakeAPIServer([], token="t") as api:
        kubeconfig = api.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")
        running = start_server(tmp_path_factory.mktemp("starve"), gates=FeatureGates.default(),
                               kubeconfig=kubeconfig,
                               extra_args=["--header-timeout", str(HEADER_TIMEOUT),
                                           "--body-timeout", str(BODY_TIMEOUT)])
        try:
            yield running
        finally:
            running.stop()


def _tls(server: Server) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=server.ca_file)
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return context.wrap_socket(sock, server_hostname=SERVER_NAME)


def _probe(server: Server, path: str) -> tuple[int, float]:
    """One probe on a new connection, as the kubelet sends it; (status, seconds after connecting)."""
    with _tls(server) as conn:
        start = time.perf_counter()
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {SERVER_NAME}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        elapsed = time.perf_counter() - start
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    return status, elapsed


class Attackers:
    """Holds the slow and idle connections; trickles header bytes until told to stop."""

    def __init__(self, server: Server) -> None:
        self.slow_headers = [_tls(server) for _ in range(SLOW_HEADERS)]
        self.idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(IDLE)]
        self.slow_bodies = [_tls(server) for _ in range(SLOW_BODIES)]
        for conn in self.slow_headers:
            conn.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
        for conn in self.slow_bodies:
            conn.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000000\r\n\r\n{\"")
        self.stop = threading.Event()
        self.cut_off = 0
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def _trickle(self) -> None:
        while not self.stop.wait(0.2):
            for conn in list(self.slow_headers):
                try:
                    conn.sendall(b"X")
                except OSError:  # the server's header deadline closed it
                    self.slow_headers.remove(conn)
                    self.cut_off += 1

    def close(self) -> None:
        self.stop.set()
        self._thread.join(timeout=5)
        for conn in self.slow_headers + self.idle + self.slow_bodies:
            conn.close()


def test_probes_and_reviews_are_served_while_slow_and_idle_connections_are_held(server: Server) -> None:
    attackers = Attackers(server)
    try:
        probes = []
        client = server.client(timeout=5)
        for _ in range(10):
            for path in ("/healthz", "/readyz"):
                status, seconds = _probe(server, path)
                assert status == 200, f"{path}: HTTP {status}"
                probes.append(seconds)
            status, reply = client.post_json("/validate", admission_review(CLAIM))
            assert status == 200 and reply["response"]["allowed"] is True
        # every probe answered; the 90th percentile within the bound (a shared CI machine may stall one)
        assert statistics.quantiles(probes, n=10)[-1] <= PROBE_BOUND, sorted(probes)
        assert len(attackers.slow_headers) + len(attackers.idle) + len(attackers.slow_bodies) == 110
    finally:
        attackers.close()


def test_slow_headers_and_bodies_are_cut_off_at_their_deadlines(server: Server) -> None:
    attackers = Attackers(server)
    try:
        deadline = time.monotonic() + HEADER_TIMEOUT + 10
        while attackers.slow_headers and time.monotonic() < deadline:
            time.sleep(0.2)
        assert attackers.cut_off == SLOW_HEADERS, "slow headers were not cut off"
        for conn in attackers.slow_bodies:
            conn.settimeout(BODY_TIMEOUT + 10)
            head = conn.recv(4096)
            assert head.startswith(b"HTTP/1.1 408"), head[:80]
            assert b"connection: close" in head.lower()
    finally:
        attackers.close()


def test_sigterm_finishes_the_request_in_flight_then_exits(tmp_path: Path) -> None:
    server = start_server(tmp_path, gates=FeatureGates.default(), kubeconfig=None, wait_for="/healthz")
    try:
        conn = _tls(server)
        body = (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u",'
                b'"kind":{"group":"","version":"v1","kind":"ConfigMap"},"operation":"CREATE","object":{}}}')
        conn.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
        time.sleep(0.3)
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        conn.sendall(body[10:])
        conn.settimeout(15)
        reply = conn.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200"), reply[:80]
        assert b'"allowed":true' in reply
        assert server.process.wait(timeout=20) == 0
    finally:
        server.stop()
