"""Type errors of API objects as field errors: :mod:`kubectl_dra.schema`'s misfits in the API server's terms.

The schema notation, the per-kind schemas and the compiled checks live in
:mod:`kubectl_dra.schema` (shared with the state loader); this module re-exports them for the
validation package and turns each :class:`~kubectl_dra.schema.Misfit` into a
``FieldValueTypeInvalid`` :class:`~kubectl_dra.validation.field.FieldError`.
"""

from __future__ import annotations

from typing import Any

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
    "json_type", "kind_schema", "map_of", "type_errors",
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
