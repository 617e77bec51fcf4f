"""Translate cel-cpp's error texts into the texts upstream (cel-go) prints.

Users and conformance scenarios see upstream's wording ("no such key: x"), so the
engine's status prefixes and phrasing are mapped here, in one table.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: the hint upstream's EnhanceRuntimeError appends to "no such key" errors
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the "
    "check with has() for optional fields")

_STATUS_PREFIX = re.compile(
    r"^(?:(?:INVALID_ARGUMENT|UNKNOWN|NOT_FOUND|OUT_OF_RANGE|INTERNAL|FAILED_PRECONDITION|"
    r"RESOURCE_EXHAUSTED|UNIMPLEMENTED|ALREADY_EXISTS|CANCELLED|DEADLINE_EXCEEDED|ABORTED|"
    r"UNAVAILABLE|DATA_LOSS|PERMISSION_DENIED|UNAUTHENTICATED): )+")
_STATUS_SUFFIX = re.compile(r"\s*\[[A-Z_]+\]\s*$")
_NIL_PARSETREE = re.compile(r"\n?ERROR: <input>:-1:-1: <<nil>> parsetree")
_NOT_IN_STRUCT = re.compile(r" not found in struct '[^']*'")
_KEY_NOT_FOUND = re.compile(r'Key not found in map\s*:\s*"?(.*?)"?$', re.S)
_NO_OVERLOAD = re.compile(r"No matching overloads found\s*:\s*(.*)$", re.S)

_RUNTIME_TEXT = (
    ("divide by zero", "division by zero"),
    ("modulus by zero", "modulus by zero"),
    ("Iteration budget exceeded", "operation cancelled: actual cost limit exceeded"),
)


#: cel-cpp macro errors -> cel-go's wording (the duplicate-variable one names the variable)
_MACRO_ERRORS = (
    (re.compile(r"\w+\(\) (?:first|second) variable name cannot be __result__"),
     "iteration variable overwrites accumulator variable"),
    (re.compile(r"\w+\(\) (?:first|second) variable name must be a simple identifier"),
     "argument must be a simple name"),
    (re.compile(r"cannot be the range of a comprehension"), "cannot be range of a comprehension"),
)
_DUPLICATE_VARIABLE = re.compile(
    r"(ERROR: <input>:\d+:(\d+): )\w+\(\) second variable must be different from the first "
    r"variable(\n \| (.*))")


def _duplicate_variable(m: re.Match[str]) -> str:
    """cel-go's ``duplicate variable name: x``, the name read at the reported column."""
    line, col = m.group(4), int(m.group(2)) - 1
    name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", line[col:]) if 0 <= col < len(line) else None
    return f"{m.group(1)}duplicate variable name: {name.group(0) if name else ''}{m.group(3)}"


def compile_error_text(raw: str) -> str:
    """cel-cpp compile error → ``ERROR: <input>:L:C: ...`` text as cel-go prints it."""
    text = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", raw.strip()))
    text = _NIL_PARSETREE.sub("", text)
    text = _DUPLICATE_VARIABLE.sub(_duplicate_variable, text)
    for pattern, replacement in _MACRO_ERRORS:
        text = pattern.sub(replacement, text)
    text = _RESERVED_FIELD.sub(r"mismatched input '\1' expecting IDENTIFIER", text)
    return _NOT_IN_STRUCT.sub("", text)


#: true/false/null selected as a field (``self.true``): cel-go's parser rewords ANTLR's
#: "no viable alternative" for these (parser.go SyntaxError), cel-cpp keeps it
_RESERVED_FIELD = re.compile(r"no viable alternative at input '\.(true|false|null)'")


#: cel-cpp's string.format() and list index errors -> cel-go's wording
_FORMAT_ERRORS = tuple((re.compile(p), r) for p, r in (
    (r'^unrecognized formatting clause "(.)"',
     r'could not parse formatting clause: unrecognized formatting clause "\1"'),
    (r"^binary clause can only be used on integers and bools, was given (.*)",
     r"error during formatting: only integers and bools can be formatted as binary, was given \1"),
    (r"^decimal clause can only be used on numbers, was given (.*)",
     r"error during formatting: decimal clause can only be used on integers, was given \1"),
    (r"^octal clause can only be used on integers, was given (.*)",
     r"error during formatting: octal clause can only be used on integers, was given \1"),
    (r"^hex clause can only be used on integers, byte buffers, and strings, was given (.*)",
     r"error during formatting: only integers, byte buffers, and strings can be formatted as hex, "
     r"was given \1"),
    (r"^unexpected end of format string", "unexpected end of string"),
    (r"^Index error: index=(-?\d+) size=(\d+)", r"index '\1' out of range in list size '\2'"),
    (r"^unable to find end of precision specifier",
     "could not parse formatting clause: error while parsing precision: could not find end of "
     "precision specifier"),
))


