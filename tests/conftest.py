"""Shared fixtures: where the shared conformance scenarios live, and a CLI runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent

# the suite is reproducible: every property test draws the same examples on every run and
# machine (a test may still ask for more examples, or opt into exploring, in its own settings)
settings.register_profile("reproducible", derandomize=True, database=None)
settings.load_profile("reproducible")


def conformance_dir() -> Path:
    """``$KUBECTL_DRA_CONFORMANCE`` or ``../shared/conformance`` beside the repository."""
    env = os.environ.get("KUBECTL_DRA_CONFORMANCE")
    if env:
        return Path(env)
    return REPO.parent / "shared" / "conformance"


#: the skip reason of corpus tests when the corpus is absent (relative: no machine's paths in reports)
CORPUS_MISSING = ("conformance corpus not found: expected ../shared/conformance beside the checkout "
                  "(or set KUBECTL_DRA_CONFORMANCE)")

#: the mark of every test that reads the shared conformance corpus (a module that is all corpus
#: tests sets ``pytestmark = corpus``); nothing else may read it, so that without the corpus
#: only these are skipped and with CI set the run fails instead
corpus = pytest.mark.corpus


def corpus_available() -> bool:
    """Whether the shared conformance corpus is there to run."""
    return conformance_dir().is_dir()


def in_ci() -> bool:
    """Whether this run is CI's (``CI`` set to anything but empty/0/false, as CI services set it)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def scenario_files(kind: str) -> list[Path]:
    """Every scenario file of ``kind`` (``allocation`` or ``admission``). Without the corpus the
    list is empty and the tests marked :data:`corpus` are skipped with :data:`CORPUS_MISSING`; a
    corpus that is there but holds no scenario of ``kind`` fails loudly rather than silently running nothing."""
    directory = conformance_dir() / kind
    files = sorted(directory.glob("*.yaml"))
    if not files and corpus_available():
        raise RuntimeError(f"no {kind} scenarios in the conformance corpus (conformance/{kind}/*.yaml); "
                           "set KUBECTL_DRA_CONFORMANCE")
    return files


def pytest_configure(config: pytest.Config) -> None:
    """In CI a missing corpus ends the run with one line (a green run must test what it claims)."""
    config.addinivalue_line("markers", "corpus: reads the shared conformance corpus (skipped without it, "
                                       "an error in CI)")
    if in_ci() and not corpus_available():
        raise pytest.UsageError(f"CI is set, so the conformance corpus is required: {CORPUS_MISSING}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the corpus, every test marked :data:`corpus` is skipped with one short reason."""
    if corpus_available():
        return
    skip = pytest.mark.skip(reason=CORPUS_MISSING)
    for item in items:
        if item.get_closest_marker("corpus") is not None:
            item.add_marker(skip, append=False)


@pytest.fixture
def cli_runner():
    from click.testing import CliRunner

    return CliRunner()
