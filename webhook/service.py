"""The webhook's answers as bytes, free of any web framework: ``/validate`` and ``/mutate`` for
AdmissionReviews, ``/healthz``, ``/readyz`` and ``/metrics``.

Both front ends call it: the RSGI app that ``dra-webhook serve`` runs in granian
(:mod:`webhook.rsgi`), and the Flask app (:mod:`webhook.app`) used in-process by tests and
the Flask dev server. Every admission request gets an answer the API server understands:
a malformed body is a 400 with a message, an unknown kind or operation is admitted
untouched, and a failure inside the core becomes a denial (enforce) or a warning (warn)
naming it, never a 5xx. Apply-time warnings (:mod:`webhook.advice`) are added to admitted
objects when an advisor is configured; they never deny and never wait past their deadline.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Callable, Mapping

import orjson

from kubectl_dra.validation.admission import Decision, SpecMemo, review

from .logs import MAX_ERRORS_LOGGED, MAX_LINE_CHARS, RepeatFilter, clip, decision_line, field_shape
from .metrics import Metrics
from .review import (
    HANDLED_VERSIONS,
    MAX_BODY_BYTES,
    AdmissionRequest,
    MalformedReview,
    admit,
    clean_warnings,
    deny,
    envelope,
    error_status,
    mutate_response,
    parse_review,
    validate_response,
)

log = logging.getLogger("dra_webhook")

MODES = ("enforce", "warn")

JSON_TYPE = "application/json"
TEXT_TYPE = "text/plain; charset=utf-8"


@dataclass(frozen=True)
class Settings:
    """How the webhook decides: feature gates, enforce or warn, and where namespace labels come from."""

    gates: Any  # kubectl_dra.gates.FeatureGates
    mode: str = "enforce"
    #: ``labels(namespace)``; raising makes the core deny admin access with the reason.
    namespace_labels: Callable[[str], Mapping[str, str]] | None = None
    #: ``None`` when the server can decide what it is asked, else the reason why not (for ``/readyz``).
    readiness: Callable[[], str | None] | None = None
    #: ``advise(kind, obj)``: apply-time warnings about an admitted object (never raises, bounded in time).
    advise: Callable[[str, dict[str, Any]], list[str]] | None = None

    @property
    def enforce(self) -> bool:
        return self.mode == "enforce"


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, body and content type."""

    status: int
    body: bytes
    content_type: str = JSON_TYPE


def json_reply(status: int, payload: dict[str, Any]) -> Reply:
    """``payload`` as compact JSON: orjson's UTF-8, or json's text for what orjson cannot write
    (integers beyond 64 bits, lone surrogates that a json-decoded body may carry into a message)."""
    try:
        body = orjson.dumps(payload)
    except (TypeError, orjson.JSONEncodeError):
        body = json.dumps(payload, separators=(",", ":")).encode()
    return Reply(status, body, JSON_TYPE)


def text_reply(status: int, text: str) -> Reply:
    """``text`` and a newline as text/plain."""
    return Reply(status, (text + "\n").encode(), TEXT_TYPE)


HEALTHY = text_reply(200, "ok")


def too_large() -> Reply:
    """The 413 for a body over :data:`MAX_BODY_BYTES`."""
    return json_reply(413, error_status(413, "RequestEntityTooLarge",
                                        f"request body is larger than {MAX_BODY_BYTES} bytes"))


