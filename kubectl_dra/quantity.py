"""Kubernetes ``resource.Quantity``: parsing, exact arithmetic, ordering and the string the
API server prints.

Semantics follow ``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go``, ``suffix.go``,
``amount.go``) at Kubernetes 1.37:

* a quantity is ``<signedNumber><suffix>`` where the suffix is binary SI (``Ki``..``Ei``),
  decimal SI (``n u m "" k M G T P E``) or a decimal exponent (``e3``, ``E-6``);
* the suffix family is remembered as the *format* and used again when printing;
* parsing rounds non-zero values finer than ``1n`` up (away from zero) to ``1n`` and caps
  binary-SI magnitudes at 2^63-1, as upstream does;
* printing uses the canonical form (largest suffix, no fractional digits), except that a
  string which upstream's fast parser recognises as already canonical is echoed verbatim
  (so ``"+1"`` prints as ``"+1"`` and ``"1E3"`` as ``"1E3"``, exactly like the API server);
* values with no suffix in their family (beyond ``E``/``Ei``, below ``n``) print in
  exponent form (upstream fix of 2026, kubernetes#140459).

The value is held as an exact decimal ``mantissa * 10**exponent`` so that absurd exponents
(``1e2000000000`` is a valid quantity) parse, compare and print without materialising huge
integers. ``.value`` gives the exact :class:`fractions.Fraction`.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from enum import StrEnum
from fractions import Fraction
from typing import Any

from .errors import DraError

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "Format",
    "Quantity",
    "QuantityError",
    "canonical",
    "parse_quantity",
]


class Format(StrEnum):
    """The three ways upstream formats a quantity (values equal their upstream names)."""

    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"


BINARY_SI = Format.BINARY_SI
DECIMAL_SI = Format.DECIMAL_SI
DECIMAL_EXPONENT = Format.DECIMAL_EXPONENT

# Upstream's splitREString, quoted in its ErrFormatWrong message.
SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
MSG_FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE_STRING + "'"
MSG_NUMERIC = "unable to parse numeric part of quantity"
MSG_SUFFIX = "unable to parse quantity's suffix"

_DIGITS = "0123456789"
_SUFFIX_LETTERS = "eEinumkKMGTP"
_NANO = -9
_MAX_INT32 = 2**31 - 1
_MAX_INT64 = 2**63 - 1
_MAX_INT64_FACTORS = 18  # upstream maxInt64Factors: decimal digits that always fit an int64
# Guard against inputs that would need gigantic integers (upstream has no such limit, but
# Python refuses to convert ints of more than 4300 digits to text, and an attacker-sized
# number must not stall the webhook). Far beyond any real capacity.
_MAX_DIGITS = 4000

_DEC_SUFFIXES: dict[str, int] = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}
_DEC_BY_EXP: dict[int, str] = {exp: suffix for suffix, exp in _DEC_SUFFIXES.items()}
_BIN_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BIN_BY_POW1024: dict[int, str] = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}


class QuantityError(DraError, ValueError):
    """A string is not a Kubernetes quantity, or a value cannot be represented exactly."""

    exit_code = 1


def _normalize(mantissa: int, exponent: int) -> tuple[int, int]:
    """Move trailing decimal zeros of the mantissa into the exponent (zero is ``(0, 0)``)."""
    if mantissa == 0:
        return 0, 0
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    return mantissa, exponent


def _ndigits(n: int) -> int:
    """Number of decimal digits of ``|n|`` (``n`` is bounded by ``_MAX_DIGITS``)."""
    return len(str(abs(n)))


def _check_size(mantissa: int) -> None:
    """Refuse mantissas too long to handle safely (see ``_MAX_DIGITS``)."""
    if mantissa.bit_length() > _MAX_DIGITS * 3.33:
        raise QuantityError(f"quantity has more than {_MAX_DIGITS} significant digits")


def _ceil_div(a: int, b: int) -> int:
    """Ceiling of ``a / b`` for ``a >= 0, b > 0``."""
    return -(-a // b)


def _round_up_to_nano(mantissa: int, exponent: int) -> tuple[int, int]:
    """Round a non-zero value away from zero to a multiple of 1n, as upstream's parser does."""
    if mantissa == 0 or exponent >= _NANO:
        return mantissa, exponent
    shift = _NANO - exponent  # digits to drop
    sign = -1 if mantissa < 0 else 1
    magnitude = abs(mantissa)
    if shift > _ndigits(magnitude):
        return sign, _NANO  # smaller than 1n: rounds up to exactly 1n
    return sign * _ceil_div(magnitude, 10**shift), _NANO


