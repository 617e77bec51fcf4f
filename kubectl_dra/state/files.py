"""Load cluster state from files: YAML or JSON, multi-document, ``kind: List`` (as
``kubectl get -o yaml`` writes), directories (recursively, sorted), or ``-`` for stdin."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import InputError
from ..limits import MAX_INPUT_BYTES
from .bounded import MAX_INTEGER_DIGITS, DecodeError, DuplicateKey, load_json, load_json_unique_fast
from .shapes import shape_errors, shapes_fit
from .snapshot import KINDS, ClusterState, Obj

_SUFFIXES = (".yaml", ".yml", ".json")
_CHUNK = 16 * 1024 * 1024


class _DuplicateKey(Exception):
    """A JSON object names the same key twice (kubectl's strict decoding rejects that)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key given twice is an error, as for YAML."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _parse_text(text: str, origin: str) -> Iterator[Any]:
    """Yield the documents of one file; JSON takes the fast path. Nesting, alias expansion,
    number length and size are bounded (:mod:`.bounded`, :mod:`.yamltext`), so no input can
    exhaust the stack or memory; lone UTF-16 surrogates become U+FFFD, as Go's decoder makes them."""
    try:
        documents = list(_decode_documents(text, origin))
    except ValueError as exc:  # int(): more digits than Python converts (its own guard against slow parsing)
        if "integer string conversion" not in str(exc):
            raise
        raise InputError(f"{origin}:{_long_number_at(text)} number with more than {MAX_INTEGER_DIGITS} digits "
                         "(Kubernetes integers are 64-bit)") from None
    if _SURROGATE_ESCAPE.search(text):
        documents = [_replace_surrogates(doc) for doc in documents]
    yield from documents


def _long_number_at(text: str) -> str:
    """`` line L, column C:`` of the first run of more than :data:`MAX_INTEGER_DIGITS` digits."""
    found = re.search(f"[0-9]{{{MAX_INTEGER_DIGITS + 1},}}", text)
    if found is None:
        return ""
    start = found.start()
    return _at(text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1)


#: an escape that may stand for half a UTF-16 surrogate pair (JSON ``\\ud800``, YAML ``\\U0000d800``)
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _replace_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings and keys replaced by U+FFFD (Go's
    ``encoding/json`` decodes an unpaired surrogate escape so; Python keeps it, and no output
    could encode it). Walks on an explicit stack: nesting is bounded, not by the interpreter's stack."""
    def fix(item: Any) -> Any:
        return _SURROGATE.sub("\ufffd", item) if type(item) is str else item

    root = [value]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            items = list(node.items())
            node.clear()
            for key, item in items:
                node[fix(key)] = fix(item)
            stack.extend(item for item in node.values() if type(item) in (dict, list))
        else:
            for index, item in enumerate(node):
                node[index] = fix(item)
            stack.extend(item for item in node if type(item) in (dict, list))
    return root[0]


def _decode_documents(text: str, origin: str) -> Iterator[Any]:
    """The documents of one file, JSON first (see :func:`_parse_text`)."""
    stripped = text.lstrip()
    json_error: json.JSONDecodeError | None = None
    if stripped.startswith(("{", "[")):
        fast = load_json_unique_fast(text)
        if fast is not None:
            yield fast
            return
        try:
            yield load_json(text, object_pairs_hook=_json_object)
            return
        except _DuplicateKey as dup:
            raise InputError(f"{origin}: duplicate key {dup.key!r} in an object") from None
        except DecodeError as exc:
            raise InputError(f"{origin}:{_at(exc.line, exc.column)} {exc.message}") from None
        except json.JSONDecodeError as exc:
            if stripped.startswith("{") and exc.msg != "Extra data":
                # kubectl and the API server decode a text that starts with { as JSON, strictly:
                # no trailing commas, no YAML flow style (several objects in a row are still read)
                raise InputError(f"{origin}: line {exc.lineno}, column {exc.colno}: malformed JSON: {exc.msg}") from None
            json_error = exc  # YAML flow style can also start with [
    from .yamltext import YAMLError, load_yaml  # (PyYAML is loaded for YAML input only)

    try:  # the whole file first: a syntax error later in it must not be hidden by objects before it
        documents = load_yaml(text)
    except DuplicateKey as dup:
        raise InputError(f"{origin}:{_at(dup.line, dup.column)} duplicate key {dup.key!r} "
                         "(a mapping may name each key once)") from None
    except DecodeError as exc:
        raise InputError(f"{origin}:{_at(exc.line, exc.column)} {exc.message}") from None
    except YAMLError as exc:
        if json_error is not None and origin.endswith(".json"):
            raise InputError(
                f"{origin}: line {json_error.lineno}, column {json_error.colno}: malformed JSON: {json_error.msg}"
            ) from None
        mark = getattr(exc, "problem_mark", None)
        where = _at(mark.line + 1, mark.column + 1) if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        hint = "; indent with spaces, not tabs" if "\t" in text and "cannot start any token" in problem else ""
        kind = "JSON or YAML" if json_error is not None else "YAML"
        raise InputError(f"{origin}:{where} malformed {kind}: {problem}{hint}") from None
    yield from documents


def _at(line: int, column: int) -> str:
    """`` line L, column C:`` when the position is known."""
    return f" line {line}, column {column}:" if line else ""


def _type_name(value: Any) -> str:
    """The JSON name of a value's type, as people read it in a file."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _flatten(doc: Any, origin: str) -> Iterator[Obj]:
    """Expand ``kind: List`` (and a plain JSON array of objects) into their items; skip empty
    documents. Lists inside lists are expanded on an explicit stack, so their nesting is bounded
    by the decoder's depth limit, not by the interpreter's recursion."""
    pending: list[Iterator[Any]] = [iter((doc,))]
    top = True
    while pending:
        item: Any = next(pending[-1], _DONE)
        if item is _DONE:
            pending.pop()
            continue
        if item is None:  # an empty document or item
            continue
        if isinstance(item, list):
            if not top:  # kubectl decodes one object or a List per document, never lists of lists
                raise InputError(f"{origin}: expected a Kubernetes object (a mapping with kind and metadata), "
                                 "got a list inside a list")
            top = False
            pending.append(iter(item))
            continue
        top = False
        kind = _list_kind(item, origin)
        if kind is None:
            yield item
            continue
        pending.append(_list_items(item, kind, origin))


_DONE = object()


def _list_items(doc: Obj, kind: str, origin: str) -> Iterator[Any]:
    """The items of a ``...List`` document, each with the kind the list names when it has none."""
    items = doc.get("items")
    if items is not None and not isinstance(items, list):
        raise InputError(f"{origin}: {kind}: items: must be a list, got {_type_name(items)}")
    item_kind = kind[: -len("List")]
    for item in items or []:
        if type(item) is dict and item_kind and "kind" not in item:
            item = {"kind": item_kind, **item}  # `kubectl get --raw` lists omit item kinds
        if isinstance(item, list):
            raise InputError(f"{origin}: {kind}: items: expected Kubernetes objects, got a list")
        yield item


def _list_kind(doc: Any, origin: str) -> str | None:
    """The kind of a list document (``kind: ...List`` with ``items``), None for any other
    object; an error for what is no object (not a mapping, no kind, a kind that is no string)."""
    if not isinstance(doc, dict):
        raise InputError(f"{origin}: expected a Kubernetes object (a mapping with kind and metadata), "
                         f"got {_type_name(doc)}")
    kind = doc.get("kind")
    if type(kind) is str and kind:
        return kind if kind.endswith("List") and "items" in doc else None
    if kind is None or kind == "":
        raise InputError(f"{origin}: object {_name_of(doc)!r}: kind: Required value: every object needs a kind "
                         "(and apiVersion)")
    raise InputError(f"{origin}: object {_name_of(doc)!r}: kind: must be a string, got {_type_name(kind)}")


def _name_of(doc: Obj) -> str:
    """``metadata.name`` for messages, ``?`` when there is none."""
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else "?"


def _expand_paths(paths: Iterable[str]) -> Iterator[str]:
    for path in paths:
        if path == "-":
            yield path
            continue
        if not path.strip():  # `-f "$UNSET"`: never the current directory
            raise InputError(f"{path!r}: empty file name (an unset shell variable?); name a file, a directory "
                             "or - for stdin")
        p = Path(path)
        if p.is_dir():
            found = False
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(_SUFFIXES):
                        found = True
                        yield os.path.join(root, name)
            if not found:
                raise InputError(f"{path}: directory holds no .yaml, .yml or .json files")
        elif p.exists():
            yield path
        else:
            raise InputError(f"{path}: no such file or directory")


def _read(path: str) -> str:
    if path == "-":
        if sys.stdin is None:  # `-f - <&-`
            raise InputError("<stdin>: cannot read: standard input is closed")
        if sys.stdin.isatty():  # not a hang: say what we wait for
            sys.stderr.write("reading objects from stdin (end with Ctrl-D)...\n")
        buffer = getattr(sys.stdin, "buffer", None)
        try:
            if buffer is None:  # a text-only stand-in (tests)
                return sys.stdin.read()
            return _decode(_read_bounded(buffer, "<stdin>"), "<stdin>")
        except OSError as exc:
            raise InputError(f"<stdin>: cannot read: {exc.strerror or exc}") from None
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            _check_size(size, path)
            data = _read_bounded(stream, path, first=size + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return _decode(data, path)


def _read_bounded(stream: Any, origin: str, first: int = _CHUNK) -> bytes:
    """All of ``stream``, in chunks, stopping with an error past :data:`MAX_INPUT_BYTES` (a pipe or
    a growing file has no size to check first). The first chunk is ``first`` bytes: a file's size
    plus one reads a file that does not grow in one piece, never copied again."""
    chunks: list[bytes] = []
    total = 0
    size = min(first, MAX_INPUT_BYTES + 1)
    while True:
        chunk = stream.read(size)
        if not chunk:
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        total += len(chunk)
        _check_size(total, origin)
        chunks.append(chunk)
        size = _CHUNK


def _check_size(size: int, origin: str) -> None:
    """Refuse an input bigger than :data:`MAX_INPUT_BYTES` before parsing it (memory stays bounded)."""
    if size > MAX_INPUT_BYTES:
        raise InputError(f"{origin}: larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB, the most kubectl-dra "
                         "reads from one input; split the dump (for example one file per kind) or leave out "
                         "objects it does not need")


def _decode(data: bytes, origin: str) -> str:
    """UTF-8 text (a byte-order mark is dropped); anything else is not a manifest."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{origin}: not a YAML or JSON text file (invalid UTF-8 at byte {exc.start})") from None


