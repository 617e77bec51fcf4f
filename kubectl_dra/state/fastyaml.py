"""A fast path for the YAML ``kubectl get -o yaml`` writes: rapidyaml parses, JSON carries the values.

rapidyaml (``ryml``, a C++ parser) reads a 50 MB dump several times faster than libyaml's
events can even be created in Python. Its tree is emitted as JSON and decoded by the
standard library, so the values arrive without one Python call per node. The fast path
may only *decline*, never differ: :func:`load_fast` returns ``None`` unless the result is
provably what the event builder (:mod:`.yamltext`) gives, and the caller then runs that.

It declines when the text holds anything that needs the builder's own handling or where
the two parsers could disagree (a *conservative* scan of the text, so harmless text such
as ``a * b`` in a string may also decline; that only costs time):

* anchors, aliases, tags, directives, explicit keys (``&``, ``*``, ``!``, ``%``, ``?`` where
  a node can start, or right after a closing bracket), the reserved ``@`` and backtick, and
  ``,``/``]``/``}`` where a node starts (``- ]x``): alias bounds, tag rules and the errors
  for these stay the builder's;
* tabs, carriage returns, a byte order mark, YAML 1.1's extra line breaks (NEL, LS, PS)
  and characters libyaml refuses: the two parsers treat these differently;
* a backslash that is not a plain escape (``\\n``, ``\\"``, ``\\u00e9``, ...): a NUL or a
  surrogate, ``\\x``/``\\U`` escapes and unknown escapes;
* what kubectl never writes, where the property tests found the two parsers to part ways:
  comments, flow collections other than ``[]`` and ``{}`` (and any line whose brackets do not
  balance), block scalar headers other than ``|``/``>`` with their chomping and indentation
  indicators, signed numbers with a leading dot (``-.5``);
* flow-style corners libyaml refuses and rapidyaml reads (``[:x]``, ``{x:}``) and ``...``
  document end markers;
* a line indented 60 columns or more (block nesting rapidyaml's emitter would refuse anyway,
  and on which rapidyaml 0.15.2 can crash);
* a plain scalar that YAML 1.1 (PyYAML's resolver) reads as something other than a string
  (``yes``, ``~``, ``0x1f``, ``017``, ``1_000``, ``2001-12-14``, ``.inf``, ``<<`` ...), other
  than the forms JSON writes the same way (``true``, ``false``, ``null``, decimal numbers),
  and the words rapidyaml rewrites in JSON (``inf``, ``nan``, ``infinity``);
* a plain mapping key that YAML 1.1 would not read as a string (``1: x``, ``null: x``: the
  word scan finds every plain key as a word ending in ``:``; quoted keys are strings in both);
* after parsing: a key given twice (the colon count of :func:`.bounded.every_key_kept`, so the
  JSON is decoded without a Python call per mapping, and values it cannot write back, such as
  integers beyond 64 bits, decline too), a float written in a form YAML 1.1 reads as a string
  (``1e3``), nesting deeper than rapidyaml's emitter goes (64), or any error at all from
  rapidyaml or the JSON decoder (the builder then reports it with its line and column).

rapidyaml reports errors on the process's standard error before raising them, so the
fast path points file descriptor 2 at the null device while rapidyaml runs (restored at once
after). That is process-wide, so it is the entry point's choice: the fast path runs only in
a process that called :func:`.settings.allow_native_yaml_parser` (the CLI does, in its process settings)
and only while that process has a single thread. Other callers get the event builder: the
same values, more slowly.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from typing import Any, Iterator

import yaml

from . import settings
from .bounded import every_key_kept

_STR = "tag:yaml.org,2002:str"
_VALUE = "tag:yaml.org,2002:value"
_INDICATOR_TAG = "tag:yaml.org,2002:yaml"

#: every character of plain ASCII text that needs no closer look (printable, or a line feed)
_PLAIN_ASCII = bytes(range(0x20, 0x7F)) + b"\n"
#: characters the two parsers treat differently, or that libyaml refuses (it then reports them)
_ODD_CHARACTERS = re.compile(
    "[\t\r\x85\u2028\u2029\ufeff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
#: a backslash (after any escaped backslashes) that is not one of the escapes both parsers decode alike
_ODD_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*+\\(?![\"nrtbfv aeNLP_]|u(?![dD][89a-fA-F]|0000)[0-9a-fA-F]{4})")
#: a ``:`` that starts a plain scalar in a flow collection, or ends one before a flow indicator
#: (libyaml refuses both; rapidyaml reads them), and a document end marker (libyaml wants ``---`` next)
_ODD_SYNTAX = (re.compile(r":[\]},]"), re.compile(r"\n\.\.\."))
#: what kubectl never writes, left to the builder whatever rapidyaml would make of it (where
#: the two parsers disagree, it has been here): a comment, a flow collection that is not empty,
#: a block scalar header other than ``|``/``>`` with chomping and indentation indicators. Each
#: pattern starts with its indicator (a fast scan); whether it stands where a node starts is
#: checked on the line before it (:func:`_at_node_start`)
_COMMENT = re.compile(r"#(?<![^ \t\n]#)")
_FLOW_OPENING = re.compile(r"[\[{](?![\]}])")
_BLOCK_HEADER = re.compile(r"[|>](?!(?:[1-9]?[-+]?|[-+][1-9])[ \t]*(?:\n|\Z))")
#: a line whose indentation and ``- `` indicators reach this column may nest block collections
#: deeper than rapidyaml's JSON emitter goes (64): declined before parsing, as rapidyaml 0.15.2
#: crashes (SIGSEGV) emitting block mappings nested some 550 deep
_BLOCK_COLUMNS = 60
_DEEP_BLOCK = re.compile(rf"[ \-]{{{_BLOCK_COLUMNS}}}")
_DEEP_BLOCK_LINE = re.compile(rf"\n[ \-]{{{_BLOCK_COLUMNS}}}")
#: anchors, aliases, tags, directives, explicit keys, the reserved indicators, and flow
#: indicators no node starts with (libyaml refuses ``- ]x``; rapidyaml reads a plain scalar)
_INDICATORS = "&*!%?@`,]}"
_NOT_INDICATORS = bytes(sorted(set(range(256)) - set(_INDICATORS.encode())))
#: what stands before an indicator that can start a node: a line's start, ``[``, ``{``, ``,``,
#: ``-``/``?``/``:`` and a space, or a JSON-like ``":``; then spaces. Also after ``]``/``}``, where
#: libyaml refuses more content and rapidyaml reads ``{}!`` as a second, tagged node
_NODE_START_BEFORE = re.compile(r"(?:^|[\[{,\]}]|[-?:] |[\"']:) *\Z")
#: the same for a comma, which may follow a closing bracket (``[[a], [b]]``)
_COMMA_START_BEFORE = re.compile(r"(?:^|[\[{,]|[-?:] |[\"']:) *\Z")
#: the same for a closing bracket, which may follow any bracket or a comma (``[]``, ``[a, ]``, ``}}``)
_CLOSE_START_BEFORE = re.compile(r"(?:^|[-?:] |[\"']:) *\Z")
_CONTEXTS = {",": _COMMA_START_BEFORE, "]": _CLOSE_START_BEFORE, "}": _CLOSE_START_BEFORE}
#: how far back an indicator's context is read (a longer run of spaces declines)
_CONTEXT = 256
#: plain scalars JSON writes exactly as YAML 1.1 reads them (floats are checked again on decoding)
_SAME_IN_JSON = r"true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
#: words rapidyaml's JSON emitter rewrites (``inf`` becomes ``".inf"``) although YAML 1.1 reads strings
_RYML_SPECIAL = r"[-+]?\.?(?:inf|Inf|INF|infinity)|\.?(?:nan|NaN|Nan|NAN)"
#: numbers rapidyaml's JSON emitter rewrites (``-.5`` becomes ``-0.5``) although YAML 1.1 reads strings
_RYML_NUMBERS = r"[-+]\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?"
#: a date that a folded plain scalar can continue into a YAML 1.1 timestamp on its next line
_DATE = r"[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
#: pieces of a blank-separated word that could each be a whole plain scalar
_WORD_PIECES = re.compile(r"[\[\]{},]+|[\"']:")
#: a YAML 1.1 float with an exponent (with another exponent form YAML 1.1 reads a string)
_YAML11_EXPONENT_FLOAT = re.compile(r"-?[0-9]+\.[0-9]*[eE][-+][0-9]+")
#: text split into words this many characters at a time (bounds the memory the word list takes)
_CHUNK = 1 << 20


def _typed_plain_scalars() -> str:
    """PyYAML's own implicit resolvers (YAML 1.1) for every type but string, as one pattern (its
    ``!``/``&``/``*`` resolver aside: where those start a node, the indicator scan declines)."""
    patterns = {regexp.pattern for resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.values()
                for tag, regexp in resolvers if tag not in (_STR, _VALUE, _INDICATOR_TAG)}
    return "|".join(f"(?:{pattern.removeprefix('^').removesuffix('$')})" for pattern in sorted(patterns))


#: a piece that, written plain, YAML 1.1 and rapidyaml's JSON would read differently
_DIFFERS = re.compile(
    rf"(?!(?:{_SAME_IN_JSON}):?\Z)(?:{_typed_plain_scalars()}|{_RYML_SPECIAL}|{_RYML_NUMBERS}|{_DATE}):?\Z",
    re.VERBOSE)
#: a plain mapping key that JSON writes as a string but YAML 1.1 types (``1:``, ``true:``, ``null:``):
#: a plain scalar followed by ``:`` and a blank is a key, and the blank ends the word (keys YAML
#: 1.1 types otherwise, ``yes:`` or ``~:``, are :data:`_DIFFERS`'s)
_TYPED_KEY = re.compile(rf"(?:{_SAME_IN_JSON}):\Z")


def decline_reason(text: str) -> str | None:
    """Why the fast path leaves ``text`` to the event builder, or ``None``. The scan is
    conservative: it may decline harmless text, never text the two parsers read differently."""
    return _decline_reason(text, text.encode("utf-8", "surrogatepass"))


def _decline_reason(text: str, data: bytes) -> str | None:
    """:func:`decline_reason`, given the text's UTF-8 bytes (surrogates passed through)."""
    if data.translate(None, _PLAIN_ASCII):
        for pattern in (_ODD_CHARACTERS, _ODD_ESCAPE):
            match = pattern.search(text)
            if match is not None:
                return f"{match.group()!r} at offset {match.start()}"
    elif "\\" in text and (match := _ODD_ESCAPE.search(text)) is not None:
        return f"escape {match.group()!r} at offset {match.start()}"
    if _DEEP_BLOCK.match(text) or _DEEP_BLOCK_LINE.search(text):
        return f"a line indented {_BLOCK_COLUMNS} columns or more"
    if text.startswith("..."):
        return "a document end marker"
    for pattern in _ODD_SYNTAX:
        if (match := pattern.search(text)) is not None:
            return f"{match.group()!r} at offset {match.start()}"
    if (match := _COMMENT.search(text)) is not None:
        return f"a comment at offset {match.start()}"
    for what, indicators, pattern in (("a flow collection that is not empty", "[{", _FLOW_OPENING),
                                      ("an unusual block scalar header", "|>", _BLOCK_HEADER)):
        for position in _positions(text, indicators):  # (str.find: these characters are few)
            if pattern.match(text, position) and _at_node_start(text, position):
                return f"{what} at offset {position}"
    if (offset := _colon_after_flow_indicator(text)) is not None:
        return f"a ':' starting a plain scalar at offset {offset}"
    if (offset := _flow_across_lines(text)) is not None:
        return f"a flow collection or quoted scalar left open at the end of the line at offset {offset}"
    for indicator in set(data.translate(None, _NOT_INDICATORS).decode()):
        start = text.find(indicator)
        while start >= 0:
            if _starts_node(text, start, _CONTEXTS.get(indicator, _NODE_START_BEFORE)):
                return f"indicator {indicator!r} at offset {start}"
            start = text.find(indicator, start + 1)
    return _differing_word(text)


