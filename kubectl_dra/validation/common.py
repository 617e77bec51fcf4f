"""Validation helpers shared by every DRA kind (slices, classes, claims, templates, pods).

They restate the apimachinery/core rules the resource validation relies on and the
small DRA formats, each returning a list of :class:`FieldError` at upstream's paths.

Public functions (names are stable; H6 builds on them):

Formats (return lists of messages, like apimachinery ``Is*``):
    ``is_dns1123_label``, ``is_dns1123_subdomain``, ``is_qualified_name``,
    ``is_valid_label_value``, ``is_c_identifier``, ``is_semver``

Field checks (return ``list[FieldError]``):
    ``validate_object_meta(meta, namespaced, path)``            create rules of ObjectMeta
    ``validate_object_meta_update(new, old, path)``             update rules (immutability, labels, ...)
    ``validate_template_meta(meta, path)``                      labels/annotations of a template
    ``validate_labels``, ``validate_annotations``, ``validate_finalizers``
    ``validate_dns_label(value, path)``, ``validate_dns_subdomain(value, path)``
    ``validate_label_name(key, path)`` (label key / qualified name), ``validate_label_value``
    ``validate_driver_name(value, path)``, ``validate_pool_name(value, path)``
    ``validate_device_name(value, path)``, ``validate_node_name(value, path)``
    ``validate_c_identifier(value, path)``
    ``validate_qualified_name(name, path)``        DRA ``ID`` or ``domain/ID`` (attribute/capacity keys)
    ``validate_fully_qualified_name(name, path)``  DRA ``domain/ID`` (matchAttribute)
    ``validate_node_selector(selector, path)``     core/v1 NodeSelector rules (>=1 term)
    ``validate_node_selector_term(term, path)``    one NodeSelectorTerm
    ``validate_device_taint(taint, path)``, ``validate_device_toleration(tol, path, effects=...)``
    ``validate_binding_conditions(device, path)``  bindingConditions/bindingFailureConditions pair
    ``validate_skip_node_operations(values, path)``
    ``validate_selectors(selectors, path, gates, stored=False)`` / ``validate_selector(...)`` /
    ``validate_cel_selector(cel, path, gates, stored=False)`` CEL via ``kubectl_dra.cel``
    ``validate_opaque_configuration(opaque, path, stored=False)`` / ``validate_raw_extension(...)``
    ``validate_list(items, path, max_items, validate_item, key=None)``  TooMany short-circuit + Duplicate
JSON types: the structured helpers answer a value that does not fit their part of the
:mod:`kubectl_dra.validation.schema` schemas with ``FieldValueTypeInvalid`` errors (the
admission path has decoded the whole object against its kind's schema before they run).
Other:
    ``middle_truncate(key, max_len)``  shortened map keys in paths
    ``immutable(path, value)``  the "field is immutable" error
    ``semantic_equal(a, b, quantities=False)``  Semantic.DeepEqual on decoded JSON (empty == absent)
    ``parse_quantity(value) -> Quantity``  a resource.Quantity decoded as from JSON
    ``gate_enabled(gates, gate)``  whether a ``Gate`` is on (None = all off; a name outside
    the gate table is a FeatureGateError, as ``FeatureGates.enabled`` has it)
    ``json_size(value)``  bytes of the compact JSON encoding
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Callable, Iterable, Sequence

from kubectl_dra.cel import limits as cel_limits
from kubectl_dra.gates import Gate, GateReader, known_gate
from kubectl_dra.quantity import Quantity, QuantityError
from kubectl_dra.validation import schema
from kubectl_dra.validation.schema import STR, Schema, json_type, type_errors
from kubectl_dra.validation.field import (
    TYPE_INVALID,
    FieldError,
    Path,
    duplicate,
    forbidden,
    internal,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)

__all__ = [
    "is_dns1123_label",
    "dns1123_label_ok",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "is_c_identifier",
    "is_semver",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_template_meta",
    "validate_labels",
    "validate_annotations",
    "validate_finalizers",
    "validate_dns_label",
    "validate_dns_subdomain",
    "validate_label_name",
    "validate_label_value",
    "validate_driver_name",
    "validate_pool_name",
    "validate_device_name",
    "validate_node_name",
    "validate_c_identifier",
    "validate_qualified_name",
    "is_valid_qualified_name",
    "validate_fully_qualified_name",
    "validate_node_selector",
    "validate_node_selector_term",
    "validate_device_taint",
    "validate_device_toleration",
    "validate_binding_conditions",
    "validate_skip_node_operations",
    "validate_selectors",
    "validate_selector",
    "validate_cel_selector",
    "validate_opaque_configuration",
    "validate_raw_extension",
    "validate_list",
    "middle_truncate",
    "parse_quantity",
    "QuantityError",
    "gate_enabled",
    "json_size",
    "immutable",
    "semantic_equal",
]

# ---------------------------------------------------------------------------
# Limits (k8s.io/api resource/v1 constants and apimachinery limits)

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
DEVICE_ID_MAX = 32
TOTAL_ANNOTATION_SIZE = 256 * 1024
CEL_EXPRESSION_MAX_LENGTH = cel_limits.MAX_LENGTH
CEL_EXPRESSION_MAX_COST = cel_limits.MAX_COST
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
BINDING_CONDITIONS_MAX = 4

TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
TOLERATION_EFFECTS = ("NoExecute", "NoSchedule")
TOLERATION_OPERATORS = ("Equal", "Exists")
SKIP_NODE_OPERATIONS = ("*", "NodePrepareResources", "NodeUnprepareResources")

# ---------------------------------------------------------------------------
# Formats (apimachinery k8s.io/apimachinery/pkg/util/validation)

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(f"^{_QUALIFIED_NAME_FMT}$")
_LABEL_VALUE_RE = re.compile(f"^({_QUALIFIED_NAME_FMT})?$")
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_RE = re.compile(f"^{_C_IDENTIFIER_FMT}$")
# semver 2.0.0 as blang/semver v4 parses it (no "v" prefix, no leading zeros).
_NUM = r"(0|[1-9][0-9]*)"
_PRE_ID = r"(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER_RE = re.compile(
    rf"^{_NUM}\.{_NUM}\.{_NUM}(-{_PRE_ID}(\.{_PRE_ID})*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream's ``RegexError`` wording: message, examples, regex."""
    text = msg
    if examples:
        text += " (e.g. " + ",  or ".join(f"'{e}'" for e in examples) + ", "
    else:
        text += " ("
    return text + f"regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    """Upstream's MaxLenError wording."""
    return f"must be no more than {length} characters"


