"""cel-go's extension test tables (strings, lists, sets, bindings, two-variable
comprehensions) at the version DRA pins, run through kubectl_dra.cel.

Rows live in ``tests/data/cel/celgo_ext.yaml``: each expression evaluates to true, or
fails with an error containing the row's ``error``. cel-go runs them in bare test
environments; a row whose premise the DRA selector environment does not share is
pinned by its id in :data:`NOT_IN_DRA_ENV` with the compile error it must give, and skipped
with the reason (never counted as passing; a pinned row that compiles, or fails another way,
fails).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.cel import compile_expression, make_device_input
from kubectl_dra.errors import CELCompileError, CELRuntimeError

DATA = Path(__file__).parent / "data" / "cel" / "celgo_ext.yaml"
TABLES: dict[str, list[dict[str, Any]]] = yaml.safe_load(DATA.read_text())
NO_DEVICE = make_device_input("", {"name": "d"})

_MIXED = ("expected type '", "mixed-type literal: the DRA environment validates homogeneous literals "
                              "(cel-go's test environment does not)")
_REVERSE = ("found no matching overload for 'reverse' applied to 'string.()'",
            "string reverse() is strings extension v3; the DRA environment has v2")
_TEST_TYPE = ("undeclared reference to 'ExampleType'", "needs a protobuf type of cel-go's test suite")
#: rows whose premise is not the DRA environment's: row id -> (the compile error they give, why)
NOT_IN_DRA_ENV: dict[str, tuple[str, str]] = {
    **dict.fromkeys(["lists-18", "lists-19", "lists-20", "lists-21", "lists-26", "lists-38", "lists-39",
                     "sets-9", "sets-10", "sets-11", "sets-12", "sets-13", "sets-16", "sets-17", "sets-22",
                     "sets-23", "sets-24", "sets-25", "sets-28", "sets-29", "sets-35", "sets-36", "sets-37",
                     "sets-38", "sets-42", "sets-43", "comprehensions_runtime_errors-1"], _MIXED),
    **dict.fromkeys(["strings-59", "strings-60", "strings-61", "strings-62", "strings-63", "strings-64",
                     "comprehensions-32", "comprehensions-33"], _REVERSE),
    **dict.fromkeys(["lists-33", "lists-41"], _TEST_TYPE),
}


def _params() -> list[Any]:
    return [pytest.param(table, row, f"{table}-{i}", id=f"{table}-{i}")
            for table, rows in TABLES.items() for i, row in enumerate(rows)]


@pytest.mark.parametrize("table,row,row_id", _params())
def test_celgo_row(table: str, row: dict[str, Any], row_id: str) -> None:
    if row.get("needsVariables"):
        pytest.skip("declares variables outside the DRA environment")
    expected_error = row.get("error")
    pinned = NOT_IN_DRA_ENV.get(row_id)
    try:
        compiled = compile_expression(row["expression"], result="any")
    except CELCompileError as err:
        text = str(err)
        if pinned is not None:
            assert pinned[0] in text, text
            pytest.skip(pinned[1])
        if row.get("parseOnly") and expected_error == "no such overload":
            # cel-go parses only; DRA type-checks every expression, so the wrong argument
            # types are found at compile time
            assert "found no matching overload" in text or "undeclared reference" in text, text
            return
        assert expected_error is not None and expected_error in text, text
        return
    assert pinned is None, f"{row_id} is pinned as outside the DRA environment ({pinned}) but compiles"
    if expected_error is not None:
        with pytest.raises(CELRuntimeError) as err:
            compiled.evaluate(NO_DEVICE)
        assert expected_error in str(err.value)
        return
    assert compiled.evaluate(NO_DEVICE) is True


FORMAT_ROWS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "cel" / "celgo_format.yaml").read_text())
#: string.format() rows the engine binding makes impossible (row name -> the limitation).
#: format() runs in Python (kubectl_dra.cel.formatting), so it sees what cel-expr-python
#: hands over; this value does not survive that hand-over. (Durations would not either: the
#: rewriter hands a duration argument over as its exact text.)
FORMAT_ENGINE_LIMITS: dict[str, str] = {
    "map support (all key types)":
        "engine: cel-expr-python passes CEL maps as Python dicts, where the keys 1 and true are "
        "the same key, so one entry is lost before formatting",
}


def _format_outcome(row: dict[str, Any]) -> bool:
    """Whether a format row currently gives upstream's outcome (used to mark the gaps)."""
    try:
        value = compile_expression(row["expression"], result="any").evaluate(NO_DEVICE)
    except (CELCompileError, CELRuntimeError) as err:
        return "error" in row and row["error"] in str(err)
    return "error" not in row and value == row["output"]


def _format_params() -> list[Any]:
    out = []
    for i, row in enumerate(FORMAT_ROWS):
        marks: list[Any] = []
        if row.get("needsVariables"):
            marks.append(pytest.mark.skip(reason="declares variables outside the DRA environment"))
        elif row.get("locale") not in (None, "en_US"):
            marks.append(pytest.mark.skip(reason="a locale option the DRA environment does not set"))
        elif "TestAllTypes" in row["expression"]:
            marks.append(pytest.mark.skip(reason="needs a protobuf type of cel-go's test suite"))
        elif row["name"] in FORMAT_ENGINE_LIMITS:
            marks.append(pytest.mark.xfail(strict=True, reason=FORMAT_ENGINE_LIMITS[row["name"]]))
        out.append(pytest.param(row, id=f"format-{i}-{row['name']}", marks=marks))
    return out


@pytest.mark.parametrize("row", _format_params())
def test_celgo_format_row(row: dict[str, Any]) -> None:
    assert _format_outcome(row), row
