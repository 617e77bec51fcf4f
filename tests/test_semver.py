"""Semantic versions: blang/semver v4 vectors and the apiserver CEL library's normalize cases."""

from __future__ import annotations

import pytest

from kubectl_dra.errors import DraError
from kubectl_dra.semver import SemverError, Version, compare, parse, parse_normalized

V = Version

FORMAT = [
    (V(1, 2, 3), "1.2.3"),
    (V(0, 0, 1), "0.0.1"),
    (V(0, 0, 1, ("alpha", "preview"), ("123", "456")), "0.0.1-alpha.preview+123.456"),
    (V(1, 2, 3, ("alpha", 1), ("123", "456")), "1.2.3-alpha.1+123.456"),
    (V(1, 2, 3, ("alpha", 1)), "1.2.3-alpha.1"),
    (V(1, 2, 3, (), ("123", "456")), "1.2.3+123.456"),
    (V(1, 2, 3, ("alpha", "b-eta"), ("123", "b-uild")), "1.2.3-alpha.b-eta+123.b-uild"),
    (V(1, 2, 3, (), ("123", "b-uild")), "1.2.3+123.b-uild"),
    (V(1, 2, 3, ("alpha", "b-eta")), "1.2.3-alpha.b-eta"),
]


@pytest.mark.parametrize("version,text", FORMAT)
def test_format_and_parse(version: Version, text: str) -> None:
    assert str(version) == text
    parsed = Version.parse(text)
    assert compare(parsed, version) == 0
    assert parsed.pre == version.pre and parsed.build == version.build
    assert str(parsed) == text
    assert parsed.finalized() == f"{version.major}.{version.minor}.{version.patch}"


@pytest.mark.parametrize("version,text", [
    (V(1, 2, 3), "v1.2.3"), (V(1, 2, 0, ("alpha",)), "1.2.0-alpha"), (V(1, 2, 0), "1.2.00"),
    (V(1, 2, 3), "01.02.03"), (V(0, 0, 3), "00.0.03"), (V(0, 0, 3), "000.0.03"), (V(1, 2, 0), "1.2"),
    (V(1, 0, 0), "1"), (V(1, 1, 0), "v01.01"), (V(1, 0, 0), "v1"), (V(0, 0, 0, ("rc",)), "0.0.0-rc"),
    (V(1, 0, 0, ("rc",)), "1.0.00-rc"),
])
def test_parse_normalized(version: Version, text: str) -> None:
    parsed = Version.parse_normalized(text)
    assert parsed == version
    assert parsed.pre == version.pre


COMPARE = [
    (V(1, 0, 0), V(1, 0, 0), 0), (V(2, 0, 0), V(1, 0, 0), 1), (V(0, 1, 0), V(0, 1, 0), 0),
    (V(0, 2, 0), V(0, 1, 0), 1), (V(0, 0, 1), V(0, 0, 1), 0), (V(0, 0, 2), V(0, 0, 1), 1),
    (V(1, 2, 3), V(1, 2, 3), 0), (V(2, 2, 4), V(1, 2, 4), 1), (V(1, 3, 3), V(1, 2, 3), 1),
    (V(1, 2, 4), V(1, 2, 3), 1),
    (V(1, 0, 0), V(2, 0, 0), -1), (V(2, 0, 0), V(2, 1, 0), -1), (V(2, 1, 0), V(2, 1, 1), -1),
    (V(1, 0, 0), V(1, 0, 0, ("alpha",)), 1),
    (V(1, 0, 0, ("alpha",)), V(1, 0, 0, ("alpha", 1)), -1),
    (V(1, 0, 0, ("alpha", 1)), V(1, 0, 0, ("alpha", "beta")), -1),
    (V(1, 0, 0, ("alpha", "beta")), V(1, 0, 0, ("beta",)), -1),
    (V(1, 0, 0, ("beta",)), V(1, 0, 0, ("beta", 2)), -1),
    (V(1, 0, 0, ("beta", 2)), V(1, 0, 0, ("beta", 11)), -1),
    (V(1, 0, 0, ("beta", 11)), V(1, 0, 0, ("rc", 1)), -1),
    (V(1, 0, 0, ("rc", 1)), V(1, 0, 0), -1),
    (V(1, 0, 0, (), ("1", "2", "3")), V(1, 0, 0), 0),
]


