"""Decode JSON text into plain values with bounds, fast; the errors and the depth bound that
JSON and YAML decoding (:mod:`.yamltext`) share.

Nesting deeper than :data:`MAX_DEPTH` is refused (``exceeded max depth``, as Go's JSON
decoder that the API server uses says). The standard decoder does the work; a dump whose
objects each name a key once is decoded without a Python call per object (see
:func:`load_json_unique_fast`). This module does not import PyYAML: a command that reads
JSON never loads it.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Callable

import orjson

from ..limits import MAX_DEPTH, MAX_INTEGER_DIGITS

__all__ = ["MAX_DEPTH", "MAX_INTEGER_DIGITS", "DecodeError", "DuplicateKey", "load_json", "load_json_unique_fast",
           "every_key_kept"]


class DecodeError(Exception):
    """The text cannot be decoded; ``line``/``column`` (1-based, 0 when unknown) say where."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


class DuplicateKey(DecodeError):
    """A mapping names the same key twice (kubectl's strict decoding rejects that)."""

    def __init__(self, key: str, line: int = 0, column: int = 0) -> None:
        super().__init__(f"duplicate key {key!r}", line, column)
        self.key = key



def load_json(text: str, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """One JSON value; nesting up to :data:`MAX_DEPTH` is accepted, deeper is a :class:`DecodeError`.

    The standard decoder does the work; a value nested deeper than it can recurse is read
    again by :func:`_load_deep_json`, which keeps its own stack."""
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        return _load_deep_json(text, object_pairs_hook or dict)
    if (sys.getrecursionlimit() > MAX_DEPTH and isinstance(value, (dict, list))
            and _nesting_exceeds(value, MAX_DEPTH)):
        # the entry point raised the recursion limit, so the decoder itself did not stop it
        raise DecodeError(f"exceeded max depth of {MAX_DEPTH} (lists and mappings nested deeper than the API "
                          "server accepts)")
    return value


def load_json_unique_fast(text: str) -> Any:
    """The value of a JSON object or array text whose objects each name a key once, decoded
    without a Python function per object; None when that cannot be shown cheaply (or the text
    does not decode), and the caller decodes it again with a duplicate-key hook, which gives
    every error exactly. The standard decoder reads the text either way: values are the same
    (see :func:`every_key_kept` for the proof)."""
    try:
        value = json.loads(text)
        if type(value) is not dict and type(value) is not list:
            return None
        return value if every_key_kept(text, value) else None
    except (ValueError, TypeError, RecursionError):  # JSONDecodeError, orjson.JSONEncodeError
        return None


def every_key_kept(text: str | bytes | bytearray, value: Any) -> bool:
    """Whether decoding the JSON ``text`` into ``value`` kept every key it names (no object
    named a key twice). Raises TypeError (orjson's JSONEncodeError) or RecursionError when
    ``value`` holds what orjson cannot write (integers beyond 64 bits, lone surrogates,
    nesting beyond 254): the caller then cannot tell and decodes another way.

    The proof counts colons. Writing the decoded value back with orjson gives ``K_V + C_V``
    colons: ``K_V`` keys kept, ``C_V`` colons inside its strings (orjson escapes none, and
    numbers and literals have none). The text has ``K_T + R_T``: one after each key it names,
    ``R_T`` written inside strings, which decode to ``R_T + E`` colons with ``E`` the escapes
    ``\\u003a``/``\\u003A`` (at most ``E'``, their count in the text). A repeated key only
    drops pairs, so ``K_V <= K_T`` and ``C_V <= R_T + E``; equality of ``K_V + C_V`` with
    ``K_T + R_T + E'`` forces ``K_V = K_T``: every object kept all its keys."""
    if isinstance(text, str):
        colons = text.count(":")
        escaped = text.count("\\u003a") + text.count("\\u003A") if "\\u003" in text else 0
    else:
        colons = text.count(b":")
        escaped = text.count(b"\\u003a") + text.count(b"\\u003A") if b"\\u003" in text else 0
    return _colons_written(value) == colons + escaped


#: a list's items that orjson writes at once when counting colons (not a copy of the whole text)
_WRITTEN_AT_ONCE = 1024


def _colons_written(value: Any, levels: int = 1) -> int:
    """The colons in orjson's JSON text of ``value``. The top ``levels`` levels of objects are
    counted here (``"key":`` is one colon plus those in the key) and lists are written
    :data:`_WRITTEN_AT_ONCE` items at a time, so that a dump is never written whole."""
    if type(value) is dict and levels:
        return sum(1 + key.count(":") + _colons_written(item, levels - 1) for key, item in value.items())
    if type(value) is list:
        return sum(orjson.dumps(value[start:start + _WRITTEN_AT_ONCE]).count(b":")
                   for start in range(0, len(value), _WRITTEN_AT_ONCE))
    return orjson.dumps(value).count(b":")


def _nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether a decoded value nests lists and mappings more than ``limit`` levels (a walk on an
    explicit stack; ~0.15 s for a 20 MB dump)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > limit:
            return True
        for item in (node.values() if type(node) is dict else node):
            if type(item) is dict or type(item) is list:
                push((item, depth + 1))
    return False


_TOKEN = re.compile(r'[ \t\n\r]*(?:([\[\]{},:])|(")|(-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)'
                    r'|(true|false|null|NaN|Infinity|-Infinity))')
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None, "NaN": float("nan"),
                             "Infinity": float("inf"), "-Infinity": float("-inf")}
