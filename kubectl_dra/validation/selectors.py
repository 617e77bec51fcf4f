"""CEL in DRA objects: device selectors (classes and claim requests) and derived-attribute
expressions, compiled and costed through :mod:`kubectl_dra.cel` in the environment of the
enabled gates."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from kubectl_dra.cel import limits as cel_limits
from kubectl_dra.gates import Gate, GateReader
from kubectl_dra.validation import schema

from .field import FieldError, Path, Steps, forbidden, internal, invalid, path_at, required, too_long
from .gating import gate_enabled
from .lists import validate_list
from .schema import shaped

if TYPE_CHECKING:  # pragma: no cover
    from kubectl_dra.gates import FeatureGates

__all__ = [
    "CEL_EXPRESSION_MAX_COST", "CEL_EXPRESSION_MAX_LENGTH", "DERIVED_ATTRIBUTES_TOTAL_MAX_COST",
    "DERIVED_SCALAR_TYPES", "check_derived_expression", "selector_errors", "validate_cel_selector",
    "validate_selector", "validate_selectors",
]


CEL_EXPRESSION_MAX_LENGTH = cel_limits.MAX_LENGTH
CEL_EXPRESSION_MAX_COST = cel_limits.MAX_COST


@shaped([schema.DEVICE_SELECTOR])
def validate_selectors(
    selectors: Any, path: Path, gates: GateReader | None, stored: bool = False, max_items: int = 32
) -> list[FieldError]:
    """A list of DeviceSelectors: ≤``max_items`` (TooMany short-circuits), each with a valid CEL."""
    return validate_list(selectors, path, max_items, lambda s, p: validate_selector(s, p, gates, stored))


@shaped(schema.DEVICE_SELECTOR)
def validate_selector(selector: Any, path: Path, gates: GateReader | None, stored: bool = False) -> list[FieldError]:
    """One DeviceSelector: ``cel`` is required and must hold a valid expression."""
    return selector_errors(selector, (path,), gate_enabled(gates, Gate.CONSUMABLE_CAPACITY),
                           gate_enabled(gates, Gate.LIST_TYPE_ATTRIBUTES), stored)


@shaped(schema.CEL_SELECTOR)
def validate_cel_selector(cel: Any, path: Path, gates: GateReader | None, stored: bool = False) -> list[FieldError]:
    """A CEL selector expression: ≤10 KiB (then not compiled), compiles to bool, cost ≤ 1,000,000.
    A ``stored`` expression (unchanged since it was admitted) is not checked again."""
    if stored:
        return []
    expression = (cel or {}).get("expression") or ""
    verdict = _checked_verdict(expression, gate_enabled(gates, Gate.CONSUMABLE_CAPACITY),
                               gate_enabled(gates, Gate.LIST_TYPE_ATTRIBUTES))
    return [] if verdict is None else _verdict_errors(verdict, expression, path.child("expression"))


def selector_errors(selector: Any, where: Steps, consumable_capacity: bool, list_type_attributes: bool,
                    stored: bool = False) -> list[FieldError]:
    """:func:`validate_selector` of a decoded selector at ``where`` (built only for an error) with
    the two gates it reads already read: a claim's validation reads them once for all its selectors."""
    cel = selector.get("cel") if isinstance(selector, dict) else None
    if cel is None:
        return [required(path_at(where + ("cel",)), "")]
    if stored:
        return []
    expression = cel.get("expression") or ""
    verdict = _checked_verdict(expression, consumable_capacity, list_type_attributes)
    return [] if verdict is None else _verdict_errors(verdict, expression, path_at(where + ("cel", "expression")))


def _checked_verdict(expression: str, consumable_capacity: bool, list_type_attributes: bool) -> tuple[str, str] | None:
    """:func:`_selector_verdict`, with a failure of the engine as an ``Internal`` verdict."""
    try:
        return _selector_verdict(expression, consumable_capacity, list_type_attributes)
    except Exception as exc:  # noqa: BLE001 - a broken engine must not crash validation
        return "Internal", f"CEL check failed: {exc}"


