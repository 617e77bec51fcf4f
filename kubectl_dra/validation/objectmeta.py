"""Object metadata (apimachinery ``ValidateObjectMeta``, its update rules and the core
finalizer rule): name, namespace, labels, annotations, owner references, finalizers."""

from __future__ import annotations

from typing import Any

from kubectl_dra.validation import schema

from .field import FieldError, Path, forbidden, immutable, invalid, required, too_long
from ..nameformats import (
    dns1123_label_ok,
    dns1123_subdomain_ok,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from .schema import STR, Schema, shaped, type_errors

__all__ = [
    "TOTAL_ANNOTATION_SIZE", "validate_annotations", "validate_finalizers", "validate_labels", "validate_object_meta",
    "validate_object_meta_update", "validate_template_meta",
]


TOTAL_ANNOTATION_SIZE = 256 * 1024
_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
_OBJECT_META = Schema(schema.OBJECT_META)


def validate_labels(labels: Any, path: Path) -> list[FieldError]:
    """Label keys are qualified names, values label values; errors at the map path."""
    errs: list[FieldError] = []
    if not labels:
        return errs
    if not isinstance(labels, dict):
        return [invalid(path, labels, "must be a map of strings")]
    for k, v in labels.items():
        errs.extend(invalid(path, k, m) for m in is_qualified_name(str(k)))
        errs.extend(invalid(path, v, m) for m in is_valid_label_value("" if v is None else str(v)))
    return errs


def validate_annotations(annotations: Any, path: Path) -> list[FieldError]:
    """Annotation keys are qualified names (case-insensitive); total size ≤256 KiB."""
    errs: list[FieldError] = []
    if not annotations:
        return errs
    if not isinstance(annotations, dict):
        return [invalid(path, annotations, "must be a map of strings")]
    total = 0
    for k, v in annotations.items():
        errs.extend(invalid(path, k, m) for m in is_qualified_name(str(k).lower()))
        total += len(str(k).encode("utf-8")) + len(("" if v is None else str(v)).encode("utf-8"))
    if total > TOTAL_ANNOTATION_SIZE:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE))
    return errs


@shaped([STR])
def validate_finalizers(finalizers: Any, path: Path) -> list[FieldError]:
    """Finalizers: qualified names; without a ``/`` only the standard ones; not orphan+foreground."""
    errs: list[FieldError] = []
    if not finalizers:
        return errs
    for name in finalizers:
        name = str(name)
        errs.extend(invalid(path, name, m) for m in is_qualified_name(name))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"))
    for name in finalizers:
        name = str(name)
        if is_qualified_name(name):
            continue
        if "/" not in name and name not in _STANDARD_FINALIZERS:
            errs.append(invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"))
    return errs


def _validate_owner_references(refs: Any, path: Path) -> list[FieldError]:
    """Owner references need apiVersion, kind, name, uid; at most one controller."""
    errs: list[FieldError] = []
    controllers = 0
    for ref in refs or []:
        ref = ref or {}
        if not ref.get("apiVersion"):
            errs.append(invalid(path.child("apiVersion"), ref.get("apiVersion", ""), "version must not be empty"))
        if not ref.get("kind"):
            errs.append(invalid(path.child("kind"), ref.get("kind", ""), "must not be empty"))
        if not ref.get("name"):
            errs.append(invalid(path.child("name"), ref.get("name", ""), "must not be empty"))
        if not ref.get("uid"):
            errs.append(invalid(path.child("uid"), ref.get("uid", ""), "must not be empty"))
        if ref.get("controller"):
            controllers += 1
    if controllers > 1:
        errs.append(invalid(path, refs, "Only one reference can have Controller set to true"))
    return errs


def validate_object_meta(meta: Any, namespaced: bool, path: Path | None = None) -> list[FieldError]:
    """ObjectMeta create rules: name/generateName as DNS subdomain, namespace per scope,
    generation ≥ 0, labels, annotations, owner references, finalizers."""
    path = path or Path.root("metadata")
    shape_errs = type_errors(_OBJECT_META, meta, path)
    if shape_errs:
        return shape_errs
    meta = meta or {}
    errs: list[FieldError] = []
    name = meta.get("name") or ""
    generate_name = meta.get("generateName") or ""
    if generate_name:
        prefix = generate_name[:-1] if generate_name.endswith("-") else generate_name
        errs.extend(invalid(path.child("generateName"), generate_name, m) for m in is_dns1123_subdomain(prefix))
    if not name:
        if not generate_name:
            errs.append(required(path.child("name"), "name or generateName is required"))
    elif not dns1123_subdomain_ok(name):  # (a valid name, the usual case, costs one match)
        errs.extend(invalid(path.child("name"), name, m) for m in is_dns1123_subdomain(name))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required(path.child("namespace"), ""))
        elif not dns1123_label_ok(namespace):
            errs.extend(invalid(path.child("namespace"), namespace, m) for m in is_dns1123_label(namespace))
    elif namespace:
        errs.append(forbidden(path.child("namespace"), "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(invalid(path.child("generation"), generation, "must be greater than or equal to 0"))
    # each check finds nothing in an absent or empty value: its path is built only for one given
    if meta.get("labels"):
        errs.extend(validate_labels(meta["labels"], path.child("labels")))
    if meta.get("annotations"):
        errs.extend(validate_annotations(meta["annotations"], path.child("annotations")))
    if meta.get("ownerReferences"):
        errs.extend(_validate_owner_references(meta["ownerReferences"], path.child("ownerReferences")))
    if meta.get("finalizers"):
        errs.extend(validate_finalizers(meta["finalizers"], path.child("finalizers")))
    return errs


def validate_object_meta_update(new: Any, old: Any, path: Path | None = None) -> list[FieldError]:
    """ObjectMeta update rules: name and namespace immutable, uid and deletion fields immutable when
    given (the generic update path copies them from the stored object when omitted), plus the label,
    annotation and owner-reference rules of the new object."""
    path = path or Path.root("metadata")
    shape_errs = type_errors(_OBJECT_META, new, path) + type_errors(_OBJECT_META, old, path)
    if shape_errs:
        return shape_errs
    new = new or {}
    old = old or {}
    errs: list[FieldError] = []
    for fld in ("name", "namespace"):
        if (new.get(fld) or "") != (old.get(fld) or ""):
            errs.append(immutable(path.child(fld), new.get(fld) or ""))
    for fld in ("uid", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if new.get(fld) not in (None, "") and new.get(fld) != old.get(fld):
            errs.append(immutable(path.child(fld), new.get(fld)))
    errs.extend(validate_labels(new.get("labels"), path.child("labels")))
    errs.extend(validate_annotations(new.get("annotations"), path.child("annotations")))
    errs.extend(_validate_owner_references(new.get("ownerReferences"), path.child("ownerReferences")))
    return errs


@shaped(schema.OBJECT_META)
def validate_template_meta(meta: Any, path: Path) -> list[FieldError]:
    """Metadata embedded in a template (e.g. ResourceClaimTemplate ``spec.metadata``): labels and
    annotations only."""
    meta = meta or {}
    errs = validate_labels(meta.get("labels"), path.child("labels"))
    errs.extend(validate_annotations(meta.get("annotations"), path.child("annotations")))
    return errs
