"""Output that cannot drive the terminal: control characters that came from input (an object's
name, a metadata value) are shown, not obeyed, as kubectl's printers show them (ESC as ``^[``,
CR as ``\\r``; here every other C0/C1 control and DEL too: no clear screen, window title or
OSC 52 clipboard write can reach the terminal). Newlines and tabs pass: our own layout uses them.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\x1b":
        return "^["
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"^{chr(code + 64)}" if code < 0x20 else f"\\u{code:04x}"


def escape_terminal(text: str) -> str:
    """``text`` with every terminal control character shown in a visible, harmless form."""
    return _CONTROL.sub(_shown, text) if _CONTROL.search(text) else text


class EscapingWriter:
    """A text stream that escapes what it is given and writes it to ``stream`` (stdout for the
    whole command: tables, names, and JSON, where an escaped C1 character or DEL is the same
    string written as a ``\\u`` escape, and C0 characters never appear raw)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.errors = getattr(stream, "errors", None) or "strict"

    def write(self, text: str | bytes) -> int:
        if isinstance(text, (bytes, bytearray)):  # click's own binary writes (shell completion)
            if not text:  # click probes with b"" whether a stream is binary: this one is text
                raise TypeError("write() argument must be str, not bytes")
            buffer = getattr(self._stream, "buffer", None)
            if buffer is None:
                self._stream.write(escape_terminal(bytes(text).decode("utf-8", "replace")))
            else:
                self._stream.flush()
                buffer.write(text)
            return len(text)
        self._stream.write(escape_terminal(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # writing around the escaping is not offered
            raise AttributeError(name)
        return getattr(self._stream, name)
