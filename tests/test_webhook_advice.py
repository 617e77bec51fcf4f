"""The webhook's apply-time warnings: the watch cache against the fake API server (list, watch
events, bookmarks, 410 Gone relist), the advisor's fail-open paths, and the warnings in
AdmissionReview responses."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from kubectl_dra.gates import FeatureGates
from tests.fake_apiserver import FakeAPIServer
from tests.test_advice import GPU_CLASS, claim, exactly, gpu_slice
from tests.webhook_support import admission_review
from webhook.advice import Advisor, DeviceCache, kubernetes_api
from webhook.app import Settings, create_app
from webhook.metrics import Metrics

#: A liveness bound for loaded machines, not a speed check.
PATIENCE = 30.0


def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not check():
        assert time.monotonic() < deadline, f"not within {PATIENCE}s: {what}"
        time.sleep(0.02)


@pytest.fixture()
def api() -> Iterator[FakeAPIServer]:
    with FakeAPIServer([GPU_CLASS, gpu_slice("node-a", 2)], token="t") as server:
        yield server


@pytest.fixture()
def cache(api: FakeAPIServer, tmp_path: Path) -> Iterator[DeviceCache]:
    kubeconfig = api.write_kubeconfig(tmp_path / "config")
    cache = DeviceCache(kubernetes_api(str(kubeconfig), None), watch_seconds=2)
    cache.start()
    eventually(lambda: cache.synced, "the cache synced")
    yield cache
    cache.stop()


def slices(cache: DeviceCache) -> dict[str, int]:
    inventory = cache.inventory()
    assert inventory is not None
    return {name: len(s.devices) for name, s in inventory.slices.items()}


def test_the_cache_follows_watch_events(api: FakeAPIServer, cache: DeviceCache) -> None:
    assert slices(cache) == {"node-a-gpu": 2} and set(cache.inventory().classes) == {"gpu.example.com"}
    eventually(lambda: api.active_watches >= 2, "both watches are open")
    api.add(gpu_slice("node-b", 3))
    eventually(lambda: slices(cache) == {"node-a-gpu": 2, "node-b-gpu": 3}, "ADDED")
    api.update(gpu_slice("node-b", 1))
    eventually(lambda: slices(cache) == {"node-a-gpu": 2, "node-b-gpu": 1}, "MODIFIED")
    api.delete("ResourceSlice", "node-a-gpu")
    eventually(lambda: slices(cache) == {"node-b-gpu": 1}, "DELETED")
    api.delete("DeviceClass", "gpu.example.com")
    eventually(lambda: not cache.inventory().classes, "DeviceClass DELETED")
    assert cache.slices.relists == 1, "events alone, no relist"


def test_watches_resume_from_bookmarks_and_relist_after_410(api: FakeAPIServer, cache: DeviceCache) -> None:
    eventually(lambda: api.active_watches >= 2, "both watches are open")
    api.bookmark("ResourceSlice")
    # a watch that ends (timeoutSeconds) resumes from the bookmark's resourceVersion: no relist
    eventually(lambda: any(r.query.get("watch") and int(r.query.get("resourceVersion") or 0) >= 1003
                           for r in api.list_requests("/apis/resource.k8s.io/v1/resourceslices")), "resumed watch")
    assert cache.slices.relists == 1
    # a change the watch never saw, then history compacted: the resumed watch gets 410 Gone and the cache lists again
    with api.hold_watches():
        api.add(gpu_slice("node-c", 5))
        api.compact()
    eventually(lambda: cache.slices.relists >= 2, "relist after 410")
    eventually(lambda: slices(cache) == {"node-a-gpu": 2, "node-c-gpu": 5}, "state after the relist")


def test_advisor_fails_open_and_counts_why(api: FakeAPIServer, tmp_path: Path) -> None:
    metrics = Metrics()
    cache = DeviceCache(kubernetes_api(str(api.write_kubeconfig(tmp_path / "config")), None))
    missing = claim(exactly(cls="tpu.example.com"))
    assert Advisor(cache, 0.05, metrics.advice_result)("ResourceClaim", missing) == []  # not started: not synced
    cache.start()
    try:
        eventually(lambda: cache.synced, "synced")
        assert "DeviceClass tpu.example.com does not exist" in Advisor(cache, 5, metrics.advice_result)(
            "ResourceClaim", missing)[0]
        assert Advisor(cache, 1e-9, metrics.advice_result)("ResourceClaim", missing) == []
        assert Advisor(cache, 5, metrics.advice_result)("ResourceClaim", claim(exactly())) == []
        capped = DeviceCache(kubernetes_api(str(api.write_kubeconfig(tmp_path / "config")), None), max_devices=1)
        capped.start()
        eventually(lambda: capped.synced, "the capped cache synced")
        assert capped.slices.over_limit and capped.slices.items == {}  # 2 devices published: nothing kept
        assert Advisor(capped, 5, metrics.advice_result)("ResourceClaim", missing) == []
        capped.stop()
    finally:
        cache.stop()
    counts = {s.labels["result"]: s.value for f in metrics.registry.collect() for s in f.samples
              if s.name == "dra_webhook_advice_total"}
    assert counts == {"not_synced": 1, "warned": 1, "deadline": 1, "none": 1, "too_many_devices": 1}


def test_warnings_reach_the_admission_response_and_never_deny(api: FakeAPIServer, cache: DeviceCache) -> None:
    metrics = Metrics()
    advisor = Advisor(cache, 5, metrics.advice_result)
    for mode in ("enforce", "warn"):
        client = create_app(Settings(gates=FeatureGates.default(), mode=mode, namespace_labels={}.get,
                                     advise=advisor), metrics).test_client()
        doc = admission_review(claim(exactly(cls="tpu.example.com")))
        response = client.post("/validate", json=doc).get_json()["response"]
        assert response["allowed"] is True
        assert any("DeviceClass tpu.example.com does not exist" in w for w in response["warnings"])
        # a denied object gets its errors, not advice; /mutate never advises
        bad = admission_review(claim({"name": "gpu", "exactly": {"deviceClassName": "tpu.example.com", "count": -1}}))
        denied = client.post("/validate", json=bad).get_json()["response"]
        assert not any("does not exist" in w for w in denied.get("warnings") or [])
        assert "warnings" not in client.post("/mutate", json=doc).get_json()["response"]
