"""JSON type schemas of API objects: one notation, one schema per kind, compiled once.

The API server decodes a request body into typed Go structs before any admission step; a
value of the wrong JSON type ends the request there (HTTP 400). The schemas below restate the
types of the fields that the strategies and validation read, so that the handlers can rely on
them, and a malformed object (possible in files given to the CLI) gets one clear error instead
of reaching the rules. Fields not listed are not checked (nothing reads them).

This module is neutral ground: validation (admission decoding, the helpers' guards) and the
state loader both check objects with it, and it imports neither. A misfit is a
:class:`Misfit` (field path, shown value, message); validation turns it into a
``FieldValueTypeInvalid`` field error, the loader into a line of an input error.

Notation (plain data, so that other modules can extend and walk a schema):

- leaves: ``STR``, ``INT`` (a 64-bit integer: Go's int64, the widest integer these types use),
  ``BOOL``, ``QUANTITY`` (a string or number that parses as a ``resource.Quantity``),
  ``TIMESTAMP`` (an RFC 3339 string; YAML loaders may already have made it a datetime) and
  ``ANY``;
- ``{member: schema}``: an object whose named members have those schemas;
- ``[schema]``: an array; ``map_of(schema)``: an object with any keys whose values have it.

``null`` fits every schema, as Go decodes it to the zero value. :class:`Schema` compiles a
schema once into a boolean checker (generated Python, nested parts inline) that builds nothing
but its own bounded memo of valid quantity texts; the :class:`Misfit` list is walked out only
for a value that fails it.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any, Callable

from .quantity import Quantity, QuantityError

STR, INT, BOOL, ANY, QUANTITY, TIMESTAMP = "string", "integer", "boolean", "any", "quantity", "timestamp"

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def map_of(value_schema: Any) -> tuple[str, Any]:
    """A JSON object with arbitrary string keys whose values follow ``value_schema``."""
    return ("map", value_schema)


# ------------------------------------------------------------------------------------- checking

Check = Callable[[Any], bool]


def _is_int64(value: Any) -> bool:
    """A JSON integer that fits Go's int64 (``True``/``False`` are booleans, not integers)."""
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def _is_quantity(value: Any) -> bool:
    """A value that decodes as a quantity (quantity.py keeps its own bounded parse cache)."""
    try:
        Quantity.from_json(value)
    except QuantityError:
        return False
    return True


def _is_timestamp(value: Any) -> bool:
    """A metav1.Time as decoded JSON (a string) or YAML (a date or datetime)."""
    return isinstance(value, (str, datetime.date))


#: leaf schema -> the predicate a non-null value must satisfy
_LEAF_CHECKS: dict[str, Check] = {
    STR: lambda value: isinstance(value, str),
    BOOL: lambda value: isinstance(value, bool),
    INT: _is_int64,
    QUANTITY: _is_quantity,
    TIMESTAMP: _is_timestamp,
}
#: quantity texts one compiled checker remembers as valid (most repeat: "80Gi", "1"), beyond which
#: it forgets them all and starts again; only texts up to _QUANTITY_MEMO_CHARS long (a webhook
#: request must not fill it with 4,000-digit numbers)
_QUANTITY_MEMO, _QUANTITY_MEMO_CHARS = 4096, 40


def _remember_quantity(value: Any, valid_texts: set[str]) -> bool:
    """:func:`_is_quantity`, remembering a valid text in ``valid_texts`` (a checker's own memo:
    quantity texts never change meaning, so what it holds never changes an answer)."""
    if not _is_quantity(value):
        return False
    if type(value) is str and len(value) <= _QUANTITY_MEMO_CHARS:
        if len(valid_texts) >= _QUANTITY_MEMO:
            valid_texts.clear()
        valid_texts.add(value)
    return True


