"""Namespace labels for the admin-access check: read through the API with a small TTL cache.

The core asks for a namespace's labels only when a claim or template requests admin
access; :class:`NamespaceLabels` answers from a per-process cache and otherwise from the
API server (``GET /api/v1/namespaces/NAME`` through the ``kubernetes`` client). A failed
lookup raises :class:`NamespaceLookupError`, which the core turns into a denial naming it.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
import time
from typing import Callable, Mapping

from urllib3.util.retry import Retry

from kubectl_dra.errors import ClusterAccessError

from .kubeclient import ClusterConfigError, client_configuration, one_line

Fetch = Callable[[str], Mapping[str, str]]


class NamespaceLookupError(ClusterAccessError):
    """The labels of a namespace could not be read from the API server."""


class NamespaceLabels:
    """``labels(namespace)`` with a TTL cache in front of ``fetch``; failures are not cached."""

    def __init__(self, fetch: Fetch, *, ttl: float = 10.0, max_entries: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, dict[str, str]]] = {}

    def __call__(self, namespace: str) -> dict[str, str]:
        """The labels of ``namespace``, from the cache while fresh."""
        if not namespace:
            raise NamespaceLookupError("the object has no namespace to look up")
        now = self._clock()
        with self._lock:
            hit = self._cache.get(namespace)
        if hit is not None and hit[0] > now:
            return dict(hit[1])
        labels = dict(self._fetch(namespace))
        if self._ttl > 0:
            with self._lock:
                if len(self._cache) >= self._max_entries:
                    self._evict(now)
                self._cache[namespace] = (now + self._ttl, labels)
        return dict(labels)

    def _evict(self, now: float) -> None:
        """Drop expired entries, and the oldest half if that is not enough (called under the lock)."""
        for name in [n for n, (expiry, _) in self._cache.items() if expiry <= now]:
            del self._cache[name]
        if len(self._cache) >= self._max_entries:
            for name in sorted(self._cache, key=lambda n: self._cache[n][0])[: len(self._cache) // 2 + 1]:
                del self._cache[name]


class KubernetesNamespaceFetcher:
    """Reads namespace labels with the ``kubernetes`` client: in-cluster config, else a kubeconfig.

    The client is created lazily and again after a fork, because the server's workers fork
    from the main process and a connection pool must not be shared across processes.
    """

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, timeout: float = 2.0) -> None:
        self._kubeconfig = kubeconfig
        self._context = context
        self._timeout = timeout
        self._lock = threading.Lock()
        self._api: object | None = None
        self._pid = 0

    @staticmethod
    def preload() -> None:
        """Import the client before the server forks: it loads lazily and its first use costs
        seconds, which must not land on an admission request (the API server waits 5 s at most)."""
        for module in ("kubernetes.config", "kubernetes.client.exceptions"):
            importlib.import_module(module)
        client = importlib.import_module("kubernetes.client")
        for name in ("CoreV1Api", "ApiClient", "Configuration"):
            getattr(client, name)

    def _core_api(self):  # -> kubernetes.client.CoreV1Api
        """The CoreV1Api of this process, created on first use."""
        with self._lock:
            if self._api is None or self._pid != os.getpid():
                from kubernetes import client

                configuration = self._configuration()
                # The lookup timeout is the whole budget: retry a failed connect once, never a slow read.
                configuration.retries = Retry(total=1, connect=1, read=0, redirect=0, status=0, other=0)
                self._api = client.CoreV1Api(client.ApiClient(configuration))
                self._pid = os.getpid()
            return self._api

    def _configuration(self):  # -> kubernetes.client.Configuration
        """The client configuration: in-cluster in a pod (unless a kubeconfig is given), else the kubeconfig."""
        try:
            return client_configuration(self._kubeconfig, self._context)
        except ClusterConfigError as exc:
            raise NamespaceLookupError(str(exc)) from None

    def readiness(self) -> str | None:
        """``None`` when namespace lookups can be made (a cluster configuration loads), else why not.

        Without one every admin-access claim would be denied for a reason that is not the claim's,
        so the server must not report ready. The API server is not contacted: its being down is
        not a reason to take the webhook out of its Service."""
        try:
            self._core_api()
        except NamespaceLookupError as exc:
            return f"{exc}; admin-access claims cannot be checked (run in a pod or give --kubeconfig)"
        return None

    def __call__(self, namespace: str) -> dict[str, str]:
        """``metadata.labels`` of the namespace; :class:`NamespaceLookupError` on any failure."""
        from kubernetes.client.exceptions import ApiException

        api = self._core_api()
        try:
            response = api.read_namespace(namespace, _preload_content=False, _request_timeout=self._timeout)
            data = json.loads(response.data)
        except ApiException as exc:
            if exc.status == 404:
                raise NamespaceLookupError(f"namespace {namespace!r} not found") from None
            raise NamespaceLookupError(f"reading namespace {namespace!r} failed: HTTP {exc.status} {exc.reason}") from None
        except Exception as exc:  # network errors, timeouts, garbage bodies
            raise NamespaceLookupError(f"reading namespace {namespace!r} failed: {one_line(exc)}") from None
        labels = (data.get("metadata") or {}).get("labels") or {} if isinstance(data, dict) else {}
        if not isinstance(labels, dict):
            raise NamespaceLookupError(f"namespace {namespace!r} has malformed labels")
        return {str(k): str(v) for k, v in labels.items()}