def _format_errors(value: str, max_len: int | None, pattern: re.Pattern[str], regex_error: str) -> list[str]:
    """Upstream's two checks of a name format: its length limit, then its regular expression."""
    errs: list[str] = []
    if max_len is not None and len(value) > max_len:
        errs.append(_max_len_error(max_len))
    if not pattern.match(value):
        errs.append(regex_error)
    return errs


_DNS1123_LABEL_ERROR = _regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _DNS1123_LABEL_FMT, "my-name", "123-abc",
)
_DNS1123_SUBDOMAIN_ERROR = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character",
    _DNS1123_SUBDOMAIN_FMT, "example.com",
)
_QUALIFIED_NAME_ERROR = _regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character",
    _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc",
)
_LABEL_VALUE_ERROR = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    f"({_QUALIFIED_NAME_FMT})?", "MyValue", "my_value", "12345",
)
_C_IDENTIFIER_ERROR = _regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'",
    _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName",
)


def is_dns1123_label(value: str) -> list[str]:
    """Messages for a value that is not a lower-case RFC 1123 label (≤63)."""
    return _format_errors(value, DNS1123_LABEL_MAX, _DNS1123_LABEL_RE, _DNS1123_LABEL_ERROR)


def dns1123_label_ok(value: str) -> bool:
    """Whether ``value`` is a lower-case RFC 1123 label (:func:`is_dns1123_label` finds nothing)."""
    return len(value) <= DNS1123_LABEL_MAX and _DNS1123_LABEL_RE.match(value) is not None