#: leaf schema -> the expression, in generated code, that tests a non-null value ``{x}``
_LEAF_EXPRESSIONS: dict[str, str] = {
    STR: "isinstance({x}, str)",
    BOOL: "isinstance({x}, bool)",
    INT: f"(({{x}}.__class__ is int and {INT64_MIN} <= {{x}} <= {INT64_MAX}) or _is_int64({{x}}))",
    QUANTITY: "(({x}.__class__ is str and {x} in _valid_quantities) or _remember_quantity({x}, _valid_quantities))",
    TIMESTAMP: "_is_timestamp({x})",
}
#: names the generated source uses besides builtins
_CHECKER_GLOBALS: dict[str, Any] = {"_is_int64": _is_int64, "_remember_quantity": _remember_quantity,
                                    "_is_timestamp": _is_timestamp}

#: up to this many checked members an object's checker looks each one up; beyond, it walks the
#: members present (API objects set few of the many members their types have)
_FEW_MEMBERS = 3
#: nested loops and indentation levels written inline in one function; a part nested deeper
#: gets a function of its own (Python allows 20 nested loops and 100 indentation levels)
_INLINE_LOOPS, _INLINE_INDENT = 8, 40


class _CheckerSource:
    """Python source of a schema's boolean checker. The tests of nested objects, arrays and
    maps are written inline, in one function per part nested :data:`_INLINE_LOOPS` loops
    (or :data:`_INLINE_INDENT` levels) deep, so that checking one API object calls no function for the common case (quantity
    texts it has seen valid are one set lookup)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self.variables = 0

    def variable(self, prefix: str) -> str:
        """A local name not used before in the source (each nested value keeps its own)."""
        self.variables += 1
        return f"{prefix}{self.variables}"

    def function(self, spec: Any) -> str:
        """The name of the function checking a non-null value against ``spec`` (an object,
        array or map schema), written on first use."""
        name = self.names.get(id(spec))
        if name is None:
            name = self.names[id(spec)] = f"_fits_{len(self.names)}"
            body = self.block(spec, "v", 1, 0)
            self.lines += [f"def {name}(v):", *body, "    return True", ""]
        return name

    def block(self, spec: Any, var: str, indent: int, loops: int) -> list[str]:
        """Statements (at ``indent`` levels, inside ``loops`` nested loops) that return False
        unless the non-null value in ``var`` fits ``spec``."""
        pad = "    " * indent
        if spec == ANY:
            return []
        if not isinstance(spec, (dict, list, tuple)):
            return [f"{pad}if not {self.leaf(spec, var)}:", f"{pad}    return False"]
        if loops >= _INLINE_LOOPS or indent >= _INLINE_INDENT:
            return [f"{pad}if not {self.function(spec)}({var}):", f"{pad}    return False"]
        item = self.variable("x")
        if isinstance(spec, dict):
            lines = [f"{pad}if not isinstance({var}, dict):", f"{pad}    return False"]
            tests = [(key, sub) for key, sub in spec.items() if sub != ANY]
            if len(tests) <= _FEW_MEMBERS:  # look each member up
                for key, sub in tests:
                    lines += [f"{pad}{item} = {var}.get({key!r})", f"{pad}if {item} is not None:",
                              *self.block(sub, item, indent + 1, loops)]
            elif tests:  # objects use few of their many members: walk those present
                name = self.variable("k")
                lines += [f"{pad}for {name}, {item} in {var}.items():", f"{pad}    if {item} is None:",
                          f"{pad}        continue"]
                for i, (key, sub) in enumerate(tests):
                    lines += [f"{pad}    {'if' if i == 0 else 'elif'} {name} == {key!r}:",
                              *self.block(sub, item, indent + 2, loops + 1)]
            return lines
        if isinstance(spec, list):
            container, items, sub = "list", var, spec[0]
        else:
            container, items, sub = "dict", f"{var}.values()", spec[1]
        lines = [f"{pad}if not isinstance({var}, {container}):", f"{pad}    return False"]
        if sub != ANY:
            lines += [f"{pad}for {item} in {items}:", f"{pad}    if {item} is None:", f"{pad}        continue",
                      *self.block(sub, item, indent + 1, loops + 1)]
        return lines

    @staticmethod
    def leaf(spec: Any, var: str) -> str:
        """The expression testing the non-null value in ``var`` against the leaf ``spec``."""
        expression = _LEAF_EXPRESSIONS.get(spec)
        if expression is None:
            raise TypeError(f"unknown schema {spec!r}")
        return expression.format(x=var)


def _compile(spec: Any) -> Check:
    """The boolean checker of one schema (``null`` always fits), generated as Python source
    and compiled once: the load-time check of a big dump runs it on every object."""
    if spec == ANY:
        return lambda value: True
    source = _CheckerSource()
    source.lines += ["def _fits(v):", "    if v is None:", "        return True",
                     *source.block(spec, "v", 1, 0), "    return True", ""]
    namespace = {**_CHECKER_GLOBALS, "_valid_quantities": set()}  # the checker owns its memo
    exec(compile("\n".join(source.lines), f"<schema checker {len(source.lines)} lines>", "exec"), namespace)
    fits: Check = namespace["_fits"]
    return fits


# --------------------------------------------------------------------------------------- errors


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (Python's type name for anything else)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


#: leaf schema -> what a value must be, in error messages
_EXPECTED = {STR: "a string", INT: "an integer", BOOL: "a boolean", TIMESTAMP: "a timestamp string"}


def _leaf_message(spec: str, value: Any) -> str | None:
    """Why ``value`` does not fit the leaf ``spec`` (None when it fits)."""
    if _LEAF_CHECKS[spec](value):
        return None
    if spec == QUANTITY:
        try:
            Quantity.from_json(value)
        except QuantityError as exc:
            return f"not a valid quantity: {exc}"
    if spec == INT and isinstance(value, int) and not isinstance(value, bool):
        return "must be a 64-bit integer (out of range)"
    return f"must be {_EXPECTED[spec]}, not {json_type(value)}"


def render_value(value: Any) -> str:
    """A value as the API server shows it in a field error (strings quoted, JSON for objects)."""
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):  # as JSON people wrote it, not a Python repr
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


@dataclass(frozen=True)
class Misfit:
    """One value of the wrong JSON type: its field path (``<root>`` for the document itself),
    the value shown (its JSON type name when it is an object or array) and why."""

    field: str
    value: Any
    message: str

    def __str__(self) -> str:
        """The API server's wording of a type error: ``path: Invalid value: shown: message``."""
        return f"{self.field}: Invalid value: {render_value(self.value)}: {self.message}"