def _load(paths: Iterable[str]) -> Iterator[tuple[str, Obj]]:
    """(origin, object) for every Kubernetes object in ``paths``, in order."""
    for path in _expand_paths(paths):
        origin = "<stdin>" if path == "-" else path
        for doc in _parse_text(_read(path), origin):
            for obj in _flatten(doc, origin):
                yield origin, obj


def load_documents(paths: Iterable[str], check_shapes: bool = True) -> list[Obj]:
    """Every Kubernetes object in ``paths`` (files, directories or ``-``), in order.

    With ``check_shapes`` a field the commands read holding a value of the wrong JSON type is an
    :class:`InputError` naming object and field (as kubectl's decoding refuses the file); ``validate``
    turns it off, since its decisions report those as field errors, as the webhook does."""
    objects = []
    for origin, obj in _load(paths):
        if check_shapes and obj.get("kind") in KINDS:
            _check_types(obj, origin)
        objects.append(obj)
    return objects


def load_state(paths: Iterable[str]) -> ClusterState:
    """A :class:`ClusterState` from files; objects of other kinds are ignored with a warning.

    Objects the state uses must have a metadata mapping with a name (lookups go by name);
    finding no object at all is an error, since an empty cluster would answer wrongly.
    """
    paths = list(paths)
    state = ClusterState()
    count = 0
    # (the cyclic GC's cost over a big dump is the entry point's to tune: cli.main.tune_process)
    for origin, obj in _load(paths):
        count += 1
        if obj.get("kind") in KINDS:
            _check_identity(obj, origin)
            _check_types(obj, origin)
        state.add(obj, origin)
    if count == 0:
        shown = ", ".join("<stdin>" if p == "-" else p for p in paths)
        raise InputError(f"{shown}: no objects found (expected a dump such as "
                         "`kubectl get nodes,deviceclasses,resourceslices,resourceclaims -A -o yaml`)")
    return state


