"""The search's own pruning (remembered failed states, claims that cannot fit on their own)
changes neither the answer nor the first solution.

A search escalates to this pruning only after many steps (``ESCALATE_AFTER``); here it is
made to escalate from its first step, and then must give what upstream gave on every
scenario of the corpus (the slow ones included), and on generated clusters exactly what the
search without it gives: outcome, devices in order, error text.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given

from kubectl_dra.allocation import Allocator
from kubectl_dra.allocation import search as search_module
from kubectl_dra.errors import AllocationError
from kubectl_dra.gates import FeatureGates
from tests.allocation_strategies import Scenario
from tests.conformance_compare import check_shareids_unique, compare_allocations, load_scenario
from tests.conftest import conformance_dir, corpus, scenario_files
from tests.test_allocator_properties import answer, claims_of, clusters, examples, load, masked, show
from tests.test_conformance_allocation import check, run_in_process

#: far more than any of these searches needs: the limit only keeps a broken search from hanging the suite
GENEROUS = 300.0


@pytest.fixture
def escalate_at_once(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(search_module, "ESCALATE_AFTER", 0)
    yield


def never_escalate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "ESCALATE_AFTER", float("inf"))


def corpus_files() -> list[Path]:
    """The hand-picked, random and slow allocation scenarios."""
    random_dir = conformance_dir() / "random"
    return (scenario_files("allocation") + sorted(random_dir.glob("random-*.yaml"))
            + sorted((random_dir / "examples").glob("*.yaml")) + scenario_files("slow"))


CORPUS = corpus_files()


@corpus
def test_the_slow_scenarios_are_found() -> None:
    assert len(scenario_files("slow")) >= 3


@corpus
@pytest.mark.parametrize("path", scenario_files("slow"), ids=lambda p: p.stem)
def test_slow_scenario_through_the_cli(path: Path, tmp_path: Path) -> None:
    """Scenarios where upstream searches exhaustively (up to 9.2 M steps) before it says
    "unschedulable": the same answer through ``preview -o json`` (a generous timeout: this
    is not a timing test; benchmarks/bench_slow.py times them)."""
    scenario = load_scenario(path).raw
    code, document, _ = run_in_process(scenario, tmp_path)
    check(scenario, code, document)


@corpus
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus_with_pruning_from_the_first_step(path: Path, escalate_at_once: None) -> None:
    """Upstream's answer on every scenario of the corpus, with the pruning on from the start."""
    sc = load_scenario(path)
    if sc.skip:
        pytest.skip(f"scenario marked skip: {sc.skip}")
    allocator = Allocator(sc.state, FeatureGates.only(sc.features))
    deadline = time.monotonic() + GENEROUS
    if "error" in sc.expect:
        with pytest.raises(AllocationError):
            allocator.allocate(sc.node, sc.claims, deadline=deadline)
        return
    outcome = allocator.allocate(sc.node, sc.claims, deadline=deadline)
    if sc.expect.get("unschedulable"):
        assert not outcome.allocated, f"expected unschedulable, got {outcome.results}"
        return
    assert outcome.allocated, "expected an allocation, got unschedulable"
    problems = compare_allocations(sc.expect.get("allocations") or [], outcome.results)
    assert not problems + check_shareids_unique(outcome.results), "\n".join(problems)


def _answer(sc: Scenario) -> tuple[Any, ...]:
    state = load(sc.objects)
    allocator = Allocator(state, FeatureGates.only(sc.features))
    return masked(answer(allocator, copy.deepcopy(sc.node), claims_of(state, sc.allocate)))


@examples(150)
@given(sc=clusters())
def test_pruning_changes_no_answer(sc: Scenario) -> None:
    """Generated clusters: with and without the pruning, the same outcome, the same devices
    in the same order, or the same error."""
    show(sc)
    with pytest.MonkeyPatch.context() as mp:
        never_escalate(mp)
        plain = _answer(sc)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search_module, "ESCALATE_AFTER", 0)
        pruned = _answer(sc)
    assert pruned == plain
