"""Unit tests of the claim, template, PodGroup and Pod admission rules and of the decision."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from kubectl_dra.validation.admission import ADMIN_ACCESS_LABEL, SUPPORTED_KINDS, Decision, review
from kubectl_dra.validation.field import DUPLICATE, FORBIDDEN, INTERNAL, INVALID, REQUIRED, TOO_LONG


class Gates:
    """The smallest feature-gate object the validation accepts: ``enabled(name)``."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)

    def enabled(self, name: str) -> bool:
        return name in self.names


ALL = Gates(
    "DRAPrioritizedList", "DRAAdminAccess", "DRADeviceTaints", "DRAConsumableCapacity",
    "DRADerivedAttributes", "DRAListTypeAttributes", "DRAWorkloadResourceClaims",
)
NONE = Gates()


def claim(requests: list[dict], **devices: Any) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "claim-0", "namespace": "default"},
        "spec": {"devices": {"requests": requests, **devices}},
    }


def template(requests: list[dict], **devices: Any) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "tmpl", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": requests, **devices}}},
    }


def exact(name: str = "req-0", **fields: Any) -> dict:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **fields}}


def fields_of(decision: Decision) -> set[str]:
    return {e.field for e in decision.errors}


# --------------------------------------------------------------------------- decision basics


def test_names_ending_in_a_newline_are_invalid_everywhere() -> None:
    """The API server's formats end at the end of the text (Go's ``$``), not before a final
    newline (Python's ``$``): each such name is an error at its own field."""
    bad = claim([exact("gpu\n", selectors=[{"cel": {"expression": 'device.driver == "a"'}}]),
                 {"name": "nic", "exactly": {"deviceClassName": "nic.example.com\n"}}],
                constraints=[{"requests": ["nic"], "matchAttribute": "example.com/pcieRoot\n"}])
    bad["metadata"] = {"name": "claim-0\n", "namespace": "default\n", "labels": {"app\n": "x\n"}}
    decision = review(bad, gates=ALL)
    assert not decision.allowed
    assert fields_of(decision) == {
        "metadata.name", "metadata.namespace", "metadata.labels",
        "spec.devices.requests[0].name", "spec.devices.requests[1].exactly.deviceClassName",
        "spec.devices.constraints[0].matchAttribute",
    }


