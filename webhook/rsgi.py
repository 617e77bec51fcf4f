"""The webhook as an RSGI application, the interface granian serves natively.

granian (Rust: hyper and rustls on tokio) owns the sockets: it bounds the connections of each
worker, gives every connection a deadline for its request headers, and speaks TLS. This
module does the rest without ever letting a slow peer hold a thread: a request body is read
on the worker's event loop, within :attr:`Limits.body_timeout` and :data:`MAX_BODY_BYTES`, and
only a complete body is decided on. A small, shallow body that cannot lead to a namespace
lookup (no ``adminAccess`` in it, spelled out or behind a ``\\u`` escape) is decided on the
event loop: a typical claim takes a fraction of a millisecond, less than handing it to a thread
and back costs (its apply-time warnings, when on, stop at their deadline). Every other body goes
to the worker's thread pool (threads, so that a namespace lookup of one request, or the decision
on a large slice, does not stall the others; big stacks, for objects nested as deep as the API
server accepts). ``/healthz`` and ``/readyz`` are answered on the event loop itself, so they
stay fast while slow or idle connections are open and while the pool is busy.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from .review import MAX_BODY_BYTES, error_status
from .service import HEALTHY, AdmissionService, Reply, json_reply, too_large

log = logging.getLogger("dra_webhook")

#: Largest over-limit body read and dropped so that its sender gets the 413 (larger: connection closed).
MAX_DRAINED_BYTES = 4 * MAX_BODY_BYTES

ADMISSION_PATHS = {"/validate": "validate", "/mutate": "mutate"}


#: A body containing this may need a namespace lookup (admin access): always decided in the pool,
#: as is a body with a ``\u`` escape, which could spell it without these bytes.
ADMIN_ACCESS_FIELD = b"adminAccess"
UNICODE_ESCAPE = b"\\u"
#: Most brackets a body decided on the event loop may hold: its nesting depth is below this, far
#: from what the loop thread's stack must hold (deep bodies go to the pool's big-stack threads).
MAX_INLINE_BRACKETS = 1000


@dataclass(frozen=True)
class Limits:
    """How long a body may take, how many requests a worker decides at once in its pool, and the
    largest body decided on the event loop (0: every body goes to the pool)."""

    body_timeout: float = 10.0
    threads: int = 4
    inline_bytes: int = 16 * 1024


class BodyTooLarge(Exception):
    """The body grew past :data:`MAX_BODY_BYTES` (only possible without a Content-Length)."""


class WebhookRSGI:
    """``/validate``, ``/mutate``, ``/healthz``, ``/readyz`` and ``/metrics`` for granian."""

    def __init__(self, service: AdmissionService, limits: Limits = Limits(),
                 on_start: Callable[[], None] | None = None, on_stop: Callable[[], None] | None = None) -> None:
        self.service = service
        self.limits = limits
        self._on_start = on_start
        self._on_stop = on_stop
        self._pool: ThreadPoolExecutor | None = None

    # --- worker lifetime (granian calls these in each worker process) -----------------------

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the worker's decision threads and whatever the server asked to run per worker."""
        self._pool = ThreadPoolExecutor(self.limits.threads, thread_name_prefix="dra-webhook")
        if self._on_start:
            self._on_start()

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Stop per-worker services; requests in flight have been answered by now."""
        if self._on_stop:
            self._on_stop()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # --- requests -----------------------------------------------------------------------------

    async def __rsgi__(self, scope: Any, protocol: Any) -> None:
        if scope.proto != "http":
            return
        reply, close = await self._answer(scope, protocol)
        headers = [("content-type", reply.content_type)]
        if close:
            headers.append(("connection", "close"))
        protocol.response_bytes(reply.status, headers, reply.body)

    async def _answer(self, scope: Any, protocol: Any) -> tuple[Reply, bool]:
        """The reply, and whether the connection must close after it (body left unread)."""
        path, method = scope.path, scope.method
        endpoint = ADMISSION_PATHS.get(path)
        if endpoint is not None:
            if method != "POST":
                return _status(405, "MethodNotAllowed", f"{path} takes POST"), False
            return await self._admission(endpoint, scope, protocol)
        if path == "/healthz" and method in ("GET", "HEAD"):
            return HEALTHY, False
        if path == "/readyz" and method in ("GET", "HEAD"):
            return self.service.readyz(), False
        if path == "/metrics" and method == "GET":
            return await self._in_pool(self.service.metrics_page), False
        return _status(404, "NotFound", f"no such endpoint: {path[:100]}"), False

    async def _admission(self, endpoint: str, scope: Any, protocol: Any) -> tuple[Reply, bool]:
        """Read the whole body within the deadline, then decide on it in the pool."""
        length = _content_length(scope.headers.get("content-length"))
        if length is not None and length > MAX_BODY_BYTES:
            self.service.rejected_body(endpoint)
            drained = length <= MAX_DRAINED_BYTES and await self._drain(protocol)
            return too_large(), not drained
        try:
            async with asyncio.timeout(self.limits.body_timeout):
                body = await protocol() if length is not None else await _read_capped(protocol)
        except TimeoutError:
            self.service.rejected_body(endpoint)
            log.info("POST %s: request body not complete after %gs; connection closed", scope.path,
                     self.limits.body_timeout, extra={"repeat_key": ("slow-body", endpoint)})
            return _status(408, "Timeout", f"request body not received within {self.limits.body_timeout:g}s"), True
        except BodyTooLarge:
            self.service.rejected_body(endpoint)
            return too_large(), True
        except Exception:  # noqa: BLE001 - the peer went away mid-body: nobody to answer
            return _status(400, "BadRequest", "request body could not be read"), True
        if self._inline(body):
            return self.service.admission(endpoint, body), False
        return await self._in_pool(self.service.admission, endpoint, body), False

    def _inline(self, body: bytes) -> bool:
        """Whether ``body`` is decided on the event loop: small, shallow, and no namespace lookup."""
        return (len(body) <= self.limits.inline_bytes and ADMIN_ACCESS_FIELD not in body
                and UNICODE_ESCAPE not in body and body.count(b"[") + body.count(b"{") <= MAX_INLINE_BRACKETS)

    async def _drain(self, protocol: Any) -> bool:
        """Read and drop a refused body within the deadline, so that its sender sees the 413."""
        try:
            async with asyncio.timeout(self.limits.body_timeout):
                async for _ in protocol:
                    pass
        except Exception:  # noqa: BLE001 - too slow or gone: the connection is closed instead
            return False
        return True

    async def _in_pool(self, call: Callable[..., Reply], *args: Any) -> Reply:
        """Run ``call`` on a decision thread of this worker."""
        if self._pool is None:  # served without __rsgi_init__ (tests): one pool, made on first use
            self._pool = ThreadPoolExecutor(self.limits.threads, thread_name_prefix="dra-webhook")
        return await asyncio.get_running_loop().run_in_executor(self._pool, call, *args)


async def _read_capped(protocol: Any) -> bytes:
    """A body without Content-Length (chunked), refused once it passes :data:`MAX_BODY_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in protocol:
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise BodyTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


def _content_length(value: str | None) -> int | None:
    """The declared body length (hyper has already refused malformed ones)."""
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _status(code: int, reason: str, message: str) -> Reply:
    return json_reply(code, error_status(code, reason, message))
