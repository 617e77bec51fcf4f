"""cel-go's extension test tables (strings, lists, sets, bindings, two-variable
comprehensions) at the version DRA pins, run through kubectl_dra.cel.

Rows live in ``tests/data/cel/celgo_ext.yaml``: each expression evaluates to true, or
fails with an error containing the row's ``error``. cel-go runs them in bare test
environments; a row whose premise the DRA selector environment does not share is
skipped with the reason (never counted as passing).
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

#: compile errors showing that a row's premise is not the DRA environment's -> why
NOT_IN_DRA_ENV = {
    "expected type '": "mixed-type literal: the DRA environment validates homogeneous literals "
                       "(cel-go's test environment does not)",
    "found no matching overload for 'reverse' applied to '(string)'":
        "string reverse() is strings extension v3; the DRA environment has v2",
    "undeclared reference to 'ExampleType'": "needs a protobuf type of cel-go's test suite",
}


def _params() -> list[Any]:
    return [pytest.param(table, row, id=f"{table}-{i}")
            for table, rows in TABLES.items() for i, row in enumerate(rows)]


@pytest.mark.parametrize("table,row", _params())
def test_celgo_row(table: str, row: dict[str, Any]) -> None:
    if row.get("needsVariables"):
        pytest.skip("declares variables outside the DRA environment")
    expected_error = row.get("error")
    try:
        compiled = compile_expression(row["expression"], result="any")
    except CELCompileError as err:
        text = str(err)
        reason = next((why for needle, why in NOT_IN_DRA_ENV.items() if needle in text), None)
        if reason is not None:
            pytest.skip(reason)
        if row.get("parseOnly") and expected_error == "no such overload":
            # cel-go parses only; DRA type-checks every expression, so the wrong argument
            # types are found at compile time
            assert "found no matching overload" in text or "undeclared reference" in text, text
            return
        assert expected_error is not None and expected_error in text, text
        return
    if expected_error is not None:
        with pytest.raises(CELRuntimeError) as err:
            compiled.evaluate(NO_DEVICE)
        assert expected_error in str(err.value)
        return
    assert compiled.evaluate(NO_DEVICE) is True