def _verdict_errors(verdict: tuple[str, str], expression: str, path: Path) -> list[FieldError]:
    """The field error of a bad expression's verdict, at the expression's ``path``."""
    reason, detail = verdict
    if reason == "TooLong":
        return [too_long(path, "", CEL_EXPRESSION_MAX_LENGTH)]
    if reason == "Forbidden":
        return [forbidden(path, detail)]
    if reason == "Required":
        return [required(path, detail)]
    if reason == "Internal":
        return [internal(path, detail)]
    return [invalid(path, expression, detail)]


@functools.lru_cache(maxsize=cel_limits.COMPILE_CACHE_SIZE)
def _selector_verdict(expression: str, consumable_capacity: bool, list_type_attributes: bool) -> tuple[str, str] | None:
    """None for a valid selector expression, else (field error type, detail): a pure function of
    its arguments, memoised (claims repeat their classes' and each other's selectors; the
    engine's own answer is memoised too, this spares the steps around it). Exceptions are not
    remembered."""
    if len(expression.encode("utf-8")) > CEL_EXPRESSION_MAX_LENGTH:
        return "TooLong", ""
    result = _check_cel(expression, consumable_capacity, list_type_attributes)
    errors = [str(e) for e in (getattr(result, "errors", None) or [])]
    reason = getattr(result, "reason", None)
    cost = getattr(result, "cost", None)
    if reason == "TooLong":
        return "TooLong", ""
    if reason == "Forbidden" or (not errors and cost is not None and cost > CEL_EXPRESSION_MAX_COST):
        return "Forbidden", "too complex, exceeds cost limit"
    if reason == "Required":
        return "Required", "; ".join(errors)
    if errors:
        return "Invalid", "; ".join(errors)
    return None


def _check_cel(expression: str, consumable_capacity: bool, list_type_attributes: bool) -> Any:
    """``kubectl_dra.cel.check_expression`` in the NewExpressions environment of the enabled gates."""
    from kubectl_dra.cel import check_expression

    return check_expression(expression, result="bool", consumable_capacity=consumable_capacity,
                            list_type_attributes=list_type_attributes)


#: Shared budget of all derived-attribute expressions of one claim. The upstream
#: value is not in the sources we have; the per-expression limit is assumed.
DERIVED_ATTRIBUTES_TOTAL_MAX_COST = cel_limits.MAX_COST
#: CEL result types a derived attribute may have: the device attribute types, or "unknown".
DERIVED_SCALAR_TYPES = ("bool", "int", "string", "kubernetes.Semver", "dyn")


def check_derived_expression(expression: str, path: Path, gates: "FeatureGates") -> tuple[list[FieldError], int]:
    """Length, compilation, result type and cost of a derived-attribute expression; returns
    (errors, cost). The result must be a scalar (or, with DRAListTypeAttributes, a list of scalars)."""
    if len(expression.encode("utf-8")) > CEL_EXPRESSION_MAX_LENGTH:
        return [too_long(path, "", CEL_EXPRESSION_MAX_LENGTH)], 0
    from ..cel import check_expression, compile_expression  # the engine loads on first use
    lists = gate_enabled(gates, Gate.LIST_TYPE_ATTRIBUTES)
    checked = check_expression(
        expression,
        result="any",
        consumable_capacity=gate_enabled(gates, Gate.CONSUMABLE_CAPACITY),
        list_type_attributes=lists,
    )
    if checked.reason == "Forbidden":
        return [forbidden(path, "too complex, exceeds cost limit")], int(checked.cost or 0)
    if checked.errors:
        return [invalid(path, expression, "; ".join(checked.errors))], 0
    cost = int(checked.cost or 0)
    output_type = getattr(checked, "output_type", None) or compile_expression(expression, result="any").output_type
    if not _derived_type_ok(output_type, lists):
        allowed = "bool, int, string or semver" + (", or a list of those" if lists else "")
        return [invalid(path, expression, f"must evaluate to {allowed}, not {output_type}")], cost
    if cost > min(CEL_EXPRESSION_MAX_COST, DERIVED_ATTRIBUTES_TOTAL_MAX_COST):
        return [forbidden(path, "too complex, exceeds cost limit")], cost
    return [], cost


def _derived_type_ok(output_type: str, lists: bool) -> bool:
    if output_type in DERIVED_SCALAR_TYPES:
        return True
    if lists and output_type.startswith("list(") and output_type.endswith(")"):
        return output_type[5:-1] in DERIVED_SCALAR_TYPES
    return False
