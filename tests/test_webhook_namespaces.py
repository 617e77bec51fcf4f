"""Namespace labels for admin access: the TTL cache, and lookups through the real ``kubernetes``
client against the fake HTTPS API server (labels, missing namespace, server errors, timeouts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fake_apiserver import FakeAPIServer
from webhook.namespaces import KubernetesNamespaceFetcher, NamespaceLabels, NamespaceLookupError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingFetch:
    def __init__(self, labels: dict[str, dict[str, str]]) -> None:
        self.labels = labels
        self.calls: list[str] = []
        self.fail = False

    def __call__(self, namespace: str) -> dict[str, str]:
        self.calls.append(namespace)
        if self.fail:
            raise NamespaceLookupError("API down")
        return self.labels[namespace]


def test_cache_serves_within_ttl_and_refetches_after() -> None:
    clock = Clock()
    fetch = CountingFetch({"a": {"x": "1"}})
    labels = NamespaceLabels(fetch, ttl=10, clock=clock)
    assert labels("a") == {"x": "1"}
    clock.now += 9.9
    fetch.labels["a"] = {"x": "2"}
    assert labels("a") == {"x": "1"}
    assert fetch.calls == ["a"]
    clock.now += 0.2
    assert labels("a") == {"x": "2"}
    assert fetch.calls == ["a", "a"]


def test_failures_are_not_cached_and_callers_cannot_corrupt_the_cache() -> None:
    clock = Clock()
    fetch = CountingFetch({"a": {"x": "1"}})
    labels = NamespaceLabels(fetch, ttl=10, clock=clock)
    fetch.fail = True
    with pytest.raises(NamespaceLookupError):
        labels("a")
    fetch.fail = False
    got = labels("a")
    got["x"] = "tampered"
    assert labels("a") == {"x": "1"}
    assert fetch.calls == ["a", "a"]
    with pytest.raises(NamespaceLookupError):
        labels("")


def test_ttl_zero_always_fetches_and_cache_is_bounded() -> None:
    fetch = CountingFetch({f"ns{i}": {} for i in range(50)})
    uncached = NamespaceLabels(fetch, ttl=0)
    uncached("ns1")
    uncached("ns1")
    assert fetch.calls == ["ns1", "ns1"]
    bounded = NamespaceLabels(fetch, ttl=60, max_entries=8)
    for i in range(50):
        bounded(f"ns{i}")
    assert len(bounded._cache) <= 8


@pytest.fixture
def apiserver() -> Any:
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "admins", "labels": {"resource.kubernetes.io/admin-access": "true",
                                                    "kubernetes.io/metadata.name": "admins"}}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bare"}},
    ]
    with FakeAPIServer(namespaces, token="s3cret") as server:
        yield server


def test_kubernetes_fetcher_reads_labels(apiserver: FakeAPIServer, tmp_path: Path) -> None:
    fetcher = KubernetesNamespaceFetcher(str(apiserver.write_kubeconfig(tmp_path / "config")))
    assert fetcher("admins") == {"resource.kubernetes.io/admin-access": "true", "kubernetes.io/metadata.name": "admins"}
    assert fetcher("bare") == {}
    assert [r.authorization for r in apiserver.list_requests("/api/v1/namespaces/admins")] == ["Bearer s3cret"]


def test_kubernetes_fetcher_failures_are_typed(apiserver: FakeAPIServer, tmp_path: Path) -> None:
    fetcher = KubernetesNamespaceFetcher(str(apiserver.write_kubeconfig(tmp_path / "config")), timeout=0.5)
    with pytest.raises(NamespaceLookupError, match="'missing' not found"):
        fetcher("missing")
    apiserver.fail("/api/v1/namespaces/admins", 503, "etcd unavailable", times=1)
    with pytest.raises(NamespaceLookupError, match="HTTP 503"):
        fetcher("admins")
    apiserver.fail("/api/v1/namespaces/bare", 200, delay=2.0, times=1)
    with pytest.raises(NamespaceLookupError, match="reading namespace 'bare' failed"):
        fetcher("bare")
    forbidden = KubernetesNamespaceFetcher(str(apiserver.write_kubeconfig(tmp_path / "bad", token="wrong")))
    with pytest.raises(NamespaceLookupError, match="HTTP 401"):
        forbidden("admins")
    with pytest.raises(NamespaceLookupError, match="no usable cluster configuration"):
        KubernetesNamespaceFetcher(str(tmp_path / "no-such-kubeconfig"))("admins")
