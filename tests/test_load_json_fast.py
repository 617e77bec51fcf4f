"""The JSON fast path of the file loader (state/bounded.py ``load_json_unique_fast``): it gives
exactly the standard decoder's value when no object names a key twice, and declines (None) in
every other case, so the duplicate-key hook decides errors as before. Its proof counts colons;
these tests aim at what could fool a count: colons inside keys and values, escaped colons,
duplicates whose values hold colons, whitespace, and what orjson cannot write."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_dra.errors import InputError
from kubectl_dra.state import load_documents
from kubectl_dra.state.bounded import load_json_unique_fast


class _Duplicate(Exception):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise _Duplicate
    return dict(pairs)


def reference(text: str) -> Any:
    """What the hooked standard decoder gives: the value, or _Duplicate."""
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except _Duplicate:
        return _Duplicate


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (1 is not 1.0, NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}',
    '{"a": ":", "a": ":"}',
    '{"a:b": 1, "a:b": 2}',
    '[{"x": {"k": 1, "k": 1}}]',
    '{"kind": "List", "items": [{"metadata": {"name": "x", "name": "y"}}]}',
    '{"a": 1, "\\u0061": 2}',
    '{"a" : 1 , "a"\n:\t2}',
    '{"a": {"b": "::::"}, "a": {"b": "::::"}}',
    '{"a": "\\u003a", "a": 1, "b": ":"}',
])
def test_duplicate_keys_are_never_let_through(text: str) -> None:
    assert reference(text) is _Duplicate
    assert load_json_unique_fast(text) is None


@pytest.mark.parametrize("text", [
    '{"a": 1, "b": [1, 2.5, true, false, null, "s"]}',
    '{"a:b": ":", "c": "\\u003a\\u003A:", "d": {"e": "x\\"y:"}}',
    '[{"kind": "X"}, {"kind": "Y", "k": {"\\\\": "\\\\:"}}]',
    '  {"a": "\\ud83d\\ude00", "b": -0, "c": 1e5, "d": 1E-2}  ',
    '{"kind": "List", "items": [' + ", ".join(f'{{"i": {i}, "t": "a:{i}"}}' for i in range(3000)) + "]}",
])
def test_texts_without_duplicates_decode_as_the_standard_decoder_does(text: str) -> None:
    value = load_json_unique_fast(text)
    assert value is not None and same(value, reference(text))


@pytest.mark.parametrize("text", [
    '[NaN, Infinity]',                 # orjson writes NaN as null: still counted, still the same value
    '{"big": 123456789012345678901234567890}',  # orjson cannot write it: declines
    '{"s": "\\ud800"}',                # a lone surrogate: orjson cannot write it: declines
    '{"literal": "\\\\u003a"}',        # an escaped backslash then u003a: counted as a colon, declines
    '"just a string"',
    '{"a": 1} trailing',
    '{"a": 1,}',
])
def test_what_the_proof_cannot_cover_declines_or_is_the_same(text: str) -> None:
    value = load_json_unique_fast(text)
    if value is not None:
        assert same(value, reference(text))


def test_nesting_orjson_cannot_write_declines() -> None:
    text = '{"a": ' * 300 + "1" + "}" * 300
    assert load_json_unique_fast(text) is None


def test_the_loader_still_names_a_duplicate_key(tmp_path: Path) -> None:
    path = tmp_path / "dump.json"
    items = [{"kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(100)]
    text = json.dumps({"kind": "List", "items": items})
    path.write_text(text.replace('"name": "n57"', '"name": "n57", "name": "n58"'))
    with pytest.raises(InputError, match=r"dump.json: duplicate key 'name' in an object"):
        load_documents([str(path)])
    path.write_text(text)
    assert load_documents([str(path)]) == items


KEYS = st.sampled_from(["a", "b", "a:b", ":", "", "kind", "é", "\\", '"'])
SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(["", ":", "a:b", "::", "\\:", "x\"y"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.lists(st.tuples(KEYS, inner), max_size=4), max_leaves=25)


def write(value: Any, escape_colons: bool, spaced: bool) -> str:
    """JSON text of ``value``, where a list of (key, value) pairs is an object that may repeat keys."""
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list) and value and all(isinstance(x, tuple) for x in value):
        sep = " : " if spaced else ":"
        members = [write(k, escape_colons, spaced) + sep + write(v, escape_colons, spaced) for k, v in value]
        return "{" + ", ".join(members) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(write(v, escape_colons, spaced) for v in value) + "]"
    text = json.dumps(value)
    if escape_colons and isinstance(value, str):
        text = text.replace(":", "\\u003a")
    return text


@settings(max_examples=400, deadline=None)
@given(st.lists(VALUES, max_size=4), st.booleans(), st.booleans())
def test_the_fast_path_agrees_with_the_hooked_decoder(items: list[Any], escape_colons: bool, spaced: bool) -> None:
    text = write(items, escape_colons, spaced) if items else "[]"
    expected = reference(text)
    value = load_json_unique_fast(text)
    if expected is _Duplicate:
        assert value is None
    elif fits_64_bits(expected):  # orjson writes it: the proof holds, the fast path must take it
        assert value is not None and same(value, expected)
    elif value is not None:
        assert same(value, expected)


def fits_64_bits(value: Any) -> bool:
    """Whether every integer in ``value`` is one orjson can write."""
    if isinstance(value, dict):
        return all(fits_64_bits(v) for v in value.values())
    if isinstance(value, list):
        return all(fits_64_bits(v) for v in value)
    return not isinstance(value, int) or -(2**63) <= value < 2**64
