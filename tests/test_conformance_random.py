"""The random allocation corpus (600 scenarios answered by upstream's allocator, plus the
minimised examples of the bugs they exposed) through the public ``preview -o json`` contract.

Same runner and comparison rules as the hand-picked corpus (``test_conformance_allocation``):
where upstream's answer and ours disagree, ours is wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import conformance_dir, corpus
from tests.test_conformance_allocation import check, loaded, run_in_process

pytestmark = corpus  # every test here reads the shared conformance corpus


def random_files() -> list[Path]:
    directory = conformance_dir() / "random"
    return sorted(directory.glob("random-*.yaml")) + sorted((directory / "examples").glob("*.yaml"))


RANDOM_FILES = random_files()


def test_random_corpus_is_all_found() -> None:
    """The runner sees the whole generated corpus and its examples."""
    assert len(RANDOM_FILES) >= 602


@pytest.mark.parametrize("path", RANDOM_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_random_scenario(path: Path, tmp_path: Path) -> None:
    scenario = loaded(path).raw
    if scenario.get("skip"):
        pytest.skip(str(scenario["skip"]))
    code, document, _ = run_in_process(scenario, tmp_path)
    check(scenario, code, document)
