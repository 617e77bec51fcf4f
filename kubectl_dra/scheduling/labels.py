"""metav1.LabelSelector matching, as the scheduler's plugins read pod and namespace selectors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import InputError

#: operators of a LabelSelectorRequirement
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` requirement."""

    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy the requirement (apimachinery's labels.Requirement)."""
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        return not present  # DoesNotExist


@dataclass(frozen=True, slots=True)
class Selector:
    """A parsed label selector: ``nothing`` selects no object (a nil selector), an empty
    requirement list selects every object (an empty ``{}`` selector)."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def with_requirements(self, extra: tuple[Requirement, ...]) -> "Selector":
        """This selector with ``extra`` requirements ANDed (matchLabelKeys, mismatchLabelKeys)."""
        if self.nothing or not extra:
            return self
        return Selector(self.requirements + extra)


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def parse_selector(selector: Any, where: str) -> Selector:
    """A metav1.LabelSelector dict (None: selects nothing). Raises :class:`InputError`
    naming ``where`` (object and field) for a malformed one, as the API server refuses it."""
    if selector is None:
        return NOTHING
    if not isinstance(selector, dict):
        raise InputError(f"{where}: must be a label selector object")
    reqs: list[Requirement] = []
    for key, value in sorted((selector.get("matchLabels") or {}).items()):
        reqs.append(Requirement(str(key), "In", frozenset([str(value)])))
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        op = (expr or {}).get("operator")
        if op not in _OPERATORS:
            raise InputError(f"{where}.matchExpressions[{i}].operator: {op!r} is not a valid label selector "
                             f"operator (one of {', '.join(_OPERATORS)})")
        values = [str(v) for v in expr.get("values") or []]
        if op in ("In", "NotIn") and not values:
            raise InputError(f"{where}.matchExpressions[{i}].values: must be specified when operator is {op}")
        if op in ("Exists", "DoesNotExist") and values:
            raise InputError(f"{where}.matchExpressions[{i}].values: may not be specified when operator is {op}")
        reqs.append(Requirement(str(expr.get("key") or ""), op, frozenset(values)))
    return Selector(tuple(reqs))


def labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    """metadata.labels of an object (empty when absent)."""
    labels = ((obj or {}).get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}
