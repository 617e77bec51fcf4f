"""Field errors as the API server reports them (``k8s.io/apimachinery/pkg/util/validation/field``).

A :class:`Path` renders exactly like upstream's ``field.Path.String()``
(``spec.devices[3].attributes[gpu.example.com/model]``) because conformance compares
field paths as strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..schema import render_value as _render_value

# Upstream ErrorType values and their human descriptions.
REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
DUPLICATE = "FieldValueDuplicate"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
INTERNAL = "InternalError"
TYPE_INVALID = "FieldValueTypeInvalid"
#: not an upstream ErrorType: a field strict decoding rejects (``unknown field "…"``)
UNKNOWN_FIELD = "FieldUnknown"

DESCRIPTIONS = {
    REQUIRED: "Required value",
    INVALID: "Invalid value",
    DUPLICATE: "Duplicate value",
    NOT_SUPPORTED: "Unsupported value",
    FORBIDDEN: "Forbidden",
    TOO_LONG: "Too long",
    TOO_MANY: "Too many",
    INTERNAL: "Internal error",
    TYPE_INVALID: "Invalid value",
    UNKNOWN_FIELD: "Unknown field",
}


class Path:
    """An immutable field path; ``child`` for fields, ``index`` for list items, ``key`` for map keys.
    Its text is worked out when first asked for and kept (paths built once, as constants, are
    rendered once)."""

    __slots__ = ("_parent", "_name", "_index", "_text")

    def __init__(self, name: str = "", parent: "Path | None" = None, index: str | None = None) -> None:
        self._parent = parent
        self._name = name
        self._index = index
        self._text: str | None = None

    @classmethod
    def root(cls, *names: str) -> "Path":
        path = cls(names[0]) if names else cls("")
        for name in names[1:]:
            path = path.child(name)
        return path

    def child(self, name: str, *more: str) -> "Path":
        path = Path(name, self)
        for n in more:
            path = Path(n, path)
        return path

    def index(self, i: int) -> "Path":
        return Path("", self, str(i))

    def key(self, k: str) -> "Path":
        return Path("", self, k)

    def __str__(self) -> str:
        if self._text is None:
            parts: list[str] = []
            node: Path | None = self
            while node is not None:
                if node._index is not None:
                    parts.append(f"[{node._index}]")
                elif node._name:
                    parts.append("." + node._name)
                node = node._parent
            self._text = "".join(reversed(parts)).lstrip(".")
        return self._text

    def __repr__(self) -> str:
        return f"Path({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


#: A field path not built yet: a :class:`Path`, then the steps below it, each a field name (a
#: ``str``) or a list index (an ``int``): ``(path, "requests", 0, "exactly")``. Validation of
#: objects that arrive by the thousand passes these (a tuple costs a tenth of a :class:`Path`) and
#: builds the path with :func:`path_at` only for an error.
Steps = tuple[Any, ...]


def path_at(steps: Steps) -> Path:
    """The :class:`Path` that ``steps`` stand for."""
    path: Path = steps[0]
    for step in steps[1:]:
        path = path.index(step) if type(step) is int else path.child(step)
    return path


_OMIT = object()


@dataclass(frozen=True)
class FieldError:
    """One validation error: ``type`` is upstream's ErrorType, ``field`` the rendered path."""

    type: str
    field: str
    value: Any
    message: str

    def __str__(self) -> str:
        desc = DESCRIPTIONS.get(self.type, self.type)
        omitted = self.type == TOO_MANY and not (isinstance(self.value, int) and self.value >= 0)
        if self.type in (REQUIRED, FORBIDDEN, TOO_LONG, INTERNAL) or self.value is _OMIT or omitted:
            detail = f"{desc}" + (f": {self.message}" if self.message else "")
        else:
            detail = f"{desc}: {_render_value(self.value)}" + (f": {self.message}" if self.message else "")
        return f"{self.field}: {detail}"

    def to_dict(self) -> dict[str, Any]:
        """The ``validate -o json`` form: type, field, value, message."""
        value = None if self.value is _OMIT else self.value
        return {"type": self.type, "field": self.field, "value": value, "message": self.message}


def required(path: Path, message: str = "") -> FieldError:
    return FieldError(REQUIRED, str(path), _OMIT, message)


def invalid(path: Path, value: Any, message: str) -> FieldError:
    return FieldError(INVALID, str(path), value, message)


def duplicate(path: Path, value: Any) -> FieldError:
    return FieldError(DUPLICATE, str(path), value, "")


def not_supported(path: Path, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(f'"{v}"' for v in valid)
    return FieldError(NOT_SUPPORTED, str(path), value, f"supported values: {quoted}")


def forbidden(path: Path, message: str) -> FieldError:
    return FieldError(FORBIDDEN, str(path), _OMIT, message)


def too_long(path: Path, value: Any, max_length: int) -> FieldError:
    return FieldError(TOO_LONG, str(path), value, f"may not be more than {max_length} bytes")


def too_many(path: Path, actual: int, max_items: int) -> FieldError:
    return FieldError(TOO_MANY, str(path), actual, f"must have at most {max_items} items")


def unknown_field(field_path: str) -> FieldError:
    """A field the API does not define (strict field validation's ``unknown field``)."""
    return FieldError(UNKNOWN_FIELD, field_path, _OMIT, "")


def internal(path: Path, message: str) -> FieldError:
    return FieldError(INTERNAL, str(path), _OMIT, message)


def immutable(path: Path, value: Any) -> FieldError:
    """The ``field is immutable`` error of ``ValidateImmutableField``."""
    return invalid(path, value, "field is immutable")
