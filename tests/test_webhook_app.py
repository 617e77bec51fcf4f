"""The webhook's Flask app in-process: AdmissionReview handling, denials, warn mode, JSONPatch,
namespace lookups, bad bodies, metrics and health endpoints."""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubectl_dra.gates import FeatureGates
from kubectl_dra.validation.admission import review
from tests.admission_scenarios import gates_for, load_admission_scenarios, operation_of, scenario_id
from tests.conftest import corpus
from tests.webhook_support import (
    admission_review,
    apply_response_patch,
    check_response_shape,
    decode_patch,
    scenario_review,
)
from webhook import service as app_module
from webhook.app import Settings, create_app
from webhook.metrics import Metrics
from webhook.namespaces import NamespaceLookupError
from webhook.review import MAX_BODY_BYTES

ADMIN_LABEL = "resource.kubernetes.io/admin-access"


def claim(name: str = "claim-0", namespace: str = "team-a", **exactly: Any) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", **exactly}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"devices": {"requests": [request]}}}


def invalid_claim() -> dict[str, Any]:
    """Two errors: a bad request name and a missing device class."""
    obj = claim()
    obj["spec"]["devices"]["requests"] = [
        {"name": "Bad_Name", "exactly": {"deviceClassName": "gpu.example.com"}},
        {"name": "second", "exactly": {}},
    ]
    return obj


def make_client(mode: str = "enforce", labels: Callable[[str], Mapping[str, str]] | None = None,
                gates: FeatureGates | None = None, metrics: Metrics | None = None,
                readiness: Callable[[], str | None] | None = None) -> Any:
    settings = Settings(gates=gates or FeatureGates.default(), mode=mode, namespace_labels=labels,
                        readiness=readiness)
    return create_app(settings, metrics).test_client()


def post(client: Any, path: str, review_doc: dict[str, Any]) -> dict[str, Any]:
    reply = client.post(path, json=review_doc)
    assert reply.status_code == 200, reply.get_data(as_text=True)
    return check_response_shape(review_doc, reply.get_json())


# --- decisions --------------------------------------------------------------------------------


def test_valid_claim_is_admitted_with_the_defaults_patch() -> None:
    client = make_client()
    obj = claim()
    doc = admission_review(obj)
    validated = post(client, "/validate", doc)
    assert validated["allowed"] is True and "status" not in validated
    mutated = post(client, "/mutate", doc)
    patched = apply_response_patch(obj, mutated)
    exactly = patched["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["allocationMode"] == "ExactCount" and exactly["count"] == 1
    expected = review(obj, gates=FeatureGates.default())
    assert patched == expected.object


def test_invalid_claim_is_denied_with_every_field_error() -> None:
    client = make_client()
    obj = invalid_claim()
    response = post(client, "/validate", admission_review(obj))
    assert response["allowed"] is False
    status = response["status"]
    assert (status["code"], status["reason"], status["status"]) == (422, "Invalid", "Failure")
    expected = review(obj, gates=FeatureGates.default())
    assert len(expected.errors) >= 2
    causes = status["details"]["causes"]
    assert [c["field"] for c in causes] == [e.field for e in expected.errors]
    assert [c["reason"] for c in causes] == [e.type for e in expected.errors]
    assert status["details"]["kind"] == "ResourceClaim" and status["details"]["group"] == "resource.k8s.io"
    assert status["details"]["name"] == "claim-0"
    assert status["message"].startswith('ResourceClaim.resource.k8s.io "claim-0" is invalid')
    for error in expected.errors:
        assert error.field in status["message"]


def test_mutate_never_denies() -> None:
    client = make_client()
    response = post(client, "/mutate", admission_review(invalid_claim()))
    assert response["allowed"] is True and "status" not in response


def test_warn_mode_admits_with_warnings() -> None:
    client = make_client(mode="warn")
    obj = invalid_claim()
    response = post(client, "/validate", admission_review(obj))
    assert response["allowed"] is True and "status" not in response
    expected = review(obj, gates=FeatureGates.default())
    warnings = response["warnings"]
    assert len(warnings) >= len(expected.errors)
    for error in expected.errors:
        assert any(error.field in w and "would be denied" in w for w in warnings)


def test_unknown_kinds_versions_operations_and_subresources_pass_untouched() -> None:
    client = make_client()
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}
    old_version = dict(invalid_claim(), apiVersion="resource.k8s.io/v1beta1")
    status_update = admission_review(invalid_claim(), operation="UPDATE", old=invalid_claim())
    status_update["request"]["subResource"] = "status"
    deletion = admission_review(None, operation="DELETE", old=invalid_claim())
    connect = admission_review(invalid_claim(), operation="CONNECT")
    for doc in (admission_review(configmap), admission_review(old_version), status_update, deletion, connect):
        for path in ("/validate", "/mutate"):
            response = post(client, path, doc)
            assert response == {"uid": doc["request"]["uid"], "allowed": True}


