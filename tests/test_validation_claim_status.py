"""Status subresource of ResourceClaim and PodGroup (``admission-claims.md`` sections 7.5, 10, 11)."""

from __future__ import annotations

import copy
from typing import Any

from kubectl_dra.validation.admission import ADMIN_ACCESS_LABEL, review
from kubectl_dra.validation.field import DUPLICATE, FORBIDDEN, INVALID, REQUIRED, TOO_MANY
from tests.test_validation_claim import ALL, NONE, Gates

#: every gate the claim status fields depend on
STATUS_GATES = Gates(*ALL.names, "DRAResourceClaimDeviceStatus", "DRADeviceBindingConditions",
                     "DRAOptionalNodeOperations")
UID = "0b6f3d1e-2c4a-4f6b-9a7e-1d2c3b4a5f60"


def stored_claim(**exactly: Any) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "claim-0", "namespace": "default", "labels": {"a": "b"}},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
                                        "count": 1, **exactly}}]}},
    }


def result(**extra: Any) -> dict:
    return {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0", **extra}


def with_status(claim: dict, status: dict) -> dict:
    out = copy.deepcopy(claim)
    out["status"] = status
    return out


def status_update(new: dict, old: dict, gates: Any = STATUS_GATES, labels: Any = None) -> Any:
    return review(new, operation="UPDATE", old=old, gates=gates, subresource="status", namespace_labels=labels)


def errors_of(decision: Any) -> set[tuple[str, str]]:
    return {(e.type, e.field) for e in decision.errors}


def test_valid_allocation_keeps_stored_spec_and_metadata() -> None:
    old = stored_claim()
    new = with_status(old, {"allocation": {"devices": {"results": [result()]}},
                            "reservedFor": [{"resource": "pods", "name": "p", "uid": UID}]})
    new["spec"]["devices"]["requests"][0]["exactly"]["count"] = 5  # ignored in a status update
    new["metadata"]["labels"] = {"changed": "yes"}  # reset from the stored claim
    d = status_update(new, old)
    assert d.allowed, d.errors
    assert d.object["spec"] == old["spec"]
    assert d.object["metadata"]["labels"] == {"a": "b"}
    assert d.object["status"]["reservedFor"][0]["uid"] == UID


def test_result_rules() -> None:
    bad = result(request="other", driver="", pool="a//b", device="Bad_Device", shareID="NOT-A-UUID",
                 bindingFailureConditions=["x"], skipNodeOperations=["NodePrepareResources"])
    old = stored_claim()
    d = status_update(with_status(old, {"allocation": {"devices": {"results": [bad]}}}), old)
    r = "status.allocation.devices.results[0]"
    assert {f for _, f in errors_of(d)} == {
        f"{r}.request", f"{r}.driver", f"{r}.pool", f"{r}.device", f"{r}.shareID",
        f"{r}.bindingConditions", f"{r}.skipNodeOperations",
    }


def test_reserved_for_rules() -> None:
    old = stored_claim()
    refs = [{"resource": "pods", "name": "p", "uid": UID}, {"resource": "pods", "name": "q", "uid": UID}, {}]
    d = status_update(with_status(old, {"reservedFor": refs}), old)
    assert errors_of(d) == {
        (DUPLICATE, "status.reservedFor[1]"),
        (REQUIRED, "status.reservedFor[2].resource"), (REQUIRED, "status.reservedFor[2].name"),
        (REQUIRED, "status.reservedFor[2].uid"),
        (FORBIDDEN, "status.reservedFor"),  # consumers without an allocation
    }
    many = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)]
    alloc = {"devices": {"results": [result()]}}
    assert errors_of(status_update(with_status(old, {"allocation": alloc, "reservedFor": many}), old)) == {
        (TOO_MANY, "status.reservedFor")}


