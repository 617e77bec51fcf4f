"""core/v1 NodeSelector (``ValidateNodeSelector``, with no tolerance for invalid label values):
at least one term, each requirement's operator, key and values."""

from __future__ import annotations

from typing import Any

from kubectl_dra.validation import schema

from .field import FieldError, Path, forbidden, invalid, required
from .names import validate_label_name, validate_label_value, validate_node_name
from .schema import shaped

__all__ = ["validate_node_selector", "validate_node_selector_term"]


_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@shaped(schema.NODE_SELECTOR)
def validate_node_selector(selector: Any, path: Path) -> list[FieldError]:
    """A core/v1 NodeSelector: at least one term, valid requirements in each term."""
    selector = selector or {}
    terms_path = path.child("nodeSelectorTerms")
    terms = selector.get("nodeSelectorTerms") or []
    if not terms:
        return [required(terms_path, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        errs.extend(validate_node_selector_term(term, terms_path.index(i)))
    return errs


@shaped(schema.NODE_SELECTOR_TERM)
def validate_node_selector_term(term: Any, path: Path) -> list[FieldError]:
    """One NodeSelectorTerm: label requirements and field requirements."""
    term = term or {}
    errs: list[FieldError] = []
    for j, req in enumerate(term.get("matchExpressions") or []):
        errs.extend(_validate_node_selector_requirement(req or {}, path.child("matchExpressions").index(j)))
    for j, req in enumerate(term.get("matchFields") or []):
        errs.extend(_validate_node_field_requirement(req or {}, path.child("matchFields").index(j)))
    return errs


def _validate_node_selector_requirement(req: dict[str, Any], path: Path) -> list[FieldError]:
    """A label requirement: operator/values pairing, label-key syntax, label-value syntax."""
    errs: list[FieldError] = []
    op = req.get("operator") or ""
    values = req.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(path.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                required(path.child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        errs.append(invalid(path.child("operator"), op, "not a valid selector operator"))
    errs.extend(validate_label_name(req.get("key") or "", path.child("key")))
    for i, value in enumerate(values):
        errs.extend(validate_label_value(str(value), path.child("values").index(i)))
    return errs


def _validate_node_field_requirement(req: dict[str, Any], path: Path) -> list[FieldError]:
    """A field requirement: only ``metadata.name`` with In/NotIn and one node name."""
    errs: list[FieldError] = []
    op = req.get("operator") or ""
    values = req.get("values") or []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                required(
                    path.child("values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(invalid(path.child("operator"), op, "not a valid selector operator"))
    key = req.get("key") or ""
    if key != "metadata.name":
        errs.append(invalid(path.child("key"), key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs.extend(validate_node_name(str(value), path.child("values").index(i)))
    return errs
