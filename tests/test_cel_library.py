"""Kubernetes CEL libraries (quantity, semver, regex) as seen through DRA expressions.

Cases follow the apiserver library tests (``library/quantity_test.go`` and
``semver_test.go``); expressions are evaluated with ``result="any"``.
"""

from __future__ import annotations

import re

import pytest

from kubectl_dra.cel import compile_expression, make_device_input
from kubectl_dra.errors import CELCompileError, CELRuntimeError
from kubectl_dra.quantity import Quantity
from kubectl_dra.semver import Version

NO_DEVICE = make_device_input("drv.example.com", {"name": "d"})


def run(expression: str):
    return compile_expression(expression, result="any").evaluate(NO_DEVICE)


@pytest.mark.parametrize("expression,expected", [
    ('isQuantity("20")', True),
    ('isQuantity("20M")', True),
    ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False),
    ('isQuantity("10Mm")', False),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    ('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") '
     '&& quantity("0.002G") == quantity("2000k")', True),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").mul(2) == quantity("100000")', True),
    ('quantity("10k").div(2) == quantity("5000")', True),
    ('quantity("10000").divInt(3) == quantity("3333")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
    ('sign(quantity("-1m"))', -1),
    ('sign(quantity("0"))', 0),
    ('quantity("Mi") == quantity("0")', True),
])
def test_quantity_library(expression, expected):
    result = run(expression)
    assert result == expected and type(result) is type(expected)


def test_quantity_values_come_back_as_quantities():
    assert run('quantity("12Mi")') == Quantity.parse("12Mi")
    assert abs(run('quantity("10000").div(3).asApproximateFloat()') - 3333.3333) < 1e-4


@pytest.mark.parametrize("expression,message", [
    ('quantity("10Mo")', "quantities must match the regular expression"),
    ('quantity("10Mm")', "unable to parse quantity's suffix"),
    ('quantity("9999999999999999999999999999999999999G").asInteger()', "cannot convert value to integer"),
    ('quantity("1").div(0)', "division by zero"),
])
def test_quantity_library_errors(expression, message):
    with pytest.raises(CELRuntimeError) as err:
        run(expression)
    assert message in str(err.value)


@pytest.mark.parametrize("expression", ['isQuantity([1, 2, 3])', 'isSemver([1, 2, 3])',
                                        'quantity("1").isLessThan(semver("1.0.0"))',
                                        'quantity("1").sign()'])
def test_library_overload_errors(expression):
    with pytest.raises(CELCompileError) as err:
        compile_expression(expression, result="any")
    assert "found no matching overload" in str(err.value) or "undeclared reference" in str(err.value)


@pytest.mark.parametrize("expression,expected", [
    ('isSemver("1.2.3-beta.1+build.1")', True),
    ('isSemver("")', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver(" 1.0.0")', False),
    ('isSemver("1. 0.0")', False),
    ('isSemver("1.0.0 ")', False),
    ('isSemver("01.01.01")', False),
    ('isSemver("1")', False),
    ('isSemver("1.1")', False),
    ('isSemver("", true)', False),
    ('isSemver(" 1.0.0", true)', False),
    ('isSemver("1. 0.0", true)', False),
    ('isSemver("1.0.0 ", true)', False),
    ('isSemver("v1.0.0", true)', True),
    ('isSemver("01.01.01", true)', True),
    ('isSemver("1", true)', True),
    ('isSemver("1.1", true)', True),
    ('semver("v01.01", true) == semver("1.1.0")', True),
    ('semver("1.2.3") == semver("1.2.3")', True),
    ('semver("1.2.3") == semver("1.0.0")', False),
    ('semver("1.2.3+a") == semver("1.2.3+b")', True),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', True),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
    ('semver("1.0.0").compareTo(semver("1.2.3"))', -1),
    ('semver("1.2.3").compareTo(semver("1.0.0"))', 1),
    ('semver("1.2.3").major()', 1),
    ('semver("1.2.3").minor()', 2),
    ('semver("1.2.3").patch()', 3),
])
def test_semver_library(expression, expected):
    result = run(expression)
    assert result == expected and type(result) is type(expected)


def test_semver_values_and_errors():
    assert run('semver("1.2.3")') == Version.parse("1.2.3")
    with pytest.raises(CELRuntimeError) as err:
        run('semver("v1.0")')
    assert "No Major.Minor.Patch elements found" in str(err.value)


@pytest.mark.parametrize("expression,expected", [
    ('"abc 123".find("[0-9]+")', "123"),
    ('"abc".find("[0-9]+")', ""),
    ('"a1b22c333".findAll("[0-9]+")', ["1", "22", "333"]),
    ('"a1b22c333".findAll("[0-9]+", 2)', ["1", "22"]),
    ('"abc".matches("^a")', True),
    ('cel.bind(x, "a-b", x.split("-"))', ["a", "b"]),
    ('"ABC".lowerAscii()', "abc"),
    ('[3, 1, 2].sort()', [1, 2, 3]),
    ('sets.contains([1, 2, 3], [2])', True),
    ('optional.of(1).orValue(2)', 1),
    ('[1, 2].all(i, v, v > i)', True),
])
def test_extensions_available(expression, expected):
    assert run(expression) == expected


# --- native comparisons (rewritten to int64 field compares) agree with the library ------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_quantities = st.builds(
    lambda sign, whole, frac, suffix: f"{sign}{whole}{'.' + frac if frac else ''}{suffix}",
    st.sampled_from(["", "-", "+"]),
    st.integers(min_value=0, max_value=10**20),
    st.sampled_from(["", "5", "25", "000000001", "1234567891"]),
    st.sampled_from(_SUFFIXES),
)
_COMPARE = compile_expression(
    'device.capacity["d.example.com"].a.compareTo(device.capacity["d.example.com"].b)', result="any")
