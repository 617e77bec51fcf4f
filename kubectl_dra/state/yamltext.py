"""Decode YAML text into plain values with bounds, fast.

Objects are built from libyaml's event stream (PyYAML's C parser) by one loop over an
explicit stack, not by PyYAML's constructor: that is several times faster on the large
dumps ``kubectl get -o yaml`` writes, needs no recursion at any depth, and lets the same
loop enforce what the API server enforces when it decodes a request body:

* nesting deeper than :data:`~.bounded.MAX_DEPTH` is refused (``exceeded max depth``, as
  Go's JSON decoder that the API server uses says);
* aliases that expand a document far beyond its size are refused with the rule of the
  YAML library kubectl and the API server use (go-yaml's ``excessive aliasing`` ratio),
  plus an absolute ceiling, so a few hundred bytes can never become gigabytes; an alias
  to the node that contains it is refused too, as go-yaml refuses it.

Scalars keep YAML 1.1 semantics exactly: tags are resolved by PyYAML's own resolver and
values built by PyYAML's own safe constructor (results cached per load, as scalars are
immutable). A mapping naming the same string key twice is refused, as kubectl's strict
decoding does; merge keys (``<<``) follow PyYAML's rules.

Big YAML texts first try :mod:`.fastyaml` (rapidyaml, a C++ parser, emitting JSON): it takes
plain Kubernetes-style YAML several times faster and declines anything it cannot prove it
reads exactly as this builder does, which then decides (values and errors alike).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import yaml
from yaml import YAMLError
from yaml.events import (AliasEvent, DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                         ScalarEvent, SequenceEndEvent, SequenceStartEvent, StreamEndEvent, StreamStartEvent)

from .bounded import MAX_DEPTH, DecodeError, DuplicateKey
from .fastyaml import load_fast

__all__ = ["YAMLError", "load_yaml"]

#: go-yaml refuses aliasing only from this many decoded nodes on, and always above its ratio
_ALIAS_MIN_DECODES = 400_000
_ALIAS_MAX_DECODES = 4_000_000
#: values reached through aliases, beyond the document's own, that one document may add
MAX_ALIAS_EXPANSION = 1_000_000

#: texts from this size on try the rapidyaml fast path first (below it the builder takes milliseconds)
FAST_PATH_MIN_CHARS = 64 * 1024

#: distinct plain scalars whose resolved value one load remembers
_PLAIN_CACHE = 100_000

_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"

try:  # libyaml's parser; PyYAML's pure-Python one when PyYAML was built without it
    _Parser: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Parser = yaml.SafeLoader



def _allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99 % of small documents may be aliases, 10 % of big ones."""
    if decodes <= _ALIAS_MIN_DECODES:
        return 0.99
    if decodes >= _ALIAS_MAX_DECODES:
        return 0.10
    span = _ALIAS_MAX_DECODES - _ALIAS_MIN_DECODES
    return 0.99 - 0.89 * (decodes - _ALIAS_MIN_DECODES) / span


