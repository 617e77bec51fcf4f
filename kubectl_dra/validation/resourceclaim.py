"""ResourceClaim: defaults, the create/update strategy and the API server's field rules.

The device-claim rules (requests, ``exactly``/``firstAvailable``, selectors,
constraints, config, derived attributes, tolerations) are shared with
ResourceClaimTemplate, which validates the same spec one level deeper
(``spec.spec``). Reference: ``admission-claims.md`` sections 1–10.
"""

from __future__ import annotations

import copy
import json
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..gates import Gate
from ..model.jsoncopy import copy_json
from . import common
from .field import FieldError, Path, duplicate, forbidden, invalid, not_supported, required, too_long, too_many

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates

from ..cel import limits as cel_limits

# Limits of resource.k8s.io/v1 (k8s.io/api resource/v1 types.go).
DEVICE_REQUESTS_MAX = 32
FIRST_AVAILABLE_MAX = 8
DEVICE_SELECTORS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
DERIVED_ATTRIBUTES_MAX = 32
CEL_EXPRESSION_MAX_LENGTH = cel_limits.MAX_LENGTH
CEL_EXPRESSION_MAX_COST = cel_limits.MAX_COST
#: Shared budget of all derived-attribute expressions of one claim. The upstream
#: value is not in the sources we have; the per-expression limit is assumed.
DERIVED_ATTRIBUTES_TOTAL_MAX_COST = cel_limits.MAX_COST

ALLOCATION_MODES = ("All", "ExactCount")
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")

# --------------------------------------------------------------------------- small dict helpers


def as_dict(value: Any) -> dict:
    """``value`` when it is a mapping, else an empty dict (tolerate malformed input)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    """``value`` when it is a list, else an empty list (tolerate malformed input)."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    """``value`` as the string the API server would decode ("" when absent)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


#: integer fields that are plain (not pointer) Go fields: 0 and "absent" are the same value
_ZERO_IS_ABSENT = frozenset({"count"})


def normalized(value: Any) -> Any:
    """``value`` with empty lists/maps and nulls removed, so that comparisons treat an
    omitted field and its empty value as equal (as apimachinery's semantic DeepEqual does)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            nv = normalized(v)
            if nv is None or nv == [] or nv == {} or nv == "":
                continue
            if k in _ZERO_IS_ABSENT and nv == 0 and not isinstance(nv, bool):
                continue
            out[k] = nv
        return out
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


# --------------------------------------------------------------------------- generic list checks


def check_list(
    items: Any,
    path: Path,
    max_items: int | None,
    check_item: Callable[[Any, Path], list[FieldError]],
    key: Callable[[Any], Any] | None = None,
    short_circuit: bool = True,
) -> list[FieldError]:
    """Upstream's validateSlice/validateSet: TooMany (which, by default, stops the item
    checks as a DoS guard), each item's errors, then Duplicate at every repeated key."""
    values = as_list(items)
    errs: list[FieldError] = []
    if max_items is not None and len(values) > max_items:
        errs.append(too_many(path, len(values), max_items))
        if short_circuit:
            return errs
    for i, item in enumerate(values):
        errs.extend(check_item(item, path.index(i)))
    if key is not None:
        seen: set[Any] = set()
        for i, item in enumerate(values):
            k = key(item)
            try:
                hash(k)
            except TypeError:
                k = json.dumps(k, sort_keys=True)
            if k in seen:
                errs.append(duplicate(path.index(i), k))
            else:
                seen.add(k)
    return errs


# --------------------------------------------------------------------------- defaults


def default_device_claim(devices: Any) -> None:
    """Apply the v1 defaults in place: allocationMode ExactCount, count 1, toleration operator Equal."""
    for request in as_list(as_dict(devices).get("requests")):
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            _default_exact(request["exactly"])
        for sub in as_list(request.get("firstAvailable")):
            if isinstance(sub, dict):
                _default_exact(sub)


def _default_exact(request: dict) -> None:
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1
    for toleration in as_list(request.get("tolerations")):
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def default_resource_claim(obj: dict) -> dict:
    """The claim as the API server decodes it (defaults applied), as a new dict."""
    out = copy_json(obj)
    spec = out.get("spec")
    if isinstance(spec, dict):
        default_device_claim(spec.get("devices"))
    return out


# --------------------------------------------------------------------------- dropping disabled fields


def _requests(devices: Any) -> list[dict]:
    return [r for r in as_list(as_dict(devices).get("requests")) if isinstance(r, dict)]


def _exact_and_subrequests(devices: Any) -> Iterable[dict]:
    """Every ``exactly`` and every ``firstAvailable`` entry of the claim."""
    for request in _requests(devices):
        if isinstance(request.get("exactly"), dict):
            yield request["exactly"]
        for sub in as_list(request.get("firstAvailable")):
            if isinstance(sub, dict):
                yield sub


