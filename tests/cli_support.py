"""Running the CLI in-process as its console script does (for tests)."""

from __future__ import annotations

import pytest

from kubectl_dra.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """main() as the console script runs it: exit status, stdout, stderr."""
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else (0 if code is None else 1)), out, err
