"""Type errors of API objects as field errors: :mod:`kubectl_dra.schema`'s misfits in the API server's terms.

The schema notation, the per-kind schemas and the compiled checks live in
:mod:`kubectl_dra.schema` (shared with the state loader); this module re-exports them for the
validation package and turns each :class:`~kubectl_dra.schema.Misfit` into a
``FieldValueTypeInvalid`` :class:`~kubectl_dra.validation.field.FieldError`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..schema import (
    ANY, BINDING_CONDITIONS, BOOL, CEL_SELECTOR, DEVICE_SELECTOR, DEVICE_TAINT, DEVICE_TOLERATION, INT,
    INT64_MAX, INT64_MIN, KIND_SCHEMAS, METADATA_ONLY, NODE_SELECTOR, NODE_SELECTOR_TERM, OBJECT_META,
    OPAQUE_CONFIG, QUANTITY, SCHEMAS, STR, TIMESTAMP, Misfit, Schema, decode_misfits, json_type, kind_schema,
    map_of,
)
from .field import TYPE_INVALID, FieldError, Path

__all__ = [
    "ANY", "BINDING_CONDITIONS", "BOOL", "CEL_SELECTOR", "DEVICE_SELECTOR", "DEVICE_TAINT", "DEVICE_TOLERATION",
    "INT", "INT64_MAX", "INT64_MIN", "KIND_SCHEMAS", "METADATA_ONLY", "NODE_SELECTOR", "NODE_SELECTOR_TERM",
    "OBJECT_META", "OPAQUE_CONFIG", "QUANTITY", "SCHEMAS", "STR", "TIMESTAMP", "Schema", "decode_errors",
    "json_type", "kind_schema", "map_of", "shaped", "type_errors", "wrong_type",
]


def _field_error(misfit: Misfit, prefix: str) -> FieldError:
    """One misfit as the API server's ``FieldValueTypeInvalid`` error; ``prefix`` starts its message."""
    return FieldError(TYPE_INVALID, misfit.field, misfit.value, prefix + misfit.message)


def type_errors(schema: Schema, value: Any, path: Path | None = None, prefix: str = "") -> list[FieldError]:
    """``FieldValueTypeInvalid`` errors at ``path`` for each part of ``value`` that does not fit
    ``schema``; ``prefix`` starts each message. Empty, and nothing built, when it all fits."""
    if schema.fits(value):
        return []
    return [_field_error(misfit, prefix) for misfit in schema.misfits(value, None if path is None else str(path))]


def decode_errors(obj: Any, kind: str, prefix: str = "", schema: Schema | Any = None) -> list[FieldError]:
    """``FieldValueTypeInvalid`` errors for every value of ``obj`` whose JSON type does not fit
    the kind's schema (or ``schema``: a :class:`Schema`, or a spec in the notation of
    :mod:`kubectl_dra.schema`, compiled for this call). A document that is no object is one
    error at ``<root>``."""
    compiled = schema if schema is None or isinstance(schema, Schema) else Schema(schema)
    return [_field_error(misfit, prefix) for misfit in decode_misfits(obj, kind, compiled)]


def wrong_type(path: Path, value: Any, expected: str) -> FieldError:
    """A decode-level type error in :mod:`.schema`'s wording: the expected and the actual JSON type."""
    shown = json_type(value) if isinstance(value, (dict, list)) else value
    return FieldError(TYPE_INVALID, str(path), shown, f"must be {expected}, not {json_type(value)}")


def shaped(spec: Any) -> Callable[[Callable[..., list[FieldError]]], Callable[..., list[FieldError]]]:
    """Guard a helper ``f(value, path, ...)`` against values that do not fit ``spec`` (a
    :mod:`.schema` schema, compiled once here).

    :func:`~kubectl_dra.validation.admission.review` decodes objects against the kind schemas
    before any handler runs, so there the guard always passes; it is for direct callers (the
    metadata checker, tests), which get ``FieldValueTypeInvalid`` errors at ``path`` instead of
    an exception. ``None`` stands for the zero value, as Go decodes ``null`` (an empty string
    for string helpers).
    """

    def wrap(fn: Callable[..., list[FieldError]]) -> Callable[..., list[FieldError]]:
        if spec == STR:  # the hot path: names of every device in every slice

            @functools.wraps(fn)
            def guarded_str(value: Any, path: Path, *args: Any, **kwargs: Any) -> list[FieldError]:
                if type(value) is str:
                    return fn(value, path, *args, **kwargs)
                if value is None:
                    return fn("", path, *args, **kwargs)
                return [wrong_type(path, value, "a string")]

            return guarded_str

        compiled = Schema(spec)

        @functools.wraps(fn)
        def guarded(value: Any, path: Path, *args: Any, **kwargs: Any) -> list[FieldError]:
            if compiled.fits(value):
                return fn(value, path, *args, **kwargs)
            return type_errors(compiled, value, path)

        return guarded

    return wrap