def _uses_prioritized_list(devices: Any) -> bool:
    return any(as_list(r.get("firstAvailable")) for r in _requests(devices))


def _uses_admin_access(devices: Any, status: Any = None) -> bool:
    for r in _requests(devices):
        if as_dict(r.get("exactly")).get("adminAccess") is not None:
            return True
    results = as_list(as_dict(as_dict(as_dict(status).get("allocation")).get("devices")).get("results"))
    return any(as_dict(res).get("adminAccess") is not None for res in results)


def _uses_tolerations(devices: Any) -> bool:
    return any(as_list(x.get("tolerations")) for x in _exact_and_subrequests(devices))


def _uses_consumable_capacity(devices: Any) -> bool:
    if any(as_dict(c).get("distinctAttribute") is not None for c in as_list(as_dict(devices).get("constraints"))):
        return True
    return any(x.get("capacity") is not None for x in _exact_and_subrequests(devices))


def _uses_derived_attributes(devices: Any) -> bool:
    return any(as_list(x.get("derivedAttributes")) for x in _exact_and_subrequests(devices))


def drop_disabled_device_fields(
    devices: Any, old_devices: Any, gates: "FeatureGates", path: Path, old_status: Any = None
) -> list[str]:
    """Drop, in place, the fields of disabled gates that the old object did not already use.

    Returns one warning per dropped field so that users learn why their field vanished.
    """
    if not isinstance(devices, dict):
        return []
    warnings: list[str] = []
    has_old = old_devices is not None
    requests_path = path.child("requests")

    def note(field_path: Path, gate: str) -> None:
        warnings.append(f"{field_path}: dropped because the feature gate {gate} is disabled")

    if not common.gate_enabled(gates, Gate.PRIORITIZED_LIST) and not (has_old and _uses_prioritized_list(old_devices)):
        for i, request in enumerate(_requests(devices)):
            if "firstAvailable" in request:
                if as_list(request["firstAvailable"]):
                    note(requests_path.index(i).child("firstAvailable"), Gate.PRIORITIZED_LIST)
                del request["firstAvailable"]
    if not common.gate_enabled(gates, Gate.ADMIN_ACCESS) and not (has_old and _uses_admin_access(old_devices, old_status)):
        for i, request in enumerate(_requests(devices)):
            exactly = request.get("exactly")
            if isinstance(exactly, dict) and "adminAccess" in exactly:
                if exactly["adminAccess"] is not None:
                    note(requests_path.index(i).child("exactly", "adminAccess"), Gate.ADMIN_ACCESS)
                del exactly["adminAccess"]
    if not common.gate_enabled(gates, Gate.DEVICE_TAINTS) and not (has_old and _uses_tolerations(old_devices)):
        _drop_from_requests(devices, "tolerations", Gate.DEVICE_TAINTS, requests_path, note)
    if not common.gate_enabled(gates, Gate.CONSUMABLE_CAPACITY) and not (has_old and _uses_consumable_capacity(old_devices)):
        for c, constraint in enumerate(as_list(devices.get("constraints"))):
            if isinstance(constraint, dict) and "distinctAttribute" in constraint:
                if constraint["distinctAttribute"] is not None:
                    note(path.child("constraints").index(c).child("distinctAttribute"), Gate.CONSUMABLE_CAPACITY)
                del constraint["distinctAttribute"]
        _drop_from_requests(devices, "capacity", Gate.CONSUMABLE_CAPACITY, requests_path, note)
    if not common.gate_enabled(gates, Gate.DERIVED_ATTRIBUTES) and not (has_old and _uses_derived_attributes(old_devices)):
        _drop_from_requests(devices, "derivedAttributes", Gate.DERIVED_ATTRIBUTES, requests_path, note)
    return warnings


def _drop_from_requests(
    devices: dict, key: str, gate: str, requests_path: Path, note: Callable[[Path, str], None]
) -> None:
    """Remove ``key`` from every ``exactly`` and every subrequest."""
    for i, request in enumerate(_requests(devices)):
        exactly = request.get("exactly")
        if isinstance(exactly, dict) and key in exactly:
            if exactly[key] not in (None, [], {}):
                note(requests_path.index(i).child("exactly", key), gate)
            del exactly[key]
        for j, sub in enumerate(as_list(request.get("firstAvailable"))):
            if isinstance(sub, dict) and key in sub:
                if sub[key] not in (None, [], {}):
                    note(requests_path.index(i).child("firstAvailable").index(j).child(key), gate)
                del sub[key]


# --------------------------------------------------------------------------- strategy


