"""Kubernetes CEL libraries (quantity, semver, regex) as cel-expr-python functions.

Semantics follow k8s.io/apiserver/pkg/cel/library (quantity, semver, regex). The
engine dispatches Python callbacks by value *kind*, and every message has the kind
"struct", so ``isGreaterThan(Quantity, Quantity)`` and ``isGreaterThan(Semver,
Semver)`` cannot both carry an implementation: the first overload of a name gets
one implementation that dispatches on the message class; the others are
declaration-only (the type checker still sees them).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

import re2
from cel_expr_python import cel

from kubectl_dra.cel import _types
from kubectl_dra.cel._types import (
    make_quantity_msg,
    make_semver_msg,
    quantity_msg_from_value,
    quantity_value,
)

from kubectl_dra.limits import MAX_QUANTITY_DIGITS

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

QT = cel.Type(_types.QUANTITY_TYPE)
ST = cel.Type(_types.SEMVER_TYPE)
T = cel.Type
#: name of the runtime-only helper that turns a string into an evaluation error
FAIL_FUNCTION = "__dra_fail"
#: name of the runtime-only three-way comparison used when a native comparison cannot be
COMPARE_FUNCTION = "__dra_compare"


class LibraryError(Exception):
    """An error raised inside a library function; becomes a CEL runtime error."""


# --- conversions -----------------------------------------------------------------


@lru_cache(maxsize=4096)
def parse_quantity_msg(text: str) -> Any:
    """Parse a Kubernetes quantity string into its canonical message (cached)."""
    from kubectl_dra.quantity import Quantity

    return quantity_msg(Quantity.parse(text))


def quantity_msg(quantity: Any) -> Any:
    """The canonical message of a kubectl_dra.quantity.Quantity."""
    mantissa, exponent = quantity.as_decimal_parts()
    if mantissa == 0:
        exponent = 0
    return make_quantity_msg(str(mantissa), exponent)


def quantity_from_msg(msg: Any) -> Any:
    """The kubectl_dra.quantity.Quantity for a Quantity message.

    The message holds only the value, so the result is always the decimal form of it
    (``quantity("1Gi")`` and ``quantity("1073741824")`` both give 1073741824): it
    depends on the value alone, never on what was parsed before.
    """
    from kubectl_dra.quantity import Quantity

    if "/" in msg.u:
        return Quantity.from_fraction(quantity_value(msg))
    return Quantity(int(msg.u), msg.s)


def semver_canonical(version: Any) -> str:
    """The version string without build metadata (what ``Semver.Equal`` compares)."""
    return str(version).split("+", 1)[0]


@lru_cache(maxsize=4096)
def parse_semver_msg(text: str, normalize: bool = False) -> Any:
    """Parse a semantic version (blang/semver, optionally normalized) into a message."""
    from kubectl_dra.semver import Version

    version = Version.parse_normalized(text) if normalize else Version.parse(text)
    return make_semver_msg(version)


@lru_cache(maxsize=4096)
def _version(text: str) -> Any:
    """The Version object for a canonical semver string (cached)."""
    from kubectl_dra.semver import Version

    return Version.parse(text)


def semver_version(msg: Any) -> Any:
    """The kubectl_dra.semver.Version of a Semver message."""
    return _version(msg.v)


def _is_quantity_msg(value: Any) -> bool:
    """True for a Quantity message (robust to the engine's message class)."""
    return value.DESCRIPTOR.full_name == _types.QUANTITY_TYPE


def _exact(q: Any) -> Fraction:
    """The exact value of a Quantity message for arithmetic; a value whose digits would exceed
    :data:`~kubectl_dra.limits.MAX_QUANTITY_DIGITS` (``quantity("1e999999999")`` is a valid
    quantity) is an evaluation error, never a number that large."""
    if "/" not in q.u and abs(q.s) > MAX_QUANTITY_DIGITS:
        raise LibraryError(f"quantity {q.u}e{q.s} is too large to compute with exactly (more than "
                           f"{MAX_QUANTITY_DIGITS} digits)")
    return quantity_value(q)


def _compare(a: Any, b: Any) -> int:
    """Three-way comparison of two Quantity or two Semver messages (quantities by order of
    magnitude first, so any two valid quantities compare without building their values)."""
    if _is_quantity_msg(a):
        if "/" not in a.u and "/" not in b.u:
            return quantity_from_msg(a).cmp(quantity_from_msg(b))
        x, y = quantity_value(a), quantity_value(b)
    else:
        x, y = semver_version(a), semver_version(b)
    return (x > y) - (x < y)


# --- quantity ----------------------------------------------------------------------


def _quantity(text: str) -> Any:
    """quantity(string): parse or fail like resource.ParseQuantity."""
    from kubectl_dra.quantity import QuantityError

    try:
        return parse_quantity_msg(text)
    except QuantityError as err:
        raise LibraryError(str(err)) from None


def _is_quantity(text: str) -> bool:
    """isQuantity(string)."""
    from kubectl_dra.quantity import QuantityError

    try:
        parse_quantity_msg(text)
    except QuantityError:
        return False
    return True


def _sign(q: Any) -> int:
    """sign(Quantity) -> -1, 0, 1 (from the digits: a canonical mantissa carries the sign)."""
    if "/" in q.u:
        v = quantity_value(q)
        return (v > 0) - (v < 0)
    return 0 if q.u == "0" else (-1 if q.u.startswith("-") else 1)


def _int64_or_none(q: Any) -> int | None:
    """The value as an int64 when it is one (decided from the digits and the exponent first)."""
    if "/" not in q.u and (q.s < 0 or len(q.u.lstrip("-")) + q.s > 19):
        return None  # a canonical mantissa has no trailing zeros: a negative exponent is a fraction
    v = quantity_value(q)
    if v.denominator != 1 or not INT64_MIN <= v.numerator <= INT64_MAX:
        return None
    return v.numerator


def _as_integer(q: Any) -> int:
    """asInteger(): the value as int64, or an error."""
    value = _int64_or_none(q)
    if value is None:
        raise LibraryError("cannot convert value to integer")
    return value


def _is_integer(q: Any) -> bool:
    """isInteger(): whether asInteger() would succeed."""
    return _int64_or_none(q) is not None


def _as_float(q: Any) -> float:
    """asApproximateFloat(): beyond float's range, infinity (or zero), as Go's float64 gives."""
    if "/" not in q.u and q.s + len(q.u.lstrip("-")) > 310:
        return float("-inf") if q.u.startswith("-") else float("inf")
    if "/" not in q.u and q.s + len(q.u.lstrip("-")) < -330:
        return -0.0 if q.u.startswith("-") else 0.0
    try:
        return float(quantity_value(q))
    except OverflowError:
        return float("inf") if quantity_value(q) > 0 else float("-inf")


def _add(a: Any, b: Any) -> Any:
    """Quantity + Quantity."""
    return quantity_msg_from_value(_exact(a) + _exact(b))


def _add_int(a: Any, b: int) -> Any:
    """Quantity + int."""
    return quantity_msg_from_value(_exact(a) + b)


def _sub(a: Any, b: Any) -> Any:
    """Quantity - Quantity."""
    return quantity_msg_from_value(_exact(a) - _exact(b))


def _sub_int(a: Any, b: int) -> Any:
    """Quantity - int."""
    return quantity_msg_from_value(_exact(a) - b)


def _mul_int(a: Any, b: int) -> Any:
    """Quantity * int."""
    return quantity_msg_from_value(_exact(a) * b)


def _round_half_up(value: Fraction, digits: int) -> Fraction:
    """Round to ``digits`` decimal places, halves away from zero."""
    scale = 10**digits
    scaled = abs(value) * scale
    whole = int(scaled)
    if scaled - whole >= Fraction(1, 2):
        whole += 1
    return Fraction(whole if value >= 0 else -whole, scale)


def _div_round(a: Any, d: int, digits: int = 4) -> Any:
    """Quantity / int rounded to ``digits`` decimals (div)."""
    if d == 0:
        raise LibraryError("division by zero error")
    if not 0 <= digits <= 10:
        raise LibraryError(f"the valid range for roundVal is 0 to 10 but {digits} was passed")
    return quantity_msg_from_value(_round_half_up(_exact(a) / d, digits))


def _div_int(a: Any, d: int) -> Any:
    """Quantity / int truncated to an integer (divInt)."""
    if d == 0:
        raise LibraryError("division by zero error")
    q = _exact(a) / d
    return quantity_msg_from_value(Fraction(int(q)))


# --- semver ------------------------------------------------------------------------


def _semver(text: str, normalize: bool = False) -> Any:
    """semver(string[, normalize])."""
    from kubectl_dra.semver import SemverError

    try:
        return parse_semver_msg(text, bool(normalize))
    except SemverError as err:
        raise LibraryError(str(err)) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    """isSemver(string[, normalize])."""
    from kubectl_dra.semver import SemverError

    try:
        parse_semver_msg(text, bool(normalize))
    except SemverError:
        return False
    return True


# --- shared comparisons --------------------------------------------------------------


def _is_greater_than(a: Any, b: Any) -> bool:
    """isGreaterThan for Quantity or Semver."""
    return _compare(a, b) == 1


def _is_less_than(a: Any, b: Any) -> bool:
    """isLessThan for Quantity or Semver."""
    return _compare(a, b) == -1


# --- regex -------------------------------------------------------------------------


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # errors are reported to the user, not logged to stderr
#: RE2's error prefixes -> Go regexp's ErrorCode texts (what upstream prints)
_GO_REGEX_CODES = (
    ("missing )", "missing closing )"), ("missing ]", "missing closing ]"),
    ("unexpected )", "unexpected )"), ("trailing \\", "trailing backslash at end of expression"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid named capture group", "invalid named capture"),
    ("invalid repetition size", "invalid repeat count"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("missing argument to repetition operator", "missing argument to repetition operator"),
    ("invalid UTF-8", "invalid UTF-8"),
)


def regex_error_text(pattern: str) -> str | None:
    """Go's ``error parsing regexp: ...`` text for an invalid RE2 pattern (None when valid)."""
    try:
        compile_regex(pattern)
    except LibraryError as err:
        return str(err)
    return None


@lru_cache(maxsize=256)
def compile_regex(pattern: str) -> Any:
    """Compile a regular expression with RE2 semantics (as Go's regexp), or LibraryError."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as err:
        raw = err.args[0].decode("utf-8", "replace") if err.args and isinstance(
            err.args[0], bytes) else str(err)
        reason, _, fragment = raw.partition(": ")
        code = next((go for needle, go in _GO_REGEX_CODES if raw.startswith(needle)), reason)
        raise LibraryError(f"error parsing regexp: {code}: `{fragment or pattern}`") from None


def _find(text: str, pattern: str) -> str:
    """find(): the first (leftmost-first) match or the empty string."""
    m = compile_regex(pattern).search(text)
    return m.group(0) if m else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """findAll(): matches as Go's FindAllString (empty matches right after a match skipped)."""
    if limit == 0:
        return []
    out: list[str] = []
    previous_end = -1
    for m in compile_regex(pattern).finditer(text):
        if m.start() == m.end() and m.start() == previous_end:
            continue
        out.append(m.group(0))
        previous_end = m.end()
        if 0 < limit <= len(out):
            break
    return out


# --- lists (apiserver library "kubernetes.lists") ---------------------------------


def _is_sorted(items: list[Any]) -> bool:
    """isSorted(): no element is greater than its successor."""
    return all(not items[i] > items[i + 1] for i in range(len(items) - 1))


def _sum(items: list[Any]) -> Any:
    """sum(): the total (0 for an empty list), int64 overflow is an error."""
    if not items:
        return 0
    total = items[0]
    for item in items[1:]:
        total = total + item
    if isinstance(total, int) and not isinstance(total, bool) and not INT64_MIN <= total <= INT64_MAX:
        raise LibraryError("integer overflow")
    return total


def _extreme(name: str, prefer_later: Callable[[Any, Any], bool]) -> Callable[[list[Any]], Any]:
    """min()/max(): the first extreme element; an empty list is an error."""
    def pick(items: list[Any]) -> Any:
        if not items:
            raise LibraryError(f"{name} called on empty list")
        best = items[0]
        for item in items[1:]:
            if prefer_later(best, item):
                best = item
        return best

    return pick


_COMPARABLE = (("int", T.INT), ("uint", T.UINT), ("double", T.DOUBLE), ("bool", T.BOOL),
               ("duration", T.DURATION), ("timestamp", T.TIMESTAMP), ("string", T.STRING),
               ("bytes", T.BYTES))
_SUMMABLE = (("int", T.INT), ("uint", T.UINT), ("double", T.DOUBLE), ("duration", T.DURATION))


def _list_decls() -> list[Any]:
    """isSorted/sum/min/max over concrete element types (the engine
    cannot run type parameters or dyn parameters; one implementation per runtime kind)."""
    def unary(name: str, types: tuple[tuple[str, Any], ...], oid: Callable[[str], str],
              ret: Callable[[Any], Any], impl: Callable[..., Any]) -> Any:
        # The implementation rides on the first overload, whose declared result is dyn:
        # the engine converts a callback's result to the declared type of the overload
        # carrying it, and one callback serves every element type.
        return cel.FunctionDecl(name, [
            _ov(oid(tn), T.DYN if i == 0 else ret(t), [cel.Type.List(t)], True,
                impl if i == 0 else None)
            for i, (tn, t) in enumerate(types)])

    return [
        unary("isSorted", _COMPARABLE, lambda n: f"list_{n}_is_sorted_bool", lambda t: T.BOOL,
              _is_sorted),
        unary("sum", _SUMMABLE, lambda n: f"list_{n}_sum_{n}", lambda t: t, _sum),
        unary("min", _COMPARABLE, lambda n: f"list_{n}_min_{n}", lambda t: t,
              _extreme("min", lambda best, x: best > x)),
        unary("max", _COMPARABLE, lambda n: f"list_{n}_max_{n}", lambda t: t,
              _extreme("max", lambda best, x: best < x)),
    ]
    # indexOf/lastIndexOf on lists are not offered: the engine's strings extension owns
    # those names and a second declaration is rejected ("declared multiple times").


def time_list_kind(function: str, overload_ids: list[str]) -> str | None:
    """"duration" or "timestamp" when a sum()/min()/max() call resolved to a list of that kind
    only, else None. The list library's one Python callback per function is declared with a
    dyn result, which cannot carry the engine's duration or timestamp values (and the binding
    hands durations to Python in microseconds): the rewriter folds such lists in CEL instead."""
    for kind in ("duration", "timestamp"):
        if overload_ids == [f"list_{kind}_{function}_{kind}"]:
            return kind
    return None


def _fail(message: str) -> Any:
    """Runtime-only helper used by rewrites: always an evaluation error."""
    raise LibraryError(message)


# --- declarations ------------------------------------------------------------------


def _ov(oid: str, ret: Any, params: list[Any], member: bool = False,
        impl: Callable[..., Any] | None = None) -> Any:
    """One overload (declaration-only when impl is None)."""
    if impl is None:
        return cel.Overload(oid, ret, params, is_member=member)
    return cel.Overload(oid, ret, params, is_member=member, impl=impl)


def function_decls(*, includes: bool, runtime: bool) -> list[Any]:
    """The Kubernetes functions; ``includes`` adds the DRA includes() declaration
    (check envs only: calls are rewritten before evaluation); ``runtime`` adds
    the internal failure helper."""
    decls = [
        cel.FunctionDecl("quantity", [_ov("string_to_quantity", QT, [T.STRING], impl=_quantity)]),
        cel.FunctionDecl("isQuantity", [_ov("is_quantity_string", T.BOOL, [T.STRING], impl=_is_quantity)]),
        cel.FunctionDecl("sign", [_ov("quantity_sign", T.INT, [QT], impl=_sign)]),
        cel.FunctionDecl("isGreaterThan", [
            _ov("quantity_is_greater_than", T.BOOL, [QT, QT], True, _is_greater_than),
            _ov("semver_is_greater_than", T.BOOL, [ST, ST], True)]),
        cel.FunctionDecl("isLessThan", [
            _ov("quantity_is_less_than", T.BOOL, [QT, QT], True, _is_less_than),
            _ov("semver_is_less_than", T.BOOL, [ST, ST], True)]),
        cel.FunctionDecl("compareTo", [
            _ov("quantity_compare_to", T.INT, [QT, QT], True, _compare),
            _ov("semver_compare_to", T.INT, [ST, ST], True)]),
        cel.FunctionDecl("asApproximateFloat", [_ov("quantity_get_float", T.DOUBLE, [QT], True, _as_float)]),
        cel.FunctionDecl("asInteger", [_ov("quantity_get_int", T.INT, [QT], True, _as_integer)]),
        cel.FunctionDecl("isInteger", [_ov("quantity_is_integer", T.BOOL, [QT], True, _is_integer)]),
        cel.FunctionDecl("add", [
            _ov("quantity_add", QT, [QT, QT], True, _add),
            _ov("quantity_add_int", QT, [QT, T.INT], True, _add_int)]),
        cel.FunctionDecl("sub", [
            _ov("quantity_sub", QT, [QT, QT], True, _sub),
            _ov("quantity_sub_int", QT, [QT, T.INT], True, _sub_int)]),
        cel.FunctionDecl("mul", [_ov("quantity_multiply_int", QT, [QT, T.INT], True, _mul_int)]),
        cel.FunctionDecl("div", [
            _ov("quantity_divide_int_default_rounding", QT, [QT, T.INT], True, _div_round),
            _ov("quantity_divide_int_round", QT, [QT, T.INT, T.INT], True, _div_round)]),
        cel.FunctionDecl("divInt", [_ov("quantity_divide_int", QT, [QT, T.INT], True, _div_int)]),
        cel.FunctionDecl("semver", [
            _ov("string_to_semver", ST, [T.STRING], impl=_semver),
            _ov("string_bool_to_semver", ST, [T.STRING, T.BOOL], impl=_semver)]),
        cel.FunctionDecl("isSemver", [
            _ov("is_semver_string", T.BOOL, [T.STRING], impl=_is_semver),
            _ov("is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], impl=_is_semver)]),
        cel.FunctionDecl("major", [_ov("semver_major", T.INT, [ST], True, lambda v: semver_version(v).major)]),
        cel.FunctionDecl("minor", [_ov("semver_minor", T.INT, [ST], True, lambda v: semver_version(v).minor)]),
        cel.FunctionDecl("patch", [_ov("semver_patch", T.INT, [ST], True, lambda v: semver_version(v).patch)]),
        cel.FunctionDecl("find", [_ov("string_find_string", T.STRING, [T.STRING, T.STRING], True, _find)]),
        cel.FunctionDecl("findAll", [
            _ov("string_find_all_string", cel.Type.List(T.STRING),
                [T.STRING, T.STRING], True, _find_all),
            _ov("string_find_all_string_int", cel.Type.List(T.STRING),
                [T.STRING, T.STRING, T.INT], True, _find_all)]),
    ]
    decls.extend(_list_decls())
    if includes:
        decls.append(cel.FunctionDecl("includes", [
            _ov("dra_includes_dyn_dyn", T.BOOL, [T.DYN, T.DYN], True)]))
    if runtime:
        decls.append(cel.FunctionDecl(FAIL_FUNCTION, [
            _ov("dra_fail_string", T.DYN, [T.STRING], impl=_fail)]))
        decls.append(cel.FunctionDecl(COMPARE_FUNCTION, [
            _ov("dra_compare_quantity", T.INT, [QT, QT], impl=_compare),
            _ov("dra_compare_semver", T.INT, [ST, ST])]))
    return decls
