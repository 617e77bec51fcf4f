"""Deep copies and JSON text of decoded JSON values without recursion, at any nesting depth."""

from __future__ import annotations

import json
from typing import Any

import orjson


def copy_json(value: Any) -> Any:
    """A deep copy of decoded JSON/YAML (dicts and lists; other values are immutable there):
    an orjson round trip when it gives back an equal value (several times faster than
    :func:`copy.deepcopy` on a file of slices), else a walk on an explicit stack (NaN, big
    integers, tuples, dates; and objects nested as deep as the API server accepts, 10000
    levels, where :func:`copy.deepcopy` would exhaust the stack)."""
    if not isinstance(value, (dict, list)):
        return value
    try:
        copied = orjson.loads(orjson.dumps(value))
    except (TypeError, ValueError):
        copied = None
    if copied is not None and copied == value:
        return copied
    return _copy_walk(value)


def _copy_walk(value: Any) -> Any:
    """:func:`copy_json` on an explicit stack (any depth, any value orjson refuses)."""
    if not isinstance(value, (dict, list)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        if isinstance(source, dict):
            for key, item in source.items():
                if isinstance(item, (dict, list)):
                    child: Any = {} if isinstance(item, dict) else []
                    stack.append((item, child))
                    target[key] = child
                else:
                    target[key] = item
        else:
            for item in source:
                if isinstance(item, (dict, list)):
                    child = {} if isinstance(item, dict) else []
                    stack.append((item, child))
                    target.append(child)
                else:
                    target.append(item)
    return root


def dumps_json(value: Any, indent: int | None = None, ensure_ascii: bool = True,
               separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    """:func:`json.dumps` for any nesting depth: the C encoder first; a value nested deeper
    than it can recurse is written by :func:`_dumps_iteratively`, with the same text.

    Indented output (the CLI's ``-o json``) comes from orjson when that says the same values
    (the standard library writes indented JSON in Python, ~10x slower)."""
    if indent == 2 and not ensure_ascii and separators is None and not sort_keys:
        text = _orjson_indented(value)
        if text is not None:
            return text
    try:
        return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, separators=separators,
                          sort_keys=sort_keys)
    except RecursionError:
        return _dumps_iteratively(value, indent, ensure_ascii, separators, sort_keys)


def _orjson_indented(value: Any) -> str | None:
    """orjson's 2-space indented text of ``value`` when it reads back as the very same values
    (None for what orjson cannot write, or writes differently: integers beyond 64 bits,
    non-string keys, nesting past 255 levels, NaN, tuples, dates)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATETIME)
        return text.decode() if orjson.loads(text) == value else None
    except (orjson.JSONEncodeError, orjson.JSONDecodeError, TypeError):
        return None


def _dumps_iteratively(value: Any, indent: int | None, ensure_ascii: bool,
                       separators: tuple[str, str] | None, sort_keys: bool) -> str:
    """The text :func:`json.dumps` writes, built on an explicit stack."""
    item_sep, key_sep = separators or ((", ", ": ") if indent is None else (",", ": "))

    def scalar(v: Any) -> str:
        return json.dumps(v, ensure_ascii=ensure_ascii)

    parts: list[str] = []
    # each frame: (iterator over members, closing bracket, is a mapping, depth, first member?)
    stack: list[list[Any]] = []

    def open_container(v: Any, depth: int) -> None:
        is_map = isinstance(v, dict)
        if not v:
            parts.append("{}" if is_map else "[]")
            return
        parts.append("{" if is_map else "[")
        members = iter(sorted(v.items()) if sort_keys and is_map else (v.items() if is_map else v))
        stack.append([members, "}" if is_map else "]", is_map, depth + 1, True])

    def newline(depth: int) -> str:
        return "\n" + " " * (indent * depth) if indent is not None else ""

    if isinstance(value, (dict, list)):
        open_container(value, 0)
    else:
        return scalar(value)
    while stack:
        frame = stack[-1]
        members, closing, is_map, depth, first = frame
        member: Any = next(members, _END)
        if member is _END:
            stack.pop()
            parts.append(newline(depth - 1) + closing)
            continue
        parts.append(("" if first else item_sep) + newline(depth))
        frame[4] = False
        if is_map:
            key, item = member
            parts.append(scalar(key if isinstance(key, str) else _key_text(key)) + key_sep)
        else:
            item = member
        if isinstance(item, (dict, list)):
            open_container(item, depth)
        else:
            parts.append(scalar(item))
    return "".join(parts)


def _key_text(key: Any) -> str:
    """A non-string mapping key as :func:`json.dumps` writes it (``true``, ``1``, ``null``)."""
    return json.dumps(key) if isinstance(key, (bool, int, float)) or key is None else str(key)


class _EndOfMembers:
    """No more members in a container."""


_END = _EndOfMembers()