class AdmissionService:
    """Turns request bodies into replies, with metrics and one log line per decision."""

    def __init__(self, settings: Settings, metrics: Metrics | None = None,
                 log_repeats: RepeatFilter | None = None) -> None:
        """``log_repeats``: the repeat filter of the log handler, whose budget the decision lines
        share (asked before a line is made); its own one when not given."""
        if settings.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {settings.mode!r}")
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.log_repeats = log_repeats or RepeatFilter()
        #: claims made from one template share their spec: each is prepared and validated once per worker
        self.spec_memo = SpecMemo()

    def admission(self, endpoint: str, body: bytes) -> Reply:
        """Answer ``/validate`` or ``/mutate``; a failure outside the decision is one log line and a 500."""
        try:
            return self._admission(endpoint, body)
        except Exception as exc:  # noqa: BLE001 - the API server must get a Status it can read
            return self.unexpected(f"/{endpoint}", exc)

    def unexpected(self, path: str, exc: BaseException) -> Reply:
        """A failure outside the admission decision (which has its own handling): one log line and
        a 500 Status instead of a traceback at error level; the traceback at debug."""
        message = clip(f"{type(exc).__name__}: {exc}", MAX_LINE_CHARS)
        log.debug("POST %s failed", clip(path), exc_info=exc)
        log.error("POST %s failed: %s", clip(path), message,
                  extra={"repeat_key": ("unexpected", path in ("/validate", "/mutate"), type(exc).__name__)})
        return json_reply(500, error_status(500, "InternalError", f"the DRA webhook failed: {message}"))

    def rejected_body(self, endpoint: str) -> None:
        """Count a body refused before it was read (too large, too slow)."""
        self.metrics.observe(endpoint, "other", "other", "malformed", 0.0)

    def readyz(self) -> Reply:
        """200 once the server can decide what it is asked (certificates loadable, a cluster
        configuration for admin-access namespace lookups), else 503 with the reason."""
        reason = self.settings.readiness() if self.settings.readiness else None
        return HEALTHY if reason is None else text_reply(503, reason)

    def metrics_page(self) -> Reply:
        """The Prometheus text exposition."""
        body, content_type = self.metrics.exposition()
        return Reply(200, body, content_type)

    def _admission(self, endpoint: str, body: bytes) -> Reply:
        start = perf_counter()
        try:
            req = parse_review(body)
            _check_object_kind(req)
        except MalformedReview as exc:
            seconds = perf_counter() - start
            self.metrics.observe(endpoint, "other", "other", "malformed", seconds)
            self._log_decision(logging.INFO, "malformed", endpoint, None, seconds, [exc.message], 0)
            return json_reply(400, error_status(400, "BadRequest", exc.message))
        outcome = self._respond(endpoint, req)
        seconds = perf_counter() - start
        self.metrics.observe(endpoint, req.metric_kind, req.metric_operation, outcome.label, seconds)
        level = logging.WARNING if outcome.label == "error" else logging.INFO
        self._log_decision(level, outcome.label, endpoint, req, seconds, outcome.details, outcome.total, outcome.repeat)
        return json_reply(200, envelope(outcome.response))

    def _respond(self, endpoint: str, req: AdmissionRequest) -> "_Outcome":
        """The AdmissionReview response, the metrics decision label and what the log line names."""
        if not req.handled:
            return _Outcome(admit(req.uid), "ignored")
        try:
            decision = self._decide(req)
        except Exception as exc:  # a bug in the core must not become a 5xx the API server cannot read
            log.debug("deciding on %s %s/%s failed", clip(req.kind), clip(req.namespace), clip(req.name), exc_info=True)
            return _Outcome(self._internal_error(endpoint, req, exc), "error", [f"{type(exc).__name__}: {exc}"], 1)
        if endpoint == "mutate":
            response = mutate_response(req, decision)
            return _Outcome(response, "patched" if "patch" in response else "allowed")
        response = validate_response(req, decision, enforce=self.settings.enforce)
        if decision.allowed:
            self._add_advice(req, response)
            return _Outcome(response, "allowed")
        details = [str(error) for error in decision.errors[:MAX_ERRORS_LOGGED]]
        repeat = tuple((error.type, field_shape(error.field)) for error in decision.errors[:1])
        label = "denied" if self.settings.enforce else "warned"
        return _Outcome(response, label, details, len(decision.errors), repeat)

    def _add_advice(self, req: AdmissionRequest, response: dict[str, Any]) -> None:
        """Apply-time warnings about an admitted CREATE or UPDATE (never a denial)."""
        advise = self.settings.advise
        if advise is None or req.object is None or req.operation not in ("CREATE", "UPDATE"):
            return
        advice = advise(req.kind, req.object)
        if advice:
            response["warnings"] = clean_warnings(list(response.get("warnings") or []) + advice)

    def _decide(self, req: AdmissionRequest) -> Decision:
        """Run the core's admission pipeline on the request's object."""
        obj = req.object or {}
        if "kind" not in obj or "apiVersion" not in obj:
            group_version = f"{req.group}/{req.version}" if req.group else req.version
            obj = {"apiVersion": group_version, "kind": req.kind, **obj}
        return review(
            obj,
            operation=req.operation,
            old=req.old_object if req.operation == "UPDATE" else None,
            namespace_labels=self.settings.namespace_labels,
            gates=self.settings.gates,
            namespace=req.namespace or None,
            memo=self.spec_memo,
        )

    def _log_decision(self, level: int, label: str, endpoint: str, req: AdmissionRequest | None, seconds: float,
                      details: list[str], total: int, repeat: tuple = ()) -> None:
        """One capped line for one decision, unless the repeat filter leaves it out: it is asked
        first, and a line it leaves out is never made."""
        if not log.isEnabledFor(level):
            return
        if req is None:
            key: tuple = ("decision", label, endpoint)
        else:
            key = ("decision", label, endpoint, req.metric_kind, req.metric_operation, repeat)
        note = self.log_repeats.take(key)
        if note is None:
            return
        if req is None:
            line = decision_line(label, endpoint, "-", "-", "", "", "-", seconds, details, total)
        else:
            line = decision_line(label, endpoint, req.operation, req.kind, req.namespace, _object_name(req),
                                 req.uid, seconds, details, total)
        log.log(level, "%s%s", line, note, extra={"repeat_key": key, "repeat_passed": True})

    def _internal_error(self, endpoint: str, req: AdmissionRequest, exc: Exception) -> dict[str, Any]:
        """Deny (enforce) or warn about an object the core could not decide on."""
        name = _object_name(req)
        what = f"{req.kind} {req.namespace + '/' if req.namespace else ''}{name}".strip()
        message = clip(f"the DRA webhook could not validate {what}: {type(exc).__name__}: {exc}", MAX_LINE_CHARS)
        if endpoint == "mutate":
            return admit(req.uid)
        if self.settings.enforce:
            return deny(req.uid, error_status(500, "InternalError", message))
        return admit(req.uid, [f"would be denied (warn mode): {message}"])


