"""A local HTTPS server that speaks enough of the Kubernetes API for kubectl-dra's live source.

It serves discovery (``/api``, ``/apis``, group/version resource lists), list and get of
the kinds kubectl-dra reads (cluster-wide and per namespace), paginated lists with
``limit``/``continue`` over a consistent snapshot (later changes do not leak into a list
being paged; an expired token answers 410 as etcd compaction does), bearer-token
authentication, injected faults (any status, or a delay to provoke client timeouts), and
watches (``?watch=1``): ADDED/MODIFIED/DELETED events from a resourceVersion on, BOOKMARK
events on request (:meth:`FakeAPIServer.bookmark`), and a 410 Gone ERROR event for a
resourceVersion older than the last :meth:`FakeAPIServer.compact`.

The TLS certificate (a CA plus a serving certificate for 127.0.0.1/localhost) is made with
``cryptography`` at run time. :meth:`FakeAPIServer.write_kubeconfig` writes a kubeconfig
that trusts it, so tests go through the real ``kubernetes`` client exactly as users do::

    with FakeAPIServer(objects, token="s3cret") as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "config")
        state = load_live_state(kubeconfig=str(kubeconfig))
"""

from __future__ import annotations

import base64
import contextlib
import copy
import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import parse_qs, urlsplit

import yaml

Obj = dict[str, Any]


@dataclass(frozen=True)
class ResourceType:
    """How one kind is served: group/version, plural, namespaced."""

    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def base(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


DEFAULT_TYPES: tuple[ResourceType, ...] = (
    ResourceType("Node", "", "v1", "nodes", False),
    ResourceType("Namespace", "", "v1", "namespaces", False),
    ResourceType("Pod", "", "v1", "pods", True),
    ResourceType("DeviceClass", "resource.k8s.io", "v1", "deviceclasses", False),
    ResourceType("ResourceSlice", "resource.k8s.io", "v1", "resourceslices", False),
    ResourceType("ResourceClaim", "resource.k8s.io", "v1", "resourceclaims", True),
    ResourceType("ResourceClaimTemplate", "resource.k8s.io", "v1", "resourceclaimtemplates", True),
    ResourceType("PodGroup", "scheduling.k8s.io", "v1beta1", "podgroups", True),
)


@dataclass
class Fault:
    """An injected failure for requests to one path (query ignored)."""

    status: int = 500
    message: str = "injected failure"
    #: seconds to wait before answering (longer than the client's timeout: a timeout)
    delay: float = 0.0
    #: how many requests fail (None: all of them)
    times: int | None = None
    #: only requests that carry a continue token (a second or later page)
    later_pages_only: bool = False
    #: value of a Retry-After header to send (None: no header)
    retry_after: str | None = None
    #: a hostile body instead of the Status: "endless" (JSON that never ends, as fast as the
    #: client reads) or "drip" (one byte every ``drip_interval`` seconds); either stops after
    #: ``stream_limit`` seconds or when the server stops
    stream: str | None = None
    drip_interval: float = 0.5
    stream_limit: float = 30.0


@dataclass
class Request:
    """What the server saw: for assertions on paging and authentication."""

    path: str
    query: dict[str, str]
    authorization: str | None


_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 410: "Expired",
            500: "InternalError", 503: "ServiceUnavailable"}

_CERT_LOCK = threading.Lock()
_CERT_CACHE: tuple[bytes, bytes, bytes] | None = None


def make_certificates() -> tuple[bytes, bytes, bytes]:
    """(CA cert PEM, server cert PEM, server key PEM) for 127.0.0.1 and localhost; cached per process."""
    global _CERT_CACHE
    with _CERT_LOCK:
        if _CERT_CACHE is None:
            _CERT_CACHE = _generate_certificates()
        return _CERT_CACHE


def _generate_certificates() -> tuple[bytes, bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-apiserver-ca")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-apiserver")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca_cert.public_bytes(pem), cert.public_bytes(pem), key_pem