def _check_types(obj: Obj, origin: str) -> None:
    """Values of the wrong JSON type in a field the commands read (a string count, ``labels: "x"``,
    a number where a list belongs) are an :class:`InputError` naming object and field, as the API
    server would never have stored them; the core can then trust the types it reads."""
    if shapes_fit(obj, obj["kind"]):  # the common case: one pass, no error built
        return
    errors = shape_errors(obj, obj["kind"])
    if errors:
        more = f" (and {len(errors) - 1} more type errors)" if len(errors) > 1 else ""
        raise InputError(f"{origin}: {obj['kind']}/{_name_of(obj)}: {errors[0]}{more}")


def _check_identity(obj: Obj, origin: str) -> None:
    """metadata must be a mapping with a string name and (optional) string namespace."""
    kind = obj["kind"]
    meta = obj.get("metadata")
    if meta is None:
        raise InputError(f"{origin}: {kind} without metadata: metadata.name: Required value")
    if not isinstance(meta, dict):
        raise InputError(f"{origin}: {kind}: metadata: must be a mapping, got {_type_name(meta)}")
    name = meta.get("name")
    if name is None or name == "":
        raise InputError(f"{origin}: {kind} without a name: metadata.name: Required value")
    if not isinstance(name, str):
        raise InputError(f"{origin}: {kind}: metadata.name: must be a string, got {_type_name(name)}")
    namespace = meta.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise InputError(f"{origin}: {kind}/{name}: metadata.namespace: must be a string, "
                         f"got {_type_name(namespace)}")
