"""The admission decision for one DRA object, shared by ``kubectl dra validate`` and the webhook.

:func:`review` runs the API server's request pipeline for the kinds it knows
(decode: value types → defaults → prepare/drop fields of disabled gates →
admin-access authorization → validation) and returns a :class:`Decision` carrying every field error, the
mutated object and the RFC 6902 patch that turns the submitted object into it.
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import jsonpatch

try:  # a much faster exact serialiser, for comparing objects; json is the fallback
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None

from .field import FieldError, forbidden, internal
from .field import Path as FieldPath

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates

#: The kinds this decision knows; any other kind is admitted unchanged.
SUPPORTED_KINDS: frozenset[str] = frozenset(
    {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "PodGroup", "Pod"}
)

#: kind -> (module, prepare function, validate function); each prepare is
#: ``prepare(obj, old, gates) -> dict | (dict, warnings)`` and each validate
#: ``validate(obj, old, gates) -> list[FieldError]``.
_HANDLERS: dict[str, tuple[str, str, str]] = {
    "ResourceSlice": ("kubectl_dra.validation.resourceslice", "prepare_resource_slice", "validate_resource_slice"),
    "DeviceClass": ("kubectl_dra.validation.deviceclass", "prepare_device_class", "validate_device_class"),
    "ResourceClaim": ("kubectl_dra.validation.resourceclaim", "prepare_resource_claim", "validate_resource_claim"),
    "ResourceClaimTemplate": (
        "kubectl_dra.validation.resourceclaimtemplate",
        "prepare_resource_claim_template",
        "validate_resource_claim_template",
    ),
    "PodGroup": ("kubectl_dra.validation.podgroup", "prepare_pod_group", "validate_pod_group"),
    "Pod": ("kubectl_dra.validation.pod", "prepare_pod", "validate_pod"),
}

#: kind -> handlers of its status subresource (UPDATE only).
_STATUS_HANDLERS: dict[str, tuple[str, str, str]] = {
    "ResourceClaim": (
        "kubectl_dra.validation.resourceclaim",
        "prepare_resource_claim_status",
        "validate_resource_claim_status",
    ),
    "PodGroup": ("kubectl_dra.validation.podgroup", "prepare_pod_group_status", "validate_pod_group_status"),
}

#: The API group each kind is served from, for the API server's "Kind.group" wording.
_GROUPS = {
    "ResourceSlice": "resource.k8s.io",
    "DeviceClass": "resource.k8s.io",
    "ResourceClaim": "resource.k8s.io",
    "ResourceClaimTemplate": "resource.k8s.io",
    "PodGroup": "scheduling.k8s.io",
    "Pod": "",
}

#: Namespaced kinds (the others are cluster-scoped).
NAMESPACED_KINDS: frozenset[str] = frozenset({"ResourceClaim", "ResourceClaimTemplate", "PodGroup", "Pod"})

#: The namespace label that grants admin access (value must be exactly "true").
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"

OPERATIONS = ("CREATE", "UPDATE")

NamespaceLabels = Mapping[str, str] | Callable[[str], Mapping[str, str]] | None


@dataclass
class Decision:
    """What the API server would do with one object: allowed or not, why, and the stored form."""

    kind: str
    name: str
    namespace: str | None
    operation: str
    allowed: bool
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    patch: list[dict] = field(default_factory=list)
    object: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The documented ``validate -o json`` form of the decision."""
        return {
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "operation": self.operation,
            "allowed": self.allowed,
            "errors": [e.to_dict() for e in self.errors],
            "warnings": list(self.warnings),
            "patch": _json_copy(self.patch),
            "object": _json_copy(self.object),
        }

    def status_message(self) -> str:
        """One message listing every field error, worded like the API server's Invalid status."""
        group = _GROUPS.get(self.kind, "")
        qualified = f"{self.kind}.{group}" if group else self.kind
        if not self.errors:
            return f'{qualified} "{self.name}" is valid'
        rendered = [str(e) for e in self.errors]
        body = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
        return f'{qualified} "{self.name}" is invalid: {body}'


