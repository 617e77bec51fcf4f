"""Control characters from input never reach the terminal raw (issue 23): names and metadata
values with a clear-screen, a window title or an OSC 52 clipboard write are shown escaped, as
kubectl's printers show them, in tables, text, JSON and error lines alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_dra.cli.terminal import escape_terminal
from tests.cli_support import run

DEMO = Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml"
HOSTILE = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\r\x9b31m\x7fy"
RAW = ("\x1b", "\x07", "\r", "\x9b", "\x7f")


@pytest.mark.parametrize("text,shown", [
    ("\x1b[2J", "^[[2J"), ("a\rb", "a\\rb"), ("\x07", "^G"), ("\x9b", "\\u009b"), ("\x7f", "\\u007f"),
    ("tab\tand\nnewline", "tab\tand\nnewline"), ("plain ünïcode", "plain ünïcode"),
])
def test_escape_terminal(text: str, shown: str) -> None:
    assert escape_terminal(text) == shown


def _state(tmp_path: Path) -> str:
    text = DEMO.read_text().replace("name: gpu-node-1\n", f"name: {json.dumps(HOSTILE)}\n", 1)
    path = tmp_path / "state.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("argv", [
    ["validate", "-f", "{state}"],
    ["preview", "--state", "{state}", "claim/ml-team/trainer-a-gpu"],
    ["preview", "--state", "{state}", "claim/ml-team/trainer-a-gpu", "-o", "json"],
    ["usage", "--state", "{state}", "-o", "wide"],
    ["explain", "--state", "{state}", "claim/ml-team/trainer-a-gpu"],
    ["preview", "--state", "{state}", f"claim/ml-team/{HOSTILE}"],  # the name in an error line
])
def test_no_raw_control_character_reaches_the_terminal(tmp_path: Path, capsys, argv: list[str]) -> None:
    state = _state(tmp_path)
    code, out, err = run(capsys, *[a.replace("{state}", state) for a in argv])
    assert "internal error" not in err
    for char in RAW:
        assert char not in out and char not in err, (argv, char)
    if "json" in argv:
        json.loads(out)  # still a JSON document, with the same strings
