"""Loading and checking the shared admission conformance scenarios (``admission/*.yaml``).

Used by ``test_conformance_admission.py`` (through ``kubectl dra validate -o json``) and by
the webhook tests (through a real AdmissionReview), so both judge a decision the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import yaml

from tests.conftest import scenario_files

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is much faster


def load_admission_scenarios() -> list[dict[str, Any]]:
    """Every admission scenario, in file order; each dict gains ``_path`` (its file)."""
    scenarios = []
    for path in scenario_files("admission"):
        with open(path, encoding="utf-8") as fh:
            scenario = yaml.load(fh, Loader=_LOADER)
        if not isinstance(scenario, dict) or "object" not in scenario or "expect" not in scenario:
            raise AssertionError(f"{path}: not an admission scenario (needs object and expect)")
        scenario["_path"] = str(path)
        scenarios.append(scenario)
    return scenarios


def scenario_id(scenario: dict[str, Any]) -> str:
    """The scenario's name (its file name without .yaml)."""
    return str(scenario.get("name") or Path(scenario["_path"]).stem)


def features_of(scenario: dict[str, Any]) -> list[str]:
    """The feature gates a scenario turns on; every other DRA gate is off."""
    return [str(f) for f in scenario.get("features") or []]


def gates_for(scenario: dict[str, Any]) -> Any:
    """The :class:`~kubectl_dra.gates.FeatureGates` of a scenario: its features on, all other DRA gates off."""
    from kubectl_dra.gates import FeatureGates

    return FeatureGates.only(features_of(scenario))


def feature_gates_flag(scenario: dict[str, Any]) -> str:
    """The ``--feature-gates`` value that gives :func:`gates_for` on the command line."""
    return gates_for(scenario).to_flag()


def namespace_labels_flag(scenario: dict[str, Any]) -> str | None:
    """The ``--namespace-labels`` value of a scenario (None when it has no labels)."""
    labels = scenario.get("namespaceLabels") or {}
    if not labels:
        return None
    return ",".join(f"{k}={v}" for k, v in labels.items())


def operation_of(scenario: dict[str, Any]) -> str:
    return str(scenario.get("operation") or "CREATE").upper()


def skip_reason(scenario: dict[str, Any]) -> str | None:
    """The scenario's own ``skip:`` reason, if it has one."""
    skip = scenario.get("skip")
    if not skip:
        return None
    return skip if isinstance(skip, str) else "marked skip in the scenario"


def _fields(errors: Iterable[dict[str, Any]]) -> set[str]:
    return {str(e.get("field")) for e in errors}


def _render_errors(errors: Iterable[dict[str, Any]]) -> str:
    return "\n".join(f"    {e.get('field')}: {e.get('type')}: {e.get('message')}" for e in errors) or "    (none)"


def _diff(expected: Any, actual: Any) -> str:
    import difflib

    exp = json.dumps(expected, indent=2, sort_keys=True).splitlines()
    act = json.dumps(actual, indent=2, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(exp, act, "expected object", "decision object", lineterm=""))


def check_decision(scenario: dict[str, Any], decision: dict[str, Any]) -> None:
    """Assert that a decision dict (the ``validate -o json`` form) matches the scenario:
    ``allowed``, the set of error field paths, and the stored object when given."""
    name = scenario_id(scenario)
    expect = scenario.get("expect") or {}
    errors = decision.get("errors") or []
    want_allowed = bool(expect.get("allowed"))
    if bool(decision.get("allowed")) != want_allowed:
        raise AssertionError(
            f"{name}: expected allowed={want_allowed}, got allowed={decision.get('allowed')}\n"
            f"  expected fields: {sorted(expect.get('fields') or [])}\n  errors:\n{_render_errors(errors)}"
        )
    if "fields" in expect:
        want = {str(f) for f in expect.get("fields") or []}
        got = _fields(errors)
        if want != got:
            raise AssertionError(
                f"{name}: error fields differ\n  missing: {sorted(want - got)}\n  unexpected: {sorted(got - want)}\n"
                f"  errors:\n{_render_errors(errors)}"
            )
    if want_allowed and "object" in expect:
        if decision.get("object") != expect["object"]:
            raise AssertionError(f"{name}: stored object differs\n{_diff(expect['object'], decision.get('object'))}")
