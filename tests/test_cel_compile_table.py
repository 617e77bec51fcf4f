"""Upstream's DRA CEL conformance tables, run against our environments.

The rows live in ``tests/data/cel/``: ``dra_compile_test.yaml`` (TestCEL of
k8s.io/dynamic-resource-allocation ``cel/compile_test.go``: validation -- compile error or
estimated cost -- then evaluation against the row's device) and
``dra_feature_combinations.yaml`` (TestCELFeatureCombinations: which feature-dependent
expressions compile in each environment and gate combination, and match).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.cel import check_expression, compile_expression, make_device_input
from kubectl_dra.errors import CELCompileError, CELRuntimeError

DATA = Path(__file__).parent / "data" / "cel"
ROWS: list[dict[str, Any]] = yaml.safe_load((DATA / "dra_compile_test.yaml").read_text())
COMBINATIONS: dict[str, Any] = yaml.safe_load((DATA / "dra_feature_combinations.yaml").read_text())

# Rows whose outcome knowingly differs from upstream: none.
DIVERGENT: dict[str, str] = {}


def _params() -> list[Any]:
    """One test per row and, where upstream runs both, per DRAListTypeAttributes setting."""
    out = []
    for row in ROWS:
        settings = [row["listTypeAttributes"]] if "listTypeAttributes" in row else [False, True]
        for list_types in settings:
            marks = [pytest.mark.xfail(strict=True, reason=DIVERGENT[row["name"]])] \
                if row["name"] in DIVERGENT else []
            out.append(pytest.param(row, list_types, marks=marks,
                                    id=f"{row['name']}-list-type-attributes={list_types}"))
    return out


def _device(driver: str, attributes: Any, capacity: Any, allow_multi: Any) -> Any:
    dev: dict[str, Any] = {"name": "dev", "attributes": attributes or {}, "capacity": capacity or {}}
    if allow_multi is not None:
        dev["allowMultipleAllocations"] = allow_multi
    return make_device_input(driver, dev)


def _check(expression: str, env: str, consumable: bool, list_types: bool) -> Any:
    if env == "NewExpressions":
        return check_expression(expression, consumable_capacity=consumable,
                                list_type_attributes=list_types)
    return check_expression(expression, stored=True)


@pytest.mark.parametrize("row,list_types", _params())
def test_upstream_row(row: dict[str, Any], list_types: bool) -> None:
    env = row.get("env", "StoredExpressions")
    checked = _check(row["expression"], env, bool(row.get("consumableCapacity")), list_types)
    if "compileError" in row:
        assert checked.reason == "Invalid", checked
        assert row["compileError"] in checked.errors[0]
        if env == "StoredExpressions":
            with pytest.raises(CELCompileError) as err:
                compile_expression(row["expression"])
            assert row["compileError"] in str(err.value)
        return
    assert checked.errors == [] or checked.reason == "Forbidden", checked
    assert checked.cost == row["cost"], f"estimated cost {checked.cost}, upstream {row['cost']}"
    compiled = compile_expression(row["expression"])
    assert compiled.cost == row["cost"]
    device = _device(row.get("driver", ""), row.get("attributes"), row.get("capacity"),
                     row.get("allowMultipleAllocations"))
    if "matchError" in row:
        with pytest.raises(CELRuntimeError) as err:
            compiled.matches(device)
        assert row["matchError"] in str(err.value)
        return
    assert compiled.matches(device) is row["match"]


def _combination_params() -> list[Any]:
    return [pytest.param(env_name, expr_name, id=f"{env_name}/{expr_name}")
            for env_name in COMBINATIONS["environments"]
            for expr_name in COMBINATIONS["expressions"]]


@pytest.mark.parametrize("env_name,expr_name", _combination_params())
def test_feature_combination(env_name: str, expr_name: str) -> None:
    env = COMBINATIONS["environments"][env_name]
    case = COMBINATIONS["expressions"][expr_name]
    gates = set(env["gates"])
    stored = env["env"] == "StoredExpressions"
    expect_compile = stored or set(case["needs"]) <= gates
    checked = _check(case["expression"], env["env"], "consumableCapacity" in gates,
                     "listTypeAttributes" in gates)
    assert checked.ok is expect_compile, checked
    if expect_compile:
        dev = case["device"]
        device = _device(dev["driver"], dev.get("attributes"), dev.get("capacity"),
                         dev.get("allowMultipleAllocations"))
        assert compile_expression(case["expression"]).matches(device) is True


def test_expensive_is_rejected_by_validation() -> None:
    expensive = next(r for r in ROWS if r["name"] == "expensive")["expression"]
    result = check_expression(expensive, stored=True)
    assert result.reason == "Forbidden"
    assert result.errors == ["too complex, exceeds cost limit"]