def _colon_after_flow_indicator(text: str) -> int | None:
    """Where ``[``, ``{`` or ``,`` (and spaces) is followed by a ``:`` that a non-blank follows
    (a regular expression for this scans a 50 MB text in 0.35 s; these characters are few)."""
    for indicator in "[{,":
        position = text.find(indicator)
        while position >= 0:
            window = text[position + 1:position + 1 + _CONTEXT]
            rest = window.lstrip(" ")
            if (rest[:1] == ":" and rest[1:2] not in (" ", "\n")) or (not rest and len(window) == _CONTEXT):
                return position
            position = text.find(indicator, position + 1)
    return None


def _positions(text: str, characters: str) -> Iterator[int]:
    """Every offset of any of ``characters`` in ``text``."""
    for character in characters:
        position = text.find(character)
        while position >= 0:
            yield position
            position = text.find(character, position + 1)


def _at_node_start(text: str, position: int) -> bool:
    """Whether a node can start at ``position``: only indentation, or ``:``/``-`` and at least
    one space, stand before it on its line (conservative: such text inside a quoted scalar
    counts too)."""
    before = text[text.rfind("\n", 0, position) + 1:position]
    stripped = before.rstrip(" \t")
    return not stripped or (stripped != before and stripped.endswith((":", "-")))


