"""The apiextensions TestValidationExpressions rows whose fields map onto device attributes.

Rows live in ``tests/data/cel/apiextensions_validation.yaml`` (ported from
k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/cel/validation_test.go``). Each
group's ``self`` fields become attributes of one device; every rule is validated in the
DRA selector environment (NewExpressions, all gates on) and evaluated against that device.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.cel import check_expression, compile_expression, make_device_input
from kubectl_dra.errors import CELRuntimeError

DATA = Path(__file__).parent / "data" / "cel" / "apiextensions_validation.yaml"
DOMAIN = "dra.example.com"
_SELF_FIELD = re.compile(r"(?<![\w.])self\.")

#: rows that cel-cpp makes impossible to match (group/rule -> the engine limitation)
ENGINE_LIMITS: dict[str, str] = {}


def as_selector(rule: str) -> str:
    """Read a rule's ``self.<field>`` as the device attribute ``<field>`` of DOMAIN."""
    return _SELF_FIELD.sub(f'device.attributes["{DOMAIN}"].', rule)


def _params() -> list[Any]:
    out = []
    for group in yaml.safe_load(DATA.read_text()):
        device = {"name": "dev", "attributes": group["attributes"]}
        for row in group["rows"]:
            rule = row.get("valid") or row["rule"]
            key = f"{group['group']}/{rule}"
            marks = [pytest.mark.xfail(strict=True, reason=ENGINE_LIMITS[key])] \
                if key in ENGINE_LIMITS else []
            out.append(pytest.param(device, rule, row, id=key, marks=marks))
    return out


@pytest.mark.parametrize("device,rule,row", _params())
def test_validation_row(device: dict[str, Any], rule: str, row: dict[str, Any]) -> None:
    expression = as_selector(rule)
    checked = check_expression(expression)
    if "compileError" in row:
        expected = row.get("draCompileError", row["compileError"])
        assert checked.reason == "Invalid", checked
        assert any(expected in err for err in checked.errors), checked.errors
        return
    assert checked.reason != "Invalid", checked.errors  # the table states no costs
    compiled = compile_expression(expression)
    dev = make_device_input(DOMAIN, device)
    if "runtimeError" in row:
        with pytest.raises(CELRuntimeError) as err:
            compiled.matches(dev)
        assert row.get("draRuntimeError", row["runtimeError"]) in str(err.value), str(err.value)
        return
    assert compiled.matches(dev) is True
