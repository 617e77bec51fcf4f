"""Upstream's DRA CEL conformance table, run against our environment.

The rows are the test data of k8s.io/dynamic-resource-allocation ``cel/compile_test.go``
(expression, device, expected compile error / match error / match, expected cost),
re-expressed as API dicts. Each row checks: validation (``check_expression``: compile
error or estimated cost), then evaluation against the device (``compile_expression``
+ ``matches``). Rows that need a specific feature-gated "new expressions" environment
are checked through ``check_expression`` with those gates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kubectl_dra.cel import check_expression, compile_expression, make_device_input
from kubectl_dra.errors import CELCompileError, CELRuntimeError

LIST_MAX = 64  # max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice)
DRV = "dra.example.com"


@dataclass
class Case:
    name: str
    expression: str
    driver: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, Any] = field(default_factory=dict)
    allow_multi: bool | None = None
    compile_error: str = ""
    match_error: str = ""
    match: bool = False
    cost: int = 0
    #: gates of a NewExpressions env (None: StoredExpressions, every feature on)
    gates: dict[str, bool] | None = None


def a(**kw: Any) -> dict[str, Any]:
    """One attribute value."""
    return kw


def cap(value: str) -> dict[str, Any]:
    return {"value": value}


def _long_list(n: int) -> list[str]:
    return [f"value-{i}" for i in range(n)]


def _expensive_attrs() -> dict[str, Any]:
    out = {}
    for i in range(32):
        suffix = f"-{i}"
        out[f"{DRV}/" + "x" * (32 - len(suffix)) + suffix] = a(string="abc")
    return out


ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""
SEVEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
EXPENSIVE = (
    f"{SEVEN}.all(x, {SEVEN}.all(y, {SEVEN}.all(z, {SEVEN}.all(z2, {SEVEN}.all(z3, "
    f"{SEVEN}.all(z4, {SEVEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))")
ATTR = 'device.attributes["dra.example.com"]'

CASES = [
    Case("true", "true", match=True),
    Case("false", "false", match=False),
    Case("syntax-error", "?!", compile_error="Syntax error"),
    Case("type-error", "1", compile_error="must evaluate to bool or the unknown type, not int"),
    Case("runtime-error-lookup-identifier",
         'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
         match_error="no such key: noSuchAttr", cost=6),
    Case("runtime-error-lookup-map",
         'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
         match_error="no such key: noSuchAttr", cost=6),
    Case("domain-check-negative", '"no-such-domain" in device.attributes', match=False, cost=3),
    Case("domain-check-positive", '"dra.example.com" in device.attributes',
         attributes={"dra.example.com/something": a(bool=True)}, match=True, cost=3),
    Case("empty-driver-name", 'device.driver == ""', match=True, cost=2),
    Case("real-driver-name", 'device.driver == "dra.example.com"', driver=DRV, match=True, cost=4),
    Case("driver-name-qualifier", f"{ATTR}.name", driver=DRV,
         attributes={"name": a(bool=True)}, match=True, cost=4),
    Case("driver-name-qualifier-map-lookup", f'{ATTR}["name"]', driver=DRV,
         attributes={"name": a(bool=True)}, match=True, cost=4),
    Case("bind", f"cel.bind(dra, {ATTR}, dra.name)", driver=DRV,
         attributes={"name": a(bool=True)}, match=True, cost=15),
    Case("qualified-attribute-name", 'device.attributes["other.example.com"].name', driver=DRV,
         attributes={"other.example.com/name": a(bool=True)}, match=True, cost=4),
    Case("bool", f"{ATTR}.name", driver=DRV, attributes={"name": a(bool=True)}, match=True, cost=4),
    Case("int", f"{ATTR}.name > 0", driver=DRV, attributes={"name": a(int=1)}, match=True, cost=5),
    Case("string", f'{ATTR}.name == "fish"', driver=DRV, attributes={"name": a(string="fish")},
         match=True, cost=5),
    Case("macro-exists-on-int", f"{ATTR}.name.exists(x, x > 0)", driver=DRV,
         attributes={"name": a(int=1)}, match_error="got 'types.Int', expected iterable type",
         cost=5 + 6 * LIST_MAX),
    Case("macro-exists-on-bool", f"{ATTR}.name.exists(x, x == true)", driver=DRV,
         attributes={"name": a(bool=True)}, match_error="got 'types.Bool', expected iterable type",
         cost=5 + 6 * LIST_MAX),
    Case("macro-exists-on-string", f'{ATTR}.name.exists(x, x == "fish")', driver=DRV,
         attributes={"name": a(string="fish")},
         match_error="got 'types.String', expected iterable type", cost=5 + 6 * LIST_MAX),
    Case("list-result-type-causes-match-error", f"{ATTR}.names", driver=DRV,
         attributes={"names": a(strings=["fish", "bird"])},
         match_error="CEL result of type list could not be converted to bool", cost=4),
    Case("includes-function-can-evaluate", f'{ATTR}.name.includes("fish")', driver=DRV,
         attributes={"name": a(strings=["fish", "bird"])}, match=True, cost=52),
    Case("list-of-bool", f"{ATTR}.names.size() == 2", driver=DRV,
         attributes={"names": a(bools=[True, False])}, match=True, cost=6),
    Case("list-of-int", f"{ATTR}.names.size() == 2", driver=DRV,
         attributes={"names": a(ints=[1, 2])}, match=True, cost=6),
    Case("list-of-string", f"{ATTR}.names.size() == 2", driver=DRV,
         attributes={"names": a(strings=["fish", "bird"])}, match=True, cost=6),
    Case("list-of-semver", f"{ATTR}.names.size() == 2", driver=DRV,
         attributes={"names": a(versions=["1.0.0", "2.0.0"])}, match=True, cost=6),
    Case("macro-on-list-of-int", f"{ATTR}.names.exists(x, x > 0)", driver=DRV,
         attributes={"names": a(ints=[1, 2])}, match=True, cost=5 + 6 * LIST_MAX),
    Case("macro-on-list-of-string", f'{ATTR}.names.all(x, x != "")', driver=DRV,
         attributes={"names": a(strings=["fish", "bird"])}, match=True, cost=5 + 4 * LIST_MAX),
    Case("macro-on-list-of-semver", f'{ATTR}.names.all(x, x.isGreaterThan(semver("0.0.1")))',
         driver=DRV, attributes={"names": a(versions=["1.0.0", "2.0.0"])}, match=True,
         cost=5 + 6 * LIST_MAX),
    Case("includes-function-compilation-error", f'{ATTR}.attr.includes("fish")', driver=DRV,
         compile_error="undeclared reference to 'includes'",
         gates={"consumable_capacity": False, "list_type_attributes": False}),
    Case("includes-function-compilation-and-eval-success", f'{ATTR}.attr.includes("fish")',
         driver=DRV, attributes={"attr": a(string="fish")}, match=True, cost=52,
         gates={"consumable_capacity": False, "list_type_attributes": True}),
    Case("includes-function-on-bool-scalar-positive", f"{ATTR}.name.includes(true)", driver=DRV,
         attributes={"name": a(bool=True)}, match=True, cost=52),
    Case("includes-function-on-bool-scalar-negative", f"{ATTR}.name.includes(true)", driver=DRV,
         attributes={"name": a(bool=False)}, match=False, cost=52),
    Case("includes-function-on-bool-list-positive", f"{ATTR}.name.includes(true)", driver=DRV,
         attributes={"name": a(bools=[True, False])}, match=True, cost=52),
    Case("includes-function-on-bool-list-negative", f"{ATTR}.name.includes(false)", driver=DRV,
         attributes={"name": a(bools=[True, True])}, match=False, cost=52),
    Case("includes-function-on-int-scalar-positive", f"{ATTR}.name.includes(1)", driver=DRV,
         attributes={"name": a(int=1)}, match=True, cost=52),
    Case("includes-function-on-int-scalar-negative", f"{ATTR}.name.includes(1)", driver=DRV,
         attributes={"name": a(int=2)}, match=False, cost=52),
    Case("includes-function-on-int-list-positive", f"{ATTR}.name.includes(1)", driver=DRV,
         attributes={"name": a(ints=[1, 2])}, match=True, cost=52),
    Case("includes-function-on-int-list-negative", f"{ATTR}.name.includes(3)", driver=DRV,
         attributes={"name": a(ints=[1, 2])}, match=False, cost=52),
    Case("includes-function-on-string-scalar-positive", f'{ATTR}.name.includes("fish")', driver=DRV,
         attributes={"name": a(string="fish")}, match=True, cost=52),
    Case("includes-function-on-string-scalar-negative", f'{ATTR}.name.includes("bird")', driver=DRV,
         attributes={"name": a(string="fish")}, match=False, cost=52),
    Case("includes-function-on-string-list-positive", f'{ATTR}.name.includes("fish")', driver=DRV,
         attributes={"name": a(strings=["fish", "bird"])}, match=True, cost=52),
    Case("includes-function-on-string-list-negative", f'{ATTR}.name.includes("cat")', driver=DRV,
         attributes={"name": a(strings=["fish", "bird"])}, match=False, cost=52),
    Case("includes-function-on-semver-scalar-positive", f'{ATTR}.name.includes(semver("1.0.0"))',
         driver=DRV, attributes={"name": a(version="1.0.0")}, match=True, cost=53),
    Case("includes-function-on-semver-scalar-negative", f'{ATTR}.name.includes(semver("2.0.0"))',
         driver=DRV, attributes={"name": a(version="1.0.0")}, match=False, cost=53),
    Case("includes-function-on-semver-list-positive", f'{ATTR}.name.includes(semver("1.0.0"))',
         driver=DRV, attributes={"name": a(versions=["1.0.0", "2.0.0"])}, match=True, cost=53),
    Case("includes-function-on-semver-list-negative", f'{ATTR}.name.includes(semver("3.0.0"))',
         driver=DRV, attributes={"name": a(versions=["1.0.0", "2.0.0"])}, match=False, cost=53),
    Case("includes-function-on-very-long-list-positive", f'{ATTR}.name.includes("value-48")',
         driver=DRV, attributes={"name": a(strings=_long_list(48))}, match=False, cost=52),
    Case("includes-function-on-very-long-list-runtime-error", f'{ATTR}.name.includes("value-49")',
         driver=DRV, attributes={"name": a(strings=_long_list(49))},
         match_error="'includes' function cannot be applied to lists longer than 48 values", cost=52),
    Case("in-operator-on-list", f"1 in {ATTR}.names", driver=DRV,
         attributes={"names": a(ints=[1, 2, 3])}, match=True, cost=4 + 64),
    Case("version", f'{ATTR}.name.isGreaterThan(semver("0.0.1"))', driver=DRV,
         attributes={"name": a(version="1.0.0")}, match=True, cost=6),
    Case("version_v", f'{ATTR}.name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
         driver=DRV, attributes={"name": a(version="1.0.0")}, match=True, cost=7),
    Case("macro-exists-on-version", f'{ATTR}.name.exists(x, x.isGreaterThan(semver("0.0.1")))',
         driver=DRV, attributes={"name": a(version="1.0.0")},
         match_error="got 'cel.Semver', expected iterable type", cost=5 + 7 * LIST_MAX),
    Case("quantity", 'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
         driver=DRV, capacity={"name": cap("1Mi")}, match=True, cost=6),
    Case("check-positive",
         '"name" in device.capacity["dra.example.com"] && '
         'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
         driver=DRV, capacity={"name": cap("1Mi")}, match=True, cost=10),
    Case("check-negative",
         '!("name" in device.capacity["dra.example.com"]) || '
         'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
         match=True, cost=11),
    Case("all", ALL, driver=DRV, attributes={
        "bool": a(bool=True), "int": a(int=1), "string": a(string="fish"),
        "version": a(version="1.0.0")}, capacity={"quantity": cap("1Mi")}, match=True, cost=52),
    Case("many", f"{ATTR}.a && {ATTR}.b && {ATTR}.c", driver=DRV,
         attributes={"a": a(bool=True), "b": a(bool=True), "c": a(bool=True)}, match=True, cost=12),
    Case("check_attribute_domains", 'device.attributes.exists_one(x, x == "dra.example.com")',
         driver=DRV, attributes={"services": a(string="some_example_value")}, match=True, cost=164),
    Case("check_attribute_ids", f'{ATTR}.exists_one(x, x == "services")', driver=DRV,
         attributes={"services": a(string="some_example_value")}, match=True, cost=133),
    Case("split_attribute", f'{ATTR}.services.split("example").size() >= 2', driver=DRV,
         attributes={"services": a(string="some_example_value")}, match=True, cost=19),
    Case("regexp_attribute", f'{ATTR}.services.matches("[^a]?sym")', driver=DRV,
         attributes={"services": a(string="asymetric")}, match=True, cost=18),
    Case("check_capacity_domains", 'device.capacity.exists_one(x, x == "dra.example.com")',
         driver=DRV, capacity={"memory": cap("1Mi")}, match=True, cost=164),
    Case("check_capacity_ids", 'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
         driver=DRV, capacity={"memory": cap("1Mi")}, match=True, cost=133),
    Case("expensive", EXPENSIVE, driver=DRV, attributes=_expensive_attrs(),
         match_error="actual cost limit exceeded", cost=85555551),
    Case("allow_multiple_allocations", "device.allowMultipleAllocations == true", driver=DRV,
         allow_multi=True, match=True, cost=3),
    Case("allow_multiple_allocations_default", "device.allowMultipleAllocations == false",
         driver=DRV, allow_multi=None, match=True, cost=3),
    Case("allow_multiple_allocations_false", "device.allowMultipleAllocations == false",
         driver=DRV, allow_multi=False, match=True, cost=3),
    Case("allow_multiple_allocations_new", "device.allowMultipleAllocations == false",
         driver=DRV, allow_multi=False, match=True, cost=3,
         gates={"consumable_capacity": True, "list_type_attributes": False}),
    Case("allow_multiple_allocations_disabled", "device.allowMultipleAllocations == false",
         driver=DRV, compile_error="undefined field 'allowMultipleAllocations'",
         gates={"consumable_capacity": False, "list_type_attributes": False}),
]

# Rows whose outcome knowingly differs from upstream (none at the moment; see
# /work/shared/spec/cel.md section 5 for the divergences this table does not reach).
DIVERGENT: dict[str, str] = {}


def _params() -> list[Any]:
    out = []
    for case in CASES:
        marks = []
        if case.name in DIVERGENT:
            marks.append(pytest.mark.xfail(strict=True, reason=DIVERGENT[case.name]))
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


def _device(case: Case) -> Any:
    dev: dict[str, Any] = {"name": "dev", "attributes": case.attributes, "capacity": case.capacity}
    if case.allow_multi is not None:
        dev["allowMultipleAllocations"] = case.allow_multi
    return make_device_input(case.driver, dev)


@pytest.mark.parametrize("case", _params())
def test_upstream_case(case: Case) -> None:
    gates = case.gates or {"stored": True}
    checked = check_expression(case.expression, **gates)
    if case.compile_error:
        assert checked.reason == "Invalid", checked
        assert case.compile_error in checked.errors[0]
        if case.gates is None:
            with pytest.raises(CELCompileError) as err:
                compile_expression(case.expression)
            assert case.compile_error in str(err.value)
        return
    assert checked.errors == [] or checked.reason == "Forbidden", checked
    assert checked.cost == case.cost, f"estimated cost {checked.cost}, upstream {case.cost}"
    compiled = compile_expression(case.expression)
    assert compiled.cost == case.cost
    device = _device(case)
    if case.match_error:
        with pytest.raises(CELRuntimeError) as err:
            compiled.matches(device)
        assert case.match_error in str(err.value)
        return
    assert compiled.matches(device) is case.match


def test_expensive_is_rejected_by_validation() -> None:
    result = check_expression(EXPENSIVE, stored=True)
    assert result.reason == "Forbidden"
    assert result.errors == ["too complex, exceeds cost limit"]
