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


def scenario_files(kind: str) -> list[Path]:
    """Every scenario file of ``kind`` (``allocation`` or ``admission``); the suite fails loudly
    when the directory is missing rather than silently running nothing."""
    directory = conformance_dir() / kind
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise RuntimeError(f"no conformance scenarios found in {directory}; set KUBECTL_DRA_CONFORMANCE")
    return files


@pytest.fixture
def cli_runner():
    from click.testing import CliRunner

    return CliRunner()
