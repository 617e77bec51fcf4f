"""Layering of the core (issue 9 item 7): the state loader stands below validation."""

from __future__ import annotations

import subprocess
import sys


def test_state_loads_without_validation() -> None:
    """Importing and using the state loader imports nothing from ``kubectl_dra.validation``."""
    code = (
        "import sys\n"
        "from kubectl_dra.state import load_documents, load_state\n"
        "from kubectl_dra.state.shapes import shape_errors\n"
        "assert shape_errors({'kind': 'ResourceSlice', 'spec': {'pool': {'generation': 'x'}}}, 'ResourceSlice')\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubectl_dra.validation')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