def test_update_uses_the_old_object() -> None:
    """Changing a claim's spec is forbidden on update (it is immutable)."""
    client = make_client()
    old = claim()
    new = claim()
    new["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "other.example.com"
    for obj in (old, new):
        obj["spec"]["devices"]["requests"][0]["exactly"].update(allocationMode="ExactCount", count=1)
    assert post(client, "/validate", admission_review(old, operation="UPDATE", old=old))["allowed"] is True
    denied = post(client, "/validate", admission_review(new, operation="UPDATE", old=old))
    assert denied["allowed"] is False
    expected = review(new, operation="UPDATE", old=old, gates=FeatureGates.default())
    assert [c["field"] for c in denied["status"]["details"]["causes"]] == [e.field for e in expected.errors]


def test_object_without_namespace_takes_the_request_namespace() -> None:
    seen: list[str] = []

    def labels(ns: str) -> dict[str, str]:
        seen.append(ns)
        return {ADMIN_LABEL: "true"}

    obj = claim(adminAccess=True)
    del obj["metadata"]["namespace"]
    client = make_client(labels=labels, gates=FeatureGates.default().with_overrides("DRAAdminAccess=true"))
    response = post(client, "/validate", admission_review(obj, namespace="from-request"))
    assert response["allowed"] is True
    assert seen == ["from-request"]


# --- admin access and namespace lookups -------------------------------------------------------


ADMIN_GATES = FeatureGates.default().with_overrides("DRAAdminAccess=true")


def test_admin_access_follows_the_namespace_label() -> None:
    namespaces = {"admins": {ADMIN_LABEL: "true"}, "users": {ADMIN_LABEL: "false"}}
    client = make_client(labels=lambda ns: namespaces[ns], gates=ADMIN_GATES)
    allowed = post(client, "/validate", admission_review(claim(namespace="admins", adminAccess=True)))
    assert allowed["allowed"] is True
    denied = post(client, "/validate", admission_review(claim(namespace="users", adminAccess=True)))
    assert denied["allowed"] is False
    assert [c["field"] for c in denied["status"]["details"]["causes"]] == ["spec.devices.requests[0].adminAccess"]


def test_failed_namespace_lookup_is_a_clear_denial_under_enforce() -> None:
    def broken(ns: str) -> dict[str, str]:
        raise NamespaceLookupError(f"reading namespace {ns!r} failed: HTTP 503 Service Unavailable")

    obj = claim(namespace="admins", adminAccess=True)
    denied = post(make_client(labels=broken, gates=ADMIN_GATES), "/validate", admission_review(obj))
    assert denied["allowed"] is False
    message = denied["status"]["message"]
    assert "spec.devices.requests[0].adminAccess" in message and "'admins'" in message and "503" in message
    warned = post(make_client(mode="warn", labels=broken, gates=ADMIN_GATES), "/validate", admission_review(obj))
    assert warned["allowed"] is True and any("503" in w for w in warned["warnings"])
    # claims without admin access never need the lookup
    plain = post(make_client(labels=broken, gates=ADMIN_GATES), "/validate", admission_review(claim()))
    assert plain["allowed"] is True


# --- failures inside the core -------------------------------------------------------------------


def test_core_failure_is_a_denial_not_a_5xx(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(app_module, "review", explode)
    metrics = Metrics()
    client = make_client(metrics=metrics)
    doc = admission_review(claim(name="doomed"))
    denied = post(client, "/validate", doc)
    assert denied["allowed"] is False
    assert denied["status"]["code"] == 500 and "ResourceClaim team-a/doomed" in denied["status"]["message"]
    assert "KeyError" in denied["status"]["message"]
    assert post(client, "/mutate", doc) == {"uid": doc["request"]["uid"], "allowed": True}
    warned = post(make_client(mode="warn"), "/validate", doc)
    assert warned["allowed"] is True and any("KeyError" in w for w in warned["warnings"])
    assert _sample(metrics, "dra_webhook_admission_requests_total",
                   endpoint="validate", kind="ResourceClaim", operation="CREATE", decision="error") == 1


# --- bad requests -------------------------------------------------------------------------------


BAD_BODIES = {
    "empty": b"",
    "not json": b"{not json",
    "not utf-8": b"\xff\xfe{}",
    "a list": b"[]",
    "wrong apiVersion": json.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
                                    "request": {"uid": "u"}}).encode(),
    "no request": json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).encode(),
    "no uid": json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                          "request": {"kind": {"kind": "Pod"}, "operation": "CREATE"}}).encode(),
    "object not a map": json.dumps(dict(admission_review(claim()),
                                        request=dict(admission_review(claim())["request"], object=[1]))).encode(),
    "kind mismatch": json.dumps(admission_review(claim(), kind={"group": "resource.k8s.io", "version": "v1",
                                                              "kind": "DeviceClass"})).encode(),
    "deeply nested": b"[" * 100000 + b"]" * 100000,
    "create without object": json.dumps(admission_review(None, old=claim(), operation="CREATE",
                                                         kind={"group": "resource.k8s.io", "version": "v1",
                                                               "kind": "ResourceClaim"})).encode(),
    "update without oldObject": json.dumps(admission_review(claim(), operation="UPDATE")).encode(),
}


