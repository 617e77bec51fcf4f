"""``dra-webhook serve``: the Flask app over TLS in gunicorn, in-process (``BaseApplication``).

gunicorn's threaded workers (``gthread``) keep the API server's connections alive;
the app is loaded once in the master (``preload_app``) and forked into the workers.
TLS comes from :class:`webhook.tls.ReloadingTLS` through gunicorn's ``ssl_context``
hook, so rotated certificate files are picked up by new connections without a
restart. Metrics of all workers are aggregated through prometheus_client's
multiprocess directory.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication

from kubectl_dra.errors import UsageError

from .tls import CertificateError, ReloadingTLS


#: Seconds a thread may hold the GIL while others wait (Python's default is 0.005).
SWITCH_INTERVAL = 0.02

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
    keepalive: int = 75
    log_level: str = "info"
    metrics_dir: str | None = None


class WebhookServer(BaseApplication):
    """gunicorn serving one already-built WSGI app with settings given as a dict."""

    def __init__(self, wsgi_app: Any, settings: dict[str, Any]) -> None:
        self._wsgi_app = wsgi_app
        self._settings = settings
        super().__init__(prog="dra-webhook")

    def load_config(self) -> None:
        """Copy the settings into gunicorn's config."""
        for key, value in self._settings.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self._wsgi_app


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


def gunicorn_settings(options: ServeOptions, tls: ReloadingTLS) -> dict[str, Any]:
    """The gunicorn configuration for ``options``."""
    from .metrics import worker_exited

    return {
        "bind": [options.bind],
        "workers": options.workers,
        "worker_class": "gthread",
        "threads": options.threads,
        "keepalive": options.keepalive,
        "timeout": 30,
        "graceful_timeout": 10,
        "preload_app": True,
        "certfile": options.cert_file,
        "keyfile": options.key_file,
        "ssl_context": tls.gunicorn_hook(),
        "accesslog": None,
        "errorlog": "-",
        "loglevel": options.log_level,
        "proc_name": "dra-webhook",
        "control_socket_disable": True,
        "child_exit": lambda arbiter, worker: worker_exited(worker.pid),
    }


def build(options: ServeOptions) -> WebhookServer:
    """Check the options, load gates and certificates, and build the server (not yet running)."""
    if options.mode not in ("enforce", "warn"):
        raise UsageError(f"--mode must be enforce or warn, not {options.mode!r}")
    if options.workers < 1 or options.threads < 1:
        raise UsageError("--workers and --threads must be at least 1")
    gates = resolve_gates(options.feature_gates, options.kubernetes_version)
    tls = ReloadingTLS(options.cert_file, options.key_file)
    try:
        tls.context()
    except CertificateError as exc:
        raise UsageError(f"cannot serve TLS: {exc}") from None
    prepare_metrics_dir(options.metrics_dir)
    _configure_logging(options.log_level)

    from .app import Settings, create_app, warm_up
    from .namespaces import KubernetesNamespaceFetcher, NamespaceLabels

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
    # Requests are CPU-bound and short: let a thread finish one (or reach its next I/O) before the
    # interpreter hands the GIL to another, instead of interleaving them every 5 ms.
    sys.setswitchinterval(SWITCH_INTERVAL)
    allow_deep_nesting()
    settings = Settings(
        gates=gates,
        mode=options.mode,
        namespace_labels=NamespaceLabels(fetcher, ttl=options.namespace_cache_ttl),
        readiness=lambda: tls.readiness() or fetcher.readiness(),
    )
    return WebhookServer(create_app(settings), gunicorn_settings(options, tls))


def allow_deep_nesting() -> None:
    """Let request threads decide on objects nested as deep as the API server accepts: a higher
    recursion limit, and thread stacks that hold it (set before gunicorn starts its threads)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    threading.stack_size(max(threading.stack_size(), THREAD_STACK_BYTES))


def run(options: ServeOptions) -> None:
    """Serve until gunicorn is stopped (SIGTERM / SIGINT)."""
    build(options).run()


def _configure_logging(level: str) -> None:
    """The webhook's own log lines on stderr next to gunicorn's, with repeats rate-limited."""
    from .logs import RepeatFilter

    logger = logging.getLogger("dra_webhook")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s"))
        handler.addFilter(RepeatFilter())
        logger.addHandler(handler)
    logger.setLevel(level.upper())