def review(
    obj: dict,
    *,
    operation: str = "CREATE",
    old: dict | None = None,
    namespace_labels: NamespaceLabels = None,
    gates: "FeatureGates",
    namespace: str | None = None,
    subresource: str | None = None,
) -> Decision:
    """Decide on ``obj`` as the API server would for ``operation``.

    ``namespace`` is the request's namespace; it fills ``metadata.namespace`` of a
    namespaced object that lacks one (as the API server does before admission).
    ``namespace_labels`` is consulted only when admin access must be authorized; a
    callable is called lazily with the namespace name, and its exception becomes a
    denial (InternalError) naming the lookup failure.
    ``subresource="status"`` applies the status strategy of ResourceClaim and PodGroup
    (UPDATE only); other subresources are admitted unchanged.
    """
    operation = operation.upper()
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {', '.join(OPERATIONS)}, not {operation!r}")
    # ``obj`` is never written to: only the prepared copy below is mutated, so the submitted
    # object is shared with the caller, except that filling in the namespace copies its spine
    submitted = obj
    kind = submitted.get("kind") if isinstance(submitted.get("kind"), str) else ""
    meta = submitted.get("metadata") if isinstance(submitted.get("metadata"), dict) else {}
    if kind in NAMESPACED_KINDS and namespace and not meta.get("namespace") and (
        "metadata" not in submitted or isinstance(submitted.get("metadata"), dict)
    ):  # a metadata of the wrong type is left for decoding to report
        meta = {**meta, "namespace": namespace}
        submitted = {**submitted, "metadata": meta}
    name = str(meta.get("name") or meta.get("generateName") or "")
    ns = meta.get("namespace") if kind in NAMESPACED_KINDS else None

    handler = _STATUS_HANDLERS.get(kind) if subresource else _HANDLERS.get(kind)
    if handler is None or (subresource and (subresource != "status" or operation != "UPDATE")):
        return Decision(kind, name, ns, operation, True, [], [], [], _json_copy(submitted))

    if operation == "UPDATE" and old is None:
        raise ValueError("an UPDATE needs the stored (old) object")
    old_obj = _json_copy(old) if operation == "UPDATE" else None

    module_name, prepare_name, validate_name = handler
    module = importlib.import_module(module_name)
    prepare = getattr(module, prepare_name)
    validate = getattr(module, validate_name)

    # decoding: a value of the wrong type ends the request before any admission step. Kinds whose
    # handlers re-check their own shape get one pass over both schemas; only a failure of that
    # pass walks again, for the decode errors and then (in the handlers) the shape errors.
    both = None if subresource else _both_checker(kind, module)
    shape_checked = both is not None and both(submitted) and (old_obj is None or both(old_obj))
    if not shape_checked:
        decode = decode_errors(submitted, kind)
        if old_obj is not None:
            decode += decode_errors(old_obj, kind, prefix="in the stored object: ")
        if decode:
            return Decision(kind, name, ns, operation, False, decode, [], [], _json_copy(submitted))
    checked: dict[str, bool] = {"shape_checked": True} if shape_checked else {}

    warnings: list[str] = []
    prepared = prepare(_json_copy(submitted), old_obj, gates, **checked)
    if isinstance(prepared, tuple):  # (object, warnings) from handlers that explain what they dropped
        prepared, extra = prepared
        warnings.extend(extra)
    errors: list[FieldError] = []
    if subresource == "status" and kind == "ResourceClaim" and old_obj is not None:
        errors.extend(_authorize_admin_access_status(prepared, old_obj, namespace_labels))
    elif not subresource and operation == "CREATE" and kind in ("ResourceClaim", "ResourceClaimTemplate"):
        errors.extend(_authorize_admin_access(prepared, namespace_labels))
    errors.extend(validate(prepared, old_obj, gates, **checked))
    errors = _unique(errors)

    patch = make_patch(submitted, prepared)
    return Decision(kind, name, ns, operation, not errors, errors, warnings, patch, prepared)


def _json_copy(value: Any) -> Any:
    """A deep copy of decoded JSON/YAML (dicts, lists, scalars), several times faster than
    :func:`copy.deepcopy` on the large objects a file of slices holds: an orjson round trip when
    it gives back an equal value (not for NaN, big integers, tuples, dates, ...), else a walk."""
    if _orjson is not None and isinstance(value, (dict, list)):
        try:
            copied = _orjson.loads(_orjson.dumps(value))
        except (TypeError, ValueError):
            copied = None
        if copied is not None and copied == value:
            return copied
    return _walk_copy(value)


def _walk_copy(value: Any) -> Any:
    """:func:`_json_copy` by a walk on an explicit stack (any depth the API server accepts)."""
    from ..model.jsoncopy import copy_json

    return copy_json(value)


