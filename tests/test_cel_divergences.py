"""Known, documented divergences from upstream (cel.md section 5).

Each test asserts what upstream (cel-go in kube-scheduler / kube-apiserver) does and
is marked ``xfail(strict=True)``: if one starts passing, the divergence is gone and
the mark must be removed. Next to each, a plain test pins what we do instead.
"""

from __future__ import annotations

import pytest

from kubectl_dra.cel import check_expression, compile_expression, make_device_input
from kubectl_dra.errors import CELCompileError, CELRuntimeError

CEL_MD = "/work/shared/spec/cel.md section 5"
DEV = make_device_input("d.example.com", {
    "name": "d", "attributes": {"v": {"version": "1.2.3"}}, "capacity": {"m": {"value": "1Gi"}}})
V = 'device.attributes["d.example.com"].v'


@pytest.mark.xfail(strict=True, reason=(
    "engine: cel-cpp's == on messages is false for another type, and declaring any _==_ "
    "overload (to make it an error) hides the engine's own equality for every type"))
def test_semver_equals_string_is_an_error_upstream():
    with pytest.raises(CELRuntimeError):
        compile_expression(f'{V} == "1.2.3"').matches(DEV)


def test_semver_equals_string_is_false_here():
    assert compile_expression(f'{V} == "1.2.3"').matches(DEV) is False
    assert compile_expression(f'"1.2.3" == {V}').matches(DEV) is False  # same as upstream


@pytest.mark.xfail(strict=True, reason=(
    "engine: Kubernetes types must be proto messages in cel-expr-python and message == "
    "compares every field, so a quantity cannot carry upstream's inf.Dec form and still "
    "equal its canonical twin"))
def test_as_integer_of_non_canonical_quantity_is_an_error_upstream():
    with pytest.raises(CELRuntimeError):
        compile_expression('quantity("1.5Gi").asInteger() > 0').matches(DEV)


def test_int_double_literal_comparison_compiles_like_upstream():
    # the check environment declares cel-go's cross-type numeric ordering overloads
    assert compile_expression("1 < 1.5").matches(DEV) is True
    assert compile_expression("5u > 1.5 && 2.0 >= 2").matches(DEV) is True
    dev = make_device_input("d.example.com", {"name": "d", "attributes": {"i": {"int": 1}}})
    assert compile_expression('device.attributes["d.example.com"].i < 1.5').matches(dev) is True


def test_transform_map_works_like_upstream():
    # cel.@mapInsert is supplied at runtime by kubectl_dra.cel.library_ext
    assert compile_expression('{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}').matches(DEV)
    assert compile_expression('{"a": 1}.transformMapEntry(k, v, {v: k}) == {1: "a"}').matches(DEV)


@pytest.mark.xfail(strict=True, reason=(
    "engine: cel-cpp has no actual-cost accounting and a fixed, unconfigurable budget of "
    "10,000 comprehension iterations per evaluation"))
def test_runtime_cost_limit_is_upstreams_actual_cost():
    # 3 x 48-item nested loops: ~110k iterations, well under 1e6 actual cost upstream.
    attrs = {k: {"ints": list(range(48))} for k in "abc"}
    dev = make_device_input("d.example.com", {"name": "d", "attributes": attrs})
    a = 'device.attributes["d.example.com"]'
    assert compile_expression(f"{a}.a.all(x, {a}.b.all(y, {a}.c.all(z, true)))").matches(dev)


def test_engine_budget_is_reported_as_the_engines_limit():
    # what we do instead: an error that names the engine's budget, not upstream's cost limit
    attrs = {k: {"ints": list(range(48))} for k in "abc"}
    dev = make_device_input("d.example.com", {"name": "d", "attributes": attrs})
    a = 'device.attributes["d.example.com"]'
    with pytest.raises(CELRuntimeError) as err:
        compile_expression(f"{a}.a.all(x, {a}.b.all(y, {a}.c.all(z, true)))").matches(dev)
    assert "budget of 10,000 comprehension iterations" in str(err.value)
    assert "Kubernetes" in str(err.value)


def test_mixed_literals_rejected_like_upstream():
    result = check_expression('[1, "a"].size() == 2')
    assert result.reason == "Invalid"
    assert "expected type 'int' but found 'string'" in result.errors[0]


@pytest.mark.xfail(strict=True, reason=(
    "engine: cel-expr-python cannot hand optional or type values to a Python function "
    "(a list of lists of optionals crashes the binding), and the list library's indexOf is one"))
def test_index_of_optional_elements_works_upstream():
    assert compile_expression("[optional.of(1)].indexOf(optional.of(1)) == 0").matches(DEV)


@pytest.mark.parametrize("expression", [
    "[optional.of(1)].indexOf(optional.of(1)) == 0",
    "[[optional.of(1)]].indexOf([optional.of(1)]) == 0",
    "[int].lastIndexOf(int) == 0",
])
def test_index_of_optional_elements_is_a_compile_error_here(expression):
    with pytest.raises(CELCompileError, match="cannot hand optional or type values"):
        compile_expression(expression)
    assert check_expression(expression).reason == "Invalid"


@pytest.mark.parametrize("expression", [
    "dyn([[optional.of(1)]]).indexOf(dyn([optional.of(1)])) == 0",
    "[[1]].indexOf(dyn([optional.of(1)])) == 0",
])
def test_index_of_on_dyn_with_optionals_is_a_compile_error_not_a_crash(expression):
    """Optionals hidden behind dyn() would reach the list library and crash the engine's binding
    (the process dies): refused at compile time, naming the engine limit."""
    with pytest.raises(CELCompileError, match="cannot hand optional values"):
        compile_expression(expression)


def test_index_of_on_dyn_without_optionals_still_evaluates():
    assert compile_expression("dyn([1, 2]).indexOf(2) == 1").matches(DEV)


@pytest.mark.xfail(strict=True, reason=(
    "engine: cel-expr-python hands durations to Python as datetime.timedelta (microseconds); the "
    "rewriter hands over the exact text only for durations it can see in the argument list literal"))
def test_format_of_a_duration_behind_dyn_is_exact_upstream():
    assert compile_expression('"%s".format([dyn(duration("2ns"))]) == "0.000000002s"').matches(DEV)
