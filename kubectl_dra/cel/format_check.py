"""Compile-time checks of ``"<constant>".format([<list literal>])`` calls.

cel-go's strings extension validates such calls when the expression is checked: each
clause (``%s %d %f %e %b %x %X %o``, optional ``.N`` precision) must suit the type of
its argument, the format string must parse, and no argument may be left over. The
errors read as cel-go's and point at the offending argument (or the call).
"""

from __future__ import annotations

from typing import Any, Callable

from kubectl_dra.cel import messages
from kubectl_dra.errors import CELCompileError

_FORMAT_OVERLOAD = "string_format"


class _FormatError(Exception):
    """A problem found in one format call: message and the node to report it at."""

    def __init__(self, message: str, node_id: int) -> None:
        super().__init__(message)
        self.node_id = node_id


def _kind(checked: Any, node: Any) -> str:
    """The checked type of a node as cel-go's TypeName (``int``, ``list``, ``dyn`` ...)."""
    t = checked.type_map.get(node.id)
    text = messages.type_text(t) if t is not None else "dyn"
    return text.split("(", 1)[0]


_STRING_KINDS = frozenset({"list", "map", "int", "uint", "double", "bool", "string",
                           "google.protobuf.Timestamp", "bytes", "google.protobuf.Duration",
                           "type", "null_type"})
#: clause -> (accepted kinds, cel-go's message for another kind)
_CLAUSES: dict[str, tuple[frozenset[str], str]] = {
    "d": (frozenset({"int", "uint"}), "decimal clause can only be used on integers, was given {}"),
    "f": (frozenset({"double", "string"}), "fixed-point clause can only be used on doubles, was given {}"),
    "e": (frozenset({"double", "string"}), "scientific clause can only be used on doubles, was given {}"),
    "b": (frozenset({"int", "uint", "bool"}),
          "only integers and bools can be formatted as binary, was given {}"),
    "x": (frozenset({"int", "uint", "string", "bytes"}),
          "only integers, byte buffers, and strings can be formatted as hex, was given {}"),
    "o": (frozenset({"int", "uint"}), "octal clause can only be used on integers, was given {}"),
}
_CLAUSES["X"] = _CLAUSES["x"]
_STRING_ERROR = ("string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
                 "lists, types, durations, and timestamps, was given {}")


def _bad_string_arg(checked: Any, node: Any) -> Any | None:
    """The node (itself or inside a literal) that ``%s`` cannot print, or None."""
    kind = _kind(checked, node)
    if kind != "dyn" and kind not in _STRING_KINDS:
        return node
    expr_kind = node.WhichOneof("expr_kind")
    if expr_kind == "list_expr":
        for element in node.list_expr.elements:
            bad = _bad_string_arg(checked, element)
            if bad is not None:
                return bad
    elif expr_kind == "struct_expr" and not node.struct_expr.message_name:
        for entry in node.struct_expr.entries:
            for part in (entry.map_key, entry.value):
                bad = _bad_string_arg(checked, part)
                if bad is not None:
                    return bad
    return None


def _check_clause(checked: Any, clause: str, arg: Any) -> None:
    """Raise _FormatError when ``arg`` does not suit ``clause`` (cel-go's checker)."""
    if clause == "s":
        bad = _bad_string_arg(checked, arg)
        if bad is not None:
            raise _FormatError("error during formatting: " + _STRING_ERROR.format(
                _kind(checked, bad)), bad.id)
        return
    kinds, message = _CLAUSES[clause]
    kind = _kind(checked, arg)
    if kind != "dyn" and kind not in kinds:
        raise _FormatError("error during formatting: " + message.format(kind), arg.id)


def _parse_clause(text: str, at: int, call_id: int) -> tuple[int, str]:
    """(characters read after '%', clause letter) of the clause starting at ``text[at]``."""
    i = at
    if text[i] == ".":
        i += 1
        while True:
            if i >= len(text):
                raise _FormatError("could not parse formatting clause: error while parsing "
                                   "precision: could not find end of precision specifier", call_id)
            if not ("0" <= text[i] <= "9"):
                break
            i += 1
    clause = text[i]
    if clause not in _CLAUSES and clause != "s":
        raise _FormatError(
            f'could not parse formatting clause: unrecognized formatting clause "{clause}"', call_id)
    return i + 1 - at, clause


def _check_call(checked: Any, call_id: int, text: str, args: list[Any]) -> None:
    """cel-go parseFormatString driven by the static checker."""
    i = requested = 0
    while i < len(text):
        if text[i] != "%":
            i += 1
            continue
        if i + 1 < len(text) and text[i + 1] == "%":
            i += 2
            continue
        requested += 1
        if i + 1 >= len(text):
            raise _FormatError("unexpected end of string", call_id)
        if requested - 1 >= len(args):
            raise _FormatError(f"index {requested - 1} out of range", call_id)
        read, clause = _parse_clause(text, i + 1, call_id)
        _check_clause(checked, clause, args[requested - 1])
        i += 1 + read
    if len(args) > requested:
        raise _FormatError(f"too many arguments supplied to string.format (expected {requested}, "
                           f"got {len(args)})", call_id)


def check_format_calls(checked: Any, nodes: Any,
                       locate: Callable[[int, str], str]) -> None:
    """Raise CELCompileError for the first invalid constant format call among ``nodes``."""
    for node in nodes:
        if node.WhichOneof("expr_kind") != "call_expr":
            continue
        call = node.call_expr
        if call.function != "format" or not call.HasField("target") or len(call.args) != 1:
            continue
        ref = checked.reference_map.get(node.id)
        if ref is not None and ref.overload_id and _FORMAT_OVERLOAD not in ref.overload_id:
            continue
        target = call.target
        if target.WhichOneof("expr_kind") != "const_expr" or \
                target.const_expr.WhichOneof("constant_kind") != "string_value" or \
                call.args[0].WhichOneof("expr_kind") != "list_expr":
            continue
        try:
            _check_call(checked, node.id, target.const_expr.string_value,
                        list(call.args[0].list_expr.elements))
        except _FormatError as err:
            raise CELCompileError("compilation failed: " + locate(err.node_id, str(err))) from None