@pytest.mark.parametrize("a,b,expect", COMPARE)
def test_compare(a: Version, b: Version, expect: int) -> None:
    assert compare(a, b) == expect
    assert compare(b, a) == -expect
    assert a.compare(b) == expect
    assert (a == b) == (expect == 0)
    assert (a < b) == (expect < 0)
    assert (a > b) == (expect > 0)
    assert (a <= b) == (expect <= 0)
    if expect == 0:
        assert hash(a) == hash(b)


WRONG = [
    "", ".", "1.", ".1", "a.b.c", "1.a.b", "1.1.a", "1.a.1", "a.1.1", "..", "1..", "1.1.", "1..1",
    "1.1.+123", "1.1.-beta", "-1.1.1", "1.-1.1", "1.1.-1",
    "20000000000000000000.1.1", "1.20000000000000000000.1", "1.1.20000000000000000000",
    "1.1.1-20000000000000000000",
    "01.1.1", "001.1.1", "1.01.1", "1.001.1", "1.1.01", "1.1.001", "1.1.1-01", "1.1.1-001",
    "1.1.1-beta.01", "1.1.1-beta.001", "0.0.0-!", "0.0.0+!", "0.0.0-.alpha", "0.0.0-alpha+",
    "0.0.0-alpha+test.", "v1.0.0", " 1.0.0", "1. 0.0", "1.0.0 ", "1", "1.1", "v1.0", "1.2.3+a+b",
]


@pytest.mark.parametrize("text", WRONG)
def test_wrong_format(text: str) -> None:
    with pytest.raises(SemverError):
        parse(text)


@pytest.mark.parametrize("text", ["1.0+abc", "1.0-rc.1", "", " 1.0.0", "1. 0.0", "1.0.0 ", "1-rc", "vv1"])
def test_wrong_normalized(text: str) -> None:
    with pytest.raises(SemverError):
        parse_normalized(text)


@pytest.mark.parametrize("text,message", [
    ("", "Version string empty"),
    ("v1.0", "No Major.Minor.Patch elements found"),
    ("a.1.1", 'Invalid character(s) found in major number "a"'),
    ("01.1.1", 'Major number must not contain leading zeroes "01"'),
    ("1.x.1", 'Invalid character(s) found in minor number "x"'),
    ("1.01.1", 'Minor number must not contain leading zeroes "01"'),
    ("1.1.x", 'Invalid character(s) found in patch number "x"'),
    ("1.1.01", 'Patch number must not contain leading zeroes "01"'),
    ("1..1", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.1.99999999999999999999", 'strconv.ParseUint: parsing "99999999999999999999": value out of range'),
    ("1.1.1-", "Prerelease is empty"),
    ("1.1.1-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.1.1-a!", 'Invalid character(s) found in prerelease "a!"'),
    ("1.1.1+", "Build meta data is empty"),
    ("1.1.1+a_b", 'Invalid character(s) found in build meta data "a_b"'),
])
def test_error_messages(text: str, message: str) -> None:
    with pytest.raises(SemverError) as err:
        parse(text)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError) and isinstance(err.value, DraError)


def test_normalized_short_version_message() -> None:
    with pytest.raises(SemverError, match="^short version cannot contain PreRelease/Build meta data$"):
        parse_normalized("1.0+abc")


def test_cel_library_cases() -> None:
    assert parse("1.2.3") == V(1, 2, 3)
    assert parse("1.2.3-beta.1+build.1").pre == ("beta", 1)
    assert parse_normalized("v01.01") == parse("1.1.0")
    assert parse("1.2.3") != parse("1.0.0")
    assert parse("1.0.0") < parse("1.2.3")
    v = parse("1.2.3")
    assert (v.major, v.minor, v.patch) == (1, 2, 3)


def test_equality_ignores_build_and_is_hashable() -> None:
    a, b = parse("1.0.0+build.1"), parse("1.0.0+other")
    assert a == b and hash(a) == hash(b)
    assert len({a, b, parse("1.0.0")}) == 1
    assert str(a) == "1.0.0+build.1"
    assert parse("1.0.0") != "1.0.0"
    with pytest.raises(AttributeError):
        a.major = 2  # type: ignore[misc]


def test_numeric_prerelease_sorts_before_alpha_and_by_value() -> None:
    ordered = ["1.0.0-1", "1.0.0-2", "1.0.0-10", "1.0.0-10a", "1.0.0-A", "1.0.0-a", "1.0.0"]
    assert sorted(parse(s) for s in reversed(ordered)) == [parse(s) for s in ordered]
    assert [str(v) for v in sorted(parse(s) for s in reversed(ordered))] == ordered