def test_patch_turns_submitted_object_into_decision_object() -> None:
    obj = claim(
        [{"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": "c", "tolerations": [{"key": "k"}]}]}],
        constraints=[{"matchAttribute": "x.com/y", "distinctAttribute": "x.com/z"}],
    )
    obj["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}
    d = review(obj, gates=Gates("DRAPrioritizedList", "DRADeviceTaints"))
    assert d.allowed, d.errors
    assert jsonpatch.apply_patch(obj, d.patch) == d.object
    sub = d.object["spec"]["devices"]["requests"][0]["firstAvailable"][0]
    assert sub["allocationMode"] == "ExactCount" and sub["count"] == 1
    assert sub["tolerations"][0]["operator"] == "Equal"
    assert "status" not in d.object
    assert "distinctAttribute" not in d.object["spec"]["devices"]["constraints"][0]
    assert any("distinctAttribute" in w and "DRAConsumableCapacity" in w for w in d.warnings)


def test_input_object_is_not_modified() -> None:
    obj = claim([exact(capacity={"requests": {"mem": "1Gi"}})])
    before = copy.deepcopy(obj)
    review(obj, gates=NONE)
    assert obj == before


def test_valid_object_without_changes_has_empty_patch() -> None:
    d = review(claim([exact(allocationMode="ExactCount", count=2)]), gates=NONE)
    assert d.allowed and d.patch == [] and d.errors == [] and d.warnings == []


def test_unknown_kind_is_admitted_unchanged() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_A_Valid_Name"}}
    d = review(obj, gates=ALL)
    assert d.allowed and d.patch == [] and d.object == obj
    assert "ConfigMap" not in SUPPORTED_KINDS


def test_to_dict_contract() -> None:
    d = review(claim([exact(count=-1)]), gates=NONE)
    out = d.to_dict()
    assert list(out) == ["kind", "name", "namespace", "operation", "allowed", "errors", "warnings", "patch", "object"]
    assert out["allowed"] is False and out["kind"] == "ResourceClaim" and out["namespace"] == "default"
    assert out["errors"] == [
        {"type": INVALID, "field": "spec.devices.requests[0].exactly.count", "value": -1,
         "message": "must be greater than zero"}
    ]


def test_status_message_lists_every_error() -> None:
    d = review(claim([exact("Bad_Name", count=-1)]), gates=NONE)
    message = d.status_message()
    assert message.startswith('ResourceClaim.resource.k8s.io "claim-0" is invalid: [')
    assert "spec.devices.requests[0].name" in message and "spec.devices.requests[0].exactly.count" in message
    single = review(claim([exact(count=-1)]), gates=NONE).status_message()
    assert single == ('ResourceClaim.resource.k8s.io "claim-0" is invalid: '
                      "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero")


def test_update_needs_old_object_and_known_operation() -> None:
    with pytest.raises(ValueError):
        review(claim([exact()]), operation="UPDATE", gates=NONE)
    with pytest.raises(ValueError):
        review(claim([exact()]), operation="DELETE", gates=NONE)


def test_request_namespace_fills_missing_namespace_without_a_patch() -> None:
    obj = claim([exact(count=1, allocationMode="ExactCount")])
    del obj["metadata"]["namespace"]
    d = review(obj, gates=NONE, namespace="team-a")
    assert d.allowed and d.namespace == "team-a" and d.patch == []
    missing = review(obj, gates=NONE)
    assert fields_of(missing) == {"metadata.namespace"}


# --------------------------------------------------------------------------- admin access


def test_namespace_lookup_is_lazy() -> None:
    calls: list[str] = []

    def lookup(ns: str) -> dict[str, str]:
        calls.append(ns)
        return {ADMIN_ACCESS_LABEL: "true"}

    assert review(claim([exact()]), gates=ALL, namespace_labels=lookup).allowed
    assert calls == []
    assert review(claim([exact(adminAccess=False)]), gates=ALL, namespace_labels=lookup).allowed
    assert calls == []
    assert review(claim([exact(adminAccess=True)]), gates=ALL, namespace_labels=lookup).allowed
    assert calls == ["default"]


def test_namespace_lookup_failure_denies_with_internal_error() -> None:
    def lookup(ns: str) -> dict[str, str]:
        raise TimeoutError("api server timed out")

    d = review(claim([exact(), exact("req-1", adminAccess=True)]), gates=ALL, namespace_labels=lookup)
    assert not d.allowed
    assert [(e.type, e.field) for e in d.errors] == [(INTERNAL, "spec.devices.requests[1].adminAccess")]
    assert "api server timed out" in d.errors[0].message


def test_admin_access_on_template_has_no_extra_spec_prefix() -> None:
    d = review(template([exact(adminAccess=True)]), gates=ALL, namespace_labels={ADMIN_ACCESS_LABEL: "True"})
    assert [(e.type, e.field) for e in d.errors] == [(FORBIDDEN, "spec.devices.requests[0].adminAccess")]


def test_admin_access_dropped_without_gate_needs_no_label() -> None:
    d = review(claim([exact(adminAccess=True)]), gates=NONE, namespace_labels={})
    assert d.allowed
    assert "adminAccess" not in d.object["spec"]["devices"]["requests"][0]["exactly"]


# --------------------------------------------------------------------------- spec rules


def test_request_reference_with_two_slashes_is_one_error() -> None:
    d = review(claim([exact()], config=[{"requests": ["a/b/c"], "opaque": {"driver": "d.com", "parameters": {}}}]),
               gates=NONE)
    assert [(e.type, e.field) for e in d.errors] == [(INVALID, "spec.devices.config[0].requests[0]")]


def test_parent_reference_covers_subrequests_but_sub_reference_needs_first_available() -> None:
    prioritized = {"name": "p", "firstAvailable": [{"name": "s", "deviceClassName": "c"}]}
    ok = claim([prioritized, exact("e")], constraints=[{"requests": ["p", "p/s", "e"], "matchAttribute": "a.com/x"}])
    assert review(ok, gates=ALL).allowed
    bad = claim([prioritized, exact("e")], constraints=[{"requests": ["e/s", "p/t"], "matchAttribute": "a.com/x"}])
    assert fields_of(review(bad, gates=ALL)) == {
        "spec.devices.constraints[0].requests[0]", "spec.devices.constraints[0].requests[1]"}


def test_opaque_parameters_rules() -> None:
    def config(parameters: Any) -> dict:
        return claim([exact()], config=[{"opaque": {"driver": "d.com", "parameters": parameters}}])

    path = "spec.devices.config[0].opaque.parameters"
    assert [(e.type, e.field) for e in review(config(None), gates=NONE).errors] == [(REQUIRED, path)]
    assert [(e.type, e.field) for e in review(config("text"), gates=NONE).errors] == [(INVALID, path)]
    big = {"x": "y" * 10240}
    assert [(e.type, e.field) for e in review(config(big), gates=NONE).errors] == [(TOO_LONG, path)]
    assert review(config({"x": 1}), gates=NONE).allowed


def test_duplicate_subrequest_and_bad_subrequest_reference() -> None:
    subs = [{"name": "s", "deviceClassName": "c"}, {"name": "s", "deviceClassName": "c"}]
    d = review(claim([{"name": "r", "firstAvailable": subs}]), gates=ALL)
    assert [(e.type, e.field) for e in d.errors] == [(DUPLICATE, "spec.devices.requests[0].firstAvailable[1]")]


def test_derived_attribute_list_result_needs_list_type_attributes() -> None:
    obj = claim(
        [exact("gpu", derivedAttributes=[{"name": "derived/roots", "expression": '["a", "b"]'}])],
        constraints=[{"requests": ["gpu"], "matchAttribute": "derived/roots"}],
    )
    assert review(obj, gates=ALL).allowed
    without = review(obj, gates=Gates("DRADerivedAttributes"))
    assert fields_of(without) == {"spec.devices.requests[0].exactly.derivedAttributes[0].expression"}


def test_derived_attribute_required_fields_and_compile_error() -> None:
    obj = claim(
        [exact("gpu", derivedAttributes=[{"name": "", "expression": ""}, {"name": "d.com/x", "expression": "1 +"}])],
        constraints=[{"matchAttribute": "d.com/x"}],
    )
    d = review(obj, gates=ALL)
    base = "spec.devices.requests[0].exactly.derivedAttributes"
    assert {(e.type, e.field) for e in d.errors} == {
        (REQUIRED, f"{base}[0].name"), (REQUIRED, f"{base}[0].expression"), (INVALID, f"{base}[1].expression")}


def test_toleration_effect_none_is_accepted() -> None:
    d = review(claim([exact(tolerations=[{"key": "k", "operator": "Exists", "effect": "None"}])]), gates=ALL)
    assert d.allowed, d.errors


def test_stored_over_limit_spec_stays_valid_in_metadata_update() -> None:
    old = claim([exact(f"req-{i}") for i in range(33)])
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "a"}
    assert review(new, operation="UPDATE", old=old, gates=NONE).allowed


