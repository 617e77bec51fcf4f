"""The suite cannot shrink silently: in CI a missing conformance corpus fails the run, and the
property tests draw the same examples on every run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import settings

from tests.conftest import REPO


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """pytest on one trivial test, with the repository's conftest and ``env`` added."""
    test = tmp_path / "test_trivial.py"
    test.write_text("def test_nothing():\n    assert True\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "tests.conftest", "--rootdir", str(tmp_path), str(test)],
                          capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={**os.environ, "KUBECTL_DRA_CONFORMANCE": str(tmp_path / "absent"), **env})


def test_without_the_corpus_ci_fails_with_one_line(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, CI="true")
    assert proc.returncode != 0
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(errors) == 1 and "conformance corpus" in errors[0] and "CI" in errors[0], errors


def test_without_the_corpus_outside_ci_the_rest_runs(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, CI="")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_property_tests_are_derandomized() -> None:
    assert settings.default.derandomize is True