def _child(path: str | None, name: str) -> str:
    """The path of member ``name`` below ``path`` (rendered as upstream's ``field.Path``)."""
    return f"{path}.{name}" if path else name


def _collect(value: Any, spec: Any, path: str | None, out: list[Misfit]) -> None:
    """Append a :class:`Misfit` for each value that does not fit ``spec``."""
    if value is None or spec == ANY:
        return
    shown = json_type(value) if isinstance(value, (dict, list)) else value  # the value itself unless large
    where = path if path is not None else "<root>"
    if isinstance(spec, (dict, tuple)) and not isinstance(value, dict):
        out.append(Misfit(where, shown, f"must be an object, not {json_type(value)}"))
    elif isinstance(spec, list) and not isinstance(value, list):
        out.append(Misfit(where, shown, f"must be an array, not {json_type(value)}"))
    elif isinstance(spec, dict):
        for key, sub in spec.items():
            if key in value:
                _collect(value[key], sub, _child(path, key), out)
    elif isinstance(spec, list):
        for i, item in enumerate(value):
            _collect(item, spec[0], f"{path or ''}[{i}]", out)
    elif isinstance(spec, tuple):
        for key, item in value.items():
            _collect(item, spec[1], f"{path or ''}[{key}]", out)
    else:
        message = _leaf_message(spec, value)
        if message is not None:
            out.append(Misfit(where, shown, message))


class Schema:
    """A schema compiled once, on first use: :meth:`fits` is a boolean pass, :meth:`misfits`
    names every misfit."""

    __slots__ = ("spec", "_fits")

    def __init__(self, spec: Any) -> None:
        """Keep ``spec`` (in this module's notation); it is compiled when first checked against."""
        self.spec = spec
        self._fits: Check | None = None

    def fits(self, value: Any) -> bool:
        """Whether every part of ``value`` has the JSON type the schema names (``null`` fits anything)."""
        if self._fits is None:
            self._fits = _compile(self.spec)
        return self._fits(value)

    def misfits(self, value: Any, path: str | None = None) -> list[Misfit]:
        """A :class:`Misfit` for each part of ``value`` (found at ``path``; None for a document's
        root) that does not fit. Empty, and nothing built, when it all fits."""
        if self.fits(value):
            return []
        found: list[Misfit] = []
        _collect(value, self.spec, path, found)
        return found