def is_dns1123_subdomain(value: str) -> list[str]:
    """Messages for a value that is not a lower-case RFC 1123 subdomain (≤253)."""
    return _format_errors(value, DNS1123_SUBDOMAIN_MAX, _DNS1123_SUBDOMAIN_RE, _DNS1123_SUBDOMAIN_ERROR)


def is_qualified_name(value: str) -> list[str]:
    """Messages for a value that is not ``[prefix/]name`` (label keys, annotation keys, finalizers)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + _QUALIFIED_NAME_ERROR
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    else:
        errs.extend("name part " + m for m in _format_errors(name, QUALIFIED_NAME_MAX, _QUALIFIED_NAME_RE,
                                                              _QUALIFIED_NAME_ERROR))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Messages for a value that is not a label value (empty or ≤63 qualified-name characters)."""
    return _format_errors(value, LABEL_VALUE_MAX, _LABEL_VALUE_RE, _LABEL_VALUE_ERROR)


def is_c_identifier(value: str) -> list[str]:
    """Messages for a value that is not a C identifier."""
    return _format_errors(value, None, _C_IDENTIFIER_RE, _C_IDENTIFIER_ERROR)


@functools.lru_cache(maxsize=4096)
def is_semver(value: str) -> bool:
    """True for a semantic version 2.0.0 string as upstream's parser accepts it (memoised: a
    pure function of the text, and a slice's devices often share their versions)."""
    return bool(_SEMVER_RE.match(value))


# ---------------------------------------------------------------------------
# Guards: the helpers are public, so a value of the wrong JSON type gets an error, never an exception


def _type_error(path: Path, value: Any, expected: str) -> FieldError:
    """A decode-level type error in :mod:`.schema`'s wording: the expected and the actual JSON type."""
    shown = json_type(value) if isinstance(value, (dict, list)) else value
    return FieldError(TYPE_INVALID, str(path), shown, f"must be {expected}, not {json_type(value)}")


def _shaped(spec: Any) -> Callable[[Callable[..., list[FieldError]]], Callable[..., list[FieldError]]]:
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
                return [_type_error(path, value, "a string")]

            return guarded_str

        compiled = Schema(spec)

        @functools.wraps(fn)
        def guarded(value: Any, path: Path, *args: Any, **kwargs: Any) -> list[FieldError]:
            if compiled.fits(value):
                return fn(value, path, *args, **kwargs)
            return type_errors(compiled, value, path)

        return guarded

    return wrap


# ---------------------------------------------------------------------------
# Small helpers