def make_patch(src: Any, dst: Any) -> list[dict]:
    """``jsonpatch.make_patch(src, dst).patch``, computed only over the part that changed.

    The strategies change few fields, often none: an object identical in JSON gets an
    empty patch without a diff, and the diff descends through objects (and same-length
    arrays of objects) where exactly one member differs, then lets jsonpatch diff that
    member alone; the ops are the same as a whole-document diff (no other member yields any).
    """
    if _same(src, dst):
        return []
    parts: list[str | int] = []
    while True:
        if isinstance(src, dict) and isinstance(dst, dict) and src.keys() == dst.keys():
            differing = [k for k in src if not _same(src[k], dst[k])]
        elif (isinstance(src, list) and isinstance(dst, list) and len(src) == len(dst)):
            differing = [i for i in range(len(src)) if not _same(src[i], dst[i])]
            if len(differing) == 1 and not (isinstance(src[differing[0]], dict)
                                            and isinstance(dst[differing[0]], dict)):
                break  # a changed scalar in an array is a remove + add, left to jsonpatch
        else:
            break
        if not differing:  # members differ only in order, which JSON Patch ignores
            return []
        if len(differing) > 1:
            break
        parts.append(differing[0])
        src, dst = src[differing[0]], dst[differing[0]]
    prefix = "".join("/" + _pointer_token(p) for p in parts)
    if isinstance(src, dict) and isinstance(dst, dict) and all(
        k in dst and _same(v, dst[k]) for k, v in src.items()
    ):  # only members added (defaults): one add each, in the order jsonpatch gives them
        return [{"op": "add", "path": f"{prefix}/{_pointer_token(k)}", "value": _json_copy(v)}
                for k, v in dst.items() if k not in src]
    ops = jsonpatch.make_patch(src, dst).patch
    if not parts:
        return ops
    for op in ops:
        op["path"] = prefix + op["path"]
        if "from" in op:
            op["from"] = prefix + op["from"]
    return ops


def _pointer_token(part: str | int) -> str:
    """One JSON Pointer reference token (RFC 6901 escaping)."""
    return str(part).replace("~", "~0").replace("/", "~1")


def _same(a: Any, b: Any) -> bool:
    """True when two decoded JSON values serialise identically (so ``1``, ``1.0`` and ``True``
    differ, as they do for jsonpatch); members in another order count as a difference."""
    from ..model.jsoncopy import dumps_json  # any nesting depth (opaque parameters may nest deep)

    if a is b:
        return True
    try:
        if a != b:
            return False
    except RecursionError:  # nested deeper than == can recurse: compare the texts
        pass
    if _orjson is not None:
        try:
            return _orjson.dumps(a) == _orjson.dumps(b)
        except (TypeError, ValueError):  # e.g. integers beyond 64 bits, depth over 255: the exact slow path
            pass
    try:
        return dumps_json(a) == dumps_json(b)
    except (TypeError, ValueError):
        return False


def _unique(errors: list[FieldError]) -> list[FieldError]:
    """The errors without repeats (metadata rules run for both create and update checks)."""
    seen: set[tuple[str, str, str, str]] = set()
    out: list[FieldError] = []
    for err in errors:
        key = (err.type, err.field, repr(err.value), err.message)
        if key not in seen:
            seen.add(key)
            out.append(err)
    return out


def _admin_access_request(obj: dict) -> int | None:
    """Index of the first request with ``exactly.adminAccess: true`` in a claim or template."""
    spec = obj.get("spec")
    if obj.get("kind") == "ResourceClaimTemplate":
        spec = spec.get("spec") if isinstance(spec, dict) else None
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    if not isinstance(requests, list):
        return None
    for i, request in enumerate(requests):
        exactly = request.get("exactly") if isinstance(request, dict) else None
        if isinstance(exactly, dict) and exactly.get("adminAccess") is True:
            return i
    return None


def _authorize_admin_access(obj: dict, namespace_labels: NamespaceLabels) -> list[FieldError]:
    """A claim or template asking for admin access needs the namespace label."""
    index = _admin_access_request(obj)
    if index is None:
        return []
    path = FieldPath.root("spec", "devices", "requests").index(index).child("adminAccess")
    return _check_namespace_label(obj, path, namespace_labels)


