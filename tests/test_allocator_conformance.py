"""Every allocation conformance scenario, run through the Allocator's public interface."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_dra.allocation import Allocator
from kubectl_dra.errors import AllocationError
from kubectl_dra.gates import FeatureGates
from tests.conftest import corpus, scenario_files
from tests.conformance_compare import check_shareids_unique, compare_allocations, load_scenario

pytestmark = corpus  # every test here reads the shared conformance corpus

SCENARIOS = scenario_files("allocation")


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_allocation_scenario(path: Path) -> None:
    sc = load_scenario(path)
    if sc.skip:
        pytest.skip(f"scenario marked skip: {sc.skip}")
    allocator = Allocator(sc.state, FeatureGates.only(sc.features))
    expect = sc.expect
    if "error" in expect:
        with pytest.raises(AllocationError):
            allocator.allocate(sc.node, sc.claims)
        return
    outcome = allocator.allocate(sc.node, sc.claims)
    bound = sc.raw.get("maxSearchSteps")
    if bound:
        assert allocator.last_search_steps <= bound, f"search took {allocator.last_search_steps} steps, upstream bounds it at {bound}"
    if expect.get("unschedulable"):
        assert not outcome.allocated, f"expected unschedulable, got {outcome.results}"
        assert outcome.results == []
        return
    assert outcome.allocated, "expected an allocation, got unschedulable"
    assert len(outcome.results) == len(sc.claims)
    problems = compare_allocations(expect.get("allocations") or [], outcome.results)
    problems += check_shareids_unique(outcome.results)
    assert not problems, "\n".join(problems)


def test_scenarios_are_all_loaded() -> None:
    """The table covers the whole directory (a missing directory must not pass silently)."""
    assert len(SCENARIOS) >= 200