def prepare_resource_claim(obj: dict, old: dict | None, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """PrepareForCreate/PrepareForUpdate: defaults, status reset (create) or kept from the
    stored object (update), and the dropping of fields of disabled gates."""
    claim = default_resource_claim(obj)
    old_claim = default_resource_claim(old) if old is not None else None
    if old_claim is None:
        claim.pop("status", None)
    elif "status" in old_claim:
        claim["status"] = copy.deepcopy(old_claim["status"])
    else:
        claim.pop("status", None)
    spec = claim.get("spec")
    old_spec = as_dict(old_claim.get("spec")) if old_claim is not None else None
    warnings: list[str] = []
    if isinstance(spec, dict):
        warnings = drop_disabled_device_fields(
            spec.get("devices"),
            old_spec.get("devices", {}) if old_spec is not None else None,
            gates,
            Path.root("spec", "devices"),
            old_claim.get("status") if old_claim is not None else None,
        )
    return claim, warnings


def validate_resource_claim(obj: dict, old: dict | None, gates: "FeatureGates") -> list[FieldError]:
    """Every field error of a (prepared) claim; on update only metadata and spec immutability."""
    meta_path = Path("metadata")
    errs = common.validate_object_meta(obj.get("metadata"), True, meta_path)
    if old is not None:
        old_claim = default_resource_claim(old)
        errs.extend(common.validate_object_meta_update(obj.get("metadata"), old_claim.get("metadata"), meta_path))
        errs.extend(immutable(obj.get("spec"), old_claim.get("spec"), Path("spec")))
        return errs
    errs.extend(validate_claim_spec(obj.get("spec"), Path("spec"), gates))
    return errs


def immutable(new: Any, old: Any, path: Path) -> list[FieldError]:
    """Invalid "field is immutable" when ``new`` differs semantically from ``old``."""
    if normalized(new) == normalized(old):
        return []
    return [invalid(path, new, "field is immutable")]


# --------------------------------------------------------------------------- spec rules


class _RequestNames:
    """Request names of a claim and, for firstAvailable requests, their subrequest names."""

    def __init__(self, devices: Any) -> None:
        self.subrequests: dict[str, set[str] | None] = {}
        for request in _requests(devices):
            subs = as_list(request.get("firstAvailable"))
            name = as_str(request.get("name"))
            self.subrequests[name] = {as_str(as_dict(s).get("name")) for s in subs} if subs else None

    def has(self, reference: str) -> bool:
        segments = reference.split("/")
        if len(segments) > 2 or segments[0] not in self.subrequests:
            return False
        if len(segments) == 1:
            return True
        subs = self.subrequests[segments[0]]
        return subs is not None and segments[1] in subs


class _Options:
    """State shared while validating one device claim: gates, derived-attribute costs and
    the attribute names each constraint target references."""

    def __init__(self, gates: "FeatureGates", constraints: Any) -> None:
        self.gates = gates
        self.derived_cost = 0
        self.constraint_attributes: dict[str, set[str]] = {}
        for constraint in as_list(constraints):
            c = as_dict(constraint)
            attr = c.get("matchAttribute")
            if attr is None:
                attr = c.get("distinctAttribute")
            if attr is None:
                continue
            targets = as_list(c.get("requests")) or [""]
            for target in targets:
                self.constraint_attributes.setdefault(as_str(target), set()).add(as_str(attr))

    def referenced(self, attribute: str, request: str) -> bool:
        """Whether a constraint that applies to ``request`` (``req`` or ``req/sub``) names ``attribute``."""
        if attribute in self.constraint_attributes.get("", ()):
            return True
        if attribute in self.constraint_attributes.get(request, ()):
            return True
        parent, sep, _ = request.partition("/")
        return bool(sep) and attribute in self.constraint_attributes.get(parent, ())


def validate_claim_spec(spec: Any, path: Path, gates: "FeatureGates") -> list[FieldError]:
    """The rules of a ResourceClaimSpec at ``path`` (``spec`` or ``spec.spec``)."""
    return validate_device_claim(as_dict(spec).get("devices"), path.child("devices"), gates)


def validate_device_claim(devices: Any, path: Path, gates: "FeatureGates") -> list[FieldError]:
    """Requests, constraints and config of one device claim, plus the derived-attribute budget."""
    devices = as_dict(devices)
    request_names = _RequestNames(devices)
    opts = _Options(gates, devices.get("constraints"))
    errs = check_list(
        devices.get("requests"),
        path.child("requests"),
        DEVICE_REQUESTS_MAX,
        lambda r, p: _validate_request(as_dict(r), p, opts),
        key=lambda r: as_str(as_dict(r).get("name")),
    )
    errs += check_list(
        devices.get("constraints"),
        path.child("constraints"),
        DEVICE_CONSTRAINTS_MAX,
        lambda c, p: _validate_constraint(as_dict(c), p, request_names, gates),
    )
    errs += check_list(
        devices.get("config"),
        path.child("config"),
        DEVICE_CONFIG_MAX,
        lambda c, p: _validate_claim_config(as_dict(c), p, request_names),
    )
    if opts.derived_cost > DERIVED_ATTRIBUTES_TOTAL_MAX_COST:
        errs.append(
            forbidden(path, "too complex, total cost of derived attribute CEL expressions in the claim exceeds cost limit")
        )
    return errs


def _validate_request(request: dict, path: Path, opts: _Options) -> list[FieldError]:
    name = as_str(request.get("name"))
    errs = common.validate_dns_label(name, path.child("name"))
    first_available = as_list(request.get("firstAvailable"))
    exactly = request.get("exactly")
    has_exactly = exactly is not None
    if not first_available and not has_exactly:
        errs.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif first_available and has_exactly:
        errs.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
    elif first_available:
        errs += check_list(
            first_available,
            path.child("firstAvailable"),
            FIRST_AVAILABLE_MAX,
            lambda s, p: _validate_subrequest(as_dict(s), p, opts, name),
            key=lambda s: as_str(as_dict(s).get("name")),
        )
    else:
        errs += _validate_exact(as_dict(exactly), path.child("exactly"), opts, name)
    return errs


def _validate_subrequest(sub: dict, path: Path, opts: _Options, parent: str) -> list[FieldError]:
    name = as_str(sub.get("name"))
    errs = common.validate_dns_label(name, path.child("name"))
    errs += _validate_device_selection(sub, path, opts, f"{parent}/{name}")
    return errs


def _validate_exact(exactly: dict, path: Path, opts: _Options, request_name: str) -> list[FieldError]:
    return _validate_device_selection(exactly, path, opts, request_name)


def _validate_device_selection(x: dict, path: Path, opts: _Options, request_name: str) -> list[FieldError]:
    """Rules shared by ``exactly`` and a subrequest: class, selectors, derived attributes,
    allocation mode and count, tolerations."""
    errs: list[FieldError] = []
    class_name = as_str(x.get("deviceClassName"))
    if not class_name:
        errs.append(required(path.child("deviceClassName")))
    else:
        errs += common.validate_dns_subdomain(class_name, path.child("deviceClassName"))
    errs += check_list(
        x.get("selectors"),
        path.child("selectors"),
        DEVICE_SELECTORS_MAX,
        lambda s, p: validate_selector(as_dict(s), p, opts.gates),
    )
    errs += _validate_derived_attributes(x.get("derivedAttributes"), path.child("derivedAttributes"), opts, request_name)
    errs += _validate_allocation_mode(x, path)
    for t, toleration in enumerate(as_list(x.get("tolerations"))):
        errs += validate_toleration(as_dict(toleration), path.child("tolerations").index(t))
    return errs


def _validate_allocation_mode(x: dict, path: Path) -> list[FieldError]:
    mode = as_str(x.get("allocationMode"))
    count = x.get("count") or 0
    if mode == "All":
        if count != 0:
            return [invalid(path.child("count"), count, f"must not be specified when allocationMode is '{mode}'")]
    elif mode == "ExactCount":
        if not isinstance(count, int) or count <= 0:
            return [invalid(path.child("count"), count, "must be greater than zero")]
    else:
        return [not_supported(path.child("allocationMode"), mode, ALLOCATION_MODES)]
    return []


def validate_selector(selector: dict, path: Path, gates: "FeatureGates") -> list[FieldError]:
    """A device selector: ``cel`` must be set and its expression must be a valid DRA CEL expression."""
    return common.validate_selector(selector, path, gates)


#: CEL result types a derived attribute may have: the device attribute types, or "unknown".
DERIVED_SCALAR_TYPES = ("bool", "int", "string", "kubernetes.Semver", "dyn")


def check_derived_expression(expression: str, path: Path, gates: "FeatureGates") -> tuple[list[FieldError], int]:
    """Length, compilation, result type and cost of a derived-attribute expression; returns
    (errors, cost). The result must be a scalar (or, with DRAListTypeAttributes, a list of scalars)."""
    if len(expression.encode("utf-8")) > CEL_EXPRESSION_MAX_LENGTH:
        return [too_long(path, "", CEL_EXPRESSION_MAX_LENGTH)], 0
    from ..cel import check_expression, compile_expression  # the engine loads on first use
    lists = common.gate_enabled(gates, Gate.LIST_TYPE_ATTRIBUTES)
    checked = check_expression(
        expression,
        result="any",
        consumable_capacity=common.gate_enabled(gates, Gate.CONSUMABLE_CAPACITY),
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


def _validate_derived_attributes(attrs: Any, path: Path, opts: _Options, request_name: str) -> list[FieldError]:
    """Derived attributes: at most 32 (the items are still checked), unique names, each
    referenced by a constraint that targets this request, each a valid expression."""

    def check(attr: Any, p: Path) -> list[FieldError]:
        a = as_dict(attr)
        errs: list[FieldError] = []
        name = as_str(a.get("name"))
        if not name:
            errs.append(required(p.child("name")))
        else:
            errs += common.validate_fully_qualified_name(name, p.child("name"))
            if not opts.referenced(name, request_name):
                errs.append(
                    invalid(
                        p.child("name"),
                        name,
                        "must be referenced by at least one matchAttribute or distinctAttribute constraint "
                        "targeting this request",
                    )
                )
        expression = as_str(a.get("expression"))
        if not expression:
            errs.append(required(p.child("expression")))
        else:
            cel_errs, cost = check_derived_expression(expression, p.child("expression"), opts.gates)
            errs += cel_errs
            opts.derived_cost += cost
        return errs

    return check_list(
        attrs,
        path,
        DERIVED_ATTRIBUTES_MAX,
        check,
        key=lambda a: as_str(as_dict(a).get("name")),
        short_circuit=False,
    )


def validate_toleration(toleration: dict, path: Path) -> list[FieldError]:
    """A device toleration: key a label key (or empty = all), operator Equal/Exists with a
    matching value, effect empty or a known taint effect (``None`` included, as the newest code)."""
    return common.validate_device_toleration(toleration, path, effects=TAINT_EFFECTS)


def _validate_constraint(
    constraint: dict, path: Path, request_names: _RequestNames, gates: "FeatureGates"
) -> list[FieldError]:
    errs = check_list(
        constraint.get("requests"),
        path.child("requests"),
        DEVICE_REQUESTS_MAX,
        lambda r, p: validate_request_reference(as_str(r), p, request_names),
        key=as_str,
    )
    match = constraint.get("matchAttribute")
    distinct = constraint.get("distinctAttribute")
    if match is not None:
        errs += common.validate_fully_qualified_name(as_str(match), path.child("matchAttribute"))
    elif distinct is not None:
        errs += common.validate_fully_qualified_name(as_str(distinct), path.child("distinctAttribute"))
    elif common.gate_enabled(gates, Gate.CONSUMABLE_CAPACITY):
        errs.append(required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required'))
    else:
        errs.append(required(path.child("matchAttribute")))
    return errs


_REFERENCE_MESSAGE = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def validate_request_reference(reference: str, path: Path, request_names: _RequestNames) -> list[FieldError]:
    """``req`` or ``req/sub`` naming a request (or a subrequest of a firstAvailable request)."""
    segments = reference.split("/")
    if len(segments) > 2:
        return [invalid(path, reference, _REFERENCE_MESSAGE)]
    errs: list[FieldError] = []
    for segment in segments:
        errs += common.validate_dns_label(segment, path)
    if not request_names.has(reference):
        errs.append(invalid(path, reference, _REFERENCE_MESSAGE))
    return errs


def _validate_claim_config(config: dict, path: Path, request_names: _RequestNames) -> list[FieldError]:
    errs = check_list(
        config.get("requests"),
        path.child("requests"),
        DEVICE_REQUESTS_MAX,
        lambda r, p: validate_request_reference(as_str(r), p, request_names),
        key=as_str,
    )
    errs += validate_device_configuration(config, path)
    return errs


def validate_device_configuration(config: dict, path: Path, stored: bool = False) -> list[FieldError]:
    """``opaque`` is required: a driver name and JSON-object parameters of at most 10 KiB."""
    opaque = config.get("opaque")
    if opaque is None:
        return [required(path.child("opaque"))]
    return common.validate_opaque_configuration(as_dict(opaque), path.child("opaque"), stored)


# =========================================================================== status subresource
#
# ``admission-claims.md`` section 10: what the status subresource accepts. The
# scheduler writes ``allocation``/``reservedFor``; drivers write ``devices``.

RESERVED_FOR_MAX = 256
ALLOCATION_RESULTS_MAX = 32
ALLOCATION_CONFIG_MAX = 2 * DEVICE_CONFIG_MAX  # class + claim
DEVICE_STATUS_CONDITIONS_MAX = 8
DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
INTERFACE_NAME_MAX_LENGTH = 256
HARDWARE_ADDRESS_MAX_LENGTH = 128
NETWORK_IPS_MAX = 16
CONFIG_SOURCES = ("FromClaim", "FromClass")
CONDITION_STATUSES = ("False", "True", "Unknown")
CONDITION_REASON_MAX_LENGTH = 1024
CONDITION_MESSAGE_MAX_LENGTH = 32 * 1024

# metadata fields a status update cannot change (metav1.ResetObjectMetaForStatus)
_STATUS_RESET_META = ("labels", "annotations", "finalizers", "ownerReferences", "deletionTimestamp", "generation")


def _results(status: Any) -> list[dict]:
    allocation = as_dict(as_dict(status).get("allocation"))
    return [r for r in as_list(as_dict(allocation.get("devices")).get("results")) if isinstance(r, dict)]


def _device_id(entry: dict) -> tuple[str, str, str]:
    return as_str(entry.get("driver")), as_str(entry.get("pool")), as_str(entry.get("device"))


def prepare_resource_claim_status(obj: dict, old: dict, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """The status strategy's PrepareForUpdate: spec and most metadata come from the stored
    claim, device statuses of deallocated devices vanish, fields of disabled gates are dropped."""
    claim = copy.deepcopy(obj)
    stored = default_resource_claim(old)
    if "spec" in stored:
        claim["spec"] = copy.deepcopy(stored["spec"])
    else:
        claim.pop("spec", None)
    if not isinstance(claim.get("metadata"), dict):
        claim["metadata"] = {}
    meta = claim["metadata"]
    old_meta = as_dict(stored.get("metadata"))
    for key in _STATUS_RESET_META:
        if key in old_meta:
            meta[key] = copy.deepcopy(old_meta[key])
        else:
            meta.pop(key, None)
    status = claim.get("status")
    old_status = as_dict(stored.get("status"))
    warnings: list[str] = []
    if isinstance(status, dict):
        _drop_deallocated_device_statuses(status, old_status, gates)
        warnings = _drop_disabled_status_fields(status, old_status, as_dict(stored.get("spec")).get("devices"), gates)
    return claim, warnings


def _drop_deallocated_device_statuses(status: dict, old_status: dict, gates: "FeatureGates") -> None:
    """Device statuses of devices that the new allocation no longer contains are removed."""
    if not (common.gate_enabled(gates, Gate.RESOURCE_CLAIM_DEVICE_STATUS) or as_list(old_status.get("devices"))):
        return
    gone = {_device_id(r) for r in _results(old_status)} - {_device_id(r) for r in _results(status)}
    if "devices" not in status:
        return
    kept = [d for d in as_list(status.get("devices")) if _device_id(as_dict(d)) not in gone]
    if kept:
        status["devices"] = kept
    else:
        del status["devices"]


def _drop_disabled_status_fields(status: dict, old_status: dict, devices: Any, gates: "FeatureGates") -> list[str]:
    """Status fields of disabled gates, unless the stored claim already used the feature."""
    warnings: list[str] = []
    results = _results(status)
    old_results = _results(old_status)
    results_path = Path.root("status", "allocation", "devices", "results")

    def drop_from_results(key: str, gate: str) -> None:
        for r, result in enumerate(results):
            if key in result:
                if result[key] not in (None, [], {}):
                    warnings.append(f"{results_path.index(r).child(key)}: dropped because the feature gate {gate} is disabled")
                del result[key]

    if not common.gate_enabled(gates, Gate.ADMIN_ACCESS) and not _uses_admin_access(devices, old_status):
        drop_from_results("adminAccess", Gate.ADMIN_ACCESS)
    if not common.gate_enabled(gates, Gate.RESOURCE_CLAIM_DEVICE_STATUS) and not as_list(old_status.get("devices")):
        if as_list(status.get("devices")):
            warnings.append(f"status.devices: dropped because the feature gate {Gate.RESOURCE_CLAIM_DEVICE_STATUS} is disabled")
        status.pop("devices", None)
    if not common.gate_enabled(gates, Gate.DEVICE_BINDING_CONDITIONS) and not any(
        r.get("bindingConditions") or r.get("bindingFailureConditions") for r in old_results
    ):
        drop_from_results("bindingConditions", Gate.DEVICE_BINDING_CONDITIONS)
        drop_from_results("bindingFailureConditions", Gate.DEVICE_BINDING_CONDITIONS)
    if not common.gate_enabled(gates, Gate.CONSUMABLE_CAPACITY) and not (
        _uses_consumable_capacity(devices)
        or any(r.get("shareID") is not None or r.get("consumedCapacity") for r in old_results)
    ):
        drop_from_results("shareID", Gate.CONSUMABLE_CAPACITY)
        drop_from_results("consumedCapacity", Gate.CONSUMABLE_CAPACITY)
        for device in as_list(status.get("devices")):
            if isinstance(device, dict):
                device.pop("shareID", None)
    if not common.gate_enabled(gates, Gate.OPTIONAL_NODE_OPERATIONS) and not any(r.get("skipNodeOperations") for r in old_results):
        drop_from_results("skipNodeOperations", Gate.OPTIONAL_NODE_OPERATIONS)
    if not common.gate_enabled(gates, Gate.DEVICE_TAINTS) and not any(r.get("tolerations") for r in old_results):
        drop_from_results("tolerations", Gate.DEVICE_TAINTS)
    return warnings


def validate_resource_claim_status(obj: dict, old: dict, gates: "FeatureGates") -> list[FieldError]:
    """ValidateResourceClaimStatusUpdate: metadata update rules and the status rules."""
    stored = default_resource_claim(old)
    errs = common.validate_object_meta_update(obj.get("metadata"), stored.get("metadata"), Path("metadata"))
    request_names = _RequestNames(as_dict(obj.get("spec")).get("devices"))
    deleted = as_dict(obj.get("metadata")).get("deletionTimestamp") is not None
    errs.extend(_validate_status_update(as_dict(obj.get("status")), as_dict(stored.get("status")), deleted,
                                        request_names))
    return errs


def admin_access_status_request(obj: dict, old: dict) -> int | None:
    """Index of the first new allocation result with ``adminAccess: true`` (None: nothing to authorize)."""
    if as_dict(as_dict(old.get("status")).get("allocation")):
        return None  # an existing allocation cannot change
    for r, result in enumerate(_results(obj.get("status"))):
        if result.get("adminAccess") is True:
            return r
    return None


def _validate_status_update(status: dict, old_status: dict, deleted: bool, names: _RequestNames) -> list[FieldError]:
    path = Path("status")
    reserved = status.get("reservedFor")
    errs = check_list(
        reserved,
        path.child("reservedFor"),
        RESERVED_FOR_MAX,
        lambda ref, p: _validate_consumer_reference(as_dict(ref), p),
        key=lambda ref: as_str(as_dict(ref).get("uid")),
    )
    allocation = status.get("allocation")
    old_allocation = old_status.get("allocation")
    allocated = {(*_device_id(r), as_str(r.get("shareID"))) for r in _results(status)}
    errs += check_list(
        status.get("devices"),
        path.child("devices"),
        None,
        lambda d, p: _validate_device_status(as_dict(d), p, allocated),
        key=lambda d: (*_device_id(as_dict(d)), as_str(as_dict(d).get("shareID"))),
    )
    if as_list(reserved):
        if allocation is None:
            errs.append(forbidden(path.child("reservedFor"), "may not be specified when `allocated` is not set"))
        elif deleted:
            old_refs = {json.dumps(r, sort_keys=True) for r in as_list(old_status.get("reservedFor"))}
            if any(json.dumps(r, sort_keys=True) not in old_refs for r in as_list(reserved)):
                errs.append(
                    forbidden(
                        path.child("reservedFor"),
                        "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                    )
                )
    if old_allocation is not None and allocation is not None:
        errs += immutable(allocation, old_allocation, path.child("allocation"))
    elif allocation is not None:
        errs += _validate_allocation(as_dict(allocation), path.child("allocation"), names)
    return errs


def _validate_consumer_reference(ref: dict, path: Path) -> list[FieldError]:
    return [required(path.child(key)) for key in ("resource", "name", "uid") if not as_str(ref.get(key))]


def _validate_allocation(allocation: dict, path: Path, names: _RequestNames) -> list[FieldError]:
    devices = as_dict(allocation.get("devices"))
    dpath = path.child("devices")
    errs = check_list(
        devices.get("results"),
        dpath.child("results"),
        ALLOCATION_RESULTS_MAX,
        lambda r, p: _validate_result(as_dict(r), p, names),
    )
    errs += check_list(
        devices.get("config"),
        dpath.child("config"),
        ALLOCATION_CONFIG_MAX,
        lambda c, p: _validate_allocation_config(as_dict(c), p, names),
    )
    if allocation.get("nodeSelector") is not None:
        errs += common.validate_node_selector(allocation["nodeSelector"], path.child("nodeSelector"))
    return errs


def _validate_result(result: dict, path: Path, names: _RequestNames) -> list[FieldError]:
    errs = validate_request_reference(as_str(result.get("request")), path.child("request"), names)
    errs += common.validate_driver_name(as_str(result.get("driver")), path.child("driver"))
    errs += common.validate_pool_name(as_str(result.get("pool")), path.child("pool"))
    errs += common.validate_device_name(as_str(result.get("device")), path.child("device"))
    errs += common.validate_binding_conditions(result, path)
    for t, toleration in enumerate(as_list(result.get("tolerations"))):
        errs += validate_toleration(as_dict(toleration), path.child("tolerations").index(t))
    if result.get("shareID") is not None:
        errs += validate_uid(as_str(result.get("shareID")), path.child("shareID"))
    if result.get("skipNodeOperations") is not None:
        errs += common.validate_skip_node_operations(result.get("skipNodeOperations"), path.child("skipNodeOperations"))
    return errs


def validate_uid(uid: str, path: Path) -> list[FieldError]:
    """A UUID in RFC 4122 normalized (lower-case, 36 characters) form."""
    import uuid

    try:
        uuid.UUID(uid)
    except ValueError as exc:
        return [invalid(path, uid, f"error validating uid: {exc}")]
    if len(uid) != 36 or uid != uid.lower():
        return [invalid(path, uid, "uid must be in RFC 4122 normalized form, "
                        "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")]
    return []


def _validate_allocation_config(config: dict, path: Path, names: _RequestNames) -> list[FieldError]:
    source = as_str(config.get("source"))
    errs: list[FieldError] = []
    if not source:
        errs.append(required(path.child("source")))
    elif source not in CONFIG_SOURCES:
        errs.append(not_supported(path.child("source"), source, CONFIG_SOURCES))
    errs += check_list(
        config.get("requests"),
        path.child("requests"),
        DEVICE_REQUESTS_MAX,
        lambda r, p: validate_request_reference(as_str(r), p, names),
        key=as_str,
    )
    errs += validate_device_configuration(config, path)
    return errs


def _validate_device_status(device: dict, path: Path, allocated: set[tuple[str, str, str, str]]) -> list[FieldError]:
    errs = common.validate_driver_name(as_str(device.get("driver")), path.child("driver"))
    errs += common.validate_pool_name(as_str(device.get("pool")), path.child("pool"))
    errs += common.validate_device_name(as_str(device.get("device")), path.child("device"))
    share_id = device.get("shareID")
    if share_id is not None:
        errs += validate_uid(as_str(share_id), path.child("shareID"))
    key = (*_device_id(device), as_str(share_id))
    if key not in allocated:
        shown = "/".join(part for part in key if part)
        errs.append(invalid(path, shown, "must be an allocated device in the claim"))
    conditions = as_list(device.get("conditions"))
    if len(conditions) > DEVICE_STATUS_CONDITIONS_MAX:
        errs.append(too_many(path.child("conditions"), len(conditions), DEVICE_STATUS_CONDITIONS_MAX))
    errs += validate_conditions(conditions, path.child("conditions"))
    if device.get("data") is not None:
        errs += common.validate_raw_extension(device, "data", path.child("data"), False, DEVICE_STATUS_DATA_MAX_LENGTH)
    if device.get("networkData") is not None:
        errs += validate_network_data(as_dict(device.get("networkData")), path.child("networkData"))
    return errs


_CONDITION_REASON_RE = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")


def validate_conditions(conditions: list, path: Path) -> list[FieldError]:
    """metav1 Conditions (``ValidateConditions``): unique types, known status, reason format."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        c = as_dict(condition)
        p = path.index(i)
        ctype = as_str(c.get("type"))
        if not ctype:
            errs.append(required(p.child("type"), "must be set"))
        else:
            errs += common.validate_label_name(ctype, p.child("type"))
            if ctype in seen:
                errs.append(duplicate(p.child("type"), ctype))
            seen.add(ctype)
        status = as_str(c.get("status"))
        if status not in CONDITION_STATUSES:
            errs.append(not_supported(p.child("status"), status, CONDITION_STATUSES))
        if not c.get("lastTransitionTime"):
            errs.append(required(p.child("lastTransitionTime"), "must be set"))
        reason = as_str(c.get("reason"))
        if not reason:
            errs.append(required(p.child("reason"), "must be set"))
        else:
            if len(reason) > CONDITION_REASON_MAX_LENGTH:
                errs.append(too_long(p.child("reason"), "", CONDITION_REASON_MAX_LENGTH))
            if not _CONDITION_REASON_RE.match(reason):
                errs.append(invalid(p.child("reason"), reason, "a condition reason must start with alphabetic character, "
                                    "optionally followed by a string of alphanumeric characters or '_,:', and must "
                                    "end with an alphanumeric character or '_'"))
        if len(as_str(c.get("message"))) > CONDITION_MESSAGE_MAX_LENGTH:
            errs.append(too_long(p.child("message"), "", CONDITION_MESSAGE_MAX_LENGTH))
        generation = c.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            errs.append(invalid(p.child("observedGeneration"), generation, "must be greater than or equal to zero"))
    return errs


def validate_network_data(data: dict, path: Path) -> list[FieldError]:
    """NetworkDeviceData: interface name and hardware address lengths, unique canonical CIDR IPs
    (public: the device-metadata checker applies the same rules)."""
    errs: list[FieldError] = []
    if len(as_str(data.get("interfaceName"))) > INTERFACE_NAME_MAX_LENGTH:
        errs.append(too_long(path.child("interfaceName"), "", INTERFACE_NAME_MAX_LENGTH))
    if len(as_str(data.get("hardwareAddress"))) > HARDWARE_ADDRESS_MAX_LENGTH:
        errs.append(too_long(path.child("hardwareAddress"), "", HARDWARE_ADDRESS_MAX_LENGTH))
    errs += check_list(
        data.get("ips"), path.child("ips"), NETWORK_IPS_MAX, lambda ip, p: validate_interface_address(as_str(ip), p),
        key=as_str,
    )
    return errs


def validate_interface_address(value: str, path: Path) -> list[FieldError]:
    """An IP address with prefix length in canonical form (``10.9.8.7/24``, ``2001:db8::1/64``)."""
    import ipaddress

    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        return [invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    if "/" not in value:
        return [invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    canonical = f"{iface.ip.compressed}/{iface.network.prefixlen}"
    if value != canonical:
        return [invalid(path, value, f"must be in canonical form ({canonical!r})")]
    return []