def _flow_across_lines(text: str) -> int | None:
    """The start of a line holding a bracket where, outside quoted scalars, the brackets do not
    balance or a quote stays open: a flow collection may continue on the next line, where the
    two parsers differ (rapidyaml folds an implicit key across lines, libyaml refuses it).
    Conservative: a bracket in a comment or an apostrophe in plain text also declines."""
    start = 0
    for position in sorted(_positions(text, "[]{}")):  # (str.find: a regular expression took ~0.1 s per 14 MB)
        if position < start:
            continue  # a line already checked
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        if not _balanced_line(text, start, end):
            return start
        start = end
    return None


def _balanced_line(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` closes every bracket it opens outside quoted scalars (YAML's
    two quote styles: backslash escapes in double quotes, doubled apostrophes in single quotes)
    and comments.
    A quoted scalar may stay open (it continues on the next line) when it starts a value: after
    ``: ``, ``- `` or indentation (a multi-line quoted key is refused by libyaml)."""
    line = text[start:end]
    if '"' not in line and "'" not in line and "#" not in line:  # most lines with brackets: `key: []`, `{}`
        return line.count("[") + line.count("{") == line.count("]") + line.count("}")
    depth, quote, opened, i = 0, "", 0, 0
    size = len(line)
    while i < size:
        c = line[i]
        if quote == '"':
            if c == "\\":
                i += 1
            elif c == '"':
                quote = ""
        elif quote == "'":
            if c == "'":
                if line.startswith("'", i + 1):
                    i += 1
                else:
                    quote = ""
        elif c == '"' or c == "'":
            quote, opened = c, i
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            break  # a comment: its brackets are not YAML's
        elif c == "[" or c == "{":
            depth += 1
        elif c == "]" or c == "}":
            depth -= 1
        i += 1
    if depth:
        return False
    return not quote or not line[:opened].strip(" ") or line[:opened].endswith((": ", "- "))


def _starts_node(text: str, position: int, context: re.Pattern[str]) -> bool:
    """Whether the character at ``position`` stands where a node can start (what precedes it
    on its line matches ``context``)."""
    low = max(0, position - _CONTEXT)
    newline = text.rfind("\n", low, position)
    if newline < 0 and low > 0:  # the line starts out of reach: spaces all the way may be indentation
        before = text[low:position]
        return not before.strip(" ") or context.search(before) is not None
    return context.search(text[newline + 1:position]) is not None


def _differing_word(text: str) -> str | None:
    """A blank-separated piece of text that, as a plain scalar or a plain key, YAML 1.1 and JSON
    read differently."""
    words: set[str] = set()
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start + _CHUNK)
        end = size if end < 0 else end
        words.update(text[start:end].split())
        start = end
    for word in words:
        if word == ":":  # a key written ``key : value`` (or an empty key): typed keys are checked by word
            return "a lone ':'"
        for piece in _WORD_PIECES.split(word):
            if piece and _DIFFERS.match(piece):
                return f"plain scalar {piece!r}"
            if piece and _TYPED_KEY.match(piece):
                return f"plain key {piece!r} (typed in YAML 1.1)"
    return None


class _Declined(Exception):
    """The fast path cannot vouch for this text."""


def _real(text: str) -> float:
    """A float, unless YAML 1.1 reads its plain form as a string (``1e3``)."""
    if ("e" in text or "E" in text) and not _YAML11_EXPONENT_FLOAT.fullmatch(text):
        raise _Declined(f"{text} is a string in YAML 1.1")
    return float(text)


def load_fast(text: str) -> list[Any] | None:
    """Every document of ``text`` as the event builder would give them, or ``None`` to decline."""
    if not settings.native_yaml_parser or not _single_threaded():
        return None
    if _decline_reason(text, text.encode("utf-8", "surrogatepass")) is not None:
        return None
    try:
        documents = _emit_documents(bytearray(text, "utf-8"), _nodes_expected(text))
        values = []
        while documents:  # each JSON text is dropped once decoded
            values.append(_decode(documents.pop(0)))
        return values
    except Exception:  # noqa: BLE001 - declining is always safe: the builder decides and reports
        return None


def _single_threaded() -> bool:
    """Whether no other thread runs (one that could write to standard error while it is muted)."""
    return threading.active_count() == 1


def _decode(json_text: bytearray) -> Any:
    """One document's value; a key given twice declines (rapidyaml keeps both, JSON the last).
    Keys YAML 1.1 would type were declined by the word scan (:data:`_TYPED_KEY`)."""
    value = json.loads(json_text, parse_float=_real)
    if not every_key_kept(json_text, value):
        raise _Declined("a key given twice")
    return value


def _nodes_expected(text: str) -> int:
    """About how many nodes rapidyaml's tree takes for block-style YAML (a line each, two for
    ``- key: value``; flow collections more). Reserved at once, the tree is not grown by
    doubling, which on a 50 MB dump took two thirds of the parse time and 190 MB more at peak."""
    return text.count("\n") + text.count("- ") + text.count("[") + text.count("{") + 16


def _emit_documents(buffer: bytearray, nodes: int) -> list[bytearray]:
    """Each document of the stream as JSON text (UTF-8), from rapidyaml (its error output
    discarded). rapidyaml parses ``buffer`` in place (no copy) and rewrites it."""
    #: room for the JSON text: rapidyaml's indented JSON of a block-style dump is about twice its size
    import ryml  # (imported on first use: most runs read JSON or small YAML and never need it)

    scratch = bytearray(len(buffer) * 9 // 4 + 64)
    with _quiet_stderr():
        tree = ryml.Tree()
        tree.reserve(nodes)
        ryml.parse_in_place(buffer, tree)
        root = tree.root_id()
        if not tree.is_stream(root):
            if not (tree.is_map(root) or tree.is_seq(root) or tree.is_val(root)):
                return []  # nothing but comments or blanks: no document
            size = _emit(tree, root, scratch)
            del scratch[size:]
            return [scratch]
        documents, child = [], tree.first_child(root)
        while child != ryml.NONE:
            size = _emit(tree, child, scratch)
            documents.append(scratch[:size])
            child = tree.next_sibling(child)
        return documents


def _emit(tree: Any, node: int, scratch: bytearray) -> int:
    """Write one node's JSON at the start of ``scratch`` (grown if it is too small); its length.
    One pass when it fits, where rapidyaml's own ``emit_json`` always measures first."""
    import ryml

    failed, size = ryml.emit_json_to_substr(tree, node, scratch)
    if failed:
        scratch.extend(bytes(size - len(scratch)))
        failed, size = ryml.emit_json_to_substr(tree, node, scratch)
        if failed:
            raise _Declined("rapidyaml could not emit the document")
    return size


class _quiet_stderr:
    """Point file descriptor 2 at the null device for a moment (single-threaded callers only)."""

    def __enter__(self) -> None:
        sys.stderr.flush()
        self.saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)

    def __exit__(self, *exc: object) -> None:
        os.dup2(self.saved, 2)
        os.close(self.saved)
