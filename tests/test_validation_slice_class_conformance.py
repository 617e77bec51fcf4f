"""Core-level run of the ResourceSlice and DeviceClass admission scenarios: prepare + validate
straight through the strategy/validation functions (the CLI runner covers the same scenarios
end to end)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.quantity import Quantity, QuantityError
from kubectl_dra.validation.deviceclass import prepare_device_class, validate_device_class
from kubectl_dra.validation.resourceslice import prepare_resource_slice, validate_resource_slice
from tests.conftest import corpus, scenario_files

pytestmark = corpus  # every test here reads the shared conformance corpus

HANDLERS = {
    "ResourceSlice": (prepare_resource_slice, validate_resource_slice),
    "DeviceClass": (prepare_device_class, validate_device_class),
}


class OnlyGates:
    """Stand-in for ``FeatureGates.only``: the listed gates on, everything else off."""

    def __init__(self, names: list[str]) -> None:
        self._on = set(names)

    def enabled(self, name: str) -> bool:
        return name in self._on


def gates_only(names: list[str]) -> Any:
    """``FeatureGates.only(names)`` when the gates module exists, else the stand-in."""
    try:
        from kubectl_dra.gates import FeatureGates
    except ImportError:
        return OnlyGates(names)
    return FeatureGates.only(names)


def _scenarios() -> list[Path]:
    return [p for p in scenario_files("admission") if p.name.startswith(("slice-", "class-"))]


def _same(expected: Any, actual: Any) -> bool:
    """Deep equality where two strings that are equal quantities count as equal."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(_same(expected[k], actual[k]) for k in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(_same(e, a) for e, a in zip(expected, actual))
    if expected == actual:
        return True
    if isinstance(expected, (str, int)) and isinstance(actual, (str, int)) and not isinstance(expected, bool):
        try:
            return Quantity.from_json(expected) == Quantity.from_json(actual)
        except QuantityError:
            return False
    return False


def test_scenario_set_is_complete() -> None:
    """The slice and class scenarios are all there (169 + 37)."""
    names = [p.name for p in _scenarios()]
    assert len([n for n in names if n.startswith("slice-")]) == 169
    assert len([n for n in names if n.startswith("class-")]) == 37


@pytest.mark.parametrize("path", _scenarios(), ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    scenario = yaml.safe_load(path.read_text(encoding="utf-8"))
    obj = copy.deepcopy(scenario["object"])
    old = copy.deepcopy(scenario.get("oldObject")) if scenario.get("operation") == "UPDATE" else None
    prepare, validate = HANDLERS[obj["kind"]]
    gates = gates_only(list(scenario.get("features") or []))
    prepared = prepare(obj, old, gates)
    if isinstance(prepared, tuple):
        prepared = prepared[0]
    assert obj == scenario["object"]  # the strategy copies what it changes
    obj = prepared
    errors = validate(obj, old, gates)
    expect = scenario["expect"]
    rendered = "\n".join(str(e) for e in errors)
    assert (not errors) == bool(expect["allowed"]), rendered
    if "fields" in expect:
        assert {e.field for e in errors} == set(expect["fields"]), rendered
    if expect.get("object") is not None:
        assert _same(expect["object"], obj), f"expected {expect['object']}\n got {obj}"
