"""The generated checkers of kubectl_dra/schema.py: one boolean pass that agrees with the error
walk on every value, for every load schema, at any nesting; the quantity texts a checker
remembers as valid never change an answer, and stay bounded."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_dra import schema
from kubectl_dra.quantity import Quantity
from kubectl_dra.state.shapes import LOAD_SCHEMAS, shape_errors

KEYS = ["metadata", "spec", "status", "name", "namespace", "labels", "devices", "attributes", "capacity", "value",
        "int", "string", "bool", "ints", "consumesCounters", "counters", "counterSet", "sharedCounters", "pool",
        "generation", "driver", "nodeSelector", "nodeSelectorTerms", "matchExpressions", "values", "requests",
        "exactly", "count", "allocation", "results", "containers", "resources", "allocatable", "taints",
        "requestPolicy", "validRange", "min", "gpu.example.com/model"]
SCALARS = (st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats(allow_nan=False)
           | st.sampled_from(["1Gi", "80Gi", "0.5", "100m", " 5 ", "bogus", "1e3", "", "1.", "x"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4), max_leaves=30)
#: the load schemas compiled once for this module (compiling is what is slow)
COMPILED = {kind: schema.Schema(spec) for kind, spec in LOAD_SCHEMAS.items()}
QUANTITY_MEMBER = schema.Schema({"q": schema.QUANTITY})


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(["metadata", "spec", "status"]), VALUES, max_size=3))
def test_each_load_schema_fits_exactly_when_its_error_walk_finds_nothing(obj: dict[str, Any]) -> None:
    for kind in LOAD_SCHEMAS:
        assert COMPILED[kind].fits(obj) == (not shape_errors(obj, kind)), kind


def nested_lists(depth: int, leaf: Any) -> Any:
    spec: Any = leaf
    for _ in range(depth):
        spec = [spec]
    return spec


def test_parts_nested_beyond_the_inline_depth_are_checked_by_functions_of_their_own() -> None:
    depth = 3 * schema._INLINE_LOOPS
    spec = {"a": nested_lists(depth, {"q": schema.QUANTITY, "n": schema.INT, "s": schema.STR, "b": schema.BOOL})}
    compiled = schema.Schema(spec)
    good = {"a": nested_lists(depth, {"q": "1Gi", "n": 1, "s": "x", "b": True})}
    assert compiled.fits(good) and compiled.misfits(good) == []
    for member, wrong in (("q", "lots"), ("n", 2**63), ("s", 1), ("b", "yes")):
        bad = {"a": nested_lists(depth, {"q": "1Gi", "n": 1, "s": "x", "b": True, member: wrong})}
        assert not compiled.fits(bad)
        assert [m.field for m in compiled.misfits(bad)] == ["a" + "[0]" * depth + "." + member]


def test_objects_nested_deeper_than_the_inline_indentation_compile_and_check() -> None:
    depth = 3 * schema._INLINE_INDENT
    spec: Any = {"n": schema.INT}
    good: Any = {"n": 1}
    bad: Any = {"n": "one"}
    for _ in range(depth):
        spec, good, bad = {"a": spec, "b": schema.STR}, {"a": good, "b": "x"}, {"a": bad}
    compiled = schema.Schema(spec)
    assert compiled.fits(good) and not compiled.fits(bad)
    assert [m.field for m in compiled.misfits(bad)] == [".".join(["a"] * depth + ["n"])]


def test_objects_with_few_and_with_many_members_are_checked_alike() -> None:
    few = {"a": schema.STR}
    many = {key: schema.INT for key in "abcdefghij"}
    assert schema.Schema(few).fits({"a": "x", "b": 1}) and not schema.Schema(few).fits({"a": 1})
    assert schema.Schema(many).fits({"j": 1, "z": "x", "a": None}) and not schema.Schema(many).fits({"j": "1"})
    assert not schema.Schema(many).fits([]) and schema.Schema(many).fits(None)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789.+-eEinumkKMGTP ", max_size=12))
def test_the_quantity_leaf_answers_as_the_parser_does(text: str) -> None:
    try:
        Quantity.from_json(text)
        parses = True
    except Exception:
        parses = False
    assert QUANTITY_MEMBER.fits({"q": text}) == parses


def test_remembered_quantity_texts_answer_as_the_parser_and_stay_bounded() -> None:
    compiled = schema.Schema({"q": [schema.QUANTITY]})
    texts = [f"{i}Mi" for i in range(schema._QUANTITY_MEMO + 10)] + ["1 Gi", "bogus"]
    for _ in range(2):  # the second time, from memory
        assert compiled.fits({"q": texts[:-2]})
        assert not compiled.fits({"q": ["1Gi", "bogus"]}) and not compiled.fits({"q": ["1 Gi"]})
        assert compiled.fits({"q": [" 5 ", 5, 2.5]}) and not compiled.fits({"q": [True]})
    memo = compiled._fits.__globals__["_valid_quantities"]  # type: ignore[union-attr]
    assert 0 < len(memo) <= schema._QUANTITY_MEMO and "bogus" not in memo and "1 Gi" not in memo
    long_text = "1" * (schema._QUANTITY_MEMO_CHARS + 1)
    assert compiled.fits({"q": [long_text]}) and long_text not in memo