@dataclass(frozen=True)
class _Outcome:
    """One answered request: the response, its metrics label, and what its log line names."""

    response: dict[str, Any]
    label: str
    details: list[str] = field(default_factory=list)
    total: int = 0
    repeat: tuple = ()


def _object_name(req: AdmissionRequest) -> str:
    """The request's name, else the object's name or generateName (a CREATE with generateName has none yet)."""
    if req.name:
        return req.name
    meta = (req.object or {}).get("metadata")
    return str(meta.get("name") or meta.get("generateName") or "") if isinstance(meta, dict) else ""


def _check_object_kind(req: AdmissionRequest) -> None:
    """The object, when it names a kind, must be of the kind the request says; a CREATE or UPDATE
    of a kind the webhook decides on must carry the object (and the stored object for UPDATE)."""
    if req.kind in HANDLED_VERSIONS and req.operation in ("CREATE", "UPDATE") and not req.sub_resource:
        if req.object is None:
            raise MalformedReview(f"AdmissionReview.request.object is missing for {req.operation} of {req.kind}")
        if req.operation == "UPDATE" and req.old_object is None:
            raise MalformedReview(f"AdmissionReview.request.oldObject is missing for UPDATE of {req.kind}")
    for field_name, obj in (("object", req.object), ("oldObject", req.old_object)):
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if kind is not None and kind != req.kind:
            raise MalformedReview(f"AdmissionReview.request.{field_name}.kind {kind!r} differs from request.kind {req.kind!r}")


#: One small object per kind, decided once at startup by :func:`warm_up`.
_WARM_UP_OBJECTS: tuple[dict[str, Any], ...] = (
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "warm-up", "namespace": "default"},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {
         "deviceClassName": "warm-up.example.com",
         "selectors": [{"cel": {"expression": 'device.driver == "warm-up.example.com"'}}]}}]}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "warm-up", "namespace": "default"},
     "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "warm-up.example.com"}}]}}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "warm-up.example.com"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "warm-up.example.com"'}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "warm-up"},
     "spec": {"driver": "warm-up.example.com", "nodeName": "node", "pool": {"name": "p", "generation": 1,
                                                                           "resourceSliceCount": 1},
              "devices": [{"name": "d", "attributes": {"model": {"string": "x"}}, "capacity": {"m": {"value": "1Gi"}}}]}},
    {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "warm-up", "namespace": "default"},
     "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "warm-up"}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "warm-up", "namespace": "default"},
     "spec": {"containers": [{"name": "c", "image": "x"}], "resourceClaims": [{"name": "c", "resourceClaimName": "w"}]}},
)


def warm_up(gates: Any) -> list[str]:
    """Decide on one object of each kind so that the core's modules, CEL environments and caches
    are loaded before the server forks its workers (else each worker's first request pays for it).
    Returns the problems met, for the log; they do not stop the server."""
    problems = []
    for obj in _WARM_UP_OBJECTS:
        try:
            review(obj, gates=gates, namespace_labels={})
        except Exception as exc:  # noqa: BLE001 - a warm-up failure is only logged
            problems.append(f"{obj['kind']}: {type(exc).__name__}: {exc}")
    return problems