_GREATER = compile_expression(
    'device.capacity["d.example.com"].a.isGreaterThan(device.capacity["d.example.com"].b)')
_EQUAL = compile_expression('device.capacity["d.example.com"].a == device.capacity["d.example.com"].b')


@settings(max_examples=150, deadline=None)
@given(_quantities, _quantities)
def test_native_quantity_compare_matches_library(a, b):
    qa, qb = Quantity.parse(a), Quantity.parse(b)
    dev = make_device_input("d.example.com", {"name": "d", "capacity": {"a": {"value": a}, "b": {"value": b}}})
    expected = (qa.value > qb.value) - (qa.value < qb.value)
    assert _COMPARE.evaluate(dev) == expected
    assert _GREATER.matches(dev) is (expected == 1)
    assert _EQUAL.matches(dev) is (expected == 0)


_versions = st.builds(
    lambda ma, mi, pa, pre: f"{ma}.{mi}.{pa}{pre}",
    st.integers(0, 2**64 - 1) | st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
    st.sampled_from(["", "-alpha", "-alpha.1", "-1", "-beta"]),
)
_VCOMPARE = compile_expression(
    'device.attributes["d.example.com"].a.compareTo(device.attributes["d.example.com"].b)', result="any")


@settings(max_examples=150, deadline=None)
@given(_versions, _versions)
def test_native_semver_compare_matches_library(a, b):
    va, vb = Version.parse(a), Version.parse(b)
    dev = make_device_input("d.example.com", {"name": "d", "attributes": {"a": {"version": a}, "b": {"version": b}}})
    assert _VCOMPARE.evaluate(dev) == va.compare(vb)


LISTS_DEV = make_device_input("d.example.com", {"name": "d", "attributes": {
    "ids": {"ints": [3, 1, 2]}, "names": {"strings": ["b", "a"]}}})


@pytest.mark.parametrize("expression,expected", [
    ('device.attributes["d.example.com"].ids.sum()', 6),
    ('device.attributes["d.example.com"].ids.min()', 1),
    ('device.attributes["d.example.com"].ids.max()', 3),
    ('device.attributes["d.example.com"].ids.isSorted()', False),
    ('device.attributes["d.example.com"].names.min()', "a"),
    ('[1.5, 2.5].sum()', 4.0),
    ('["a", "b"].isSorted()', True),
    ('[1, 2].sum() + 1', 4),
])
def test_lists_library(expression, expected):
    assert compile_expression(expression, result="any").evaluate(LISTS_DEV) == expected


def test_lists_library_errors():
    with pytest.raises(CELRuntimeError) as err:
        compile_expression('device.attributes["d.example.com"].ids.filter(x, x > 5).max() > 0').matches(LISTS_DEV)
    assert "max called on empty list" in str(err.value)
    with pytest.raises(CELRuntimeError) as err:
        run("[9223372036854775807, 1].sum()")
    assert "overflow" in str(err.value)


@pytest.mark.parametrize("expression,expected", [
    ("[[1], [2]].indexOf([1])", 0),
    ("[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2})", 1),
    ("[format.dns1123Label()].indexOf(format.dns1123Label())", 0),
    ('[semver("1.0.0"), semver("2.0.0")].lastIndexOf(semver("2.0.0"))', 1),
    ("[dyn(1), dyn('a')].indexOf('a')", 1),
])
def test_list_index_of_any_element_type(expression, expected):
    """upstream declares list(A).indexOf(A): any element type, compared by CEL equality."""
    assert run(expression) == expected


@pytest.mark.parametrize("expression,signature", [
    ("[1].indexOf('a')", "'indexOf' applied to 'list(int).(string)'"),
    ("['a'].lastIndexOf(1)", "'lastIndexOf' applied to 'list(string).(int)'"),
    ("[[1]].indexOf(['a'])", "'indexOf' applied to 'list(list(int)).(list(string))'"),
    ("['a', 'b'].sum()", "'sum' applied to 'list(string).()'"),
    ("'abc'.indexOf(1)", "'indexOf' applied to 'string.(int)'"),
])
def test_overload_errors_read_as_cel_go(expression, signature):
    """the element type must agree with the argument (cel-go binds A once); receiver calls
    print as ``target.(args)``, as cel-go does."""
    with pytest.raises(CELCompileError, match="found no matching overload for " + re.escape(signature)):
        compile_expression(expression, result="any")