def _where(event: Any) -> tuple[int, int]:
    mark = getattr(event, "start_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)



# An open list or mapping is a list (cheaper to make than an object, and there are millions):
# [value, is a mapping, pending key (_NO_KEY if none), anchor, decodes and aliases when opened,
#  mappings merged in by ``<<`` (or None)]
_F_VALUE, _F_IS_MAP, _F_KEY, _F_ANCHOR, _F_DECODES, _F_ALIASES, _F_MERGES = range(7)


class _Builder:
    """Values of one stream, document by document (one instance per text: owns the caches)."""

    def __init__(self) -> None:
        self.resolver = yaml.resolver.Resolver()
        self.constructor = yaml.constructor.SafeConstructor()
        self.plain: dict[str, Any] = {}  # plain scalar text -> its value (immutable), up to _PLAIN_CACHE
        #: first characters of the implicitly typed scalars (null, bool, int, float, timestamp, merge)
        self.resolvable = frozenset(k for k in self.resolver.yaml_implicit_resolvers if k)
        self.tagged: dict[tuple[str, str], Any] = {}

    # ------------------------------------------------------------------ scalars

    def scalar(self, event: Any) -> tuple[Any, bool]:
        """(value, is a merge key ``<<``) of a scalar event."""
        tag, value = event.tag, event.value
        if tag is None or tag == "!":
            if tag is None and event.implicit[0]:
                return self._plain(value, event)
            return value, False
        if tag == _STR:
            return value, False
        key = (tag, value)
        try:
            return self.tagged[key], tag == _MERGE
        except KeyError:
            pass
        built = self._construct(tag, value, event)
        self.tagged[key] = built
        return built, tag == _MERGE

    def _plain(self, value: str, event: Any) -> tuple[Any, bool]:
        try:
            return self.plain[value], value == "<<"
        except KeyError:
            pass
        tag = self.resolver.resolve(yaml.ScalarNode, value, (True, False))
        merge = tag == _MERGE
        built = value if tag in (_STR, _VALUE, _MERGE) else self._construct(tag, value, event)
        if len(self.plain) < _PLAIN_CACHE:
            self.plain[value] = built
        return built, merge

    def _construct(self, tag: str, value: str, event: Any) -> Any:
        node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, event.style)
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise DecodeError(problem, *_where(event)) from None
        finally:  # the constructor remembers every node it built: nodes here are never seen again
            self.constructor.constructed_objects.clear()

    # ------------------------------------------------------------------ documents

    def documents(self, text: str) -> Iterator[Any]:
        """Every document's value, in order (``None`` for an empty one)."""
        parser = _Parser(text)
        try:
            get_event = parser.get_event
            while True:
                event = get_event()
                cls = event.__class__
                if cls is DocumentStartEvent:
                    yield self._document(get_event)
                elif cls is StreamEndEvent or event is None:
                    return
                elif cls is not StreamStartEvent:  # pragma: no cover - libyaml orders events
                    raise DecodeError(f"unexpected {cls.__name__}", *_where(event))
        finally:
            parser.dispose()

    def _document(self, get_event: Callable[[], Any]) -> Any:  # noqa: C901 - one hot loop, kept in one place
        """One document from its first node event to its DocumentEndEvent."""
        anchors: dict[str, tuple[Any, int, int]] = {}
        stack: list[list[Any]] = []
        decodes = aliases = expansion = 0
        root: Any = None
        plain, scalar, resolvable = self.plain, self.scalar, self.resolvable
        frame: list[Any] | None = None
        while True:
            event = get_event()
            cls = event.__class__
            merge = False
            if cls is ScalarEvent:
                decodes += 1
                value, tag = event.value, event.tag
                if tag is None and event.implicit[0]:
                    if value and value[0] not in resolvable:
                        pass  # no implicit type starts with this character: a string
                    elif value in plain:
                        merge = value == "<<"
                        value = plain[value]
                    else:
                        value, merge = scalar(event)
                elif tag is not None and tag != "!" and tag != _STR:
                    value, merge = scalar(event)
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1, 0)
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                decodes += 1
                if len(stack) >= MAX_DEPTH:
                    raise DecodeError(f"exceeded max depth of {MAX_DEPTH} (lists and mappings nested deeper "
                                      "than the API server accepts)", *_where(event))
                is_map = cls is MappingStartEvent
                tag = event.tag
                if tag is not None and tag != "!" and tag != (_MAP if is_map else _SEQ):
                    raise DecodeError(f"unsupported tag {tag!r} on a {'mapping' if is_map else 'list'}"
                                      " (Kubernetes objects hold JSON values)", *_where(event))
                frame = [{} if is_map else [], is_map, _NO_KEY, event.anchor, decodes, aliases, None]
                stack.append(frame)
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                done = stack.pop()
                value = self._finish(done) if done[6] else done[0]
                if done[3] is not None:
                    anchors[done[3]] = (value, decodes - done[4] + 1, aliases - done[5])
                frame = stack[-1] if stack else None
            elif cls is AliasEvent:
                name = event.anchor
                if name not in anchors:
                    if any(f[_F_ANCHOR] == name for f in stack):
                        raise DecodeError(f"anchor {name!r} value contains itself", *_where(event))
                    raise DecodeError(f"unknown anchor {name!r} referenced", *_where(event))
                value, sub_decodes, sub_aliases = anchors[name]
                decodes += 1 + sub_decodes
                aliases += 1 + sub_aliases
                expansion += sub_decodes
                if (aliases > 100 and decodes > _ALIAS_MIN_DECODES
                        and aliases / decodes > _allowed_alias_ratio(decodes)):
                    raise DecodeError("document contains excessive aliasing", *_where(event))
                if expansion > MAX_ALIAS_EXPANSION:
                    raise DecodeError(f"aliases expand the document by more than {MAX_ALIAS_EXPANSION:,} values "
                                      "(an alias bomb?)", *_where(event))
            elif cls is DocumentEndEvent:
                return root
            else:  # pragma: no cover - libyaml orders events
                raise DecodeError(f"unexpected {cls.__name__}", *_where(event))
            if frame is None:
                root = value
            elif not frame[1]:  # a list
                frame[0].append(value)
            elif frame[2] is _NO_KEY:  # a mapping's key
                if merge:
                    frame[2] = _MERGE_KEY
                elif value.__class__ is dict or value.__class__ is list:
                    raise DecodeError("a mapping key must be a scalar, found a "
                                      f"{'mapping' if isinstance(value, dict) else 'list'}", *_where(event))
                elif value in frame[0]:
                    raise DuplicateKey(str(value), *_where(event))
                else:
                    frame[2] = value
            else:  # a mapping's value
                key = frame[2]
                frame[2] = _NO_KEY
                if key is _MERGE_KEY:
                    self._merge(frame, value, event)
                else:
                    frame[0][key] = value

    @staticmethod
    def _merge(frame: list[Any], value: Any, event: Any) -> None:
        """Remember the mapping(s) of a ``<<`` key; the first named wins over later ones."""
        merges = frame[_F_MERGES] if frame[_F_MERGES] is not None else []
        frame[_F_MERGES] = merges
        if isinstance(value, dict):
            merges.append(value)
        elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
            merges.extend(reversed(value))
        else:
            raise DecodeError("expected a mapping or list of mappings for merging", *_where(event))

    @staticmethod
    def _finish(frame: list[Any]) -> Any:
        """The finished value of a mapping with merges (merged keys first, as PyYAML orders them)."""
        merged: dict = {}
        for part in frame[_F_MERGES] or ():
            merged.update(part)
        merged.update(frame[_F_VALUE])
        return merged


class _NoKey:
    """No key is pending in a mapping."""


class _MergeKeyType:
    """A ``<<`` key is pending."""


_NO_KEY = _NoKey()
_MERGE_KEY = _MergeKeyType()


def load_yaml(text: str) -> list[Any]:
    """Every document of a YAML stream; :class:`DecodeError` or ``yaml.YAMLError`` (syntax) on failure.

    A big text first goes to :func:`.fastyaml.load_fast` (rapidyaml), which returns exactly
    these values or declines; the event builder decides everything it declines, errors included."""
    if len(text) >= FAST_PATH_MIN_CHARS:
        documents = load_fast(text)
        if documents is not None:
            return documents
    return list(_Builder().documents(text))