def test_update_keeps_stored_status() -> None:
    old = claim([exact()])
    old["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}
    new = claim([exact()])
    new["status"] = {"reservedFor": []}
    d = review(new, operation="UPDATE", old=old, gates=NONE)
    assert d.allowed and d.object["status"] == old["status"]


def test_template_spec_change_is_immutable_but_label_change_is_not() -> None:
    old = template([exact()])
    relabeled = copy.deepcopy(old)
    relabeled["metadata"]["labels"] = {"a": "b"}
    assert review(relabeled, operation="UPDATE", old=old, gates=NONE).allowed
    changed = copy.deepcopy(old)
    changed["spec"]["metadata"] = {"labels": {"a": "b"}}
    assert fields_of(review(changed, operation="UPDATE", old=old, gates=NONE)) == {"spec"}


# --------------------------------------------------------------------------- PodGroup and Pod


def pod(claims: list[dict], container_claims: list[dict]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "resourceClaims": claims,
            "containers": [{"name": "c", "image": "i", "resources": {"claims": container_claims}}],
        },
    }


def test_pod_claim_rules() -> None:
    d = review(
        pod(
            [{"name": "gpu", "resourceClaimName": "c"}, {"name": "gpu", "resourceClaimTemplateName": "t"},
             {"name": "both", "resourceClaimName": "c", "resourceClaimTemplateName": "t"}],
            [{"name": "gpu"}, {"name": "gpu"}, {"name": "missing"}, {"name": "gpu", "request": "Bad"}, {}],
        ),
        gates=NONE,
    )
    got = {(e.type, e.field) for e in d.errors}
    c = "spec.containers[0].resources.claims"
    assert got == {
        (DUPLICATE, "spec.resourceClaims[1].name"),
        (INVALID, "spec.resourceClaims[2]"),
        (DUPLICATE, f"{c}[1]"),
        ("FieldValueNotFound", f"{c}[2]"),
        (INVALID, f"{c}[3].request"),
        (REQUIRED, f"{c}[4]"),
    }


def test_pod_claims_are_immutable() -> None:
    old = pod([{"name": "gpu", "resourceClaimName": "c"}], [{"name": "gpu"}])
    new = copy.deepcopy(old)
    new["spec"]["resourceClaims"][0]["resourceClaimName"] = "other"
    assert fields_of(review(new, operation="UPDATE", old=old, gates=NONE)) == {"spec"}
    same = copy.deepcopy(old)
    same["metadata"]["labels"] = {"x": "y"}
    assert review(same, operation="UPDATE", old=old, gates=NONE).allowed


