"""Upstream's list and map shapes (``validateSlice``, ``validateSet``, ``validateMap``): a
size limit that stops the item checks, each item's errors, duplicates, and map keys in paths."""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from .field import FieldError, Path, Steps, duplicate, path_at, too_many

__all__ = ["check_items", "check_list", "middle_truncate", "validate_list", "validate_map"]


def middle_truncate(key: str, max_len: int) -> str:
    """Shorten a long map key for a field path as upstream does: head + ``...`` + tail, ``max_len``
    total (limits below 16 are raised to 16)."""
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    keep = max_len - 3
    head = (keep + 1) // 2
    tail = keep - head
    return key[:head] + "..." + key[len(key) - tail :]


def validate_list(
    items: Sequence[Any] | None,
    path: Path,
    max_items: int | None,
    validate_item: Callable[[Any, Path], list[FieldError]] | None = None,
    key: Callable[[Any], Any] | None = None,
) -> list[FieldError]:
    """Upstream's ``validateSlice``/``validateSet`` shape: TooMany short-circuits the entries;
    ``key`` (optional) reports a Duplicate at the later index; each entry goes to ``validate_item``."""
    items = items or []
    if max_items is not None and len(items) > max_items:
        return [too_many(path, len(items), max_items)]
    errs: list[FieldError] = []
    seen: set[Any] = set()
    for i, item in enumerate(items):
        item_path = path.index(i)
        if validate_item is not None:
            errs.extend(validate_item(item, item_path))
        if key is not None:
            k = key(item)
            k = json.dumps(k, sort_keys=True) if isinstance(k, (dict, list)) else k
            if k in seen:
                errs.append(duplicate(item_path, key(item)))
            seen.add(k)
    return errs


def check_list(
    items: Any,
    path: Path,
    max_items: int | None,
    check_item: Callable[[Any, Path], list[FieldError]],
    key: Callable[[Any], Any] | None = None,
    short_circuit: bool = True,
) -> list[FieldError]:
    """Upstream's validateSlice/validateSet: TooMany (which, by default, stops the item
    checks as a DoS guard), each item's errors, then Duplicate at every repeated key."""
    if not items or not isinstance(items, list):  # most optional lists are absent: nothing to check
        return []
    errs = [too_many(path, len(items), max_items)] if max_items is not None and len(items) > max_items else []
    if errs and short_circuit:
        return errs
    index = path.index
    for i, item in enumerate(items):
        errs.extend(check_item(item, index(i)))
    if key is not None and len(items) > 1:  # one item repeats nothing
        for i, k in _repeats(items, key):
            errs.append(duplicate(index(i), k))
    return errs


def check_items(
    items: Any,
    where: Steps,
    max_items: int,
    check_item: Callable[..., list[FieldError]],
    *args: Any,
    key: Callable[[Any], Any] | None = None,
    short_circuit: bool = True,
) -> list[FieldError]:
    """:func:`check_list` with the list's path not built yet: ``check_item(item, where + (i,),
    *args)`` checks each item and builds a path only for an error (see :data:`.field.Steps`)."""
    if not items or not isinstance(items, list):
        return []
    errs = [too_many(path_at(where), len(items), max_items)] if len(items) > max_items else []
    if errs and short_circuit:
        return errs
    for i, item in enumerate(items):
        errs.extend(check_item(item, where + (i,), *args))
    if key is not None and len(items) > 1:
        for i, k in _repeats(items, key):
            errs.append(duplicate(path_at(where + (i,)), k))
    return errs


def _repeats(items: list[Any], key: Callable[[Any], Any]) -> list[tuple[int, Any]]:
    """The index and key of each item whose ``key`` an earlier item has (keys that do not hash
    compare as their JSON)."""
    repeats: list[tuple[int, Any]] = []
    seen: set[Any] = set()
    for i, item in enumerate(items):
        k = key(item)
        if type(k) is not str:  # (names, the usual keys, hash)
            try:
                hash(k)
            except TypeError:
                k = json.dumps(k, sort_keys=True)
        if k in seen:
            repeats.append((i, k))
        else:
            seen.add(k)
    return repeats


def validate_map(
    mapping: Any,
    max_size: int | None,
    truncate: int,
    validate_key: Callable[[str, Path], list[FieldError]],
    validate_item: Callable[[Any, Path], list[FieldError]],
    path: Path,
    item_ok: Callable[[Any], bool] | None = None,
) -> list[FieldError]:
    """Upstream ``validateMap``: TooMany short-circuits; key errors at the map path, value errors
    under the (middle-truncated) key. ``item_ok`` (optional) is a quick test of values that
    ``validate_item`` accepts: no path is built for them."""
    mapping = mapping if isinstance(mapping, dict) else {}
    if max_size is not None and len(mapping) > max_size:
        return [too_many(path, len(mapping), max_size)]
    errs: list[FieldError] = []
    for key, item in mapping.items():
        name = str(key)
        errs.extend(validate_key(name, path))
        if item_ok is not None and item_ok(item):
            continue
        errs.extend(validate_item(item, path.key(middle_truncate(name, truncate))))
    return errs