@pytest.mark.parametrize("name", sorted(BAD_BODIES))
def test_malformed_bodies_are_400_with_a_message(name: str) -> None:
    client = make_client()
    for path in ("/validate", "/mutate"):
        reply = client.post(path, data=BAD_BODIES[name], content_type="application/json")
        assert reply.status_code == 400, (name, reply.get_data(as_text=True))
        body = reply.get_json()
        assert body["kind"] == "Status" and body["code"] == 400 and len(body["message"]) > 10


def test_bodies_over_3_mib_are_413() -> None:
    client = make_client()
    big = admission_review(claim())
    big["request"]["object"]["metadata"]["annotations"] = {"x": "a" * MAX_BODY_BYTES}
    reply = client.post("/validate", data=json.dumps(big), content_type="application/json")
    assert reply.status_code == 413
    assert "larger than" in reply.get_json()["message"]
    # just under the limit is read and decided (here: denied, annotations too large)
    fits = admission_review(claim())
    fits["request"]["object"]["metadata"]["annotations"] = {"x": "a" * (MAX_BODY_BYTES - 2000)}
    reply = client.post("/validate", data=json.dumps(fits), content_type="application/json")
    assert reply.status_code == 200 and reply.get_json()["response"]["allowed"] is False


def test_wrong_methods_and_paths_are_4xx() -> None:
    client = make_client()
    assert client.get("/validate").status_code == 405
    assert client.post("/nope", json={}).status_code == 404


# --- health and metrics -------------------------------------------------------------------------


