"""The webhook's logs: one capped line per decision, tracebacks only at debug, repeats rate-limited
with bounded state (:mod:`webhook.logs`, and the Flask app's use of it)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from kubectl_dra.gates import FeatureGates
from tests.webhook_support import admission_review
from webhook.app import Settings, create_app
from webhook.logs import MAX_LINE_CHARS, RepeatFilter, clip, decision_line, field_shape
from webhook.service import AdmissionService


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(msg: str, key: Any = None, *args: Any) -> logging.LogRecord:
    rec = logging.LogRecord("dra_webhook", logging.INFO, __file__, 1, msg, args, None)
    if key is not None:
        rec.repeat_key = key
    return rec


def test_clip_is_one_bounded_printable_line() -> None:
    assert clip("a\nb\r\x1b[31mc") == "a b  [31mc"
    long = clip("x" * 10_000, 50)
    assert len(long) == 50 and long.endswith("...")
    assert field_shape("spec.devices.requests[3].exactly.selectors[0]") == "spec.devices.requests[].exactly.selectors[]"


def test_decision_line_names_the_first_errors_and_counts_the_rest() -> None:
    line = decision_line("denied", "validate", "CREATE", "ResourceClaim", "ml", "c\nforged", "u-1", 0.0123,
                         ["e1", "e2" * 1000, "e3", "e4"], total=7)
    assert "\n" not in line and len(line) <= MAX_LINE_CHARS
    assert line.startswith("denied validate CREATE ResourceClaim ml/c forged uid=u-1 12.3ms errors=7: e1; e2")
    assert line.endswith("e3; ... and 4 more")


def test_repeats_are_limited_per_key_and_counted_on_the_next_line() -> None:
    clock = Clock()
    limiter = RepeatFilter(burst=3, interval=60, max_per_second=1000, clock=clock)
    passed = [limiter.filter(record("denied %s", "k", i)) for i in range(10)]
    assert passed == [True] * 3 + [False] * 7
    assert limiter.filter(record("other", "k2"))  # another key is not affected
    clock.now += 61
    rec = record("denied %s", "k", 99)
    assert limiter.filter(rec)
    assert rec.getMessage() == "denied 99 (7 similar lines left out)"


def test_overall_rate_is_limited_and_reported() -> None:
    clock = Clock()
    limiter = RepeatFilter(burst=100, interval=60, max_per_second=5, clock=clock)
    passed = sum(limiter.filter(record("line", ("k", i))) for i in range(50))
    assert passed == 5
    clock.now += 1.5
    rec = record("line after", ("k", "new"))
    assert limiter.filter(rec)
    assert "45 lines left out: over 5 per second" in rec.getMessage()


def test_state_is_bounded() -> None:
    clock = Clock()
    limiter = RepeatFilter(burst=1, interval=60, max_per_second=10**9, max_keys=16, clock=clock)
    for i in range(10_000):
        limiter.filter(record("x", ("key", i)))
    assert len(limiter._windows) == 16


# --- the app's decision lines --------------------------------------------------------------------


@pytest.fixture
def app_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="dra_webhook")
    return caplog


def _client(**settings: Any) -> Any:
    return create_app(Settings(gates=FeatureGates.default(), namespace_labels=lambda ns: {}, **settings)).test_client()


CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ml"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}


def _decision_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "dra_webhook" and r.levelno >= logging.INFO]


def test_one_line_per_decision(app_logs: pytest.LogCaptureFixture) -> None:
    client = _client()
    client.post("/validate", json=admission_review(CLAIM))
    client.post("/mutate", json=admission_review(CLAIM))
    bad = json.loads(json.dumps(CLAIM))
    bad["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "Bad_" * 100_000
    client.post("/validate", json=admission_review(bad))
    client.post("/validate", data=b"{oops", content_type="application/json")
    messages = [r.getMessage() for r in _decision_records(app_logs)]
    assert [m.split()[0] for m in messages] == ["allowed", "patched", "denied", "malformed"]
    assert all("\n" not in m and len(m) <= MAX_LINE_CHARS for m in messages)
    assert "errors=2: spec.devices.requests[0].exactly.deviceClassName: " in messages[2]


def test_core_failure_is_one_warning_line_and_the_traceback_is_debug_only(
        app_logs: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import webhook.service

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom " + "x" * 5000)

    monkeypatch.setattr(webhook.service, "review", explode)
    reply = _client().post("/validate", json=admission_review(CLAIM)).get_json()
    assert reply["response"]["allowed"] is False
    assert len(reply["response"]["status"]["message"]) <= MAX_LINE_CHARS
    (line,) = _decision_records(app_logs)
    assert line.levelno == logging.WARNING and line.exc_info is None
    assert line.getMessage().startswith("error validate CREATE ResourceClaim ml/c") and "RuntimeError: boom" in line.getMessage()
    debug = [r for r in app_logs.records if r.levelno == logging.DEBUG and r.exc_info]
    assert len(debug) == 1


def test_nothing_is_formatted_when_info_is_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="dra_webhook")
    _client().post("/validate", json=admission_review(CLAIM))
    assert not [r for r in caplog.records if r.name == "dra_webhook"]


def test_a_failure_outside_the_decision_is_one_line_too(app_logs: pytest.LogCaptureFixture,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Not Flask's multi-line traceback at error level: one line, the traceback at debug only."""
    import webhook.service

    def broken(body: bytes) -> Any:
        raise KeyError("x" * 5000)

    monkeypatch.setattr(webhook.service, "parse_review", broken)
    response = _client().post("/validate", json=admission_review(CLAIM))
    assert response.status_code == 500
    assert response.get_json()["reason"] == "InternalError"
    (line,) = [r for r in app_logs.records if r.levelno >= logging.INFO]
    assert line.levelno == logging.ERROR and line.exc_info is None and "\n" not in line.getMessage()
    assert line.getMessage().startswith("POST /validate failed: KeyError")
    assert len([r for r in app_logs.records if r.levelno == logging.DEBUG and r.exc_info]) == 1


def test_a_decision_line_the_repeat_filter_leaves_out_is_never_made(caplog: pytest.LogCaptureFixture) -> None:
    """The service asks the handler's filter first: of ten like decisions two records are made,
    and the next one after the interval says how many were left out; the handler's filter lets
    the records it was asked about through without counting them twice."""
    clock = Clock()
    repeats = RepeatFilter(burst=2, interval=60, clock=clock)
    service = AdmissionService(Settings(gates=FeatureGates.default()), log_repeats=repeats)
    made: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.addFilter(repeats)
    handler.emit = made.append  # type: ignore[method-assign]  # a handler that keeps its records
    logger = logging.getLogger("dra_webhook")
    logger.addHandler(handler)
    body = json.dumps(admission_review(CLAIM)).encode()
    try:
        with caplog.at_level(logging.INFO, logger="dra_webhook"):
            for _ in range(10):
                service.admission("validate", body)
            clock.now += 61
            service.admission("validate", body)
    finally:
        logger.removeHandler(handler)
    decisions = [r.getMessage() for r in caplog.records if r.getMessage().startswith("allowed validate")]
    assert len(decisions) == 3 == len(made)
    assert decisions[2].endswith("(8 similar lines left out)")
