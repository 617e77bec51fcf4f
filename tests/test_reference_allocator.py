"""The product's search against a plain reference (``tests/reference_allocator.py``: upstream's
recursive allocateOne without pruning, memo or caches) on generated clusters: the same
outcome and, when allocated, the same devices for the same requests in the same order."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, reject

from kubectl_dra.allocation import Allocator
from kubectl_dra.allocation import search as search_module
from kubectl_dra.errors import AllocationError, AllocationTimeout
from kubectl_dra.gates import FeatureGates
from tests.allocation_strategies import Scenario
from tests.conformance_compare import load_scenario
from tests.conftest import conformance_dir, scenario_files
from tests.reference_allocator import TooLong, Unsupported, reference_answer
from tests.test_allocator_properties import SEARCH_SECONDS, claims_of, clusters, examples, load, show



def devices_of(results: list[dict[str, Any]]) -> list[list[tuple[str, str, str, str]]]:
    """Per claim, (request, driver, pool, device) of each result in order."""
    return [[(r["request"], r["driver"], r["pool"], r["device"]) for r in a["devices"]["results"]] for a in results]


def product_answer(sc: Scenario) -> tuple[Any, ...]:
    state = load(sc.objects)
    allocator = Allocator(state, FeatureGates.only(sc.features))
    try:
        outcome = allocator.allocate(copy.deepcopy(sc.node), claims_of(state, sc.allocate),
                                     deadline=time.monotonic() + SEARCH_SECONDS)
    except AllocationTimeout:
        reject()
    except AllocationError:
        return ("error",)
    if not outcome.allocated:
        return ("unschedulable",)
    return ("allocated", devices_of(outcome.results))


def reference(sc: Scenario) -> tuple[Any, ...]:
    state = load(sc.objects)
    allocator = Allocator(state, FeatureGates.only(sc.features))
    try:
        return reference_answer(allocator, copy.deepcopy(sc.node), claims_of(state, sc.allocate), max_steps=5_000)
    except (Unsupported, TooLong):
        reject()


@examples(120)
@given(sc=clusters())
def test_the_search_answers_as_the_reference(sc: Scenario) -> None:
    show(sc)
    mine = product_answer(sc)
    event(f"outcome: {mine[0]}")
    assert mine == reference(sc)


@examples(100)
@given(sc=clusters())
def test_the_search_with_all_its_pruning_answers_as_the_reference(sc: Scenario) -> None:
    """The same with the pruning of long searches on from the first step."""
    show(sc)
    saved = search_module.ESCALATE_AFTER
    search_module.ESCALATE_AFTER = 0
    try:
        mine = product_answer(sc)
    finally:
        search_module.ESCALATE_AFTER = saved
    assert mine == reference(sc)


def corpus() -> list[Path]:
    random_dir = conformance_dir() / "random"
    return scenario_files("allocation") + sorted(random_dir.glob("random-*.yaml"))


@pytest.mark.parametrize("path", corpus(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_search_answers_as_the_reference_on_the_corpus(path: Path) -> None:
    """The corpus' scenarios (many of them allocate, unlike most generated clusters)."""
    sc = load_scenario(path)
    if sc.skip or not sc.claims:
        pytest.skip(f"scenario marked skip: {sc.skip}")
    allocator = Allocator(sc.state, FeatureGates.only(sc.features))
    try:
        outcome = allocator.allocate(sc.node, sc.claims, deadline=time.monotonic() + 300)
        mine: tuple[Any, ...] = ("allocated", devices_of(outcome.results)) if outcome.allocated else ("unschedulable",)
    except AllocationError:
        mine = ("error",)
    fresh = load_scenario(path)
    try:
        expected = reference_answer(Allocator(fresh.state, FeatureGates.only(fresh.features)), fresh.node,
                                    fresh.claims, max_steps=10_000)
    except Unsupported as exc:
        pytest.skip(f"the reference does not model {exc}")
    except TooLong:
        pytest.skip("the reference's plain search takes more than 10,000 steps here")
    assert mine == expected