def _authorize_admin_access_status(obj: dict, old: dict, namespace_labels: NamespaceLabels) -> list[FieldError]:
    """A new allocation with an admin-access result needs the namespace label too."""
    from .resourceclaim import admin_access_status_request

    index = admin_access_status_request(obj, old)
    if index is None:
        return []
    path = FieldPath.root("status", "allocation", "devices", "results").index(index).child("adminAccess")
    return _check_namespace_label(obj, path, namespace_labels)


def _check_namespace_label(obj: dict, path: FieldPath, namespace_labels: NamespaceLabels) -> list[FieldError]:
    """The namespace must carry ``resource.kubernetes.io/admin-access: "true"`` for admin access."""
    namespace = str((obj.get("metadata") or {}).get("namespace") or "")
    try:
        if callable(namespace_labels):
            labels = namespace_labels(namespace)
        else:
            labels = namespace_labels or {}
    except Exception as exc:  # the lookup is a network call in the webhook
        return [internal(path, f"could not read the labels of namespace {namespace!r}: {exc}")]
    if (labels or {}).get(ADMIN_ACCESS_LABEL) == "true":
        return []
    return [
        forbidden(
            path,
            f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the "
            f"namespace {namespace!r}",
        )
    ]


# =========================================================================== decoding
#
# The API server decodes the request body into typed Go structs before any
# admission step; a value of the wrong JSON type ends the request there. These
# schemas restate the types of the fields the rules read, so that a malformed
# object (possible in files given to the CLI) gets a clear error instead of
# reaching the rules. Fields not listed are not checked (they are not read).

STR, INT, BOOL, ANY, QUANTITY = "string", "integer", "boolean", "any", "quantity"


def _map(value_schema: Any) -> tuple[str, Any]:
    """A JSON object with arbitrary string keys whose values follow ``value_schema``."""
    return ("map", value_schema)


_META = {
    "name": STR, "generateName": STR, "namespace": STR, "uid": STR, "resourceVersion": STR,
    "generation": INT, "labels": _map(STR), "annotations": _map(STR), "finalizers": [STR],
    "ownerReferences": [{"apiVersion": STR, "kind": STR, "name": STR, "uid": STR, "controller": BOOL,
                         "blockOwnerDeletion": BOOL}],
}
_TOLERATION = {"key": STR, "operator": STR, "value": STR, "effect": STR, "tolerationSeconds": INT}
_SELECTOR = {"cel": {"expression": STR}}
_OPAQUE = {"driver": STR, "parameters": ANY}
_NODE_SELECTOR_REQUIREMENT = {"key": STR, "operator": STR, "values": [STR]}
_NODE_SELECTOR = {"nodeSelectorTerms": [{"matchExpressions": [_NODE_SELECTOR_REQUIREMENT],
                                         "matchFields": [_NODE_SELECTOR_REQUIREMENT]}]}