def _meta(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


class FakeAPIServer:
    """The fake API server; use as a context manager or call :meth:`start`/:meth:`stop`."""

    def __init__(self, objects: Iterable[Obj] = (), *, token: str | None = "test-token",
                 serve_dra: bool = True, types: Iterable[ResourceType] = DEFAULT_TYPES,
                 max_page_size: int | None = None) -> None:
        self.token = token
        self.serve_dra = serve_dra
        self.types = [t for t in types if serve_dra or t.group != "resource.k8s.io"]
        self.max_page_size = max_page_size
        self.faults: dict[str, Fault] = {}
        self.requests: list[Request] = []
        #: called with each request before it is answered (tests change the state mid-list)
        self.on_request: Callable[[Request], None] | None = None
        self._lock = threading.Lock()
        self._rv = 1000
        self._objects: dict[str, list[Obj]] = {t.kind: [] for t in self.types}
        #: (resourceVersion, kind, event type, object) of every change, for watches
        self._events: list[tuple[int, str, str, Obj]] = []
        self._changed = threading.Condition(self._lock)
        #: watches from an older resourceVersion than this answer 410 Gone
        self._compacted = 0
        #: watches currently streaming (for tests that wait for a watcher to be connected)
        self.active_watches = 0
        #: while set, open watches deliver nothing (changes made meanwhile arrive together)
        self._held = False
        #: resourceVersion -> snapshot of one kind's objects, for continue tokens
        self._snapshots: dict[tuple[str, int], list[Obj]] = {}
        self._stopping = threading.Event()
        #: extra response headers per handler thread (Retry-After of faults)
        self._pending_headers: dict[int, dict[str, str]] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="fake-apiserver-")
        self.ca_pem, cert_pem, key_pem = make_certificates()
        self._cert_file = Path(self._tmp.name) / "tls.crt"
        self._key_file = Path(self._tmp.name) / "tls.key"
        self._cert_file.write_bytes(cert_pem)
        self._key_file.write_bytes(key_pem)
        for obj in objects:
            self.add(obj)

    # ---------------------------------------------------------------- objects and faults

    def add(self, obj: Obj) -> None:
        """Store an object (a kind we do not serve is ignored); bumps the resourceVersion."""
        kind = obj.get("kind")
        if kind not in self._objects:
            return
        with self._lock:
            self._rv += 1
            stored = copy.deepcopy(obj)
            stored.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
            self._objects[kind].append(stored)
            self._record(kind, "ADDED", stored)

    def update(self, obj: Obj) -> None:
        """Replace the stored object of the same kind, namespace and name (a MODIFIED event)."""
        kind = str(obj.get("kind"))
        with self._lock:
            self._rv += 1
            stored = copy.deepcopy(obj)
            stored.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
            self._objects[kind] = [stored if _meta(o) == _meta(stored) else o for o in self._objects[kind]]
            self._record(kind, "MODIFIED", stored)

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        with self._lock:
            self._rv += 1
            gone = [o for o in self._objects[kind] if _meta(o) == (namespace, name)]
            self._objects[kind] = [o for o in self._objects[kind] if _meta(o) != (namespace, name)]
            for obj in gone:
                stored = copy.deepcopy(obj)
                stored["metadata"]["resourceVersion"] = str(self._rv)
                self._record(kind, "DELETED", stored)

    def _record(self, kind: str, event: str, obj: Obj) -> None:
        """Remember a change for watches and wake them (under the lock)."""
        self._events.append((self._rv, kind, event, obj))
        self._changed.notify_all()

    def bookmark(self, kind: str) -> None:
        """Send watches of ``kind`` that asked for bookmarks a BOOKMARK at the current resourceVersion."""
        with self._lock:
            self._rv += 1
            self._record(kind, "BOOKMARK", {"metadata": {"resourceVersion": str(self._rv)}})

    def compact(self) -> None:
        """Forget history: a watch from a resourceVersion before now answers 410 Gone, and open
        watches end (as after an etcd compaction and an API server restart)."""
        with self._lock:
            self._compacted = self._rv
            self._events.clear()
            self._snapshots.clear()
            self._changed.notify_all()

    @contextlib.contextmanager
    def hold_watches(self) -> Iterator[None]:
        """Open watches deliver no event inside the block (e.g. a change then a compaction: the
        change is never seen by a watch, which then has to list again)."""
        with self._lock:
            self._held = True
        try:
            yield
        finally:
            with self._lock:
                self._held = False
                self._changed.notify_all()

    def watch_events(self, kind: str, namespace: str | None, query: dict[str, str]) -> Iterable[Obj]:
        """The events of a watch request, as they happen, until its timeoutSeconds pass or history
        is compacted (a too-old resourceVersion: one ERROR event with a 410 Status)."""
        rtype = next(t for t in self.types if t.kind == kind)
        since = int(query.get("resourceVersion") or 0)
        bookmarks = query.get("allowWatchBookmarks") in ("true", "True", "1")
        end = time.monotonic() + float(query.get("timeoutSeconds") or 30)
        with self._lock:
            compacted_at = self._compacted
            if since and since < self._compacted:
                yield {"type": "ERROR", "object": _status(410, f"too old resource version: {since} "
                                                             f"({self._compacted})")}
                return
            since = since or self._rv
            self.active_watches += 1
        try:
            while not self._stopping.is_set():
                with self._lock:
                    pending = [] if self._held else [e for e in self._events if e[0] > since and e[1] == kind]
                    if not pending:
                        if (self._compacted != compacted_at and not self._held) or time.monotonic() > end:
                            return
                        self._changed.wait(timeout=min(0.2, max(0.0, end - time.monotonic())))
                        continue
                for rv, _, event, obj in pending:
                    since = rv
                    if event == "BOOKMARK":
                        if bookmarks:
                            yield {"type": "BOOKMARK", "object": {"apiVersion": rtype.group_version,
                                                                  "kind": kind, **obj}}
                        continue
                    if namespace is not None and _meta(obj)[0] != namespace:
                        continue
                    yield {"type": event, "object": {"apiVersion": rtype.group_version, "kind": kind,
                                                     **copy.deepcopy(obj)}}
        finally:
            with self._lock:
                self.active_watches -= 1

    def fail(self, path: str, status: int = 500, message: str = "injected failure", *, delay: float = 0.0,
             times: int | None = None, later_pages_only: bool = False, retry_after: str | None = None) -> None:
        """Make requests to ``path`` (e.g. ``/api/v1/nodes``) fail with ``status`` after ``delay``."""
        self.faults[path] = Fault(status, message, delay, times, later_pages_only, retry_after)

    def stream(self, path: str, kind: str, *, drip_interval: float = 0.5, limit: float = 30.0) -> None:
        """Answer requests to ``path`` with 200 and a hostile body (see :attr:`Fault.stream`)."""
        self.faults[path] = Fault(200, "", stream=kind, drip_interval=drip_interval, stream_limit=limit)

    def expire_continue_tokens(self) -> None:
        """Every continue token issued so far answers 410 Gone (as after an etcd compaction)."""
        with self._lock:
            self._snapshots.clear()

    def list_requests(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> "FakeAPIServer":
        handler = type("Handler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self._cert_file, self._key_file)
        self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        self._tmp.cleanup()

    def __enter__(self) -> "FakeAPIServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"https://127.0.0.1:{self._httpd.server_address[1]}"

    def kubeconfig(self, *, token: str | None = None, context: str = "fake", namespace: str | None = None,
                   extra_contexts: dict[str, str | None] | None = None) -> Obj:
        """A kubeconfig dict for this server (CA embedded, bearer token); extra contexts map
        name -> namespace and share the cluster and user."""
        user_token = self.token if token is None else token
        contexts = [{"name": context, "context": {"cluster": "fake", "user": "fake",
                                                  **({"namespace": namespace} if namespace else {})}}]
        for name, ns in (extra_contexts or {}).items():
            contexts.append({"name": name, "context": {"cluster": "fake", "user": "fake",
                                                       **({"namespace": ns} if ns else {})}})
        return {
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": "fake", "cluster": {
                "server": self.url, "certificate-authority-data": base64.b64encode(self.ca_pem).decode()}}],
            "users": [{"name": "fake", "user": {"token": user_token} if user_token else {}}],
            "contexts": contexts,
        }

    def write_kubeconfig(self, path: str | Path, **kwargs: Any) -> Path:
        """Write :meth:`kubeconfig` to ``path`` and return it."""
        path = Path(path)
        path.write_text(yaml.safe_dump(self.kubeconfig(**kwargs)), encoding="utf-8")
        return path

    # ---------------------------------------------------------------- request handling

    def _take_fault(self, path: str, query: dict[str, str]) -> Fault | None:
        with self._lock:
            fault = self.faults.get(path)
            if fault is None or (fault.later_pages_only and not query.get("continue")):
                return None
            if fault.times is not None:
                if fault.times <= 0:
                    return None
                fault.times -= 1
            return fault

    def handle(self, path: str, query: dict[str, str], authorization: str | None) -> tuple[int, Any, float]:
        """(status, JSON body, delay) for one GET (see :meth:`headers_for` for extra headers)."""
        request = Request(path, query, authorization)
        with self._lock:
            self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)
        scheme, _, credentials = (authorization or "").partition(" ")
        if self.token is not None and (scheme.lower() != "bearer" or credentials != self.token):
            return 401, _status(401, "Unauthorized"), 0.0
        fault = self._take_fault(path, query)
        if fault is not None:
            if fault.retry_after is not None:
                self._pending_headers[threading.get_ident()] = {"Retry-After": fault.retry_after}
            if fault.stream is not None:
                return fault.status, fault, fault.delay
            return fault.status, _status(fault.status, fault.message), fault.delay
        status, body = self._route(path.rstrip("/") or "/", query)
        return status, body, 0.0

    def _route(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        if path == "/version":
            return 200, {"major": "1", "minor": "36", "gitVersion": "v1.36.0-fake"}
        if path == "/api":
            return 200, {"kind": "APIVersions", "versions": ["v1"]}
        if path == "/apis":
            return 200, self._group_list()
        parts = path.strip("/").split("/")
        for t in {(t.group, t.version) for t in self.types}:
            prefix = (["apis", t[0], t[1]] if t[0] else ["api", t[1]])
            if parts[:len(prefix)] == prefix:
                return self._resource_path(t[0], t[1], parts[len(prefix):], query)
        if len(parts) == 2 and parts[0] == "apis" and any(t.group == parts[1] for t in self.types):
            return 200, self._group(parts[1])
        return 404, _status(404, f"the server could not find the requested resource ({path})")

    def _group_list(self) -> Obj:
        groups = sorted({t.group for t in self.types if t.group})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [self._group(g) for g in groups]}

    def _group(self, group: str) -> Obj:
        versions = sorted({t.version for t in self.types if t.group == group})
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries,
                "preferredVersion": entries[0]}

    def _resource_path(self, group: str, version: str, rest: list[str], query: dict[str, str]) -> tuple[int, Any]:
        types = [t for t in self.types if t.group == group and t.version == version]
        gv = f"{group}/{version}" if group else version
        if not rest:
            return 200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
                {"name": t.plural, "singularName": t.kind.lower(), "namespaced": t.namespaced, "kind": t.kind,
                 "verbs": ["get", "list"]} for t in types]}
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        by_plural = {t.plural: t for t in types}
        rtype = by_plural.get(rest[0])
        if rtype is None or len(rest) > 2 or (namespace is not None and not rtype.namespaced):
            return 404, _status(404, "the server could not find the requested resource")
        if len(rest) == 2:
            return self._get(rtype, namespace or "", rest[1])
        if query.get("watch") in ("1", "true", "True"):
            return 200, _Watch(self.watch_events(rtype.kind, namespace, query))
        return self._list(rtype, namespace, query)

    def _get(self, rtype: ResourceType, namespace: str, name: str) -> tuple[int, Any]:
        with self._lock:
            for obj in self._objects[rtype.kind]:
                if _meta(obj) == (namespace if rtype.namespaced else "", name):
                    return 200, {"apiVersion": rtype.group_version, "kind": rtype.kind, **copy.deepcopy(obj)}
        return 404, _status(404, f'{rtype.plural} "{name}" not found')

    def _list(self, rtype: ResourceType, namespace: str | None, query: dict[str, str]) -> tuple[int, Any]:
        token = query.get("continue")
        with self._lock:
            if token:
                try:
                    rv, offset = _decode_token(token)
                except ValueError:
                    return 400, _status(400, "continue key is not valid")
                snapshot = self._snapshots.get((rtype.kind, rv))
                if snapshot is None:
                    return 410, _status(410, "The provided continue parameter is too old to display a "
                                             "consistent list result. You can start a new list without "
                                             "the continue parameter.")
            else:
                rv, offset = self._rv, 0
                snapshot = [copy.deepcopy(o) for o in self._objects[rtype.kind]
                            if namespace is None or _meta(o)[0] == namespace]
                self._snapshots[(rtype.kind, rv)] = snapshot
        limit = int(query.get("limit") or 0)
        if self.max_page_size and (not limit or limit > self.max_page_size):
            limit = self.max_page_size
        end = offset + limit if limit else len(snapshot)
        items = []
        for obj in snapshot[offset:end]:
            item = dict(obj)
            item.pop("kind", None)  # list items carry no kind/apiVersion, as the real server sends them
            item.pop("apiVersion", None)
            items.append(item)
        metadata: Obj = {"resourceVersion": str(rv)}
        if end < len(snapshot):
            metadata["continue"] = _encode_token(rv, end)
            metadata["remainingItemCount"] = len(snapshot) - end
        return 200, {"kind": f"{rtype.kind}List", "apiVersion": rtype.group_version, "metadata": metadata,
                     "items": items}


