"""``string.format()`` as the strings extension v2 of cel-go v0.27 renders values.

cel-cpp's own ``format`` prints doubles, infinities, lists and maps differently (and
uses plain ``1.5e+00`` where cel-go's en_US printer writes ``1.500000 × 10⁰⁰``), so
format calls run here instead (the rewriter routes ``string_format`` calls to this
function). Clause parsing, the per-clause type rules and the error texts are cel-go's;
constant calls are also checked at compile time (:mod:`format_check`).
"""

from __future__ import annotations

import datetime as _dt
import math
from decimal import Decimal
from typing import Any, Callable

from kubectl_dra.cel._types import DURATION_TEXT_TYPE
from kubectl_dra.cel.library import LibraryError
from kubectl_dra.cel.netaddr import go_quote

_DEFAULT_PRECISION = 6
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_NNBSP = "\u202f"


def type_name(value: Any) -> str:
    """cel-go's TypeName of a plain value."""
    if value is None:
        return "null_type"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, _dt.datetime):
        return "google.protobuf.Timestamp"
    if isinstance(value, _dt.timedelta) or _is_duration_text(value):
        return "google.protobuf.Duration"
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is not None:
        return str(descriptor.full_name)
    return "type"


def _fail(message: str) -> LibraryError:
    return LibraryError("error during formatting: " + message)


def _go_special(x: float) -> str | None:
    """How Go's strconv writes NaN and the infinities (None for a finite number)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return None


def _locale_special(x: float) -> str | None:
    """How golang.org/x/text's en_US writes NaN and the infinities (None for a finite number)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return None


def _go_float_g(x: float) -> str:
    """Go's ``strconv.FormatFloat(x, 'g', -1, 64)`` (a double converted to string)."""
    special = _go_special(x)
    if special is not None:
        return special
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # position of the decimal point in ``digits``
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:  # Go uses precision 6 for this choice with shortest digits
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"


def _fixed(x: float, precision: int) -> str:
    """Go ``%.Nf`` (the format used for doubles inside lists and maps)."""
    special = _go_special(x)
    return special if special is not None else f"{x:.{precision}f}"


def _go_string(value: Any) -> str:
    """A value converted to string as cel-go does (``%s`` of a scalar)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float_g(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, _dt.datetime):
        return _timestamp_text(value)
    if isinstance(value, _dt.timedelta) or _is_duration_text(value):
        return _duration_text(value)
    if isinstance(value, (int, str)):
        return str(value)
    if hasattr(value, "name") and callable(value.name):  # a CEL type value
        return str(value.name()).lower()
    raise _fail("string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
                f"lists, types, durations, and timestamps, was given {type_name(value)}")


def _timestamp_text(value: _dt.datetime) -> str:
    """RFC 3339 with nanoseconds trimmed, as Go's time.RFC3339Nano."""
    utc = value.astimezone(_dt.UTC)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += ("." + f"{utc.microsecond:06d}").rstrip("0")
    return text + "Z"


def _is_duration_text(value: Any) -> bool:
    """A duration argument as the rewriter hands it over (kubernetes.DurationText)."""
    descriptor = getattr(value, "DESCRIPTOR", None)
    return descriptor is not None and descriptor.full_name == DURATION_TEXT_TYPE


def _duration_text(value: Any) -> str:
    """cel-go's duration string: seconds with the shortest decimals, then ``s``."""
    if _is_duration_text(value):  # the engine's exact text, e.g. "3723.500s"
        seconds = Decimal(value.t.removesuffix("s"))
    else:
        seconds = Decimal(value.days * 86400 + value.seconds) + Decimal(value.microseconds) / 10**6
    text = format(seconds.normalize(), "f")
    return text + "s"


def _quoted(value: Any, text: str) -> str:
    """cel-go quoteForCEL: strings, bytes and non-finite doubles as CEL literals."""
    if isinstance(value, str):
        return go_quote(text)
    if isinstance(value, (bytes, bytearray)):
        return "b" + go_quote(text)
    if isinstance(value, float) and not math.isfinite(value):
        return go_quote(text)
    return text


