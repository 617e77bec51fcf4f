"""Prometheus metrics of the webhook: admission requests by kind/operation/decision, and latency.

Under ``dra-webhook serve`` several worker processes serve requests, so ``dra-webhook serve``
sets ``PROMETHEUS_MULTIPROC_DIR`` before this module is imported and ``/metrics``
then aggregates every worker's samples (prometheus_client's multiprocess mode).
In-process (tests, the Flask dev server) each :class:`Metrics` has its own registry.
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import multiprocess

#: Latency buckets in seconds, fine-grained around the 10 ms target.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

#: Values of the ``decision`` label.
DECISIONS = ("allowed", "denied", "warned", "patched", "ignored", "malformed", "error")


class Metrics:
    """The webhook's collectors and their exposition."""

    def __init__(self) -> None:
        self._multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "dra_webhook_admission_requests",
            "Admission requests handled, by endpoint, kind, operation and decision.",
            ["endpoint", "kind", "operation", "decision"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "dra_webhook_admission_duration_seconds",
            "Time to handle one admission request, from body read to response built.",
            ["endpoint", "kind"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        #: (endpoint, kind, operation, decision) -> the two labelled children; every label is
        #: from a small fixed set, so this holds at most a few hundred entries
        self._children: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}

        self.advice = Counter(
            "dra_webhook_advice",
            "Apply-time advice on admitted objects, by result: warned, none, or why it was skipped "
            "(not_synced, deadline, too_many_devices, error).",
            ["result"],
            registry=self.registry,
        )

    def advice_result(self, result: str) -> None:
        """Count one advice outcome."""
        self.advice.labels(result).inc()

    def observe(self, endpoint: str, kind: str, operation: str, decision: str, seconds: float) -> None:
        """Count one request and record its latency."""
        key = (endpoint, kind, operation, decision)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (self.requests.labels(*key), self.latency.labels(endpoint, kind))
        children[0].inc()
        children[1].observe(seconds)

    def exposition(self) -> tuple[bytes, str]:
        """The text exposition (all workers' samples in multiprocess mode) and its content type."""
        if self._multiprocess:
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

