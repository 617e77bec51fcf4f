"""Helpers shared by the webhook tests (no tests here): AdmissionReview builders, applying a
response's JSONPatch, turning a response into the ``validate -o json`` decision form that
``tests.admission_scenarios.check_decision`` judges, and a loopback HTTPS client that verifies
the serving certificate for the Service's DNS name as the API server does."""

from __future__ import annotations

import base64
import copy
import http.client
import json
import socket
import ssl
import uuid
from typing import Any

import jsonpatch

from tests.admission_scenarios import operation_of

#: The name the API server uses to reach the webhook Service (what the certificate is for).
SERVER_NAME = "dra-webhook.dra-system.svc"


def gvk_of(obj: dict[str, Any]) -> dict[str, str]:
    """request.kind for an object: group, version, kind from its apiVersion and kind."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return {"group": group, "version": version, "kind": str(obj.get("kind", ""))}


def admission_review(obj: dict[str, Any] | None, *, operation: str = "CREATE", old: dict[str, Any] | None = None,
                     uid: str | None = None, kind: dict[str, str] | None = None,
                     namespace: str | None = None) -> dict[str, Any]:
    """An ``admission.k8s.io/v1`` AdmissionReview request as the API server sends it."""
    source = obj if obj is not None else (old or {})
    meta = source.get("metadata") if isinstance(source.get("metadata"), dict) else {}
    resource = str(source.get("kind", "")).lower() + "s"
    gvk = kind or gvk_of(source)
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()),
        "kind": gvk,
        "resource": {"group": gvk["group"], "version": gvk["version"], "resource": resource},
        "requestKind": gvk,
        "requestResource": {"group": gvk["group"], "version": gvk["version"], "resource": resource},
        "name": str(meta.get("name", "")),
        "operation": operation,
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": f"{operation.capitalize()}Options"},
    }
    ns = namespace if namespace is not None else meta.get("namespace")
    if ns:
        request["namespace"] = ns
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def scenario_review(scenario: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview for one admission conformance scenario."""
    operation = operation_of(scenario)
    return admission_review(scenario["object"], operation=operation,
                            old=scenario.get("oldObject") if operation == "UPDATE" else None)


def decode_patch(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSONPatch of a response (empty when there is none)."""
    if "patch" not in response:
        return []
    assert response.get("patchType") == "JSONPatch", response
    patch = json.loads(base64.b64decode(response["patch"], validate=True))
    assert isinstance(patch, list)
    return patch


def apply_response_patch(obj: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """The submitted object after the response's JSONPatch (as the API server applies it)."""
    return jsonpatch.apply_patch(copy.deepcopy(obj), decode_patch(response))


def decision_from_responses(obj: dict[str, Any], validated: dict[str, Any],
                            mutated: dict[str, Any]) -> dict[str, Any]:
    """The ``validate -o json`` decision form of a /validate and a /mutate response."""
    causes = ((validated.get("status") or {}).get("details") or {}).get("causes") or []
    return {
        "allowed": validated["allowed"],
        "errors": [{"field": c.get("field"), "type": c.get("reason"), "message": c.get("message")} for c in causes],
        "object": apply_response_patch(obj, mutated),
    }


def check_response_shape(review: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """A reply is an AdmissionReview whose response answers this request's uid; returns the response."""
    assert reply["apiVersion"] == "admission.k8s.io/v1" and reply["kind"] == "AdmissionReview", reply
    response = reply["response"]
    assert response["uid"] == review["request"]["uid"]
    assert isinstance(response["allowed"], bool)
    if not response["allowed"]:
        status = response["status"]
        assert status["kind"] == "Status" and isinstance(status["message"], str) and status["message"]
        assert 400 <= status["code"] <= 599
    for warning in response.get("warnings") or []:
        assert isinstance(warning, str) and warning.isprintable()
    decode_patch(response)
    return response


class _VerifiedConnection(http.client.HTTPSConnection):
    """HTTPS to a loopback address that verifies the certificate for :data:`SERVER_NAME` (SNI too)."""

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(sock, server_hostname=SERVER_NAME)


class WebhookClient:
    """A keep-alive HTTPS client for a webhook on 127.0.0.1 trusting ``ca_file``."""

    def __init__(self, port: int, ca_file: str, timeout: float = 30.0, *, retry_stale: bool = True) -> None:
        self.port = port
        self.retry_stale = retry_stale
        self.context = ssl.create_default_context(cafile=ca_file)
        self.timeout = timeout
        self._conn: _VerifiedConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """One request on the kept-alive connection; with ``retry_stale``, once more on a new connection
        if the server had closed the idle one (the keep-alive race every HTTP client retries)."""
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = _VerifiedConnection("127.0.0.1", self.port, timeout=self.timeout, context=self.context)
            try:
                self._conn.request(method, path, body=body, headers=headers or {})
                response = self._conn.getresponse()
                data = response.read()
                if response.will_close:
                    self.close()
                return response.status, data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2 or not self.retry_stale:
                    raise
        raise AssertionError("unreachable")

    def post_json(self, path: str, payload: Any) -> tuple[int, Any]:
        status, data = self.request("POST", path, json.dumps(payload).encode(),
                                    {"Content-Type": "application/json"})
        return status, json.loads(data) if data else None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
