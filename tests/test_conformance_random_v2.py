"""The second random allocation corpus (600 scenarios with the features that reached the
allocator last, answered by upstream's allocator, plus one minimised example per rule they
exposed) through the public ``preview -o json`` contract.

Same runner and comparison rules as ``test_conformance_random``: where upstream's answer
and ours disagree, ours is wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import conformance_dir, corpus
from tests.test_conformance_allocation import check, loaded, run_in_process

pytestmark = corpus  # every test here reads the shared conformance corpus


def random_v2_files() -> list[Path]:
    """Every generated scenario of random-v2 and its minimised examples, in a stable order."""
    directory = conformance_dir() / "random-v2"
    return sorted(directory.glob("random-v2-*.yaml")) + sorted((directory / "examples").glob("*.yaml"))


RANDOM_V2_FILES = random_v2_files()


def test_random_v2_corpus_is_all_found() -> None:
    """The runner sees the whole generated corpus and its examples: 599 scenarios (the
    corpus numbers 600, random-v2-310548 is not among them) and 6 examples."""
    assert len(RANDOM_V2_FILES) >= 605


@pytest.mark.parametrize("path", RANDOM_V2_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_random_v2_scenario(path: Path, tmp_path: Path) -> None:
    scenario = loaded(path).raw
    if scenario.get("skip"):
        pytest.skip(str(scenario["skip"]))
    code, document, _ = run_in_process(scenario, tmp_path)
    check(scenario, code, document)
