"""Semantic versions as Kubernetes' CEL library sees them.

Mirrors ``github.com/blang/semver/v4`` ``Parse``/``Compare`` (strict ``major.minor.patch``,
prerelease and build rules, leading zeros rejected, upstream error texts) and the apiserver
CEL semver library's ``normalizeAndParse`` (``semver(s, true)``: drops a ``v`` prefix, fills
in missing minor/patch, strips leading zeros of the three dotted parts).

Equality and hashing ignore build metadata, like ``Compare``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import total_ordering

from .errors import DraError

__all__ = ["SemverError", "Version", "compare", "parse", "parse_normalized"]

_NUMBERS = "0123456789"
_ALPHAS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"
_ALPHANUM = _ALPHAS + _NUMBERS
_MAX_UINT64 = 2**64 - 1

PreReleaseId = int | str


class SemverError(DraError, ValueError):
    """A string is not a semantic version (message as blang/semver reports it)."""

    exit_code = 1


def _contains_only(s: str, charset: str) -> bool:
    return all(c in charset for c in s)


def _has_leading_zeroes(s: str) -> bool:
    return len(s) > 1 and s[0] == "0"


def _parse_uint64(s: str) -> int:
    """Go ``strconv.ParseUint(s, 10, 64)`` for a string of ASCII digits (or empty)."""
    if not s or not _contains_only(s, _NUMBERS):
        raise SemverError(f'strconv.ParseUint: parsing "{s}": invalid syntax')
    value = int(s)
    if value > _MAX_UINT64:
        raise SemverError(f'strconv.ParseUint: parsing "{s}": value out of range')
    return value


def _go_quote(s: str) -> str:
    """Go's ``%q`` for the printable strings that reach our messages."""
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _parse_number(part: str, what: str) -> int:
    """Major/minor/patch: digits only, no leading zero, fits uint64."""
    if not _contains_only(part, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {what} number {_go_quote(part)}")
    if _has_leading_zeroes(part):
        raise SemverError(f"{what.capitalize()} number must not contain leading zeroes {_go_quote(part)}")
    return _parse_uint64(part)


def _parse_prerelease_id(s: str) -> PreReleaseId:
    """One dot-separated prerelease identifier: a number (no leading zero) or alphanumerics."""
    if not s:
        raise SemverError("Prerelease is empty")
    if _contains_only(s, _NUMBERS):
        if _has_leading_zeroes(s):
            raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(s)}")
        return _parse_uint64(s)
    if _contains_only(s, _ALPHANUM):
        return s
    raise SemverError(f"Invalid character(s) found in prerelease {_go_quote(s)}")


def _compare_ids(a: PreReleaseId, b: PreReleaseId) -> int:
    """Numeric identifiers sort before alphanumeric ones; each kind in its natural order."""
    a_num, b_num = isinstance(a, int), isinstance(b, int)
    if a_num != b_num:
        return -1 if a_num else 1
    return (a > b) - (a < b)  # type: ignore[operator]


@total_ordering
@dataclass(frozen=True, eq=False)
class Version:
    """A parsed semantic version; ordered by semver precedence, equal ignoring build metadata."""

    major: int
    minor: int
    patch: int
    pre: tuple[PreReleaseId, ...] = ()
    build: tuple[str, ...] = field(default=())

    @classmethod
    def parse(cls, s: str) -> "Version":
        """Strict parse, as blang/semver ``Parse`` (CEL ``semver(s)``)."""
        return parse(s)

    @classmethod
    def parse_normalized(cls, s: str) -> "Version":
        """Tolerant parse, as the apiserver CEL library's ``normalizeAndParse`` (``semver(s, true)``)."""
        return parse_normalized(s)

    def compare(self, other: "Version") -> int:
        """-1, 0 or 1 by semver precedence (build metadata ignored)."""
        return compare(self, other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return compare(self, other) == 0

    def __lt__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return compare(self, other) < 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def finalized(self) -> str:
        """``major.minor.patch`` without prerelease or build."""
        return f"{self.major}.{self.minor}.{self.patch}"


def compare(a: Version, b: Version) -> int:
    """blang/semver ``Compare``: numbers, then a release beats its prereleases, then identifiers
    pairwise, then the longer prerelease list wins."""
    for x, y in ((a.major, b.major), (a.minor, b.minor), (a.patch, b.patch)):
        if x != y:
            return 1 if x > y else -1
    if not a.pre or not b.pre:
        return (not a.pre) - (not b.pre)
    for p, q in zip(a.pre, b.pre):
        c = _compare_ids(p, q)
        if c:
            return c
    return (len(a.pre) > len(b.pre)) - (len(a.pre) < len(b.pre))


def parse(s: str) -> Version:
    """blang/semver v4 ``Parse``."""
    if not isinstance(s, str):
        raise SemverError(f"version must be a string, got {type(s).__name__}")
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _parse_number(parts[0], "major")
    minor = _parse_number(parts[1], "minor")
    patch_str = parts[2]
    build_strs: list[str] = []
    pre_strs: list[str] = []
    if "+" in patch_str:
        patch_str, _, build_part = patch_str.partition("+")
        build_strs = build_part.split(".")
    if "-" in patch_str:
        patch_str, _, pre_part = patch_str.partition("-")
        pre_strs = pre_part.split(".")
    patch = _parse_number(patch_str, "patch")
    pre = tuple(_parse_prerelease_id(p) for p in pre_strs)
    for b in build_strs:
        if not b:
            raise SemverError("Build meta data is empty")
        if not _contains_only(b, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {_go_quote(b)}")
    return Version(major, minor, patch, pre, tuple(build_strs))


def parse_normalized(s: str) -> Version:
    """apiserver CEL ``normalizeAndParse``: no whitespace trimming, one ``v`` prefix removed,
    leading zeros of each dotted part removed, missing minor/patch filled with 0."""
    if not isinstance(s, str):
        raise SemverError(f"version must be a string, got {type(s).__name__}")
    if s.startswith("v"):
        s = s[1:]
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in _NUMBERS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in "+-" for c in parts[-1]):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))