@lru_cache(maxsize=1024)
def runtime_error_text(raw: str) -> str:
    """cel-cpp evaluation error → upstream's text (with the "no such key" hint)."""
    text = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", str(raw).strip()))
    m = _KEY_NOT_FOUND.search(text)
    if m:
        return f"no such key: {m.group(1)}{NO_SUCH_KEY_HINT}"
    m = _NO_OVERLOAD.search(text)
    if m:
        return f"no such overload: {m.group(1).replace('int64', 'int').replace('uint64', 'uint')}"
    for pattern, replacement in _FORMAT_ERRORS:
        if pattern.search(text):
            return pattern.sub(replacement, text)
    for needle, replacement in _RUNTIME_TEXT:
        if needle in text:
            return replacement
    return text


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def type_text(t: Any) -> str:
    """A cel.expr.Type as cel-go's ``Type.String()`` prints it (``list(string)``)."""
    kind = t.WhichOneof("type_kind")
    if kind == "primitive":
        return _PRIMITIVES.get(t.primitive, "unknown")
    if kind == "list_type":
        return f"list({type_text(t.list_type.elem_type)})"
    if kind == "map_type":
        return f"map({type_text(t.map_type.key_type)}, {type_text(t.map_type.value_type)})"
    if kind == "message_type":
        if t.message_type == "google.protobuf.Struct":
            return "map(string, dyn)"
        if t.message_type == "google.protobuf.Value":
            return "dyn"
        return str(t.message_type)
    if kind == "well_known":
        return _WELL_KNOWN.get(t.well_known, "unknown")
    if kind == "null":
        return "null_type"
    if kind == "type":
        return f"type({type_text(t.type)})"
    if kind == "abstract_type":
        params = ", ".join(type_text(p) for p in t.abstract_type.parameter_types)
        return f"{t.abstract_type.name}({params})" if params else t.abstract_type.name
    if kind == "wrapper":
        return f"wrapper({_PRIMITIVES.get(t.wrapper, 'unknown')})"
    if kind == "type_param":
        return t.type_param
    return "dyn" if kind in ("dyn", None) else kind


_VALUE_TYPE_NAMES = {
    "BOOL": "bool", "INT": "int", "UINT": "uint", "DOUBLE": "double", "STRING": "string",
    "BYTES": "bytes", "NULL": "null_type", "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration", "TYPE": "type",
}


def value_type_text(name: str) -> str:
    """A cel-cpp value type name (``LIST<DYN>``) as cel-go's TypeName (``list``)."""
    base = name.split("<", 1)[0]
    if base in _VALUE_TYPE_NAMES:
        return _VALUE_TYPE_NAMES[base]
    if base in ("LIST", "MAP"):
        return base.lower()
    return name


_NO_MATCHING_OVERLOAD = re.compile(
    r"ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']+)' applied to '\((.*)\)'")


def _split_types(text: str) -> list[str]:
    """Split a printed argument list at its top-level commas."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def member_overload_text(text: str, expression: str) -> str:
    """cel-cpp prints a receiver call's signature as ``(target, args)``; cel-go as
    ``target.(args)``. Respell each no-matching-overload error whose call is a receiver call."""
    lines = expression.split("\n")

    def respell(m: re.Match[str]) -> str:
        line, col, name = int(m.group(1)), int(m.group(2)), m.group(3)
        source = lines[line - 1] if 0 < line <= len(lines) else ""
        start = col - 1 - len(name)  # cel-cpp points at the call's '('
        if start < 1 or source[start - 1:col - 1] != "." + name:
            return m.group(0)
        types = _split_types(m.group(4))
        if not types:
            return m.group(0)
        signature = f"{types[0]}.({', '.join(types[1:])})"
        return m.group(0).rsplit("'(", 1)[0] + f"'{signature}'"

    return _NO_MATCHING_OVERLOAD.sub(respell, text)