def _member(value: Any) -> str:
    """cel-go clauseForType: how a list element or map value is printed."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes, bytearray)):
        text = _go_string(value)
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = _fixed(value, _DEFAULT_PRECISION)
    elif isinstance(value, _dt.datetime):
        text = f"timestamp({go_quote(_timestamp_text(value))})"
    elif isinstance(value, _dt.timedelta) or _is_duration_text(value):
        text = f"duration({go_quote(_duration_text(value))})"
    elif isinstance(value, list):
        text = _list(value)
    elif isinstance(value, dict):
        text = _map(value)
    else:
        raise LibraryError(f"no formatting function for {type_name(value)}")
    return _quoted(value, text)


def _list(values: list[Any]) -> str:
    return "[" + ", ".join(_member(v) for v in values) + "]"


def _map(values: dict[Any, Any]) -> str:
    pairs = []
    for key, value in values.items():
        if not isinstance(key, (str, bool, int)):
            raise LibraryError(f"no formatting function for map key of type {type_name(key)}")
        pairs.append((_quoted(key, _go_string(key)), _member(value)))
    pairs.sort(key=lambda pair: pair[0])
    return "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"


def _as_double(value: Any, clause: str) -> float:
    """%f / %e accept doubles and the strings NaN, Infinity, -Infinity."""
    if isinstance(value, float):
        return value
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    raise _fail(f"{clause} clause can only be used on doubles, was given {type_name(value)}")


def _group(digits: str) -> str:
    """en_US digit grouping of an integer part."""
    out: list[str] = []
    while len(digits) > 3:
        out.insert(0, digits[-3:])
        digits = digits[:-3]
    out.insert(0, digits)
    return ",".join(out)


def _fixed_clause(precision: int) -> Callable[[Any], str]:
    """``%f``: golang.org/x/text's en_US decimal (grouped, ∞ for infinities)."""
    def render(value: Any) -> str:
        x = _as_double(value, "fixed-point")
        special = _locale_special(x)
        if special is not None:
            return special
        text = f"{abs(x):.{precision}f}"
        whole, _, fraction = text.partition(".")
        sign = "-" if x < 0 or (x == 0 and math.copysign(1, x) < 0) else ""
        return sign + _group(whole) + ("." + fraction if fraction else "")
    return render


def _scientific(value: Any) -> str:
    """``%e``: golang.org/x/text's en_US scientific form (``1.052033 × 10⁰³``)."""
    x = _as_double(value, "scientific")
    special = _locale_special(x)
    if special is not None:
        return special
    mantissa, _, exponent = f"{x:.{_DEFAULT_PRECISION}e}".partition("e")
    exp = int(exponent)
    sup = ("-" if exp < 0 else "") + f"{abs(exp):02d}"
    return f"{mantissa}{_NNBSP}×{_NNBSP}10{sup.translate(_SUPERSCRIPT)}"


def _decimal(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _fail(f"decimal clause can only be used on integers, was given {type_name(value)}")


def _binary(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return format(value, "b")
    raise _fail(f"only integers and bools can be formatted as binary, was given {type_name(value)}")


def _hex(upper: bool) -> Callable[[Any], str]:
    def render(value: Any) -> str:
        if isinstance(value, str):
            text = value.encode("utf-8").hex()
        elif isinstance(value, (bytes, bytearray)):
            text = bytes(value).hex()
        elif isinstance(value, int) and not isinstance(value, bool):
            text = format(value, "x")
        else:
            raise _fail("only integers, byte buffers, and strings can be formatted as hex, "
                        f"was given {type_name(value)}")
        return text.upper() if upper else text
    return render


def _octal(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return format(value, "o")
    raise _fail(f"octal clause can only be used on integers, was given {type_name(value)}")


def _string(value: Any) -> str:
    if isinstance(value, list):
        return _list(value)
    if isinstance(value, dict):
        return _map(value)
    return _go_string(value)


def _clause(text: str, at: int) -> tuple[int, Callable[[Any], str]]:
    """(characters read, renderer) of the clause starting at ``text[at]`` (after '%')."""
    i, precision = at, None
    if text[i] == ".":
        i += 1
        start = i
        while True:
            if i >= len(text):
                raise LibraryError("could not parse formatting clause: error while parsing "
                                   "precision: could not find end of precision specifier")
            if not "0" <= text[i] <= "9":
                break
            i += 1
        precision = int(text[start:i]) if i > start else None
    clause = text[i]
    renderers: dict[str, Callable[[Any], str]] = {
        "s": _string, "d": _decimal, "e": _scientific, "b": _binary, "o": _octal,
        "x": _hex(False), "X": _hex(True),
        "f": _fixed_clause(_DEFAULT_PRECISION if precision is None else precision),
    }
    if clause not in renderers:
        raise LibraryError(
            f'could not parse formatting clause: unrecognized formatting clause "{clause}"')
    return i + 1 - at, renderers[clause]


def format_string(text: str, args: list[Any]) -> str:
    """cel-go parseFormatString with the runtime formatter."""
    out: list[str] = []
    i = index = 0
    while i < len(text):
        ch = text[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        if i + 1 < len(text) and text[i + 1] == "%":
            out.append("%")
            i += 2
            continue
        if i + 1 >= len(text):
            raise LibraryError("unexpected end of string")
        if index >= len(args):
            raise LibraryError(f"index {index} out of range")
        read, render = _clause(text, i + 1)
        out.append(render(args[index]))
        i += 1 + read
        index += 1
    return "".join(out)
