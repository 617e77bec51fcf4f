"""Apply-time warnings for the webhook: a watch cache of DeviceClasses and ResourceSlices, and
:func:`kubectl_dra.advice.advise` run on it within a deadline.

Each worker process keeps its own cache (started after the fork): one list+watch per kind
with the ``kubernetes`` client, as an informer does: list (paged), then watch from the
list's resourceVersion with bookmarks, resume from the last seen resourceVersion when a
watch ends, list again on 410 Gone, after an error (with backoff) and every
:data:`RESYNC_SECONDS`. Slices are prepared when their event arrives, not when a request
needs them. The cache holds at most ``max_devices`` devices (:data:`MAX_DEVICES` by default);
past that it keeps nothing, says so and gives no advice until a relist fits again.

Advice fails open: while the cache has not synced, when the advice would take longer than
its deadline, or when it fails, the admission response simply has no warning, and
``dra_webhook_advice_total{result=...}`` counts what was skipped.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Any, Callable, Mapping

from kubectl_dra.advice import ADVISED_KINDS, AdviceTimeout, Inventory, PreparedSlice, advise, prepare_slice

from .kubeclient import ClusterConfigError, client_configuration, one_line

log = logging.getLogger("dra_webhook.advice")

GROUP, VERSION = "resource.k8s.io", "v1"
#: Seconds between full relists (a watch that silently missed an event heals by then).
RESYNC_SECONDS = 600.0
#: Seconds one watch request stays open before it is resumed.
WATCH_SECONDS = 300
#: Objects per page of a list.
PAGE_SIZE = 500
#: Most devices the cache holds by default (``--warnings-max-devices``); a larger cluster gets no
#: advice rather than an unbounded cache. A device costs ~0.8 KiB as listed and ~2.7 KiB once
#: advice has matched it (benchmarks/bench_admission.py), so ~55 MiB per worker at this bound.
MAX_DEVICES = 20_000
#: Backoff after a failed list or watch: first and longest wait, in seconds.
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 30.0


class Reflector:
    """One kind kept current by list+watch; ``prepare`` turns an object into what is stored."""

    def __init__(self, plural: str, api: Callable[[], Any], prepare: Callable[[Mapping[str, Any]], Any],
                 on_change: Callable[[], None], *, resync: float = RESYNC_SECONDS, watch_seconds: int = WATCH_SECONDS,
                 request_timeout: float = 30.0, weight: Callable[[Any], int] = lambda item: 0,
                 max_weight: int = MAX_DEVICES) -> None:
        self.plural = plural
        self._api = api
        self._prepare = prepare
        self._on_change = on_change
        self._resync = resync
        self._watch_seconds = watch_seconds
        self._request_timeout = request_timeout
        self.items: dict[str, Any] = {}
        self._weight = weight
        self._max_weight = max_weight
        self._total = 0
        #: more than ``max_weight`` (devices) published: nothing is kept until a relist fits again
        self.over_limit = False
        self.synced = False
        self.relists = 0
        self._stop = threading.Event()
        self._watch: Any = None

    def stop(self) -> None:
        self._stop.set()
        watch = self._watch
        if watch is not None:
            watch.stop()

    def run(self) -> None:
        """List and watch until stopped."""
        from kubernetes.client.exceptions import ApiException

        backoff = BACKOFF_FIRST
        while not self._stop.is_set():
            try:
                version = self._list()
                backoff = BACKOFF_FIRST
                self._watch_until(version, time.monotonic() + self._resync)
            except ApiException as exc:
                if exc.status == 410:  # our resourceVersion was compacted away: list again at once
                    log.info("watch of %s expired (410 Gone): listing again", self.plural)
                    continue
                self._failed(f"HTTP {exc.status}: {one_line(exc)}", backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
            except Exception as exc:  # noqa: BLE001 - network trouble: keep the last state, retry
                if self._stop.is_set():
                    return
                self._failed(f"{type(exc).__name__}: {one_line(exc)}", backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)

    def _failed(self, reason: str, backoff: float) -> None:
        log.warning("list/watch of %s failed (%s); retrying in %.1fs", self.plural, reason, backoff,
                    extra={"repeat_key": ("advice-watch", self.plural)})
        self._stop.wait(backoff * (1 + random.random() / 2))

    def _list(self) -> str:
        """Replace the items with a fresh list; returns its resourceVersion."""
        items: dict[str, Any] = {}
        total = 0
        token = None
        while True:
            kwargs: dict[str, Any] = {"limit": PAGE_SIZE, "_request_timeout": self._request_timeout}
            if token:
                kwargs["_continue"] = token
            page = self._api().list_cluster_custom_object(GROUP, VERSION, self.plural, **kwargs)
            for obj in page.get("items") or []:
                name = (obj.get("metadata") or {}).get("name")
                if name and total <= self._max_weight:
                    items[name] = item = self._prepare(obj)
                    total += self._weight(item)
            meta = page.get("metadata") or {}
            token = meta.get("continue")
            if not token:
                break
        self.over_limit = total > self._max_weight
        self.items, self._total = ({}, 0) if self.over_limit else (items, total)
        self.synced = True
        self.relists += 1
        self._on_change()
        return str(meta.get("resourceVersion") or "")

    def _watch_until(self, version: str, resync_at: float) -> None:
        """Apply watch events from ``version`` on, resuming ended watches, until the resync is due."""
        from kubernetes import watch

        while not self._stop.is_set():
            remaining = resync_at - time.monotonic()
            if remaining <= 0:
                return
            self._watch = w = watch.Watch()
            for event in w.stream(self._api().list_cluster_custom_object, GROUP, VERSION, self.plural,
                                  resource_version=version, allow_watch_bookmarks=True,
                                  timeout_seconds=max(1, int(min(self._watch_seconds, remaining))),
                                  _request_timeout=(self._request_timeout, self._watch_seconds + 30)):
                if self._stop.is_set():
                    w.stop()
                    return
                self._apply(event.get("type"), event.get("raw_object") or {})
            version = w.resource_version or version

    def _apply(self, kind: str | None, obj: Mapping[str, Any]) -> None:
        name = (obj.get("metadata") or {}).get("name")
        if not name or kind not in ("ADDED", "MODIFIED", "DELETED") or self.over_limit:
            return  # BOOKMARK: only its resourceVersion counts, and Watch keeps that
        items = dict(self.items)  # copy-on-write: readers hold the previous dict unchanged
        old = items.pop(name, None)
        self._total -= self._weight(old) if old is not None else 0
        if kind != "DELETED":
            items[name] = item = self._prepare(obj)
            self._total += self._weight(item)
        if self._total > self._max_weight:
            self.over_limit, items, self._total = True, {}, 0  # until the next relist fits again
        self.items = items
        self._on_change()


class DeviceCache:
    """DeviceClasses and ResourceSlices of the cluster, kept by two reflectors on daemon threads."""

    def __init__(self, api: Callable[[], Any], *, resync: float = RESYNC_SECONDS,
                 watch_seconds: int = WATCH_SECONDS, max_devices: int = MAX_DEVICES) -> None:
        self._lock = threading.Lock()
        self._version = 0
        self._inventory: tuple[int, Inventory] | None = None
        self.max_devices = max_devices
        self.classes = Reflector("deviceclasses", api, dict, self._changed, resync=resync, watch_seconds=watch_seconds)
        self.slices = Reflector("resourceslices", api, prepare_slice, self._changed, resync=resync,
                                watch_seconds=watch_seconds, weight=lambda ps: len(ps.devices), max_weight=max_devices)
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for reflector in (self.classes, self.slices):
            thread = threading.Thread(target=reflector.run, name=f"dra-webhook-watch-{reflector.plural}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        for reflector in (self.classes, self.slices):
            reflector.stop()

    @property
    def synced(self) -> bool:
        return self.classes.synced and self.slices.synced

    def _changed(self) -> None:
        with self._lock:
            self._version += 1

    def inventory(self) -> Inventory | None:
        """The current inventory (made again only after a change); None when over :attr:`max_devices`."""
        with self._lock:
            version = self._version
            cached = self._inventory
        if cached is not None and cached[0] == version:
            return cached[1]
        slices: dict[str, PreparedSlice] = self.slices.items
        if self.slices.over_limit:
            log.warning("more than %d devices published: apply-time warnings are off", self.max_devices,
                        extra={"repeat_key": ("advice-too-many",)})
            return None
        inventory = Inventory(self.classes.items, slices)
        with self._lock:
            if self._version == version:
                self._inventory = (version, inventory)
        return inventory


class Advisor:
    """``advise(kind, obj)`` for :class:`webhook.service.Settings`: warnings within a deadline, or none."""

    def __init__(self, cache: DeviceCache, deadline: float, count: Callable[[str], None]) -> None:
        self.cache = cache
        self.deadline = deadline
        self._count = count

    def __call__(self, kind: str, obj: Mapping[str, Any]) -> list[str]:
        if kind not in ADVISED_KINDS:
            return []
        if not self.cache.synced:
            self._count("not_synced")
            return []
        start = time.monotonic()
        try:
            inventory = self.cache.inventory()
            if inventory is None:
                self._count("too_many_devices")
                return []
            advice = advise(kind, obj, inventory, deadline=start + self.deadline)
        except AdviceTimeout:
            self._count("deadline")
            return []
        except Exception as exc:  # noqa: BLE001 - advice never costs an admission
            log.debug("advice on %s failed", kind, exc_info=True)
            log.warning("advice on %s failed: %s: %s", kind, type(exc).__name__, one_line(exc),
                        extra={"repeat_key": ("advice-error", kind, type(exc).__name__)})
            self._count("error")
            return []
        if time.monotonic() > start + self.deadline:
            self._count("deadline")  # finished, but late: the next one may not be
            return []
        self._count("warned" if advice else "none")
        return advice


def kubernetes_api(kubeconfig: str | None, context: str | None) -> Callable[[], Any]:
    """A CustomObjectsApi for the cluster, made on first use in each process (after the fork)."""
    state: dict[str, Any] = {}

    def api() -> Any:
        if "api" not in state:
            from kubernetes import client

            configuration = client_configuration(kubeconfig, context)
            state["api"] = client.CustomObjectsApi(client.ApiClient(configuration))
        return state["api"]

    return api


__all__ = ["Advisor", "ClusterConfigError", "DeviceCache", "Reflector", "kubernetes_api"]