def test_pod_group_claims_dropped_with_warning_when_gate_off() -> None:
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "x"}]},
    }
    d = review(group, gates=NONE)
    assert d.allowed and "resourceClaims" not in d.object["spec"]
    assert d.patch == [{"op": "remove", "path": "/spec/resourceClaims"}]
    assert d.warnings and "DRAWorkloadResourceClaims" in d.warnings[0]


# --------------------------------------------------------------------------- decoding


def test_values_of_the_wrong_type_end_the_request_with_type_errors() -> None:
    obj = claim([exact(count="2", adminAccess="yes"), {"name": 7, "firstAvailable": {"name": "x"}}])
    obj["metadata"]["labels"] = ["not", "a", "map"]
    d = review(obj, gates=ALL, namespace_labels=lambda ns: pytest.fail("no lookup for an undecodable object"))
    assert not d.allowed and d.patch == [] and d.object == obj
    assert {(e.type, e.field) for e in d.errors} == {
        ("FieldValueTypeInvalid", "metadata.labels"),
        ("FieldValueTypeInvalid", "spec.devices.requests[0].exactly.count"),
        ("FieldValueTypeInvalid", "spec.devices.requests[0].exactly.adminAccess"),
        ("FieldValueTypeInvalid", "spec.devices.requests[1].name"),
        ("FieldValueTypeInvalid", "spec.devices.requests[1].firstAvailable"),
    }
    assert any(e.message == "must be an integer, not string" for e in d.errors)


def test_null_values_decode_as_absent_fields() -> None:
    d = review(claim([exact(selectors=None, count=None)]), gates=NONE)
    assert d.allowed, d.errors


def test_a_malformed_stored_object_is_named_as_such() -> None:
    old = claim([exact()])
    old["spec"]["devices"]["requests"] = "oops"
    d = review(claim([exact()]), operation="UPDATE", old=old, gates=NONE)
    assert [(e.field, e.message.startswith("in the stored object: ")) for e in d.errors] == [
        ("spec.devices.requests", True)]


def test_capacity_requests_must_decode_as_quantities() -> None:
    bad = review(claim([exact(capacity={"requests": {"memory": "1Gx", "cores": "2"}})]), gates=ALL)
    assert [(e.type, e.field) for e in bad.errors] == [
        ("FieldValueTypeInvalid", "spec.devices.requests[0].exactly.capacity.requests[memory]")]
    assert review(claim([exact(capacity={"requests": {"memory": "1Gi", "cores": 2}})]), gates=ALL).allowed


# --------------------------------------------------------------------------- robustness

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.admission_scenarios import load_admission_scenarios  # noqa: E402
from tests.conftest import corpus  # noqa: E402

_OBJECTS = [
    (s["object"], s.get("oldObject"))
    for s in load_admission_scenarios()
    if s["object"].get("kind") in ("ResourceClaim", "ResourceClaimTemplate", "PodGroup", "Pod")
    and len(str(s["object"])) < 6000
]
_ODD_VALUES = st.sampled_from([None, True, 0, -1, 2**64, 1.5, "", "a/b/c", "X" * 300, [], {}, [1], {"k": "v"}, "\x00"])


def _container_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    paths = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            paths += _container_paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            paths += _container_paths(v, prefix + (i,))
    return paths


@corpus
@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), all_gates=st.booleans(), status=st.booleans())
def test_any_edit_of_a_scenario_object_gets_a_decision_whose_patch_applies(data: Any, all_gates: bool,
                                                                           status: bool) -> None:
    obj, old = copy.deepcopy(data.draw(st.sampled_from(_OBJECTS)))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from([p for p in _container_paths(obj) if p and p[0] not in ("kind",)]))
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = data.draw(_ODD_VALUES)
    d = review(obj, operation="UPDATE" if old else "CREATE", old=old, gates=ALL if all_gates else NONE,
               namespace_labels={}, subresource="status" if (status and old) else None)
    assert d.allowed == (not d.errors)
    assert jsonpatch.apply_patch(obj, d.patch) == d.object
    assert d.status_message()


def test_spec_comparison_treats_zero_count_and_empty_lists_as_absent() -> None:
    old = claim([exact(allocationMode="All", count=0, selectors=[])])
    new = claim([exact(allocationMode="All")])
    assert review(new, operation="UPDATE", old=old, gates=NONE).allowed
    admin_false = claim([exact(allocationMode="All", adminAccess=False)])
    stored = review(admin_false, operation="UPDATE", old=old, gates=ALL)
    assert [e.field for e in stored.errors] == ["spec"]  # *bool: false is not the same as unset
