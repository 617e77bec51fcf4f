"""The apiserver CEL library test tables, run through kubectl_dra.cel.

Rows live in ``tests/data/cel/apiserver_*.yaml`` (ported from k8s.io/apiserver
``pkg/cel/library/*_test.go``). Each row is compiled in the DRA selector environment
(which includes these libraries) and evaluated; the value, the runtime error or the
compile errors must be upstream's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.cel import check_expression, compile_expression, make_device_input
from kubectl_dra.cel.netaddr import parse_addr, parse_prefix
from kubectl_dra.errors import CELCompileError, CELRuntimeError
from kubectl_dra.quantity import Quantity
from kubectl_dra.semver import Version

DATA = Path(__file__).parent / "data" / "cel"
TABLES = ("ip", "cidr", "quantity", "semver", "format")
NO_DEVICE = make_device_input("", {"name": "d"})

#: rows that cel-cpp makes impossible to match (table/name -> the engine limitation)
ENGINE_LIMITS: dict[str, str] = {}


def _rows() -> list[Any]:
    out = []
    for table in TABLES:
        for row in yaml.safe_load((DATA / f"apiserver_{table}.yaml").read_text()):
            key = f"{table}/{row['name']}"
            marks = [pytest.mark.xfail(strict=True, reason=ENGINE_LIMITS[key])] \
                if key in ENGINE_LIMITS else []
            out.append(pytest.param(table, row, id=key, marks=marks))
    return out


def _same(actual: Any, expected: Any) -> bool:
    """Typed comparison: bool is not int; Kubernetes values by their upstream equality."""
    if isinstance(expected, dict) and len(expected) == 1:
        (kind, text), = expected.items()
        if kind == "ip":
            return getattr(actual, "t", None) == str(parse_addr(text))
        if kind == "cidr":
            return getattr(actual, "t", None) == str(parse_prefix(text))
        if kind == "quantity":
            return isinstance(actual, Quantity) and actual == Quantity.parse(text)
        if kind == "semver":
            return isinstance(actual, Version) and actual == Version.parse(text)
        if kind == "optional":
            return actual is None if text is None else actual == text
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    return actual == expected


@pytest.mark.parametrize("table,row", _rows())
def test_library_row(table: str, row: dict[str, Any]) -> None:
    expression = row["expression"]
    if "compileErrors" in row:
        with pytest.raises(CELCompileError) as err:
            compile_expression(expression, result="any")
        for pattern in row["compileErrors"]:
            assert re.search(pattern, str(err.value)), (pattern, str(err.value))
        return
    compiled = compile_expression(expression, result="any")
    assert check_expression(expression, result="any").reason != "Invalid"  # tables state no costs
    if "runtimeError" in row or "runtimeErrorPattern" in row:
        with pytest.raises(CELRuntimeError) as err:
            compiled.evaluate(NO_DEVICE)
        if "runtimeError" in row:
            assert str(err.value) == row["runtimeError"]
        else:
            assert re.search(row["runtimeErrorPattern"], str(err.value)), str(err.value)
        return
    actual = compiled.evaluate(NO_DEVICE)
    assert _same(actual, row["value"]), f"got {actual!r}, upstream {row['value']!r}"


COST_ROWS: list[dict[str, Any]] = yaml.safe_load((DATA / "apiserver_cost.yaml").read_text())
_TEST_SIZES = ("the row's cost comes from the cost test's own size estimator (12 for any string "
               "or bytes element); DRA's estimator has no size for literal list elements, so "
               "upstream's DRA environment estimates these as we do")
#: cost rows that do not apply to DRA selectors (row expression -> why)
COST_NOT_APPLICABLE: dict[str, str] = {
    row["expression"]: _TEST_SIZES for row in COST_ROWS
    if ("'012345678901'" in row["expression"] and row["cost"][0] != row["cost"][1])
    or ".join(" in row["expression"]}
_MIXED = ("expected type '", "mixed-type list literal: the DRA environment validates homogeneous "
                              "literals (the cost test's environment does not)")
#: cost rows outside the DRA environment: row id -> (the compile error they must give, why)
NOT_IN_DRA_ENV: dict[str, tuple[str, str]] = {
    **dict.fromkeys([f"TestSetsCost-{i}" for i in (149, 150, 151, 152, 155, 156, 161, 162, 163, 164, 167, 168,
                                                   174, 175, 176, 177, 181, 182)], _MIXED),
    "TestStringLibrary-120": ("undeclared reference to 'jsonpatch'",
                              "the jsonpatch library is not part of the DRA selector environment"),
}
#: cost rows that cel-cpp makes impossible to match (row expression -> the engine limitation)
COST_ENGINE_LIMITS: dict[str, str] = {}


def _cost_params() -> list[Any]:
    out = []
    for i, row in enumerate(COST_ROWS):
        expression = row["expression"]
        marks = []
        if expression in COST_NOT_APPLICABLE:
            marks.append(pytest.mark.skip(reason=COST_NOT_APPLICABLE[expression]))
        elif expression in COST_ENGINE_LIMITS:
            marks.append(pytest.mark.xfail(strict=True, reason=COST_ENGINE_LIMITS[expression]))
        out.append(pytest.param(row, f"{row['test']}-{i}", id=f"{row['test']}-{i}", marks=marks))
    return out


@pytest.mark.parametrize("row,row_id", _cost_params())
def test_cost_row(row: dict[str, Any], row_id: str) -> None:
    from kubectl_dra.cel import compiler
    from kubectl_dra.cel.cost import estimate

    pinned = NOT_IN_DRA_ENV.get(row_id)
    try:
        checked, _ = compiler._check(row["expression"], "any", True, True)
    except CELCompileError as err:
        if pinned is None:
            raise
        assert pinned[0] in str(err), str(err)
        pytest.skip(pinned[1])
    assert pinned is None, f"{row_id} is pinned as outside the DRA environment ({pinned}) but compiles"
    got = estimate(checked)
    assert [got.lo, got.hi] == row["cost"], f"estimated {got.lo}..{got.hi}, upstream {row['cost']}"


# --------------------------------------------------------------------------- optional results

FORMAT_ROWS: list[dict[str, Any]] = yaml.safe_load((DATA / "apiserver_format.yaml").read_text())


def _optional_rows() -> list[Any]:
    return [pytest.param(row, id=row["name"]) for row in FORMAT_ROWS
            if isinstance(row.get("value"), dict) and "optional" in row["value"]]


@pytest.mark.parametrize("row", _optional_rows())
def test_format_validate_is_a_real_optional(row: dict[str, Any]) -> None:
    """upstream's format.<name>().validate(s) is an optional_type(list(string)): it compares
    with optional.none(), and hasValue()/orValue()/value() work on it as on any optional."""
    expected = row["value"]["optional"]
    expression = row["expression"]
    assert compile_expression(f"({expression}) == optional.none()", result="any").evaluate(NO_DEVICE) \
        is (expected is None)
    assert compile_expression(f"({expression}).hasValue()", result="any").evaluate(NO_DEVICE) is (expected is not None)
    assert compile_expression(f"({expression}).orValue([])", result="any").evaluate(NO_DEVICE) == (expected or [])
    assert check_expression(f"({expression}).optMap(m, size(m)) == optional.none()", result="bool").reason \
        != "Invalid"


def test_format_named_is_a_real_optional() -> None:
    """format.named(n) is an optional_type(kubernetes.NamedFormat)."""
    for expression in ('format.named("uuid") == optional.of(format.uuid())',
                       'format.named("unknown") == optional.none()',
                       'format.named("uuid").orValue(format.byte()) == format.uuid()'):
        assert compile_expression(expression).matches(NO_DEVICE), expression


# --------------------------------------------------------------------------- lists of durations/timestamps

@pytest.mark.parametrize("expression", [
    # the Kubernetes lists library's sum/min/max on durations and timestamps
    '[duration("1s"), duration("2s")].sum() == duration("3s")',
    '[duration("1ns"), duration("2ns")].sum() == duration("3ns")',  # exact, not in microseconds
    '[duration("3s"), duration("1ms"), duration("2s")].min() == duration("1ms")',
    '[duration("3s"), duration("1ms"), duration("2s")].max() == duration("3s")',
    '[timestamp(5), timestamp(1), timestamp(3)].min() == timestamp(1)',
    '[timestamp(5), timestamp(1), timestamp(3)].max() == timestamp(5)',
    '[duration("1s")].filter(d, d > duration("1s")).sum() == duration("0s")',
    '[[duration("1s")].sum(), [duration("2s"), duration("4s")].max()].sum() == duration("5s")',
    # lists joined with + keep what they hold (the growth bound checks only their length)
    '([duration("1ns")] + [duration("2ns")]).sum() == duration("3ns")',
    '[timestamp(1)] + [timestamp(2)] == [timestamp(1), timestamp(2)]',
    '[optional.of(1)] + [optional.none()] == [optional.of(1), optional.none()]',
])
def test_lists_of_durations_and_timestamps(expression: str) -> None:
    assert compile_expression(expression).matches(NO_DEVICE)


@pytest.mark.parametrize("expression", ['[duration("1s")].filter(d, false).min()',
                                        '[timestamp(1)].filter(t, false).max()'])
def test_min_max_of_an_empty_list_of_durations_or_timestamps_is_an_error(expression: str) -> None:
    with pytest.raises(CELRuntimeError, match="called on empty list"):
        compile_expression(expression, result="any").evaluate(NO_DEVICE)


# --------------------------------------------------------------------------- zero values

@pytest.mark.parametrize("expression,present", [
    # cel-go's zero timestamp is Go's zero time (year 1), not the Unix epoch
    ("optional.ofNonZeroValue(timestamp(0)).hasValue()", True),
    ("optional.ofNonZeroValue(timestamp(0)) == optional.none()", False),
    ("optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00Z')).hasValue()", False),
    ("optional.ofNonZeroValue(timestamp(5)).value() == timestamp(5)", True),
    ("optional.ofNonZeroValue(duration('0s')).hasValue()", False),
])
def test_of_non_zero_value_of_timestamps_is_cel_gos(expression: str, present: bool) -> None:
    assert compile_expression(expression, result="any").evaluate(NO_DEVICE) is present


# --------------------------------------------------------------------------- error texts

@pytest.mark.parametrize("expression,text", [
    # parser.go SyntaxError: true/false/null as a field name
    ('device.attributes["dra.example.com"].true', "Syntax error: mismatched input 'true' expecting IDENTIFIER"),
    ("device.null == 1", "Syntax error: mismatched input 'null' expecting IDENTIFIER"),
    # validator.go: a constant pattern that does not compile (DRA's environment validates
    # regex literals; apiextensions' own table reports the regexp error at program instantiation)
    ('"a".matches(")")', "invalid matches argument"),
])
def test_compile_error_texts_are_cel_gos(expression: str, text: str) -> None:
    with pytest.raises(CELCompileError) as err:
        compile_expression(expression, result="any")
    assert text in str(err.value)


def test_list_index_error_text_is_cel_gos() -> None:
    """A device attribute list is a native CEL list upstream (getAttributeValue hands cel-go a
    Go slice), so its index error is cel-go's list.go text, not apiextensions' "index out of
    bounds" of its unstructured-list wrapper."""
    with pytest.raises(CELRuntimeError, match=r"index '5' out of range in list size '2'"):
        compile_expression("[1, 2][5] == 1").evaluate(NO_DEVICE)


def test_scientific_format_is_cel_gos_en_us_printer() -> None:
    """strings extension v2 (below v4) formats %e through golang.org/x/text's printer with
    cel-go's default locale en_US: narrow no-break spaces around the ×, superscript exponent."""
    value = compile_expression('"%e".format([3.14])', result="any").evaluate(NO_DEVICE)
    assert value == "3.140000\u202f\u00d7\u202f10\u2070\u2070"