def test_health_and_readiness() -> None:
    assert make_client().get("/healthz").status_code == 200
    assert make_client().get("/readyz").status_code == 200
    not_ready = make_client(readiness=lambda: "cannot load certificate").get("/readyz")
    assert not_ready.status_code == 503 and b"certificate" in not_ready.data


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    body, _ = metrics.exposition()
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def test_metrics_count_requests_by_kind_operation_and_decision() -> None:
    metrics = Metrics()
    client = make_client(metrics=metrics)
    for _ in range(3):
        post(client, "/validate", admission_review(claim()))
    post(client, "/validate", admission_review(invalid_claim()))
    post(client, "/mutate", admission_review(claim()))
    client.post("/validate", data=b"junk")
    post(client, "/validate", admission_review({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
    total = "dra_webhook_admission_requests_total"
    assert _sample(metrics, total, endpoint="validate", kind="ResourceClaim", operation="CREATE",
                   decision="allowed") == 3
    assert _sample(metrics, total, endpoint="validate", kind="ResourceClaim", decision="denied") == 1
    assert _sample(metrics, total, endpoint="mutate", kind="ResourceClaim", decision="patched") == 1
    assert _sample(metrics, total, endpoint="validate", decision="malformed") == 1
    assert _sample(metrics, total, endpoint="validate", kind="other", decision="ignored") == 1
    assert _sample(metrics, "dra_webhook_admission_duration_seconds_count", endpoint="validate",
                   kind="ResourceClaim") == 4
    page = client.get("/metrics")
    assert page.status_code == 200 and page.content_type.startswith("text/plain")
    assert b"dra_webhook_admission_duration_seconds_bucket" in page.data


# --- every scenario: the webhook's answer is the core's decision ------------------------------


SCENARIOS = load_admission_scenarios()


@corpus
def test_webhook_answers_match_the_core_decision_for_every_scenario() -> None:
    """For all admission scenarios, /validate and /mutate carry exactly the core's decision: allowed,
    every error field in order, and a JSONPatch that yields the core's object (the presentation
    layer loses nothing). Conformance to the expectations is checked over HTTPS in test_webhook_server."""
    mismatches = []
    for scenario in SCENARIOS:
        labels = dict(scenario.get("namespaceLabels") or {})
        gates = gates_for(scenario)
        client = make_client(labels=lambda ns, labels=labels: labels, gates=gates)
        doc = scenario_review(scenario)
        validated = post(client, "/validate", doc)
        mutated = post(client, "/mutate", doc)
        operation = operation_of(scenario)
        try:
            core = review(scenario["object"], operation=operation,
                          old=scenario.get("oldObject") if operation == "UPDATE" else None,
                          namespace_labels=labels, gates=gates)
        except Exception as exc:  # noqa: BLE001 - the webhook must then deny with an internal error
            if validated["allowed"] or validated["status"]["code"] != 500:
                mismatches.append(f"{scenario_id(scenario)}: core raised {exc!r} but webhook said {validated}")
            continue
        fields = [c["field"] for c in (validated.get("status") or {}).get("details", {}).get("causes", [])]
        problems = []
        if validated["allowed"] != core.allowed:
            problems.append(f"allowed {validated['allowed']} != {core.allowed}")
        if fields != [e.field for e in core.errors]:
            problems.append(f"fields {fields} != {[e.field for e in core.errors]}")
        if decode_patch(mutated) != core.patch:
            problems.append("patch differs")
        if apply_response_patch(scenario["object"], mutated) != core.object:
            problems.append("patched object differs")
        if problems:
            mismatches.append(f"{scenario_id(scenario)}: {'; '.join(problems)}")
    assert not mismatches, "\n".join(mismatches)


def test_warm_up_decides_every_kind_without_problems() -> None:
    """``serve`` decides one object of each kind before forking; none of them may fail."""
    from kubectl_dra.validation.admission import SUPPORTED_KINDS
    from webhook.app import _WARM_UP_OBJECTS, warm_up

    assert {o["kind"] for o in _WARM_UP_OBJECTS} == set(SUPPORTED_KINDS)
    assert warm_up(FeatureGates.default()) == []
    assert warm_up(FeatureGates.only([])) == []