def _go_is_space(ch: str) -> bool:
    """Go's ``unicode.IsSpace`` (used by ``strings.TrimSpace`` when the API server decodes)."""
    if ch in "\t\n\v\f\r \x85\xa0":
        return True
    return ord(ch) > 0xFF and unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def _go_parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``; ``None`` when it would fail."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or any(c not in _DIGITS for c in body):
        return None
    if len(body) > 25:
        return None
    value = int(text)
    if value > _MAX_INT64 or value < -_MAX_INT64 - 1:
        return None
    return value


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Split a quantity into (positive, value, numerator, denominator, suffix) like upstream's
    fast scanner ``parseQuantityString``; raises for a malformed tail."""
    positive = True
    pos = 0
    end = len(text)
    if end and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":  # leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos]
    if pos >= end:
        return positive, text, num, "", ""
    if not num:
        num = "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(MSG_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format] | None:
    """(base, exponent, format) of a suffix, or ``None`` when upstream rejects it."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = _go_parse_int64(suffix[1:])
        # the exponent becomes a negated int32 scale: only [-MaxInt32, MaxInt32] is accepted
        if exponent is None or abs(exponent) > _MAX_INT32:
            return None
        return 10, exponent, DECIMAL_EXPONENT
    return None


class Quantity:
    """An immutable, hashable Kubernetes quantity, ordered and compared by value.

    ``Quantity.parse("1Gi") == Quantity.parse("1073741824")``; ``str(q)`` is what the API
    server would print for it.
    """

    __slots__ = ("_m", "_e", "_format", "_s", "_v")

    _m: int
    _e: int
    _format: Format
    _s: str | None
    _v: Fraction | None

    def __init__(self, mantissa: int, exponent: int = 0, fmt: str = DECIMAL_SI, *,
                 text: str | None = None) -> None:
        """Value ``mantissa * 10**exponent`` in format ``fmt``; ``text`` is a verbatim string
        upstream would echo (only the parser sets it)."""
        if isinstance(mantissa, bool) or not isinstance(mantissa, int):
            raise QuantityError(f"quantity mantissa must be an integer, got {mantissa!r}")
        _check_size(mantissa)
        m, e = _normalize(int(mantissa), int(exponent))
        object.__setattr__(self, "_m", m)
        object.__setattr__(self, "_e", e)
        object.__setattr__(self, "_format", _as_format(fmt))
        object.__setattr__(self, "_s", text)
        object.__setattr__(self, "_v", None)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> "Quantity":
        """Parse a quantity string strictly, as upstream ``ParseQuantity`` (no whitespace)."""
        if not isinstance(text, str):
            raise QuantityError(f"quantity must be a string, got {type(text).__name__}")
        return _parse(text)

    @classmethod
    def from_json(cls, value: Any) -> "Quantity":
        """Decode a quantity as the API server does from JSON/YAML: strings are trimmed of
        surrounding whitespace, numbers are taken by their text, ``null`` is zero."""
        if value is None:
            return cls(0, 0, DECIMAL_SI)
        if isinstance(value, bool):
            raise QuantityError(f"quantity must be a string or a number, got {value!r}")
        if isinstance(value, int):
            return _parse(str(value))
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise QuantityError(f"quantity must be a finite number, got {value!r}")
            return _parse(repr(value))
        if isinstance(value, str):
            found = _FROM_TEXT.get(value)
            if found is not None:
                return found
            start, end = 0, len(value)
            while start < end and _go_is_space(value[start]):
                start += 1
            while end > start and _go_is_space(value[end - 1]):
                end -= 1
            found = _parse(value[start:end])
            if type(value) is str:
                if len(_FROM_TEXT) >= 8192:
                    _FROM_TEXT.clear()
                _FROM_TEXT[value] = found
            return found
        raise QuantityError(f"quantity must be a string or a number, got {type(value).__name__}")

    @classmethod
    def from_int(cls, n: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """Upstream ``NewQuantity(n, fmt)``."""
        return cls(int(n), 0, fmt)

    @classmethod
    def from_milli(cls, n: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """Upstream ``NewMilliQuantity(n, fmt)``: ``n / 1000``."""
        return cls(int(n), -3, fmt)

    @classmethod
    def from_fraction(cls, value: Fraction | int, fmt: str = DECIMAL_SI) -> "Quantity":
        """A quantity of an exact rational value; values finer than 1n round away from zero
        to a multiple of 1n, as parsing does."""
        f = Fraction(value)
        nanos = f * 10**9
        if nanos.denominator == 1:
            return cls(nanos.numerator, _NANO, fmt)
        magnitude = _ceil_div(abs(nanos.numerator), nanos.denominator)
        return cls(magnitude if f > 0 else -magnitude, _NANO, fmt)

    # -- accessors ----------------------------------------------------------------------

    @property
    def format(self) -> Format:
        """The remembered format: ``BinarySI``, ``DecimalSI`` or ``DecimalExponent``."""
        return self._format

    def nanos(self) -> int:
        """The value as an exact count of 1n units, rounded up (a parsed quantity is never
        finer, so this is exact for every one the parser makes): what counters add up."""
        self._check_magnitude()
        shift = self._e - _NANO
        if shift >= 0:
            return self._m * 10 ** shift
        return -((-self._m) // 10 ** -shift)

    @property
    def value(self) -> Fraction:
        """The exact value (computed once)."""
        if self._v is None:
            object.__setattr__(self, "_v", self._exact())
        return self._v  # type: ignore[return-value]

    def _exact(self) -> Fraction:
        """``mantissa * 10**exponent`` as a Fraction, refusing absurd magnitudes."""
        self._check_magnitude()
        if self._e >= 0:
            return Fraction(self._m * 10**self._e)
        return Fraction(self._m, 10**-self._e)

    def _check_magnitude(self) -> None:
        """Refuse exponents whose exact value would take too long to compute (``1E100000000``
        parses, as upstream's does)."""
        if self._e > _MAX_DIGITS:
            raise QuantityError(f"quantity {self} is too large to compute with exactly")
        if -self._e > _MAX_DIGITS:
            raise QuantityError(f"quantity {self} is too small to compute with exactly")

    def as_decimal_parts(self) -> tuple[int, int]:
        """``(mantissa, exponent)`` with no trailing zeros in the mantissa: value = m * 10**e."""
        return self._m, self._e

    def sign(self) -> int:
        """-1, 0 or 1."""
        return (self._m > 0) - (self._m < 0)

    def is_zero(self) -> bool:
        return self._m == 0

    def is_integer(self) -> bool:
        """True when the value has no fractional part."""
        return self._e >= 0 or self._m == 0

    def int_value(self) -> int:
        """Upstream ``Value()``: the value rounded up, away from zero, to an integer."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """Upstream ``MilliValue()``: the value in thousandths, rounded away from zero."""
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """The value in units of ``10**scale``, rounded away from zero (upstream ``ScaledValue``)."""
        f = self.value / Fraction(10) ** scale
        magnitude = _ceil_div(abs(f.numerator), f.denominator)
        return magnitude if f >= 0 else -magnitude

    # -- arithmetic ---------------------------------------------------------------------

    def _aligned(self, other: "Quantity") -> tuple[int, int, int]:
        """Both mantissas at the common (smaller) exponent."""
        e = min(self._e, other._e)
        if max(self._e, other._e) - e > _MAX_DIGITS:
            raise QuantityError(f"{self} and {other} are too far apart in magnitude to combine exactly")
        return self._m * 10 ** (self._e - e), other._m * 10 ** (other._e - e), e

    def __add__(self, other: "Quantity") -> "Quantity":
        """Exact sum; keeps the left format (the right one when the left is zero), as upstream Add."""
        if not isinstance(other, Quantity):
            return NotImplemented
        a, b, e = self._aligned(other)
        return Quantity(a + b, e, other._format if self._m == 0 else self._format)

    @staticmethod
    def sum_exceeds(parts: "tuple[Quantity, ...]", limit: "Quantity") -> bool:
        """Whether the exact sum of ``parts`` is greater than ``limit``, without building the
        sum as a Quantity (the allocator asks this for every candidate device)."""
        e = min(limit._e, *(q._e for q in parts))
        if max(limit._e, *(q._e for q in parts)) - e > _MAX_DIGITS:
            total = parts[0]
            for q in parts[1:]:
                total = total + q  # raises the "too far apart" error of the exact sum
            return total > limit
        return sum(q._m * 10 ** (q._e - e) for q in parts) > limit._m * 10 ** (limit._e - e)

    def __sub__(self, other: "Quantity") -> "Quantity":
        """Exact difference; format rule as upstream Sub."""
        if not isinstance(other, Quantity):
            return NotImplemented
        a, b, e = self._aligned(other)
        return Quantity(a - b, e, other._format if self._m == 0 else self._format)

    def __neg__(self) -> "Quantity":
        return Quantity(-self._m, self._e, self._format)

    def __abs__(self) -> "Quantity":
        return self if self._m >= 0 else -self

    def __mul__(self, factor: int) -> "Quantity":
        """Exact product with an integer (upstream ``Mul``), keeping the format."""
        if isinstance(factor, bool) or not isinstance(factor, int):
            return NotImplemented
        return Quantity(self._m * factor, self._e, self._format)

    __rmul__ = __mul__

    # -- comparison ---------------------------------------------------------------------

    def cmp(self, other: "Quantity") -> int:
        """-1, 0 or 1 as upstream ``Cmp``."""
        sa, sb = self.sign(), other.sign()
        if sa != sb:
            return -1 if sa < sb else 1
        if sa == 0:
            return 0
        # same sign: compare magnitudes by order of magnitude first, then exactly
        ma, mb = abs(self._m), abs(other._m)
        adj_a, adj_b = self._e + _ndigits(ma), other._e + _ndigits(mb)
        if adj_a != adj_b:
            result = 1 if adj_a > adj_b else -1
        else:
            e = min(self._e, other._e)
            xa, xb = ma * 10 ** (self._e - e), mb * 10 ** (other._e - e)
            result = (xa > xb) - (xa < xb)
        return result * sa

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._m == other._m and self._e == other._e

    def __hash__(self) -> int:
        return hash((self._m, self._e))

    def __lt__(self, other: "Quantity") -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) < 0

    def __le__(self, other: "Quantity") -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) <= 0

    def __gt__(self, other: "Quantity") -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) > 0

    def __ge__(self, other: "Quantity") -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) >= 0

    def __bool__(self) -> bool:
        return self._m != 0

    # -- formatting ---------------------------------------------------------------------

    def canonical_form(self) -> str:
        """Upstream ``CanonicalizeBytes``: the canonical text, ignoring any echoed input."""
        if self._m == 0:
            return "0"
        fmt = self._format
        if fmt == BINARY_SI:
            binary = self._binary_text()
            if binary is not None:
                return binary
            fmt = DECIMAL_SI
        return self._decimal_text(fmt)

    def _binary_text(self) -> str | None:
        """Binary-SI text, or ``None`` when upstream falls back to a decimal form."""
        if self._e < 0:
            return None  # not an integer: AsScale(0) is inexact, show as DecimalSI
        if self._e >= 70:
            return None  # at least seven factors of 1024 would be needed: no suffix exists
        n = abs(self._m) * 10**self._e
        if n < 1024:
            return None  # |value| < 1024: DecimalSI avoids rounding and confusion
        times = 0
        while n % 1024 == 0 and times < 7:
            n //= 1024
            times += 1
        if times > 6:
            return None  # beyond Ei: fall back to an exact decimal
        return ("-" if self._m < 0 else "") + str(n) + _BIN_BY_POW1024[times]

    def _decimal_text(self, fmt: Format) -> str:
        """Decimal-SI or decimal-exponent text with an exponent that is a multiple of 3."""
        r = self._e % 3
        mantissa, exponent = self._m * 10**r, self._e - r
        if fmt == DECIMAL_SI and exponent in _DEC_BY_EXP:
            return str(mantissa) + _DEC_BY_EXP[exponent]
        return str(mantissa) + ("" if exponent == 0 else f"e{exponent}")

    def __str__(self) -> str:
        """What the API server prints: the echoed input when upstream keeps it, else canonical."""
        return self._s if self._s is not None else self.canonical_form()

    def to_json(self) -> str:
        """The JSON/YAML form (a string)."""
        return str(self)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r}, format={self._format.value})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    # -- immutability ---------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Quantity is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Quantity is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (self._m, self._e, self._format.value, self._s))


def _restore(m: int, e: int, fmt: str, s: str | None) -> Quantity:
    """Unpickle helper."""
    return Quantity(m, e, fmt, text=s)


def _as_format(fmt: str) -> Format:
    """Validate a format name."""
    try:
        return Format(fmt)
    except ValueError:
        raise QuantityError(
            f"unknown quantity format {fmt!r}: must be one of BinarySI, DecimalSI, DecimalExponent"
        ) from None


#: texts as written in objects -> their (immutable) quantity; most values repeat ("80Gi")
_FROM_TEXT: dict[str, "Quantity"] = {}


@lru_cache(maxsize=8192)
def _parse(text: str) -> Quantity:
    """Upstream ``ParseQuantity`` (cached: quantities are immutable and strings repeat)."""
    if not text:
        raise QuantityError(MSG_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, text="0")
    positive, value, num, denom, suffix = _scan(text)
    interpreted = _interpret(suffix)
    if interpreted is None:
        raise QuantityError(MSG_SUFFIX)
    base, exponent, fmt = interpreted
    if len(num) + len(denom) > _MAX_DIGITS:
        raise QuantityError(f"quantity has more than {_MAX_DIGITS} digits")

    shifted = num + denom
    digits = int(shifted) if shifted else 0
    sign = 1 if positive else -1

    # Upstream's int64 fast path: decides whether the input text is echoed verbatim.
    if base == 10:
        precision = _MAX_INT64_FACTORS - len(shifted)
        multiplier = 1
        scale = exponent
    elif exponent >= 0 and not denom:
        multiplier = 1 << exponent
        precision = 15 - len(num) - (exponent * 3) // 10 - 1
        scale = 0
    else:
        precision, multiplier, scale = -1, 1, 0
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO and digits * multiplier <= _MAX_INT64:
            echo = False
            if fmt == BINARY_SI:
                echo = exponent % 10 == 0 and (digits & 0x07) != 0
            else:
                echo = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
            return Quantity(sign * digits * multiplier, scale, fmt, text=text if echo else None)

    # General path (upstream's inf.Dec path): exact value, round to nano, cap binary SI.
    if not any(c in _DIGITS for c in value):
        raise QuantityError(MSG_NUMERIC)
    if base == 10:
        mantissa, exp10 = digits, exponent - len(denom)
    else:
        scaled = digits << exponent
        if len(denom) > -_NANO:
            mantissa, exp10 = _ceil_div(scaled * 10**9, 10 ** len(denom)), _NANO
        else:
            mantissa, exp10 = scaled, -len(denom)
    mantissa, exp10 = _round_up_to_nano(mantissa, exp10)
    if fmt == BINARY_SI:
        if mantissa > _MAX_INT64 * 10 ** (-exp10):  # exp10 <= 0 on this path
            mantissa, exp10 = _MAX_INT64, 0
        elif mantissa != 0 and exp10 < 0 and _ndigits(mantissa) <= -exp10:
            fmt = DECIMAL_SI  # 0 < |value| < 1: binary would round, so upstream switches
    return Quantity(sign * mantissa, exp10, fmt)


def parse_quantity(text: str) -> Quantity:
    """Convenience for :meth:`Quantity.parse`."""
    return Quantity.parse(text)


def canonical(text: str) -> str:
    """The string the API server stores and prints for the quantity ``text``."""
    return str(Quantity.parse(text))
