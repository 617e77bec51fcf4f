"""DeviceClass strategy and validation beyond the conformance scenarios."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_dra.validation.admission import review
from kubectl_dra.validation.deviceclass import is_extended_resource_name, prepare_device_class, validate_device_class
from kubectl_dra.validation.field import INVALID, REQUIRED, TOO_LONG, TOO_MANY, FieldError
from kubectl_dra.validation.schema import decode_errors


class Gates:
    def __init__(self, *on: str) -> None:
        self.on = set(on)

    def enabled(self, name: str) -> bool:
        return name in self.on


def class_(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": spec}


def run(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """Decode, then prepare a copy and validate it, as the API server does (decode errors end it)."""
    undecodable = decode_errors(obj, "DeviceClass") + (decode_errors(old, "DeviceClass") if old is not None else [])
    if undecodable:
        return undecodable
    submitted = copy.deepcopy(obj)
    new = prepare_device_class(submitted, old, Gates())
    assert submitted == obj  # the strategy copies what it changes
    return validate_device_class(new, old, Gates())


def kinds(errs: list[FieldError]) -> set[tuple[str, str]]:
    return {(e.type, e.field) for e in errs}


BAD = {"cel": {"expression": "1 +"}}
GOOD = {"cel": {"expression": 'device.driver == "a"'}}


def test_selector_limits() -> None:
    assert run(class_(selectors=[GOOD] * 32)) == []
    assert kinds(run(class_(selectors=[BAD] * 33))) == {(TOO_MANY, "spec.selectors")}
    assert kinds(run(class_(selectors=[{}]))) == {(REQUIRED, "spec.selectors[0].cel")}


def test_stored_selectors_are_not_rechecked_but_reordered_ones_are() -> None:
    old = class_(selectors=[BAD, GOOD])
    assert kinds(run(old)) == {(INVALID, "spec.selectors[0].cel.expression")}
    assert run(copy.deepcopy(old), old) == []
    reordered = class_(selectors=[GOOD, BAD])
    assert kinds(run(reordered, old)) == {(INVALID, "spec.selectors[1].cel.expression")}


def test_stored_config_size_is_grandfathered_but_driver_still_checked() -> None:
    big = {"opaque": {"driver": "d.example.com", "parameters": {"k": "x" * 10300}}}
    old = class_(config=[big])
    assert kinds(run(old)) == {(TOO_LONG, "spec.config[0].opaque.parameters")}
    assert run(copy.deepcopy(old), old) == []
    bad_driver = {"opaque": {"driver": "bad_driver", "parameters": {}}}
    stored = class_(config=[bad_driver])
    assert kinds(run(copy.deepcopy(stored), stored)) == {(INVALID, "spec.config[0].opaque.driver")}


def test_config_limits() -> None:
    entry = {"opaque": {"driver": "d.example.com", "parameters": {}}}
    assert run(class_(config=[entry] * 32)) == []
    assert kinds(run(class_(config=[entry] * 33))) == {(TOO_MANY, "spec.config")}
    assert kinds(run(class_(config=[{}]))) == {(REQUIRED, "spec.config[0].opaque")}


@pytest.mark.parametrize(
    "name, ok",
    [
        ("example.com/gpu", True),
        ("gpu", False),
        ("kubernetes.io/gpu", False),
        ("deviceclass.resource.kubernetes.io/gpu", False),
        ("requests.example.com/gpu", False),
        ("example.com/" + "a" * 63, True),
        ("example.com/" + "a" * 64, False),
        ("Example.com/gpu", False),
        ("example.com/-gpu", False),
    ],
)
def test_extended_resource_name(name: str, ok: bool) -> None:
    assert is_extended_resource_name(name) is ok
    errs = run(class_(extendedResourceName=name))
    assert kinds(errs) == (set() if ok else {(INVALID, "spec.extendedResourceName")})


def test_update_name_immutable_reported_once_and_namespace_cleared() -> None:
    old = class_()
    new = class_()
    new["metadata"] = {"name": "Other", "namespace": "ns"}
    prepared = prepare_device_class(new, old, Gates())
    assert "namespace" not in prepared["metadata"] and new["metadata"]["namespace"] == "ns"
    errs = validate_device_class(prepared, old, Gates())
    assert [e.field for e in errs].count("metadata.name") == 2  # format + immutable, each once
    assert {e.message for e in errs if e.field == "metadata.name"} >= {"field is immutable"}


def test_wrong_json_types_are_reported_before_validation() -> None:
    obj = class_(selectors=[{"cel": {"expression": 5}}], config=[{"opaque": "x"}], extendedResourceName=["a"])
    obj["metadata"]["namespace"] = "ns"
    submitted = copy.deepcopy(obj)
    decision = review(obj, gates=Gates())
    assert not decision.allowed and decision.object == submitted  # nothing cleared from an undecodable request
    assert kinds(decision.errors) == kinds(run(obj)) == {
        ("FieldValueTypeInvalid", "spec.selectors[0].cel.expression"),
        ("FieldValueTypeInvalid", "spec.config[0].opaque"),
        ("FieldValueTypeInvalid", "spec.extendedResourceName"),
    }
