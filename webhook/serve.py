"""``dra-webhook serve``: the webhook over TLS in granian, in-process.

granian (Rust: hyper, rustls, tokio) runs the worker processes and owns the sockets: each
worker bounds its connections (``--max-connections``), gives every request's headers a
deadline (``--header-timeout``) and speaks TLS; :mod:`webhook.rsgi` reads each body on the
worker's event loop within ``--body-timeout`` and hands only complete bodies to the decision
threads. A slow or silent client therefore holds a socket, never a thread, and ``/healthz``
and ``/readyz`` are answered on the event loop whatever the other connections do.

The app is built once in the main process and forked into the workers. The certificate
files are watched from the main process; once a changed pair loads, the workers are
respawned one by one (each new worker starts before the old one stops), so rotated
certificates are served without a restart and without refused connections. Metrics of all
workers are aggregated through prometheus_client's multiprocess directory.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from kubectl_dra.errors import UsageError

from .logs import RepeatFilter
from .tls import CertificateError, ReloadingTLS


#: Seconds a thread may hold the GIL while others wait: Python's default. Small bodies are decided
#: on the event loop's thread, and granian's threads need the GIL to hand it each request and
#: answer: at 20 ms (when every decision ran on a pool thread) a busy loop kept them waiting, and
#: the p99 at 1,000 claims/s was 1.1-1.4x higher (medians of paired runs), with rare tails past 10 ms.
SWITCH_INTERVAL = 0.005

#: Deepest nesting the API server decodes (its JSON decoder's limit); opaque driver parameters
#: (raw JSON, up to 10 KiB) can nest ~5,000 deep. orjson stops at 1,024 levels, and the json
#: module it falls back to recurses once per level (as may other C code that walks a value).
MAX_NESTING = 10_000
#: Python frames allowed per request thread: a few per nesting level, plus the stack below.
RECURSION_LIMIT = 6 * MAX_NESTING
#: Stack of each request thread (address space, touched only as deep as a request goes).
THREAD_STACK_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ServeOptions:
    """Everything ``dra-webhook serve`` takes."""

    cert_file: str
    key_file: str
    bind: str = "0.0.0.0:8443"
    workers: int = 2
    threads: int = 4
    mode: str = "enforce"
    feature_gates: str | None = None
    kubernetes_version: str | None = None
    kubeconfig: str | None = None
    kube_context: str | None = None
    namespace_cache_ttl: float = 10.0
    lookup_timeout: float = 2.0
    header_timeout: float = 5.0
    body_timeout: float = 10.0
    max_connections: int = 512
    apply_warnings: bool = True
    warnings_deadline: float = 0.05
    warnings_max_devices: int = 20_000
    log_level: str = "info"
    metrics_dir: str | None = None


def resolve_gates(feature_gates: str | None, kubernetes_version: str | None) -> Any:
    """Feature gates as the API server takes them: release defaults, then ``--feature-gates``."""
    from kubectl_dra.gates import FeatureGates

    gates = FeatureGates.for_version(kubernetes_version) if kubernetes_version else FeatureGates.default()
    return gates.with_overrides(feature_gates) if feature_gates else gates


def prepare_metrics_dir(path: str | None) -> str:
    """Point prometheus_client at an empty multiprocess directory (before it is imported, if possible)."""
    directory = Path(path) if path else Path(tempfile.mkdtemp(prefix="dra-webhook-metrics-"))
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
    if "prometheus_client.values" in sys.modules:  # imported earlier: switch its value class now
        from prometheus_client import values

        values.ValueClass = values.get_value_class()
    return str(directory)


def build(options: ServeOptions) -> "WebhookServer":
    """Check the options, load gates and certificates, and build the server (not yet running)."""
    if options.mode not in ("enforce", "warn"):
        raise UsageError(f"--mode must be enforce or warn, not {options.mode!r}")
    if options.workers < 1 or options.threads < 1:
        raise UsageError("--workers and --threads must be at least 1")
    host, port = parse_bind(options.bind)
    gates = resolve_gates(options.feature_gates, options.kubernetes_version)
    tls = ReloadingTLS(options.cert_file, options.key_file)
    try:
        tls.context()
    except CertificateError as exc:
        raise UsageError(f"cannot serve TLS: {exc}") from None
    prepare_metrics_dir(options.metrics_dir)
    log_repeats = _configure_logging(options.log_level)

    from .metrics import Metrics
    from .namespaces import KubernetesNamespaceFetcher, NamespaceLabels
    from .rsgi import Limits, WebhookRSGI
    from .service import AdmissionService, Settings, warm_up

    fetcher = KubernetesNamespaceFetcher(options.kubeconfig, options.kube_context, options.lookup_timeout)
    fetcher.preload()
    problem = fetcher.readiness()
    if problem:
        logging.getLogger("dra_webhook").warning("%s: /readyz answers 503 until this is fixed", problem)
    for problem in warm_up(gates):
        logging.getLogger("dra_webhook").warning("warm-up: %s", problem)
    # Everything loaded so far lives as long as the server: keep it out of the cyclic garbage
    # collector, whose full passes would otherwise rescan it (and dirty the pages the forked
    # workers share) while requests allocate.
    gc.collect()
    gc.freeze()
    sys.setswitchinterval(SWITCH_INTERVAL)
    allow_deep_nesting()
    settings = Settings(
        gates=gates,
        mode=options.mode,
        namespace_labels=NamespaceLabels(fetcher, ttl=options.namespace_cache_ttl),
        readiness=lambda: tls.readiness() or fetcher.readiness(),
    )
    metrics = Metrics()
    cache = None
    if options.apply_warnings:
        from .advice import Advisor, DeviceCache, kubernetes_api

        cache = DeviceCache(kubernetes_api(options.kubeconfig, options.kube_context),
                            max_devices=options.warnings_max_devices)
        settings = replace(settings, advise=Advisor(cache, options.warnings_deadline, metrics.advice_result))
    app = WebhookRSGI(AdmissionService(settings, metrics, log_repeats),
                      Limits(body_timeout=options.body_timeout, threads=options.threads),
                      on_start=cache.start if cache else None, on_stop=cache.stop if cache else None)
    return WebhookServer(app, options, tls, host, port)


def parse_bind(bind: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT`` for IPv6) as granian takes it."""
    host, sep, port = bind.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--bind must be HOST:PORT, not {bind!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


class WebhookServer:
    """granian serving one already-built RSGI app, with certificate rotation by worker respawn."""

    #: Seconds between checks of the certificate files.
    CERT_POLL_SECONDS = 1.0
    #: Seconds a stopping worker may take to finish its requests before it is killed.
    GRACEFUL_SECONDS = 10

    def __init__(self, app: Any, options: ServeOptions, tls: ReloadingTLS, host: str, port: int) -> None:
        self.app = app
        self.options = options
        self.tls = tls
        self.host = host
        self.port = port

    def granian(self) -> Any:
        """The granian server for the options (not started)."""
        from granian import Granian
        from granian.constants import HTTPModes, Interfaces, SSLProtocols
        from granian.http import HTTP1Settings

        return Granian(
            "dra-webhook",
            address=self.host,
            port=self.port,
            interface=Interfaces.RSGI,
            workers=self.options.workers,
            backpressure=self.options.max_connections,
            http=HTTPModes.http1,
            websockets=False,
            http1_settings=HTTP1Settings(header_read_timeout=max(1, int(self.options.header_timeout * 1000)),
                                         keep_alive=True),
            ssl_cert=Path(self.options.cert_file),
            ssl_key=Path(self.options.key_file),
            ssl_protocol_min=SSLProtocols.tls12,
            log_level=_granian_level(self.options.log_level),
            respawn_failed_workers=True,
            respawn_interval=1.0,
            workers_kill_timeout=self.GRACEFUL_SECONDS,
        )

    def run(self) -> None:
        """Serve until SIGTERM / SIGINT; then each worker finishes its requests and stops."""
        server = self.granian()
        cert, key = Path(self.options.cert_file), Path(self.options.key_file)

        def reload_certificates() -> None:
            # granian keeps the files' resolved paths; a rotated Secret volume points elsewhere now
            server.build_ssl_context(cert, key, None, server.ssl_ctx[4], None, [], False)

        server.on_reload(reload_certificates)
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch_certificates, args=(server.signal_handler_reload, stop),
                                   name="dra-webhook-certs", daemon=True)
        watcher.start()
        try:
            server.serve(target_loader=lambda: self.app, wrap_loader=False)
        finally:
            stop.set()

    def _watch_certificates(self, respawn: Callable[[], None], stop: threading.Event) -> None:
        """Respawn the workers once a changed certificate pair loads (a torn pair is waited out)."""
        seen = self.tls.reloads
        while not stop.wait(self.CERT_POLL_SECONDS):
            try:
                self.tls.context()
            except CertificateError:
                continue
            if self.tls.reloads != seen:
                seen = self.tls.reloads
                logging.getLogger("dra_webhook").info("certificate changed: respawning the workers")
                respawn()


def _granian_level(level: str) -> Any:
    from granian.log import LogLevels

    return LogLevels(level)


def allow_deep_nesting() -> None:
    """Let request threads decide on objects nested as deep as the API server accepts: a higher
    recursion limit, and thread stacks that hold it (set before the workers start their threads)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    threading.stack_size(max(threading.stack_size(), THREAD_STACK_BYTES))


def run(options: ServeOptions) -> None:
    """Serve until stopped (SIGTERM / SIGINT)."""
    build(options).run()


def _configure_logging(level: str) -> RepeatFilter:
    """The webhook's own log lines on stderr next to granian's, with repeats rate-limited; returns
    the handler's repeat filter, which the admission service asks before it makes a decision line."""
    logger = logging.getLogger("dra_webhook")
    repeats = next((f for h in logger.handlers for f in h.filters if isinstance(f, RepeatFilter)), None)
    if repeats is None:
        repeats = RepeatFilter()
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s"))
        handler.addFilter(repeats)
        logger.addHandler(handler)
    logger.setLevel(level.upper())
    return repeats
