"""DRA CEL runtime: device conversion, selector evaluation, errors and rewrites."""

from __future__ import annotations

import pytest

from kubectl_dra.cel import (
    MAX_COST,
    MAX_LENGTH,
    CompiledExpression,
    check_expression,
    compile_expression,
    make_device_input,
)
from kubectl_dra.errors import CELCompileError, CELRuntimeError

DRIVER = "gpu.example.com"


@pytest.fixture(scope="module")
def device():
    return make_device_input(DRIVER, {
        "name": "gpu-0",
        "attributes": {
            "model": {"string": "H100"},
            "index": {"int": 3},
            "healthy": {"bool": True},
            "tags": {"strings": ["a", "b"]},
            "numa.example.com/node": {"int": 1},
        },
        "capacity": {"memory": {"value": "80Gi"}, "numa.example.com/cores": {"value": "16"}},
        "allowMultipleAllocations": True,
    })


@pytest.mark.parametrize("expression,expected", [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].model == "H100"', True),
    ('device.attributes["gpu.example.com"]["index"] > 2', True),
    ('device.attributes["gpu.example.com"].healthy', True),
    ('device.attributes["numa.example.com"].node == 1', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) >= 0', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("16Gi"))', False),
    ('device.capacity["numa.example.com"].cores == quantity("16")', True),
    ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
    ('"numa.example.com" in device.attributes', True),
    ('"other.example.com" in device.attributes', False),
    ('device.attributes["other.example.com"].size() == 0', True),
    ('has(device.attributes.anything)', True),
    ('has(device.attributes["gpu.example.com"].nope)', False),
    ('device.attributes["gpu.example.com"].tags.includes("b")', True),
    ('device.attributes["gpu.example.com"].tags.includes("c")', False),
    ('device.attributes["gpu.example.com"].model.includes("H100")', True),
    ('device.attributes["gpu.example.com"].index.includes("3")', False),
    ('device.allowMultipleAllocations', True),
    ('cel.bind(g, device.attributes["gpu.example.com"], g.model == "H100" && g.index == 3)', True),
    ('device.attributes["gpu.example.com"].tags.exists(t, t == "a")', True),
    ('device.attributes["gpu.example.com"].?missing.orValue("x") == "x"', True),
    ('device.attributes.?nodomain.hasValue()', True),
    ('device.attributes[?"no.domain"].orValue({"a": 1}).size() == 0', True),
    ('device.attributes[?"numa.example.com"].orValue({}).node == 1', True),
    ('[1, 2].exists(i, device.attributes["gpu.example.com"].index == i + 1)', True),
])
def test_selector_matches(device, expression, expected):
    assert compile_expression(expression).matches(device) is expected


@pytest.mark.parametrize("expression,message", [
    ('device.attributes["gpu.example.com"].nope', "no such key: nope"),
    ('device.attributes["other.example.com"].nope', "no such key: nope"),
    ('device.attributes["gpu.example.com"].tags', "CEL result of type list could not be converted to bool"),
    ('device.attributes["gpu.example.com"].index.exists(x, x > 0)', "got 'types.Int', expected iterable type"),
    ('device.attributes["gpu.example.com"].model.all(x, x != "")', "got 'types.String', expected iterable type"),
    ('sign(quantity(device.attributes["gpu.example.com"].model)) == 0', "quantities must match"),
    ('1 / (device.attributes["gpu.example.com"].index - 3) == 1', "division by zero"),
])
def test_runtime_errors(device, expression, message):
    with pytest.raises(CELRuntimeError) as err:
        compile_expression(expression).matches(device)
    assert message in str(err.value)


def test_no_such_key_has_upstream_hint(device):
    with pytest.raises(CELRuntimeError) as err:
        compile_expression('device.attributes["gpu.example.com"].nope').matches(device)
    assert "consider using CEL optional chaining" in str(err.value)


@pytest.mark.parametrize("expression,message", [
    ("?!", "Syntax error"),
    ("1", "must evaluate to bool or the unknown type, not int"),
    ('device.driver', "must evaluate to bool or the unknown type, not string"),
    ("device.foo == 1", "undefined field 'foo'"),
    ("nosuch == 1", "undeclared reference to 'nosuch'"),
])
def test_compile_errors(expression, message):
    with pytest.raises(CELCompileError) as err:
        compile_expression(expression)
    assert message in str(err.value)