_SELECTION = {
    "deviceClassName": STR, "selectors": [_SELECTOR], "allocationMode": STR, "count": INT,
    "tolerations": [_TOLERATION], "capacity": {"requests": _map(QUANTITY)},
    "derivedAttributes": [{"name": STR, "expression": STR}],
}
_CLAIM_SPEC = {"devices": {
    "requests": [{
        "name": STR,
        "exactly": {**_SELECTION, "adminAccess": BOOL},
        "firstAvailable": [{**_SELECTION, "name": STR}],
    }],
    "constraints": [{"requests": [STR], "matchAttribute": STR, "distinctAttribute": STR}],
    "config": [{"requests": [STR], "opaque": _OPAQUE}],
}}
_RESULT = {
    "request": STR, "driver": STR, "pool": STR, "device": STR, "adminAccess": BOOL, "tolerations": [_TOLERATION],
    "bindingConditions": [STR], "bindingFailureConditions": [STR], "shareID": STR,
    "consumedCapacity": _map(QUANTITY), "skipNodeOperations": [STR],
}
_CLAIM_STATUS = {
    "allocation": {
        "devices": {"results": [_RESULT], "config": [{"source": STR, "requests": [STR], "opaque": _OPAQUE}]},
        "nodeSelector": _NODE_SELECTOR,
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
_COUNTERS = _map({"value": QUANTITY})
_DEVICE = {
    "name": STR, "attributes": _map({"int": INT, "bool": BOOL, "string": STR, "version": STR}),
    "capacity": _map({"value": QUANTITY}), "consumesCounters": [{"counterSet": STR, "counters": _COUNTERS}],
    "nodeName": STR, "nodeSelector": _NODE_SELECTOR, "allNodes": BOOL,
    "taints": [{"key": STR, "value": STR, "effect": STR}], "bindsToNode": BOOL,
    "bindingConditions": [STR], "bindingFailureConditions": [STR], "allowMultipleAllocations": BOOL,
}

#: kind -> the types of the fields the rules read
SCHEMAS: dict[str, dict[str, Any]] = {
    "ResourceClaim": {"metadata": _META, "spec": _CLAIM_SPEC, "status": _CLAIM_STATUS},
    "ResourceClaimTemplate": {"metadata": _META, "spec": {"metadata": _META, "spec": _CLAIM_SPEC}},
    "PodGroup": {"metadata": _META, "spec": {"resourceClaims": [_CLAIM_REFERENCE]},
                 "status": {"resourceClaimStatuses": [{"name": STR, "resourceClaimName": STR}]}},
    "Pod": {"metadata": _META, "spec": {
        "resourceClaims": [_CLAIM_REFERENCE], "resources": {"claims": [{"name": STR, "request": STR}]},
        "containers": [_CONTAINER_CLAIMS], "initContainers": [_CONTAINER_CLAIMS],
        "ephemeralContainers": [_CONTAINER_CLAIMS]}},
    "DeviceClass": {"metadata": _META, "spec": {
        "selectors": [_SELECTOR], "config": [{"opaque": _OPAQUE}], "extendedResourceName": STR}},
    "ResourceSlice": {"metadata": _META, "spec": {
        "driver": STR, "pool": {"name": STR, "generation": INT, "resourceSliceCount": INT},
        "nodeName": STR, "nodeSelector": _NODE_SELECTOR, "allNodes": BOOL, "perDeviceNodeSelection": BOOL,
        "sharedCounters": [{"name": STR, "counters": _COUNTERS}], "devices": [_DEVICE],
        "skipNodeOperations": [STR]}},
}


def decode_errors(obj: Any, kind: str, prefix: str = "", schema: Any = None) -> list[FieldError]:
    """TypeInvalid errors for every value whose JSON type does not fit the kind's schema (or
    ``schema``, in this module's notation: the state loader checks more fields than admission)."""
    from .field import TYPE_INVALID

    out: list[tuple[FieldPath, Any, str]] = []
    if not isinstance(obj, dict):
        return [FieldError(TYPE_INVALID, "<root>", _json_type(obj), f"{prefix}must be an object")]
    if schema is None:
        schema = SCHEMAS.get(kind, _META_ONLY)
    if _checker(schema)(obj):  # the common case: one quick pass, no paths built
        return []
    _check_type(obj, schema, None, out)
    return [FieldError(TYPE_INVALID, str(path), value, prefix + message) for path, value, message in out]


_META_ONLY = {"metadata": _META}

#: kind -> the name of its handler module's shape (``common.check_shape`` notation), for the kinds
#: whose prepare/validate accept ``shape_checked=True`` in place of re-checking it
_HANDLER_SHAPES: dict[str, str] = {"ResourceSlice": "RESOURCE_SLICE_SHAPE", "DeviceClass": "DEVICE_CLASS_SHAPE"}
#: kind -> the compiled checker of its decode schema and handler shape together
_BOTH_CHECKERS: dict[str, Callable[[Any], bool]] = {}


def _both_checker(kind: str, module: Any) -> Callable[[Any], bool] | None:
    """One boolean pass that is true exactly when :func:`decode_errors` and the handler's
    ``shape_errors`` would both find nothing (``None`` for kinds without a handler shape)."""
    known = _BOTH_CHECKERS.get(kind)
    if known is not None:
        return known
    shape_name = _HANDLER_SHAPES.get(kind)
    shape = getattr(module, shape_name, None) if shape_name else None
    if shape is None:
        return None
    root_shape = {key: shape[key] for key in ("metadata", "spec")}
    root_check = _compile_both(SCHEMAS.get(kind, _META_ONLY), root_shape)

    def check(obj: Any) -> bool:
        return isinstance(obj, dict) and root_check(obj)

    _BOTH_CHECKERS[kind] = check
    return check


_ABSENT = object()


def _compile_both(schema: Any, shape: Any) -> Callable[[Any], bool]:
    """The checker of a decode-schema node and a shape node at the same place: objects, lists and
    maps are walked once, with members present in either; leaves must fit both."""
    from .common import ANY as SHAPE_ANY
    from .common import QUANTITY as SHAPE_QUANTITY
    from .common import MapOf, _compile_shape

    if shape is _ABSENT or shape is SHAPE_ANY:
        return _compile(schema) if schema is not _ABSENT else (lambda value: True)
    if schema is _ABSENT or schema == ANY:
        return _compile_shape(shape)
    if isinstance(schema, dict) and isinstance(shape, dict):
        keys = list(schema) + [key for key in shape if key not in schema]
        leaves: dict[str, type] = {}
        nodes: dict[str, Callable[[Any], bool]] = {}
        for key in keys:
            sub_schema, sub_shape = schema.get(key, _ABSENT), shape.get(key, _ABSENT)
            leaf = _LEAF_TYPES.get(sub_schema) if isinstance(sub_schema, str) else None
            if leaf is not None and sub_shape in (leaf, _ABSENT):
                leaves[key] = leaf
            elif sub_schema is _ABSENT and (sub_shape is str or sub_shape is bool):
                leaves[key] = sub_shape
            else:
                nodes[key] = _compile_both(sub_schema, sub_shape)
        size = len(keys)

        def check_object(value: Any) -> bool:
            if value is None:
                return True
            if not isinstance(value, dict):
                return False
            for key in (value if len(value) <= size else keys):
                item = value.get(key)
                if item is None:
                    continue
                leaf = leaves.get(key)
                if leaf is not None:
                    if not isinstance(item, leaf):
                        return False
                    continue
                sub = nodes.get(key)
                if sub is not None and not sub(item):
                    return False
            return True

        return check_object
    if (isinstance(schema, list) and isinstance(shape, list)) or (
        isinstance(schema, tuple) and isinstance(shape, MapOf)
    ):
        is_list = isinstance(schema, list)
        item_check = _compile_both(schema[0], shape[0]) if is_list else _compile_both(schema[1], shape.item)

        def check_items(value: Any) -> bool:
            if value is None:
                return True
            if is_list:
                if not isinstance(value, list):
                    return False
                items = value
            else:
                if not isinstance(value, dict):
                    return False
                items = value.values()
            for item in items:
                if not item_check(item):
                    return False
            return True

        return check_items
    if schema == INT and shape is int:  # the shape's 64-bit integer is the narrower rule
        return _compile_shape(shape)
    first, second = _compile(schema), _compile_shape(shape)
    if schema == QUANTITY and shape == SHAPE_QUANTITY:  # capacities repeat on every device: remember them
        return lambda value: (type(value) is str and value in _BOTH_QUANTITIES) or _both_quantity(value, first, second)
    return lambda value: first(value) and second(value)


#: Quantity strings that both the decode schema and the handler shape accept (bounded).
_BOTH_QUANTITIES: set[str] = set()


def _both_quantity(value: Any, first: Callable[[Any], bool], second: Callable[[Any], bool]) -> bool:
    """Both quantity checks, remembering the strings that pass them."""
    ok = first(value) and second(value)
    if ok and type(value) is str:
        if len(_BOTH_QUANTITIES) >= _QUANTITY_CACHE_SIZE:
            _BOTH_QUANTITIES.clear()
        _BOTH_QUANTITIES.add(value)
    return ok

#: Quantity texts already parsed -> valid or not (bounded; the same few values recur).
_QUANTITY_OK: dict[str, bool] = {}
_QUANTITY_CACHE_SIZE = 4096


def _quantity_ok(value: Any) -> bool:
    """True when ``value`` decodes as a quantity."""
    if type(value) is str:
        known = _QUANTITY_OK.get(value)
        if known is not None:
            return known
    from ..quantity import Quantity, QuantityError

    try:
        Quantity.from_json(value)
        ok = True
    except QuantityError:
        ok = False
    if type(value) is str:
        if len(_QUANTITY_OK) >= _QUANTITY_CACHE_SIZE:
            _QUANTITY_OK.clear()
        _QUANTITY_OK[value] = ok
    return ok


def _fits(value: Any, schema: Any) -> bool:
    """True when :func:`_check_type` would find nothing: the same rules as one boolean pass."""
    if value is None or schema == ANY:
        return True
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return False
        for key, sub in schema.items():
            item = value.get(key)
            if item is not None and not _fits(item, sub):
                return False
        return True
    if isinstance(schema, list):
        if not isinstance(value, list):
            return False
        sub = schema[0]
        return all(_fits(item, sub) for item in value)
    if isinstance(schema, tuple):
        if not isinstance(value, dict):
            return False
        sub = schema[1]
        return all(_fits(item, sub) for item in value.values())
    if schema == STR:
        return isinstance(value, str)
    if schema == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if schema == BOOL:
        return isinstance(value, bool)
    if schema == QUANTITY:
        return _quantity_ok(value)
    return True


#: id(schema) -> (schema, its compiled checker); the schema is kept so that its id stays its own.
_CHECKERS: dict[int, tuple[Any, Callable[[Any], bool]]] = {}


def _checker(schema: Any) -> Callable[[Any], bool]:
    """``lambda value: _fits(value, schema)`` compiled into nested closures, once per schema:
    each node of the object then costs one call, without re-reading the schema."""
    known = _CHECKERS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    check = _compile(schema)
    if len(_CHECKERS) < 256:
        _CHECKERS[id(schema)] = (schema, check)
    return check


#: schema leaves checked inline by their parent object: JSON type -> Python type
_LEAF_TYPES = {STR: str, BOOL: bool}


def _compile(schema: Any) -> Callable[[Any], bool]:
    """The checker of one schema node (``null`` always fits, as in :func:`_check_type`)."""
    if isinstance(schema, dict):
        leaves = {key: _LEAF_TYPES[sub] for key, sub in schema.items() if isinstance(sub, str) and sub in _LEAF_TYPES}
        nodes = {key: _compile(sub) for key, sub in schema.items() if key not in leaves}
        size = len(schema)

        def check_object(value: Any) -> bool:
            if value is None:
                return True
            if not isinstance(value, dict):
                return False
            keys = value if len(value) <= size else schema
            for key in keys:
                item = value.get(key)
                if item is None:
                    continue
                leaf = leaves.get(key)
                if leaf is not None:
                    if not isinstance(item, leaf):
                        return False
                    continue
                sub = nodes.get(key)
                if sub is not None and not sub(item):
                    return False
            return True

        return check_object
    if isinstance(schema, (list, tuple)):
        item_check = _compile(schema[0] if isinstance(schema, list) else schema[1])
        is_list = isinstance(schema, list)

        def check_items(value: Any) -> bool:
            if value is None:
                return True
            if is_list:
                if not isinstance(value, list):
                    return False
                items = value
            else:
                if not isinstance(value, dict):
                    return False
                items = value.values()
            for item in items:
                if not item_check(item):
                    return False
            return True

        return check_items
    if schema == STR:
        return lambda value: value is None or isinstance(value, str)
    if schema == INT:
        return lambda value: value is None or (isinstance(value, int) and not isinstance(value, bool))
    if schema == BOOL:
        return lambda value: value is None or isinstance(value, bool)
    if schema == QUANTITY:
        return lambda value: value is None or _quantity_ok(value)
    return lambda value: True


def _json_type(value: Any) -> str:
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


def _check_type(value: Any, schema: Any, path: FieldPath | None, out: list[tuple[FieldPath, Any, str]]) -> None:
    """Append (path, actual type, message) for each mismatch; ``null`` is always accepted (zero value)."""
    if value is None or schema == ANY:
        return
    here = path if path is not None else FieldPath("")
    actual = _json_type(value)
    shown = actual if isinstance(value, (dict, list)) else value  # the value itself unless it is large
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            out.append((here, shown, f"must be an object, not {actual}"))
            return
        for key, sub in schema.items():
            if key in value:
                _check_type(value[key], sub, here.child(key) if path is not None else FieldPath(key), out)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            out.append((here, shown, f"must be an array, not {actual}"))
            return
        for i, item in enumerate(value):
            _check_type(item, schema[0], here.index(i), out)
    elif isinstance(schema, tuple):
        if not isinstance(value, dict):
            out.append((here, shown, f"must be an object, not {actual}"))
            return
        for key, item in value.items():
            _check_type(item, schema[1], here.key(str(key)), out)
    elif schema == STR and actual != "string":
        out.append((here, shown, f"must be a string, not {actual}"))
    elif schema == INT and actual != "integer":
        out.append((here, shown, f"must be an integer, not {actual}"))
    elif schema == BOOL and actual != "boolean":
        out.append((here, shown, f"must be a boolean, not {actual}"))
    elif schema == QUANTITY:
        from ..quantity import Quantity, QuantityError

        try:
            Quantity.from_json(value)
        except QuantityError as exc:
            out.append((here, value, f"not a valid quantity: {exc}"))
