"""AdmissionReview (``admission.k8s.io/v1``) in, the core's :class:`Decision` out, AdmissionReview back.

Pure functions over dicts and bytes, no Flask: parsing a request body into an
:class:`AdmissionRequest`, and building the ``response`` for ``/validate`` (deny with
an Invalid Status, or admit with warnings in warn mode) and ``/mutate`` (a JSONPatch,
never a denial).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import orjson  # several times faster than json on the large objects of a slice; json stays the reference

from kubectl_dra.errors import DraError
from kubectl_dra.validation.admission import SUPPORTED_KINDS, Decision
from kubectl_dra.validation.field import FieldError

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"

#: Largest request body accepted (the API server's own request limit).
MAX_BODY_BYTES = 3 * 1024 * 1024

#: The (group, version) each handled kind must arrive in; the webhook configuration
#: registers exactly these, so the API server converts other versions before calling us.
HANDLED_VERSIONS: dict[str, tuple[str, str]] = {
    "ResourceSlice": ("resource.k8s.io", "v1"),
    "DeviceClass": ("resource.k8s.io", "v1"),
    "ResourceClaim": ("resource.k8s.io", "v1"),
    "ResourceClaimTemplate": ("resource.k8s.io", "v1"),
    "PodGroup": ("scheduling.k8s.io", "v1beta1"),
    "Pod": ("", "v1"),
}

#: Operations the core decides on; DELETE and CONNECT are admitted untouched.
DECIDED_OPERATIONS = ("CREATE", "UPDATE")
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")

#: Longest warning passed back; the API server truncates long warnings anyway.
MAX_WARNING_CHARS = 512
#: Most warnings returned in one response.
MAX_WARNINGS = 64


class MalformedReview(DraError):
    """The body is not an ``admission.k8s.io/v1`` AdmissionReview request (HTTP 400)."""


@dataclass(frozen=True)
class AdmissionRequest:
    """The parts of ``AdmissionReview.request`` the webhook uses."""

    uid: str
    group: str
    version: str
    kind: str
    operation: str
    namespace: str
    name: str
    sub_resource: str
    object: dict | None
    old_object: dict | None

    @property
    def handled(self) -> bool:
        """True when the core decides on this request; everything else is admitted untouched."""
        return (
            self.kind in SUPPORTED_KINDS
            and HANDLED_VERSIONS.get(self.kind) == (self.group, self.version)
            and self.operation in DECIDED_OPERATIONS
            and not self.sub_resource
            and isinstance(self.object, dict)
            and (self.operation == "CREATE" or isinstance(self.old_object, dict))
        )

    @property
    def metric_kind(self) -> str:
        """The kind as a bounded metrics label: a supported kind or ``other``."""
        return self.kind if self.kind in SUPPORTED_KINDS else "other"

    @property
    def metric_operation(self) -> str:
        """The operation as a bounded metrics label."""
        return self.operation if self.operation in OPERATIONS else "other"


def parse_review(body: bytes) -> AdmissionRequest:
    """Decode a request body; :class:`MalformedReview` says what is wrong with it."""
    if not body:
        raise MalformedReview("empty request body: expected an admission.k8s.io/v1 AdmissionReview")
    try:
        review = _loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedReview(f"request body is not valid JSON: {exc}") from None
    except RecursionError:
        raise MalformedReview("request body is nested too deeply") from None
    if not isinstance(review, dict):
        raise MalformedReview(f"request body must be a JSON object, not {type(review).__name__}")
    if review.get("apiVersion") != API_VERSION or review.get("kind") != KIND:
        raise MalformedReview(
            f"expected apiVersion {API_VERSION!r} and kind {KIND!r}, "
            f"got {review.get('apiVersion')!r} and {review.get('kind')!r}"
        )
    request = review.get("request")
    if not isinstance(request, dict):
        raise MalformedReview("AdmissionReview.request is missing or not an object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise MalformedReview("AdmissionReview.request.uid is missing or not a string")
    gvk = request.get("kind")
    if not isinstance(gvk, dict):
        raise MalformedReview("AdmissionReview.request.kind is missing or not an object")
    operation = request.get("operation")
    if not isinstance(operation, str) or not operation:
        raise MalformedReview("AdmissionReview.request.operation is missing or not a string")
    obj = request.get("object")
    old = request.get("oldObject")
    for field, value in (("object", obj), ("oldObject", old)):
        if value is not None and not isinstance(value, dict):
            raise MalformedReview(f"AdmissionReview.request.{field} must be an object or null")
    return AdmissionRequest(
        uid=uid,
        group=_text(gvk.get("group")),
        version=_text(gvk.get("version")),
        kind=_text(gvk.get("kind")),
        operation=operation.upper(),
        namespace=_text(request.get("namespace")),
        name=_text(request.get("name")),
        sub_resource=_text(request.get("subResource")),
        object=obj,
        old_object=old,
    )


#: Every digit as "0", so that a run of 19 digits is one substring test (a regex search of the
#: body costs ~10x more).
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_DIGIT_RUN = b"0" * 19


def _loads(body: bytes) -> Any:
    """Decode a body with orjson, which accepts only strict RFC 8259 JSON; whatever it refuses
    (a BOM, UTF-16, NaN, integers beyond 64 bits, ...) is decoded or refused by :func:`json.loads`
    exactly as before, so the accepted documents and the error messages are json's. Bodies with
    a run of 19+ digits go to json too: orjson turns integers beyond 64 bits into floats."""
    if _LONG_DIGIT_RUN not in body.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


def _text(value: Any) -> str:
    """A string field of the request, or "" when absent or of another type."""
    return value if isinstance(value, str) else ""


def envelope(response: dict[str, Any]) -> dict[str, Any]:
    """Wrap a ``response`` in an AdmissionReview."""
    return {"apiVersion": API_VERSION, "kind": KIND, "response": response}


def admit(uid: str, warnings: list[str] | None = None) -> dict[str, Any]:
    """An admitting response without a patch."""
    response: dict[str, Any] = {"uid": uid, "allowed": True}
    if warnings:
        response["warnings"] = clean_warnings(warnings)
    return response


def deny(uid: str, status: dict[str, Any], warnings: list[str] | None = None) -> dict[str, Any]:
    """A denying response carrying a ``metav1.Status``."""
    response: dict[str, Any] = {"uid": uid, "allowed": False, "status": status}
    if warnings:
        response["warnings"] = clean_warnings(warnings)
    return response


def validate_response(req: AdmissionRequest, decision: Decision, *, enforce: bool) -> dict[str, Any]:
    """``/validate``: deny with an Invalid Status listing every error, or in warn mode admit with them as warnings."""
    warnings = list(decision.warnings)
    if decision.allowed:
        return admit(req.uid, warnings)
    if not enforce:
        warnings.extend(f"would be denied (warn mode): {_qualified(decision)}: {e}" for e in decision.errors)
        return admit(req.uid, warnings)
    return deny(req.uid, invalid_status(req, decision), warnings)


def mutate_response(req: AdmissionRequest, decision: Decision) -> dict[str, Any]:
    """``/mutate``: admit with the JSONPatch that applies defaults and drops fields of disabled gates."""
    response = admit(req.uid)
    if decision.patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = encode_patch(decision.patch)
    return response


def encode_patch(patch: list[dict]) -> str:
    """Base64 of the JSON-encoded RFC 6902 patch, as AdmissionResponse.patch carries it."""
    return base64.b64encode(json.dumps(patch, separators=(",", ":")).encode()).decode("ascii")


def invalid_status(req: AdmissionRequest, decision: Decision) -> dict[str, Any]:
    """The ``metav1.Status`` the API server builds for Invalid: code 422, causes with field paths."""
    return {
        "apiVersion": "v1",
        "kind": "Status",
        "status": "Failure",
        "code": 422,
        "reason": "Invalid",
        "message": decision.status_message(),
        "details": {
            "name": decision.name,
            "group": req.group,
            "kind": decision.kind,
            "causes": [_cause(e) for e in decision.errors],
        },
    }


def error_status(code: int, reason: str, message: str) -> dict[str, Any]:
    """A plain failure Status (bad request bodies, internal errors)."""
    return {"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code, "reason": reason, "message": message}


def _cause(error: FieldError) -> dict[str, str]:
    """One ``StatusCause``: the error type, its message without the field prefix, and the field path."""
    text = str(error)
    prefix = f"{error.field}: "
    body = text[len(prefix):] if text.startswith(prefix) else text
    return {"reason": error.type, "message": body, "field": error.field}


def _qualified(decision: Decision) -> str:
    """``Kind namespace/name`` for warnings."""
    name = f"{decision.namespace}/{decision.name}" if decision.namespace else decision.name
    return f"{decision.kind} {name}" if name else decision.kind


def clean_warnings(warnings: list[str]) -> list[str]:
    """Warnings as the API server accepts them: one printable line each, bounded in length and number."""
    cleaned: list[str] = []
    for warning in warnings:
        line = "".join(ch if ch.isprintable() else " " for ch in str(warning)).strip()
        if len(line) > MAX_WARNING_CHARS:
            line = line[: MAX_WARNING_CHARS - 3] + "..."
        if line:
            cleaned.append(line)
    if len(cleaned) > MAX_WARNINGS:
        extra = len(cleaned) - (MAX_WARNINGS - 1)
        cleaned = cleaned[: MAX_WARNINGS - 1] + [f"... and {extra} more warnings"]
    return cleaned
