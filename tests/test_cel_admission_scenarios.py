"""Admission scenarios of our own for the CEL environment (``tests/data/admission/``).

Each scenario has the shape of the shared conformance scenarios and is judged the same
way, through both public contracts: ``kubectl dra validate -o json`` and the webhook
app's /validate and /mutate. A selector that Kubernetes accepts must never be denied.
"""

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
    gates_for,
    operation_of,
    scenario_id,
)
from tests.webhook_support import check_response_shape, decision_from_responses, scenario_review
from webhook.app import Settings, create_app

DATA = Path(__file__).parent / "data" / "admission"
SCENARIOS = [dict(yaml.safe_load(p.read_text()), _path=str(p)) for p in sorted(DATA.glob("*.yaml"))]


def test_scenarios_exist() -> None:
    assert len(SCENARIOS) >= 18


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_validate_cli(scenario: dict[str, Any], tmp_path: Path) -> None:
    obj = tmp_path / "object.yaml"
    obj.write_text(yaml.safe_dump(scenario["object"]), encoding="utf-8")
    result = CliRunner().invoke(cli, [
        "validate", "-f", str(obj), "-o", "json", "--operation", operation_of(scenario),
        "--feature-gates", feature_gates_flag(scenario)], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    check_decision(scenario, json.loads(result.stdout))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_webhook_app(scenario: dict[str, Any]) -> None:
    settings = Settings(gates=gates_for(scenario), mode="enforce",
                        namespace_labels=lambda ns: dict(scenario.get("namespaceLabels") or {}))
    client = create_app(settings).test_client()
    doc = scenario_review(scenario)
    replies = []
    for path in ("/validate", "/mutate"):
        reply = client.post(path, json=doc)
        assert reply.status_code == 200, reply.get_data(as_text=True)
        replies.append(check_response_shape(doc, reply.get_json()))
    check_decision(scenario, decision_from_responses(scenario["object"], *replies))