# ------------------------------------------------------------------------------------ the kinds

#: ObjectMeta fields that validation reads
OBJECT_META: dict[str, Any] = {
    "name": STR, "generateName": STR, "namespace": STR, "uid": STR, "resourceVersion": STR,
    "generation": INT, "labels": map_of(STR), "annotations": map_of(STR), "finalizers": [STR],
    "ownerReferences": [{"apiVersion": STR, "kind": STR, "name": STR, "uid": STR, "controller": BOOL,
                         "blockOwnerDeletion": BOOL}],
}
_NODE_SELECTOR_REQUIREMENT = {"key": STR, "operator": STR, "values": [STR]}
#: core/v1 NodeSelectorTerm and NodeSelector
NODE_SELECTOR_TERM: dict[str, Any] = {"matchExpressions": [_NODE_SELECTOR_REQUIREMENT],
                                      "matchFields": [_NODE_SELECTOR_REQUIREMENT]}
NODE_SELECTOR: dict[str, Any] = {"nodeSelectorTerms": [NODE_SELECTOR_TERM]}
#: DeviceSelector and its CEL part
CEL_SELECTOR: dict[str, Any] = {"expression": STR}
DEVICE_SELECTOR: dict[str, Any] = {"cel": CEL_SELECTOR}
#: OpaqueDeviceConfiguration (parameters: any JSON object, checked by validation)
OPAQUE_CONFIG: dict[str, Any] = {"driver": STR, "parameters": ANY}
#: DeviceToleration and DeviceTaint
DEVICE_TOLERATION: dict[str, Any] = {"key": STR, "operator": STR, "value": STR, "effect": STR,
                                     "tolerationSeconds": INT}
DEVICE_TAINT: dict[str, Any] = {"key": STR, "value": STR, "effect": STR, "timeAdded": TIMESTAMP}
#: the binding-condition lists of a device or an allocation result
BINDING_CONDITIONS: dict[str, Any] = {"bindingConditions": [STR], "bindingFailureConditions": [STR]}

_SELECTION = {
    "deviceClassName": STR, "selectors": [DEVICE_SELECTOR], "allocationMode": STR, "count": INT,
    "tolerations": [DEVICE_TOLERATION], "capacity": {"requests": map_of(QUANTITY)},
    "derivedAttributes": [{"name": STR, "expression": STR}],
}
_CLAIM_SPEC = {"devices": {
    "requests": [{
        "name": STR,
        "exactly": {**_SELECTION, "adminAccess": BOOL},
        "firstAvailable": [{**_SELECTION, "name": STR}],
    }],
    "constraints": [{"requests": [STR], "matchAttribute": STR, "distinctAttribute": STR}],
    "config": [{"requests": [STR], "opaque": OPAQUE_CONFIG}],
}}
_RESULT = {
    "request": STR, "driver": STR, "pool": STR, "device": STR, "adminAccess": BOOL,
    "tolerations": [DEVICE_TOLERATION], **BINDING_CONDITIONS, "shareID": STR,
    "consumedCapacity": map_of(QUANTITY), "skipNodeOperations": [STR],
}
_CLAIM_STATUS = {
    "allocation": {
        "devices": {"results": [_RESULT], "config": [{"source": STR, "requests": [STR], "opaque": OPAQUE_CONFIG}]},
        "nodeSelector": NODE_SELECTOR,
    },
    "reservedFor": [{"apiGroup": STR, "resource": STR, "name": STR, "uid": STR}],
    "devices": [{
        "driver": STR, "pool": STR, "device": STR, "shareID": STR, "data": ANY,
        "conditions": [{"type": STR, "status": STR, "reason": STR, "message": STR, "observedGeneration": INT}],
        "networkData": {"interfaceName": STR, "hardwareAddress": STR, "ips": [STR]},
    }],
}
_CLAIM_REFERENCE = {"name": STR, "resourceClaimName": STR, "resourceClaimTemplateName": STR}
_CONTAINER_CLAIMS = {"resources": {"claims": [{"name": STR, "request": STR}]}}
_COUNTERS = map_of({"value": QUANTITY})
_DEVICE = {
    "name": STR,
    "attributes": map_of({"int": INT, "bool": BOOL, "string": STR, "version": STR,
                          "ints": [INT], "bools": [BOOL], "strings": [STR], "versions": [STR]}),
    "capacity": map_of({"value": QUANTITY, "requestPolicy": {
        "default": QUANTITY, "validValues": [QUANTITY],
        "validRange": {"min": QUANTITY, "max": QUANTITY, "step": QUANTITY}}}),
    "consumesCounters": [{"counterSet": STR, "counters": _COUNTERS, "compatibilityGroups": [STR]}],
    "nodeName": STR, "nodeSelector": NODE_SELECTOR, "allNodes": BOOL, "allowMultipleAllocations": BOOL,
    "taints": [DEVICE_TAINT], "bindsToNode": BOOL, **BINDING_CONDITIONS,
    "nodeAllocatableResources": map_of({
        "mapping": {"capacityKey": STR, "capacityMultiplier": QUANTITY, "deviceMultiplier": QUANTITY},
        "overhead": {"perPod": QUANTITY, "perContainer": QUANTITY}}),
}

