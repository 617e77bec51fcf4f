"""Load cluster state from files: YAML or JSON, multi-document, ``kind: List`` (as
``kubectl get -o yaml`` writes), directories (recursively, sorted), or ``-`` for stdin."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml

from ..errors import InputError
from .snapshot import ClusterState, Obj

_SUFFIXES = (".yaml", ".yml", ".json")

try:  # the C loader is ~10x faster on large dumps
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader


def _parse_text(text: str, origin: str) -> Iterator[Any]:
    """Yield the documents of one file; JSON takes the fast path."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            yield json.loads(text)
            return
        except json.JSONDecodeError:
            pass  # YAML flow style can also start with { or [
    try:
        yield from yaml.load_all(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{origin}:{where}: malformed YAML: {problem}") from None


def _flatten(doc: Any, origin: str) -> Iterator[Obj]:
    """Expand ``kind: List`` (and plain JSON arrays) into their items; skip empty documents."""
    if doc is None:
        return
    if isinstance(doc, list):
        for item in doc:
            yield from _flatten(item, origin)
        return
    if not isinstance(doc, dict):
        raise InputError(f"{origin}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        item_kind = kind[: -len("List")]
        for item in doc.get("items") or []:
            if isinstance(item, dict) and item_kind and "kind" not in item:
                item = {"kind": item_kind, **item}  # `kubectl get --raw` lists omit item kinds
            yield from _flatten(item, origin)
        return
    if not isinstance(kind, str) or not kind:
        name = (doc.get("metadata") or {}).get("name", "?") if isinstance(doc.get("metadata"), dict) else "?"
        raise InputError(f"{origin}: object {name!r} has no kind")
    yield doc


def _expand_paths(paths: Iterable[str]) -> Iterator[str]:
    for path in paths:
        if path == "-":
            yield path
            continue
        p = Path(path)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(_SUFFIXES):
                        yield os.path.join(root, name)
        elif p.exists():
            yield path
        else:
            raise InputError(f"{path}: no such file or directory")


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def load_documents(paths: Iterable[str]) -> list[Obj]:
    """Every Kubernetes object in ``paths`` (files, directories or ``-``), in order."""
    objs: list[Obj] = []
    for path in _expand_paths(paths):
        origin = "<stdin>" if path == "-" else path
        for doc in _parse_text(_read(path), origin):
            objs.extend(_flatten(doc, origin))
    return objs


def load_state(paths: Iterable[str]) -> ClusterState:
    """A :class:`ClusterState` from files; objects of other kinds are ignored with a warning."""
    state = ClusterState()
    state.extend(load_documents(paths))
    return state
