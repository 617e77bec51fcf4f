"""Where the RSGI app decides: small, shallow bodies without admin access on the event loop;
the rest in the worker's thread pool, so that a slow namespace lookup or a big object never
holds the loop (in-process, with stand-ins for granian's scope and protocol)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Mapping

from kubectl_dra.gates import FeatureGates
from tests.webhook_support import admission_review
from webhook.rsgi import MAX_INLINE_BRACKETS, Limits, WebhookRSGI
from webhook.service import AdmissionService, Settings


def claim(name: str, admin: bool = False) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu.example.com"}
    if admin:
        exactly["adminAccess"] = True
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "ops"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


class Scope:
    proto = "http"
    method = "POST"

    def __init__(self, path: str, body: bytes) -> None:
        self.path = path
        self.headers = {"content-length": str(len(body))}


class Protocol:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.status: int | None = None
        self.reply = b""

    async def __call__(self) -> bytes:
        return self.body

    def response_bytes(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status, self.reply = status, body


def body_of(obj: dict[str, Any]) -> bytes:
    return json.dumps(admission_review(obj)).encode()


def test_small_plain_bodies_are_decided_on_the_loop_the_rest_in_the_pool() -> None:
    app = WebhookRSGI(AdmissionService(Settings(gates=FeatureGates.default())))
    assert app._inline(body_of(claim("a")))
    assert not app._inline(body_of(claim("a", admin=True)))  # may look up the namespace
    admin = body_of(claim("a", admin=True))
    escaped = admin.replace(b'"adminAccess"', b'"admin\\u0041ccess"')
    assert b"adminAccess" not in escaped and json.loads(escaped) == json.loads(admin)
    assert not app._inline(escaped)  # the same key, spelled with an escape
    big = claim("a")
    big["metadata"]["annotations"] = {"note": "x" * (Limits().inline_bytes + 1)}
    assert not app._inline(body_of(big))
    deep = claim("a")
    deep["spec"]["devices"]["config"] = [{"opaque": {"driver": "gpu.example.com",
                                                     "parameters": {"p": [[]] * MAX_INLINE_BRACKETS}}}]
    assert not app._inline(body_of(deep))
    assert not WebhookRSGI(app.service, Limits(inline_bytes=0))._inline(body_of(claim("a")))


def test_a_slow_namespace_lookup_does_not_hold_other_requests() -> None:
    release = threading.Event()
    asked: list[str] = []

    def labels(namespace: str) -> Mapping[str, str]:
        asked.append(namespace)
        release.wait(10)
        return {"resource.kubernetes.io/admin-access": "true"}

    app = WebhookRSGI(AdmissionService(Settings(gates=FeatureGates.default(), namespace_labels=labels)))

    async def run() -> tuple[Protocol, Protocol]:
        admin, plain = Protocol(body_of(claim("admin", admin=True))), Protocol(body_of(claim("plain")))
        slow = asyncio.ensure_future(app.__rsgi__(Scope("/validate", admin.body), admin))
        while not asked:  # the admin-access request is now waiting for its lookup in the pool
            await asyncio.sleep(0.01)
        await asyncio.wait_for(app.__rsgi__(Scope("/validate", plain.body), plain), 5)
        assert not slow.done() and plain.status == 200
        release.set()
        await asyncio.wait_for(slow, 10)
        return admin, plain

    try:
        admin, plain = asyncio.run(run())
    finally:
        release.set()
    assert json.loads(plain.reply)["response"]["allowed"] is True
    assert json.loads(admin.reply)["response"]["allowed"] is True
