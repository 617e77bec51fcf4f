"""The Flask app: ``POST /validate`` and ``POST /mutate`` for AdmissionReviews, health and metrics.

A thin front over :class:`webhook.service.AdmissionService` for in-process use (tests, the
Flask dev server); ``dra-webhook serve`` runs the same service behind granian
(:mod:`webhook.rsgi`). A body over 3 MiB is a 413; everything else is the service's answer.
"""

from __future__ import annotations

import logging

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from .logs import MAX_LINE_CHARS, clip
from .metrics import Metrics
from .review import MAX_BODY_BYTES, error_status
from .service import _WARM_UP_OBJECTS, MODES, AdmissionService, Reply, Settings, json_reply, too_large, warm_up

__all__ = ["MODES", "Settings", "create_app", "warm_up", "_WARM_UP_OBJECTS"]

log = logging.getLogger("dra_webhook")


def create_app(settings: Settings, metrics: Metrics | None = None) -> Flask:
    """The webhook's Flask app for ``settings``; ``metrics`` defaults to a fresh registry."""
    service = AdmissionService(settings, metrics)
    app = Flask("dra_webhook")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.extensions["dra_webhook"] = service

    def admission(endpoint: str) -> Response:
        return _response(service.admission(endpoint, request.get_data(cache=False)))

    app.add_url_rule("/validate", "validate", lambda: admission("validate"), methods=["POST"])
    app.add_url_rule("/mutate", "mutate", lambda: admission("mutate"), methods=["POST"])
    app.add_url_rule("/healthz", "healthz", lambda: Response("ok\n", status=200, mimetype="text/plain"),
                     methods=["GET"])
    app.add_url_rule("/readyz", "readyz", lambda: _response(service.readyz()), methods=["GET"])
    app.add_url_rule("/metrics", "metrics", lambda: _response(service.metrics_page()), methods=["GET"])

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        """4xx from routing and body limits, as a Status with a message."""
        code = exc.code or 400
        if code == 413:
            _drain_body()
            service.rejected_body(_endpoint())
            return _response(too_large())
        message = exc.description or exc.name
        return _response(json_reply(code, error_status(code, exc.name.replace(" ", ""), message)))

    @app.errorhandler(Exception)
    def unexpected_error(exc: Exception) -> Response:
        """A failure outside the service: one log line and a 500 Status."""
        message = clip(f"{type(exc).__name__}: {exc}", MAX_LINE_CHARS)
        log.debug("%s %s failed", request.method, clip(request.path), exc_info=exc)
        log.error("%s %s failed: %s", request.method, clip(request.path), message,
                  extra={"repeat_key": ("unexpected", request.path in ("/validate", "/mutate"), type(exc).__name__)})
        return _response(json_reply(500, error_status(500, "InternalError", f"the DRA webhook failed: {message}")))

    return app


def _response(reply: Reply) -> Response:
    return Response(reply.body, status=reply.status, content_type=reply.content_type)


#: Largest over-limit body read and dropped so that its sender gets the 413 (larger: connection closed).
MAX_DRAINED_BYTES = 4 * MAX_BODY_BYTES


def _drain_body() -> None:
    """Read and drop a rejected body (bounded): a client still sending it would otherwise see the
    connection reset instead of the 413 when the server closes without reading."""
    stream = request.environ.get("wsgi.input")
    remaining = request.content_length
    if stream is None or remaining is None or remaining > MAX_DRAINED_BYTES:
        return
    try:
        while remaining > 0:
            chunk = stream.read(min(1 << 16, remaining))
            if not chunk:
                return
            remaining -= len(chunk)
    except (OSError, ValueError):  # the client went away: nothing left to answer
        return


def _endpoint() -> str:
    """The admission endpoint of the current request, for metrics."""
    return request.path.strip("/") if request.path in ("/validate", "/mutate") else "other"
