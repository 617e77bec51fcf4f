"""Shared fixtures: where the shared conformance scenarios live, and a CLI runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    """``$KUBECTL_DRA_CONFORMANCE`` or ``../shared/conformance`` beside the repository."""
    env = os.environ.get("KUBECTL_DRA_CONFORMANCE")
    if env:
        return Path(env)
    return REPO.parent / "shared" / "conformance"


#: the skip reason of corpus tests when the corpus is absent (relative: no machine's paths in reports)
CORPUS_MISSING = ("conformance corpus not found: expected ../shared/conformance beside the checkout "
                  "(or set KUBECTL_DRA_CONFORMANCE)")
#: what a test module's text mentions when it reads the corpus
_CORPUS_MARKERS = ("scenario_files", "conformance_dir", "admission_scenarios")


def corpus_available() -> bool:
    """Whether the shared conformance corpus is there to run."""
    return conformance_dir().is_dir()


def scenario_files(kind: str) -> list[Path]:
    """Every scenario file of ``kind`` (``allocation`` or ``admission``). Without the corpus the
    list is empty and the tests that read it are skipped with :data:`CORPUS_MISSING`; a corpus
    that is there but holds no scenario of ``kind`` fails loudly rather than silently running nothing."""
    directory = conformance_dir() / kind
    files = sorted(directory.glob("*.yaml"))
    if not files and corpus_available():
        raise RuntimeError(f"no {kind} scenarios in the conformance corpus (conformance/{kind}/*.yaml); "
                           "set KUBECTL_DRA_CONFORMANCE")
    return files


def _reads_corpus(module_file: str) -> bool:
    try:
        text = Path(module_file).read_text(encoding="utf-8")
    except OSError:
        return False
    return any(marker in text for marker in _CORPUS_MARKERS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the corpus, every test of a module that reads it is skipped with one short reason."""
    if corpus_available():
        return
    skip = pytest.mark.skip(reason=CORPUS_MISSING)
    verdicts: dict[str, bool] = {}
    for item in items:
        module_file = str(getattr(item, "fspath", "") or "")
        if module_file not in verdicts:
            verdicts[module_file] = _reads_corpus(module_file)
        if verdicts[module_file]:
            item.add_marker(skip, append=False)


@pytest.fixture
def cli_runner():
    from click.testing import CliRunner

    return CliRunner()