#: kind -> the types of the fields the strategies and validation read
SCHEMAS: dict[str, dict[str, Any]] = {
    "ResourceClaim": {"metadata": OBJECT_META, "spec": _CLAIM_SPEC, "status": _CLAIM_STATUS},
    "ResourceClaimTemplate": {"metadata": OBJECT_META, "spec": {"metadata": OBJECT_META, "spec": _CLAIM_SPEC}},
    "PodGroup": {"metadata": OBJECT_META, "spec": {"resourceClaims": [_CLAIM_REFERENCE]},
                 "status": {"resourceClaimStatuses": [{"name": STR, "resourceClaimName": STR}]}},
    "Pod": {"metadata": OBJECT_META, "spec": {
        "resourceClaims": [_CLAIM_REFERENCE], "resources": {"claims": [{"name": STR, "request": STR}]},
        "containers": [_CONTAINER_CLAIMS], "initContainers": [_CONTAINER_CLAIMS],
        "ephemeralContainers": [_CONTAINER_CLAIMS]}},
    "DeviceClass": {"metadata": OBJECT_META, "spec": {
        "selectors": [DEVICE_SELECTOR], "config": [{"opaque": OPAQUE_CONFIG}], "extendedResourceName": STR}},
    "ResourceSlice": {"metadata": OBJECT_META, "spec": {
        "driver": STR, "pool": {"name": STR, "generation": INT, "resourceSliceCount": INT},
        "nodeName": STR, "nodeSelector": NODE_SELECTOR, "allNodes": BOOL, "perDeviceNodeSelection": BOOL,
        "sharedCounters": [{"name": STR, "counters": _COUNTERS}], "devices": [_DEVICE],
        "skipNodeOperations": [STR], "partitionTypeAttribute": STR}},
}
#: the schema of a kind without one of its own: its metadata
METADATA_ONLY: dict[str, Any] = {"metadata": OBJECT_META}

#: kind -> its compiled schema (built at import; read-only afterwards)
KIND_SCHEMAS: dict[str, Schema] = {kind: Schema(spec) for kind, spec in SCHEMAS.items()}
_METADATA_ONLY_SCHEMA = Schema(METADATA_ONLY)


def kind_schema(kind: str) -> Schema:
    """The compiled schema of ``kind`` (its metadata alone for kinds not listed)."""
    return KIND_SCHEMAS.get(kind, _METADATA_ONLY_SCHEMA)


def decode_misfits(obj: Any, kind: str, schema: Schema | None = None) -> list[Misfit]:
    """Every value of ``obj`` whose JSON type does not fit the kind's schema (or ``schema``).
    A document that is no object is one misfit at ``<root>``."""
    if not isinstance(obj, dict):
        return [Misfit("<root>", json_type(obj), "must be an object")]
    return (schema or kind_schema(kind)).misfits(obj)