class _Watch:
    """A watch response: events written one JSON line each as they come."""

    def __init__(self, events: Iterable[Obj]) -> None:
        self.events = events


def _status(code: int, message: str) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": _REASONS.get(code, "InternalError"), "code": code}


def _encode_token(rv: int, offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"rv": rv, "start": offset}).encode()).decode()


def _decode_token(token: str) -> tuple[int, int]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), int(data["start"])
    except Exception as exc:  # noqa: BLE001 - any garbage is a bad token
        raise ValueError(token) from exc


class _Handler(BaseHTTPRequestHandler):
    server_ref: FakeAPIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet tests
        return None

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        status, body, delay = self.server_ref.handle(split.path, query, self.headers.get("Authorization"))
        if delay and self.server_ref._stopping.wait(delay):
            return
        if isinstance(body, Fault):
            self._hostile(body)
            return
        if isinstance(body, _Watch):
            self._stream(body)
            return
        payload = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in self.server_ref._pending_headers.pop(threading.get_ident(), {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass

    def _stream(self, watch: _Watch) -> None:
        """Send a watch's events as chunks of one JSON line each, then the last chunk."""
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in watch.events:
                line = json.dumps(event).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True

    def _hostile(self, fault: Fault) -> None:
        """A 200 answer whose body never ends (bounded by the fault's time limit and the server)."""
        import time

        stopping = self.server_ref._stopping
        end = time.monotonic() + fault.stream_limit
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            if fault.stream == "drip":
                self.wfile.write(b'{"items": [')
                while not stopping.wait(fault.drip_interval) and time.monotonic() < end:
                    self.wfile.write(b" ")
                    self.wfile.flush()
            else:
                chunk = b'{"kind": "Node", "metadata": {"name": "n"}}, ' * 4096
                self.wfile.write(b'{"items": [')
                while not stopping.is_set() and time.monotonic() < end:
                    self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass
        self.close_connection = True
