"""``review()`` in-process on every admission conformance scenario: the same decision as the
CLI gives, the submitted objects never written to, and the patch turning the submitted object
into the stored one (the strategies copy only what they change, so these must hold)."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from kubectl_dra.validation.admission import SpecMemo, review
from tests.admission_scenarios import (
    check_decision,
    gates_for,
    load_admission_scenarios,
    operation_of,
    scenario_id,
    skip_reason,
)
from tests.conftest import corpus

pytestmark = corpus  # every test here reads the shared conformance corpus

SCENARIOS = load_admission_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_review_leaves_the_submitted_objects_alone(scenario: dict[str, Any]) -> None:
    reason = skip_reason(scenario)
    if reason:
        pytest.skip(reason)
    obj = copy.deepcopy(scenario["object"])
    old = copy.deepcopy(scenario.get("oldObject"))
    operation = operation_of(scenario)
    decision = review(obj, operation=operation, old=old if operation == "UPDATE" else None,
                      namespace_labels=scenario.get("namespaceLabels") or {}, gates=gates_for(scenario))
    check_decision(scenario, decision.to_dict())
    assert obj == scenario["object"]
    assert old == scenario.get("oldObject")
    if decision.allowed:
        assert jsonpatch.apply_patch(obj, decision.patch) == decision.object


def _decide(scenario: dict[str, Any], memo: SpecMemo | None) -> dict[str, Any]:
    operation = operation_of(scenario)
    old = scenario.get("oldObject")
    return review(copy.deepcopy(scenario["object"]), operation=operation,
                  old=copy.deepcopy(old) if operation == "UPDATE" else None,
                  namespace_labels=scenario.get("namespaceLabels") or {}, gates=gates_for(scenario),
                  memo=memo).to_dict()


def test_one_spec_memo_shared_by_the_whole_corpus_changes_no_decision() -> None:
    """A webhook worker keeps one SpecMemo for every request: each scenario decided through a
    memo that has seen all the others (in both orders, so each is once a miss and once a hit)
    gets exactly the decision it gets without one."""
    scenarios = [s for s in SCENARIOS if not skip_reason(s)]
    alone = [_decide(s, None) for s in scenarios]
    memo = SpecMemo()
    for order in (range(len(scenarios)), reversed(range(len(scenarios)))):
        for i in order:
            assert _decide(scenarios[i], memo) == alone[i], scenario_id(scenarios[i])
    assert memo.hits > 0 and memo.misses > 0
