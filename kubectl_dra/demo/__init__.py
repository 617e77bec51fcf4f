"""The bundled demo cluster state (``cluster.yaml``) and example claims (``claims/*.yaml``).

``python -m kubectl_dra.demo`` prints the path of ``cluster.yaml`` so that shells can say
``kubectl dra preview --state "$(python -m kubectl_dra.demo)" ...``.
"""

from __future__ import annotations

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent


def cluster_path() -> Path:
    """Path of the demo cluster state file."""
    return DEMO_DIR / "cluster.yaml"


def example_paths() -> list[Path]:
    """The example claims, templates and pods, in name order."""
    return sorted((DEMO_DIR / "claims").glob("*.yaml"))