def test_no_new_consumers_while_deleting() -> None:
    alloc = {"devices": {"results": [result()]}}
    old = with_status(stored_claim(), {"allocation": alloc, "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]})
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    new = copy.deepcopy(old)
    new["status"]["reservedFor"].append({"resource": "pods", "name": "q", "uid": "2"})
    assert errors_of(status_update(new, old)) == {(FORBIDDEN, "status.reservedFor")}
    removal = copy.deepcopy(old)
    removal["status"]["reservedFor"] = []
    assert status_update(removal, old).allowed


def test_allocation_is_immutable_once_set() -> None:
    old = with_status(stored_claim(), {"allocation": {"devices": {"results": [result()]}}})
    new = copy.deepcopy(old)
    new["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"
    assert errors_of(status_update(new, old)) == {(INVALID, "status.allocation")}
    cleared = copy.deepcopy(old)
    del cleared["status"]["allocation"]
    assert status_update(cleared, old).allowed


def test_device_status_must_name_an_allocated_device() -> None:
    alloc = {"devices": {"results": [result()]}}
    old = with_status(stored_claim(), {"allocation": alloc})
    new = with_status(old, {"allocation": alloc, "devices": [
        {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
         "networkData": {"ips": ["10.0.0.1/24", "10.0.0.01/24", "2001:db8:0::1/64"]}},
        {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-9", "data": [1]},
    ]})
    d = status_update(new, old)
    assert errors_of(d) == {
        (INVALID, "status.devices[0].networkData.ips[1]"),
        (INVALID, "status.devices[0].networkData.ips[2]"),
        (INVALID, "status.devices[1]"),
        (INVALID, "status.devices[1].data"),
    }


def test_device_status_dropped_without_gate() -> None:
    alloc = {"devices": {"results": [result()]}}
    old = with_status(stored_claim(), {"allocation": alloc})
    new = with_status(old, {"allocation": alloc, "devices": [
        {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]})
    d = status_update(new, old, gates=NONE)
    assert d.allowed and "devices" not in d.object["status"]
    assert d.patch == [{"op": "remove", "path": "/status/devices"}]


def test_admin_access_in_new_allocation_needs_namespace_label() -> None:
    old = stored_claim(adminAccess=True)
    new = with_status(old, {"allocation": {"devices": {"results": [result(), result(device="gpu-1", adminAccess=True)]}}})
    path = "status.allocation.devices.results[1].adminAccess"
    assert errors_of(status_update(new, old, labels={})) == {(FORBIDDEN, path)}
    assert status_update(new, old, labels={ADMIN_ACCESS_LABEL: "true"}).allowed
    # without the gate and without stored use, the field is dropped and nothing is checked
    plain = stored_claim()
    dropped = status_update(with_status(plain, new["status"]), plain, gates=Gates("DRADeviceTaints"), labels={})
    assert dropped.allowed
    assert all("adminAccess" not in r for r in dropped.object["status"]["allocation"]["devices"]["results"])


def test_status_subresource_on_create_or_other_kinds_is_not_checked() -> None:
    claim = with_status(stored_claim(), {"reservedFor": [{}]})
    created = review(claim, operation="CREATE", gates=ALL, subresource="status")
    assert created.allowed and created.patch == []
    slice_obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}}
    assert review(slice_obj, operation="UPDATE", old=slice_obj, gates=ALL, subresource="status").allowed


def test_pod_group_claim_statuses() -> None:
    old = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"resourceClaims": [{"name": "pg-claim", "resourceClaimTemplateName": "t"}]},
    }
    new = copy.deepcopy(old)
    new["status"] = {"resourceClaimStatuses": [
        {"name": "pg-claim", "resourceClaimName": "g-pg-claim-abc"},
        {"name": "pg-claim", "resourceClaimName": "Bad_Name"},
        {"name": "unknown"},
    ]}
    d = review(new, operation="UPDATE", old=old, gates=STATUS_GATES, subresource="status")
    base = "status.resourceClaimStatuses"
    assert errors_of(d) == {
        (DUPLICATE, f"{base}[1]"), (INVALID, f"{base}[1].resourceClaimName"), (INVALID, f"{base}[2].name")}


def test_status_fields_of_disabled_gates_are_dropped_unless_stored() -> None:
    fields = {"bindingConditions": ["ready"], "bindingFailureConditions": ["failed"],
              "skipNodeOperations": ["*"], "shareID": UID, "tolerations": [{"operator": "Exists"}]}
    old = stored_claim()
    new = with_status(old, {"allocation": {"devices": {"results": [result(**fields)]}}})
    d = status_update(new, old, gates=NONE)
    assert d.allowed, d.errors
    assert d.object["status"]["allocation"]["devices"]["results"] == [result()]
    assert len(d.warnings) == len(fields)
    # the stored claim used them (an earlier allocation): a status update keeps them
    stored = with_status(old, new["status"])
    cleared = with_status(old, {"allocation": new["status"]["allocation"], "reservedFor": []})
    kept = status_update(cleared, stored, gates=NONE)
    assert kept.object["status"]["allocation"]["devices"]["results"][0]["shareID"] == UID
