"""Decoded JSON values read as the API server's Go types see them: absent, ``null`` and empty
alike, quantities by value, sizes in encoded bytes."""

from __future__ import annotations

from typing import Any

from kubectl_dra.quantity import Quantity, QuantityError

from .field import FieldError, Path, invalid

__all__ = [
    "QuantityError", "as_dict", "as_list", "as_str", "json_size", "normalized", "parse_quantity", "present",
    "semantic_equal", "validate_immutable_field",
]


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON, the closest stand-in for the raw request bytes."""
    from ..model.jsoncopy import dumps_json  # any depth the API server's decoder accepts

    return len(dumps_json(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def semantic_equal(a: Any, b: Any, quantities: bool = False) -> bool:
    """Deep equality in the spirit of ``apiequality.Semantic.DeepEqual`` on decoded JSON: absent,
    ``null``, ``""``, ``[]`` and ``{}`` are the same empty value; with ``quantities``, two scalars
    that parse as equal quantities are equal (``1Gi`` == ``1024Mi``)."""
    if _is_empty(a) and _is_empty(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return all(semantic_equal(a.get(k), b.get(k), quantities) for k in set(a) | set(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(semantic_equal(x, y, quantities) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if a == b and type(a) is type(b):
        return True
    if quantities and isinstance(a, (str, int, float)) and isinstance(b, (str, int, float)):
        try:
            return parse_quantity(a) == parse_quantity(b)
        except QuantityError:
            return False
    return False


def _is_empty(value: Any) -> bool:
    """Absent, null, empty string, list or map: what Semantic.DeepEqual treats alike."""
    return value is None or (isinstance(value, (str, list, dict)) and len(value) == 0)


def parse_quantity(value: Any) -> Quantity:
    """A quantity as the API server decodes it from JSON (string or number); QuantityError if malformed."""
    if isinstance(value, Quantity):
        return value
    return Quantity.from_json(value)


def as_dict(value: Any) -> dict:
    """``value`` when it is a mapping, else an empty dict (tolerate malformed input)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    """``value`` when it is a list, else an empty list (tolerate malformed input)."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    """``value`` as the string the API server would decode ("" when absent)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


#: integer fields that are plain (not pointer) Go fields: 0 and "absent" are the same value
_ZERO_IS_ABSENT = frozenset({"count"})


def normalized(value: Any) -> Any:
    """``value`` with empty lists/maps and nulls removed, so that comparisons treat an
    omitted field and its empty value as equal (as apimachinery's semantic DeepEqual does)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            nv = normalized(v)
            if nv is None or nv == [] or nv == {} or nv == "":
                continue
            if k in _ZERO_IS_ABSENT and nv == 0 and not isinstance(nv, bool):
                continue
            out[k] = nv
        return out
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def validate_immutable_field(new: Any, old: Any, path: Path) -> list[FieldError]:
    """Invalid "field is immutable" when ``new`` differs semantically from ``old``."""
    if normalized(new) == normalized(old):
        return []
    return [invalid(path, new, "field is immutable")]


def present(d: dict[str, Any], key: str) -> bool:
    """Whether a pointer-like field is set (key present and not null), as Go's ``!= nil``."""
    return d.get(key) is not None
