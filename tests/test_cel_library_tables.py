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
#: compile errors that make a cost row inapplicable to the DRA environment
_NOT_IN_DRA_ENV = {
    "expected type '": "mixed-type list literal: the DRA environment validates homogeneous "
                       "literals (the cost test's environment does not)",
    "undeclared reference to 'jsonpatch'": "the jsonpatch library is not part of the DRA "
                                           "selector environment",
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
        out.append(pytest.param(row, id=f"{row['test']}-{i}", marks=marks))
    return out


@pytest.mark.parametrize("row", _cost_params())
def test_cost_row(row: dict[str, Any]) -> None:
    from kubectl_dra.cel import compiler
    from kubectl_dra.cel.cost import estimate

    try:
        checked, _ = compiler._check(row["expression"], "any", True, True)
    except CELCompileError as err:
        reason = next((why for needle, why in _NOT_IN_DRA_ENV.items() if needle in str(err)), None)
        if reason is None:
            raise
        pytest.skip(reason)
    got = estimate(checked)
    assert [got.lo, got.hi] == row["cost"], f"estimated {got.lo}..{got.hi}, upstream {row['cost']}"