_VALUE_STATE, _KEY_STATE, _COLON_STATE, _AFTER_STATE = range(4)


def _json_error(text: str, pos: int, what: str) -> DecodeError:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return DecodeError(what, line, column)


def _load_deep_json(text: str, hook: Callable[[list[tuple[str, Any]]], Any]) -> Any:  # noqa: C901
    """JSON with nesting beyond the interpreter's recursion, on an explicit stack (same values
    as :func:`json.loads`: ints, floats, NaN/Infinity, pairs through ``hook``)."""
    stack: list[list[Any]] = []  # [items (list, or list of pairs), is_object, pending key]
    state, pos, opened = _VALUE_STATE, 0, False
    value: Any = None  # the last complete value; set before state first becomes _AFTER_STATE
    while True:
        match = _TOKEN.match(text, pos)
        if match is None:
            if state == _AFTER_STATE and not stack and not text[pos:].strip():
                return value
            raise _json_error(text, pos, "malformed JSON")
        start, pos = match.start(), match.end()
        punct, quote, number, fraction, exponent, literal = match.groups()
        if state == _AFTER_STATE:
            if not stack or punct not in (",", "]" if not stack[-1][1] else "}"):
                raise _json_error(text, start, "malformed JSON: expected ',' or a closing bracket")
            if punct == ",":
                state, opened = (_KEY_STATE if stack[-1][1] else _VALUE_STATE), False
                continue
            value = _close(stack.pop(), hook)
        elif state in (_KEY_STATE, _COLON_STATE):
            if state == _COLON_STATE:
                if punct != ":":
                    raise _json_error(text, start, "malformed JSON: expected ':'")
                state = _VALUE_STATE
                continue
            if punct == "}" and opened:
                value = _close(stack.pop(), hook)
            elif quote:
                stack[-1][2], pos = json.decoder.scanstring(text, pos)  # type: ignore[attr-defined]  # public in CPython, absent from typeshed
                state = _COLON_STATE
                continue
            else:
                raise _json_error(text, start, "malformed JSON: expected a string key")
        elif punct in ("[", "{"):
            if len(stack) >= MAX_DEPTH:
                raise _json_error(text, start, f"exceeded max depth of {MAX_DEPTH} (lists and mappings nested "
                                  "deeper than the API server accepts)")
            stack.append([[], punct == "{", None])
            state, opened = (_KEY_STATE if punct == "{" else _VALUE_STATE), True
            continue
        elif punct == "]" and opened and stack and not stack[-1][1]:
            value = _close(stack.pop(), hook)
        elif quote:
            value, pos = json.decoder.scanstring(text, pos)  # type: ignore[attr-defined]  # public in CPython, absent from typeshed
        elif number is not None:
            value = float(number) if fraction or exponent else int(number)
        elif literal is not None:
            value = _LITERALS[literal]
        else:
            raise _json_error(text, start, "malformed JSON: expected a value")
        state, opened = _AFTER_STATE, False
        if stack:
            frame = stack[-1]
            frame[0].append((frame[2], value) if frame[1] else value)


def _close(frame: list[Any], hook: Callable[[list[tuple[str, Any]]], Any]) -> Any:
    return hook(frame[0]) if frame[1] else frame[0]
