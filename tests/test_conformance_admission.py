"""Every admission conformance scenario through the public ``kubectl dra validate -o json`` contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from tests.admission_scenarios import (
    check_decision,
    feature_gates_flag,
    load_admission_scenarios,
    namespace_labels_flag,
    operation_of,
    scenario_id,
    skip_reason,
)
from tests.conftest import corpus

pytestmark = corpus  # every test here reads the shared conformance corpus

SCENARIOS = load_admission_scenarios()


def _write(directory: Path, name: str, obj: Any) -> str:
    path = directory / name
    path.write_text(yaml.safe_dump(obj, sort_keys=False), encoding="utf-8")
    return str(path)


def run_validate(scenario: dict[str, Any], tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    """Run ``validate -o json`` on a scenario; returns (exit code, decision, stderr)."""
    args = ["validate", "-f", _write(tmp_path, "object.yaml", scenario["object"]), "-o", "json",
            "--operation", operation_of(scenario), "--feature-gates", feature_gates_flag(scenario)]
    if scenario.get("oldObject") is not None:
        args += ["--old", _write(tmp_path, "old.yaml", scenario["oldObject"])]
    labels = namespace_labels_flag(scenario)
    if labels:
        args += ["--namespace-labels", labels]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code in (0, 1), f"{scenario_id(scenario)}: exit {result.exit_code}\n{result.output}"
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_scenarios_are_all_loaded() -> None:
    """The runner sees the whole scenario set, including every kind the webhook serves."""
    kinds = {s["object"].get("kind") for s in SCENARIOS}
    assert len(SCENARIOS) >= 369
    assert {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "PodGroup"} <= kinds


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_admission_scenario(scenario: dict[str, Any], tmp_path: Path) -> None:
    reason = skip_reason(scenario)
    if reason:
        pytest.skip(reason)
    code, decision, _ = run_validate(scenario, tmp_path)
    check_decision(scenario, decision)
    assert code == (0 if decision["allowed"] else 1)
    assert decision["operation"] == operation_of(scenario)
    assert decision["kind"] == scenario["object"]["kind"]
