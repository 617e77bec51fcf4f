"""The admission decision for one DRA object, shared by ``kubectl dra validate`` and the webhook.

:func:`review` runs the API server's request pipeline for the kinds it knows
(decode: value types → defaults → prepare/drop fields of disabled gates →
admin-access authorization → validation) and returns a :class:`Decision` carrying every field error, the
mutated object and the RFC 6902 patch that turns the submitted object into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Mapping

import jsonpatch
import orjson

from ..model.jsoncopy import copy_json, dumps_json
from . import deviceclass, pod, podgroup, resourceclaim, resourceclaimstatus, resourceclaimtemplate, resourceslice
from .field import FieldError, forbidden, internal
from .field import Path as FieldPath
from .schema import decode_errors
from .specmemo import SpecMemo

__all__ = ["SUPPORTED_KINDS", "NAMESPACED_KINDS", "ADMIN_ACCESS_LABEL", "Decision", "SpecMemo", "decode_errors",
           "make_patch", "review"]

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates

#: The kinds this decision knows; any other kind is admitted unchanged.
SUPPORTED_KINDS: frozenset[str] = frozenset(
    {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "PodGroup", "Pod"}
)

Prepare = Callable[..., Any]
Validate = Callable[..., list[FieldError]]

#: kind -> (prepare, validate): each prepare is ``prepare(obj, old, gates) -> dict | (dict, warnings)``
#: and each validate ``validate(obj, old, gates) -> list[FieldError]``; both may rely on ``obj``
#: and ``old`` fitting the kind's decode schema (:mod:`kubectl_dra.schema`), which :func:`review` checks first.
#: Neither writes to ``obj`` or ``old``: a prepare returns a copy of what it changes (which may
#: share the unchanged parts with ``obj``), or ``obj`` itself when nothing changes.
_HANDLERS: dict[str, tuple[Prepare, Validate]] = {
    "ResourceSlice": (resourceslice.prepare_resource_slice, resourceslice.validate_resource_slice),
    "DeviceClass": (deviceclass.prepare_device_class, deviceclass.validate_device_class),
    "ResourceClaim": (resourceclaim.prepare_resource_claim, resourceclaim.validate_resource_claim),
    "ResourceClaimTemplate": (
        resourceclaimtemplate.prepare_resource_claim_template,
        resourceclaimtemplate.validate_resource_claim_template,
    ),
    "PodGroup": (podgroup.prepare_pod_group, podgroup.validate_pod_group),
    "Pod": (pod.prepare_pod, pod.validate_pod),
}

#: kind -> ``create(obj, gates, memo) -> (prepared, warnings, errors)``: prepare and validate of a
#: CREATE with the device-claim spec through a :class:`SpecMemo` (the same outcome as the two handlers).
_MEMO_CREATE: dict[str, Callable[[dict, Any, SpecMemo], tuple[dict, list[str], list[FieldError]]]] = {
    "ResourceClaim": resourceclaim.create_resource_claim,
    "ResourceClaimTemplate": resourceclaimtemplate.create_resource_claim_template,
}

#: kind -> handlers of its status subresource (UPDATE only).
_STATUS_HANDLERS: dict[str, tuple[Prepare, Validate]] = {
    "ResourceClaim": (
        resourceclaimstatus.prepare_resource_claim_status, resourceclaimstatus.validate_resource_claim_status
    ),
    "PodGroup": (podgroup.prepare_pod_group_status, podgroup.validate_pod_group_status),
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
    """What the API server would do with one object: allowed or not, why, and the stored form.

    ``object`` may share the parts the strategy left unchanged with the submitted object (no
    deep copy is made for a review): copy it before changing it (:meth:`to_dict` does).
    :attr:`patch` is worked out from ``submitted`` when first read (``/validate`` never reads it)."""

    kind: str
    name: str
    namespace: str | None
    operation: str
    allowed: bool
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    object: dict = field(default_factory=dict)
    #: the object as submitted, when the strategy may have changed it (else no patch)
    submitted: dict | None = field(default=None, repr=False, compare=False)

    @cached_property
    def patch(self) -> list[dict]:
        """The RFC 6902 patch that turns the submitted object into :attr:`object`."""
        return [] if self.submitted is None else make_patch(self.submitted, self.object)

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
            "patch": copy_json(self.patch),
            "object": copy_json(self.object),
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
    memo: SpecMemo | None = None,
) -> Decision:
    """Decide on ``obj`` as the API server would for ``operation``.

    ``namespace`` is the request's namespace; it fills ``metadata.namespace`` of a
    namespaced object that lacks one (as the API server does before admission).
    ``namespace_labels`` is consulted only when admin access must be authorized; a
    callable is called lazily with the namespace name, and its exception becomes a
    denial (InternalError) naming the lookup failure.
    ``subresource="status"`` applies the status strategy of ResourceClaim and PodGroup
    (UPDATE only); other subresources are admitted unchanged.
    ``memo`` (a caller's :class:`SpecMemo`) remembers how the specs of new claims and templates
    seen before were prepared and what their errors were; the decision is the same with or
    without it (its object may share metadata with ``obj``).
    """
    operation = operation.upper()
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {', '.join(OPERATIONS)}, not {operation!r}")
    # ``obj`` is never written to (the prepare step copies what it changes), so the submitted
    # object is shared with the caller, except that filling in the namespace copies its spine
    submitted = obj
    kind = given_kind if isinstance(given_kind := submitted.get("kind"), str) else ""
    meta = given_meta if isinstance(given_meta := submitted.get("metadata"), dict) else {}
    if kind in NAMESPACED_KINDS and namespace and not meta.get("namespace") and (
        "metadata" not in submitted or isinstance(submitted.get("metadata"), dict)
    ):  # a metadata of the wrong type is left for decoding to report
        meta = {**meta, "namespace": namespace}
        submitted = {**submitted, "metadata": meta}
    name = str(meta.get("name") or meta.get("generateName") or "")
    ns = meta.get("namespace") if kind in NAMESPACED_KINDS else None

    handler = _STATUS_HANDLERS.get(kind) if subresource else _HANDLERS.get(kind)
    if handler is None or (subresource and (subresource != "status" or operation != "UPDATE")):
        return Decision(kind, name, ns, operation, True, [], [], copy_json(submitted))

    if operation == "UPDATE" and old is None:
        raise ValueError("an UPDATE needs the stored (old) object")
    old_obj = old if operation == "UPDATE" else None  # read only, by every handler: no copy

    # decoding: a value of the wrong type ends the request before any admission step
    decode = decode_errors(submitted, kind)
    if old_obj is not None:
        decode += decode_errors(old_obj, kind, prefix="in the stored object: ")
    if decode:
        return Decision(kind, name, ns, operation, False, decode, [], copy_json(submitted))

    prepare, validate = handler
    warnings: list[str] = []
    handler_errors: list[FieldError] | None = None
    if memo is not None and not subresource and operation == "CREATE" and kind in _MEMO_CREATE:
        prepared, extra, handler_errors = _MEMO_CREATE[kind](submitted, gates, memo)
        warnings.extend(extra)
    else:
        prepared = prepare(submitted, old_obj, gates)  # never written to: each prepare copies what it changes
        if isinstance(prepared, tuple):  # (object, warnings) from handlers that explain what they dropped
            prepared, extra = prepared
            warnings.extend(extra)
    errors: list[FieldError] = []
    if subresource == "status" and kind == "ResourceClaim" and old_obj is not None:
        errors.extend(_authorize_admin_access_status(prepared, old_obj, namespace_labels))
    elif not subresource and operation == "CREATE" and kind in ("ResourceClaim", "ResourceClaimTemplate"):
        errors.extend(_authorize_admin_access(prepared, namespace_labels))
    errors.extend(validate(prepared, old_obj, gates) if handler_errors is None else handler_errors)
    errors = _unique(errors)

    return Decision(kind, name, ns, operation, not errors, errors, warnings, prepared, submitted)


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
        return [{"op": "add", "path": f"{prefix}/{_pointer_token(k)}", "value": copy_json(v)}
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
    if a is b:
        return True
    try:
        if a != b:
            return False
    except RecursionError:  # nested deeper than == can recurse: compare the texts
        pass
    try:
        return orjson.dumps(a) == orjson.dumps(b)
    except (TypeError, ValueError):  # e.g. integers beyond 64 bits, depth over 255: the exact slow path
        pass
    try:  # dumps_json: any nesting depth (opaque parameters may nest deep)
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
    index = resourceclaimstatus.admin_access_status_request(obj, old)
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