def test_compile_error_has_position():
    with pytest.raises(CELCompileError) as err:
        compile_expression("device.foo == 1")
    text = str(err.value)
    assert text.startswith("compilation failed: ERROR: <input>:1:7: undefined field 'foo'")
    assert "INVALID_ARGUMENT" not in text and "not found in struct" not in text


def test_any_result_and_evaluate(device):
    compiled = compile_expression('device.attributes["gpu.example.com"].tags', result="any")
    assert isinstance(compiled, CompiledExpression)
    assert compiled.evaluate(device) == ["a", "b"]
    assert compile_expression('device.attributes["gpu.example.com"].index + 1', result="any").evaluate(device) == 4
    q = compile_expression('device.capacity["gpu.example.com"].memory.add(quantity("1Gi"))',
                           result="any").evaluate(device)
    from kubectl_dra.quantity import Quantity

    assert q == Quantity.parse("81Gi")


def test_compile_is_cached():
    a = compile_expression('device.driver == "x"')
    assert compile_expression('device.driver == "x"') is a


def test_broken_version_fails_every_selector():
    broken = make_device_input(DRIVER, {"name": "d", "attributes": {"v": {"version": "not-a-version"}}})
    with pytest.raises(CELRuntimeError) as err:
        compile_expression("true").matches(broken)
    assert "attribute v" in str(err.value)


def test_unqualified_names_use_driver_domain():
    dev = make_device_input("drv.example.com", {"name": "d", "attributes": {"x": {"int": 1}}})
    assert compile_expression('device.attributes["drv.example.com"].x == 1').matches(dev)
    assert compile_expression('device.driver == "drv.example.com"').matches(dev)
    assert compile_expression("device.allowMultipleAllocations == false").matches(dev)


def test_check_expression_limits():
    assert check_expression("true").ok
    too_long = check_expression("true || " * (MAX_LENGTH // 8) + "true")
    assert too_long.reason == "TooLong" and too_long.cost is None
    bad = check_expression("device.foo")
    assert bad.reason == "Invalid" and "undefined field 'foo'" in bad.errors[0]
    assert MAX_COST == 1_000_000


def test_check_expression_feature_gates():
    expr = "device.allowMultipleAllocations"
    assert check_expression(expr, consumable_capacity=True).ok
    off = check_expression(expr, consumable_capacity=False)
    assert off.reason == "Invalid" and "undefined field 'allowMultipleAllocations'" in off.errors[0]
    assert check_expression(expr, consumable_capacity=False, stored=True).ok
    inc = 'device.attributes["a.b"].x.includes(1)'
    assert check_expression(inc, list_type_attributes=True).ok
    assert "undeclared reference to 'includes'" in check_expression(inc, list_type_attributes=False).errors[0]


@pytest.mark.parametrize("expression,output_type", [
    ('device.attributes["a.example.com"].x', "dyn"),
    ('device.driver', "string"),
    ('device.capacity["a.example.com"].m.add(quantity("1"))', "kubernetes.Quantity"),
    ('semver("1.0.0")', "kubernetes.Semver"),
    ('[1, 2]', "list(int)"),
    ('{"a": 1}', "map(string, int)"),
    ('device.attributes["a.example.com"].x == 1', "bool"),
])
def test_output_types_for_derived_attributes(expression, output_type):
    result = check_expression(expression, result="any")
    assert result.ok and result.output_type == output_type
    assert compile_expression(expression, result="any").output_type == output_type


def test_engine_error_texts_read_as_cel_go() -> None:
    """Errors users read carry cel-go's words, not cel-cpp's."""
    from kubectl_dra.cel import compile_expression as compile_
    from kubectl_dra.cel import make_device_input as device
    from kubectl_dra.errors import CELRuntimeError as RuntimeErr

    dev = device("", {"name": "d"})
    for expression, text in (
            ("[1, 2][5] == 1", "index '5' out of range in list size '2'"),
            ("'abc'.charAt(9) == ''", "index out of range: 9"),
            ("'abc'.substring(2, 1) == ''", "invalid substring range. start: 2, end: 1"),
            ("dyn('%d').format([dyn('x')]) == ''",
             "error during formatting: decimal clause can only be used on integers, was given string")):
        with pytest.raises(RuntimeErr) as err:
            compile_(expression).matches(dev)
        assert str(err.value) == text