def gate_enabled(gates: GateReader | None, gate: Gate) -> bool:
    """Whether ``gate`` is on in ``gates`` (None: no gate set, every feature off). The name is
    checked against the gate table first, so a name the table lacks is a FeatureGateError
    whatever ``gates`` is (a duck-typed set or None included), never read as off."""
    name = known_gate(gate)
    if gates is None:
        return False
    return bool(gates.enabled(name))


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON, the closest stand-in for the raw request bytes."""
    from ..model.jsoncopy import dumps_json  # any depth the API server's decoder accepts

    return len(dumps_json(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def middle_truncate(key: str, max_len: int) -> str:
    """Shorten a long map key for a field path as upstream does: head + ``...`` + tail, ``max_len``
    total (limits below 16 are raised to 16)."""
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    keep = max_len - 3
    head = (keep + 1) // 2
    tail = keep - head
    return key[:head] + "..." + key[len(key) - tail :]


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


def immutable(path: Path, value: Any) -> FieldError:
    """The ``field is immutable`` error of ``ValidateImmutableField``."""
    return invalid(path, value, "field is immutable")


def validate_list(
    items: Sequence[Any] | None,
    path: Path,
    max_items: int | None,
    validate_item: Callable[[Any, Path], list[FieldError]] | None = None,
    key: Callable[[Any], Any] | None = None,
) -> list[FieldError]:
    """Upstream's ``validateSlice``/``validateSet`` shape: TooMany short-circuits the entries;
    ``key`` (optional) reports a Duplicate at the later index; each entry goes to ``validate_item``."""
    items = items or []
    if max_items is not None and len(items) > max_items:
        return [too_many(path, len(items), max_items)]
    errs: list[FieldError] = []
    seen: set[Any] = set()
    for i, item in enumerate(items):
        item_path = path.index(i)
        if validate_item is not None:
            errs.extend(validate_item(item, item_path))
        if key is not None:
            k = key(item)
            k = json.dumps(k, sort_keys=True) if isinstance(k, (dict, list)) else k
            if k in seen:
                errs.append(duplicate(item_path, key(item)))
            seen.add(k)
    return errs


# ---------------------------------------------------------------------------
# Quantities


def parse_quantity(value: Any) -> Quantity:
    """A quantity as the API server decodes it from JSON (string or number); QuantityError if malformed."""
    if isinstance(value, Quantity):
        return value
    return Quantity.from_json(value)


# ---------------------------------------------------------------------------
# Names


@_shaped(STR)
def validate_dns_label(value: str, path: Path) -> list[FieldError]:
    """Invalid for each way ``value`` is not a DNS-1123 label."""
    return [invalid(path, value, m) for m in is_dns1123_label(value)]


@_shaped(STR)
def validate_dns_subdomain(value: str, path: Path) -> list[FieldError]:
    """Invalid for each way ``value`` is not a DNS-1123 subdomain."""
    return [invalid(path, value, m) for m in is_dns1123_subdomain(value)]


@_shaped(STR)
def validate_label_name(key: str, path: Path) -> list[FieldError]:
    """Label key / qualified name (``ValidateLabelName``): Invalid per problem, empty included."""
    return [invalid(path, key, m) for m in is_qualified_name(key)]


@_shaped(STR)
def validate_label_value(value: str, path: Path) -> list[FieldError]:
    """Label value syntax: Invalid per problem."""
    return [invalid(path, value, m) for m in is_valid_label_value(value)]


@_shaped(STR)
def validate_driver_name(value: str | None, path: Path) -> list[FieldError]:
    """Driver name (also DRA domains), as CSI driver names: required, ≤63, DNS subdomain after
    lower-casing (an empty value is both Required and Invalid, as upstream)."""
    value = value or ""
    errs: list[FieldError] = []
    if not value:
        errs.append(required(path, ""))
    if len(value) > DRIVER_NAME_MAX:
        errs.append(too_long(path, "", DRIVER_NAME_MAX))
    errs.extend(invalid(path, value, m) for m in is_dns1123_subdomain(value.lower()))
    return errs


@_shaped(STR)
def validate_pool_name(value: str | None, path: Path) -> list[FieldError]:
    """Pool name: required, ≤253, each ``/``-separated segment a DNS subdomain."""
    value = value or ""
    if not value:
        return [required(path, "")]
    errs: list[FieldError] = []
    if len(value) > POOL_NAME_MAX:
        errs.append(too_long(path, "", POOL_NAME_MAX))
    for part in value.split("/"):
        errs.extend(validate_dns_subdomain(part, path))
    return errs


@_shaped(STR)
def validate_device_name(value: str | None, path: Path) -> list[FieldError]:
    """Device name: a DNS-1123 label."""
    return validate_dns_label(value or "", path)


@_shaped(STR)
def validate_node_name(value: str, path: Path) -> list[FieldError]:
    """Node name syntax (``ValidateNodeName``): a DNS-1123 subdomain."""
    return validate_dns_subdomain(value, path)


@_shaped(STR)
def validate_c_identifier(value: str, path: Path) -> list[FieldError]:
    """DRA attribute/capacity ID: ≤32, C identifier syntax."""
    errs: list[FieldError] = []
    if len(value) > DEVICE_ID_MAX:
        errs.append(too_long(path, "", DEVICE_ID_MAX))
    errs.extend(invalid(path, value, m) for m in is_c_identifier(value))
    return errs


@_shaped(STR)
def validate_qualified_name(name: str | None, path: Path) -> list[FieldError]:
    """DRA QualifiedName (attribute/capacity key): ``ID`` or ``domain/ID``; errors at ``path``
    (the map itself for keys). Empty parts and extra slashes are Invalid."""
    name = name or ""
    parts = name.split("/")
    if len(parts) == 1:
        return validate_c_identifier(parts[0], path)
    if len(parts) == 2:
        errs: list[FieldError] = []
        domain, ident = parts
        if not domain:
            errs.append(invalid(path, "", "the domain must not be empty"))
        else:
            errs.extend(validate_driver_name(domain, path))
        if not ident:
            errs.append(invalid(path, "", "the name must not be empty"))
        else:
            errs.extend(validate_c_identifier(ident, path))
        return errs
    return [invalid(path, name, "must not contain more than one slash")]


@functools.lru_cache(maxsize=4096)
def is_valid_qualified_name(name: str) -> bool:
    """Whether :func:`validate_qualified_name` accepts ``name`` (a pure function of the text,
    memoised: the attribute and capacity keys of a slice repeat on every device)."""
    return not validate_qualified_name(name, Path(""))


@_shaped(STR)
def validate_fully_qualified_name(name: str | None, path: Path) -> list[FieldError]:
    """DRA FullyQualifiedName (``matchAttribute``, ``distinctAttribute``): a qualified name with a domain."""
    errs = validate_qualified_name(name, path)
    if "/" not in (name or ""):
        errs.append(invalid(path, name or "", "a fully qualified name must be a domain and a name separated by a slash"))
    return errs


# ---------------------------------------------------------------------------
# Object metadata (apimachinery ValidateObjectMeta + core finalizer rule)

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


@_shaped([STR])
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
    else:
        errs.extend(invalid(path.child("name"), name, m) for m in is_dns1123_subdomain(name))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required(path.child("namespace"), ""))
        else:
            errs.extend(invalid(path.child("namespace"), namespace, m) for m in is_dns1123_label(namespace))
    elif namespace:
        errs.append(forbidden(path.child("namespace"), "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(invalid(path.child("generation"), generation, "must be greater than or equal to 0"))
    errs.extend(validate_labels(meta.get("labels"), path.child("labels")))
    errs.extend(validate_annotations(meta.get("annotations"), path.child("annotations")))
    errs.extend(_validate_owner_references(meta.get("ownerReferences"), path.child("ownerReferences")))
    errs.extend(validate_finalizers(meta.get("finalizers"), path.child("finalizers")))
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


@_shaped(schema.OBJECT_META)
def validate_template_meta(meta: Any, path: Path) -> list[FieldError]:
    """Metadata embedded in a template (e.g. ResourceClaimTemplate ``spec.metadata``): labels and
    annotations only."""
    meta = meta or {}
    errs = validate_labels(meta.get("labels"), path.child("labels"))
    errs.extend(validate_annotations(meta.get("annotations"), path.child("annotations")))
    return errs


# ---------------------------------------------------------------------------
# core/v1 NodeSelector (ValidateNodeSelector, no tolerance for invalid label values)

_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@_shaped(schema.NODE_SELECTOR)
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


@_shaped(schema.NODE_SELECTOR_TERM)
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


# ---------------------------------------------------------------------------
# Taints, tolerations, binding conditions, skipNodeOperations


@_shaped(schema.DEVICE_TAINT)
def validate_device_taint(taint: Any, path: Path) -> list[FieldError]:
    """A DeviceTaint: key a label key, optional label value, effect required and known."""
    taint = taint or {}
    errs = validate_label_name(taint.get("key") or "", path.child("key"))
    value = taint.get("value") or ""
    if value:
        errs.extend(validate_label_value(value, path.child("value")))
    effect = taint.get("effect") or ""
    if not effect:
        errs.append(required(path.child("effect"), ""))
    elif effect not in TAINT_EFFECTS:
        errs.append(not_supported(path.child("effect"), effect, TAINT_EFFECTS))
    return errs


@_shaped(schema.DEVICE_TOLERATION)
def validate_device_toleration(
    toleration: Any, path: Path, effects: Iterable[str] = TAINT_EFFECTS
) -> list[FieldError]:
    """A DeviceToleration (after defaulting operator to Equal): key, operator/value pairing, effect
    (``effects``: the newest upstream code accepts the taint effects incl. ``None``; pass
    ``TOLERATION_EFFECTS`` for the older rule)."""
    toleration = toleration or {}
    errs: list[FieldError] = []
    key = toleration.get("key") or ""
    if key:
        errs.extend(validate_label_name(key, path.child("key")))
    op = toleration.get("operator") or ""
    value = toleration.get("value") or ""
    if op == "Exists":
        if value:
            errs.append(invalid(path.child("value"), value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs.extend(validate_label_value(value, path.child("value")))
    elif op == "":
        errs.append(required(path.child("operator"), ""))
    else:
        errs.append(not_supported(path.child("operator"), op, TOLERATION_OPERATORS))
    effect = toleration.get("effect") or ""
    allowed = tuple(sorted(effects))
    if effect and effect not in allowed:
        errs.append(not_supported(path.child("effect"), effect, allowed))
    return errs


@_shaped(schema.BINDING_CONDITIONS)
def validate_binding_conditions(obj: Any, path: Path) -> list[FieldError]:
    """``bindingConditions``/``bindingFailureConditions`` of a device or allocation result (``path``
    is the owner): ≤4 each (TooMany skips the item syntax, not the duplicate check), label-key
    syntax, unique, no overlap, both or neither."""
    obj = obj or {}
    conds = list(obj.get("bindingConditions") or [])
    failures = list(obj.get("bindingFailureConditions") or [])
    cpath = path.child("bindingConditions")
    fpath = path.child("bindingFailureConditions")
    errs = validate_list(conds, cpath, BINDING_CONDITIONS_MAX, lambda c, p: validate_label_name(str(c), p))
    errs.extend(validate_list(failures, fpath, BINDING_CONDITIONS_MAX, lambda c, p: validate_label_name(str(c), p)))
    seen: set[str] = set()
    for i, cond in enumerate(conds):
        if cond in seen:
            errs.append(duplicate(cpath.index(i), cond))
        seen.add(cond)
    cond_set = set(conds)
    seen = set()
    for i, cond in enumerate(failures):
        if cond in seen:
            errs.append(duplicate(fpath.index(i), cond))
        seen.add(cond)
        if cond in cond_set:
            errs.append(invalid(fpath.index(i), cond, "bindingFailureConditions must not overlap with bindingConditions"))
    if not conds and failures:
        errs.append(invalid(cpath, conds, "bindingConditions are required to use bindingFailureConditions"))
    if not failures and conds:
        errs.append(invalid(fpath, failures, "bindingFailureConditions are required to use bindingConditions"))
    return errs


@_shaped([STR])
def validate_skip_node_operations(values: Any, path: Path) -> list[FieldError]:
    """``skipNodeOperations``: known values, no repeats, NodePrepareResources needs NodeUnprepareResources or ``*``."""
    values = list(values or [])
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value not in SKIP_NODE_OPERATIONS:
            errs.append(not_supported(path.index(i), value, SKIP_NODE_OPERATIONS))
        if value in seen:
            errs.append(duplicate(path.index(i), value))
        seen.add(value)
    if "NodePrepareResources" in seen and not ({"NodeUnprepareResources", "*"} & seen):
        errs.append(
            invalid(path, values, "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")
        )
    return errs


# ---------------------------------------------------------------------------
# CEL selectors


@_shaped([schema.DEVICE_SELECTOR])
def validate_selectors(
    selectors: Any, path: Path, gates: GateReader | None, stored: bool = False, max_items: int = 32
) -> list[FieldError]:
    """A list of DeviceSelectors: ≤``max_items`` (TooMany short-circuits), each with a valid CEL."""
    return validate_list(selectors, path, max_items, lambda s, p: validate_selector(s, p, gates, stored))


@_shaped(schema.DEVICE_SELECTOR)
def validate_selector(selector: Any, path: Path, gates: GateReader | None, stored: bool = False) -> list[FieldError]:
    """One DeviceSelector: ``cel`` is required and must hold a valid expression."""
    selector = selector or {}
    cel = selector.get("cel")
    if cel is None:
        return [required(path.child("cel"), "")]
    return validate_cel_selector(cel, path.child("cel"), gates, stored)


@_shaped(schema.CEL_SELECTOR)
def validate_cel_selector(cel: Any, path: Path, gates: GateReader | None, stored: bool = False) -> list[FieldError]:
    """A CEL selector expression: ≤10 KiB (then not compiled), compiles to bool, cost ≤ 1,000,000.
    A ``stored`` expression (unchanged since it was admitted) is not checked again."""
    if stored:
        return []
    cel = cel or {}
    expression = cel.get("expression") or ""
    epath = path.child("expression")
    if len(expression.encode("utf-8")) > CEL_EXPRESSION_MAX_LENGTH:
        return [too_long(epath, "", CEL_EXPRESSION_MAX_LENGTH)]
    try:
        result = _check_cel(expression, gates)
    except Exception as exc:  # noqa: BLE001 - a broken engine must not crash validation
        return [internal(epath, f"CEL check failed: {exc}")]
    errors = [str(e) for e in (getattr(result, "errors", None) or [])]
    reason = getattr(result, "reason", None)
    cost = getattr(result, "cost", None)
    if reason == "TooLong":
        return [too_long(epath, "", CEL_EXPRESSION_MAX_LENGTH)]
    if reason == "Forbidden" or (not errors and cost is not None and cost > CEL_EXPRESSION_MAX_COST):
        return [forbidden(epath, "too complex, exceeds cost limit")]
    if reason == "Required":
        return [required(epath, "; ".join(errors))]
    if errors:
        return [invalid(epath, expression, "; ".join(errors))]
    return []


def _check_cel(expression: str, gates: GateReader | None) -> Any:
    """``kubectl_dra.cel.check_expression`` in the NewExpressions environment of the enabled gates."""
    from kubectl_dra.cel import check_expression

    return check_expression(
        expression,
        result="bool",
        consumable_capacity=gate_enabled(gates, Gate.CONSUMABLE_CAPACITY),
        list_type_attributes=gate_enabled(gates, Gate.LIST_TYPE_ATTRIBUTES),
    )


# ---------------------------------------------------------------------------
# Opaque configuration


@_shaped(schema.OPAQUE_CONFIG)
def validate_opaque_configuration(opaque: Any, path: Path, stored: bool = False) -> list[FieldError]:
    """OpaqueDeviceConfiguration: driver-name rules for ``driver``; ``parameters`` a JSON object ≤10 KiB."""
    opaque = opaque or {}
    errs = validate_driver_name(opaque.get("driver"), path.child("driver"))
    errs.extend(
        validate_raw_extension(opaque, "parameters", path.child("parameters"), stored, OPAQUE_PARAMETERS_MAX_LENGTH)
    )
    return errs


def validate_raw_extension(
    parent: dict[str, Any], field_name: str, path: Path, stored: bool, max_size: int
) -> list[FieldError]:
    """A RawExtension field of ``parent``: required (absent/null), ≤``max_size`` bytes unless stored,
    must be a JSON object."""
    if not isinstance(parent, dict):
        return [_type_error(path, parent, "an object")]
    if field_name not in parent or parent[field_name] is None:
        return [required(path, "")]
    value = parent[field_name]
    if isinstance(value, (str, bytes)) and len(value) == 0:
        return [required(path, "")]
    if not stored and json_size(value) > max_size:
        return [too_long(path, "", max_size)]
    if not isinstance(value, dict):
        return [invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []
