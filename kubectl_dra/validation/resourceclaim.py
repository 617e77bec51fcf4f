"""ResourceClaim: defaults, the create/update strategy and the API server's field rules.

The device-claim rules (requests, ``exactly``/``firstAvailable``, selectors,
constraints, config, derived attributes, tolerations) are shared with
ResourceClaimTemplate, which validates the same spec one level deeper
(``spec.spec``). Reference: ``admission-claims.md`` sections 1–9; the status
subresource (section 10) is :mod:`.resourceclaimstatus`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..gates import Gate, effective_gates
from ..limits import FIRST_AVAILABLE_MAX
from ..model.jsoncopy import copy_json
from ..nameformats import dns1123_label_ok, dns1123_subdomain_ok
from .config import validate_device_configuration
from .field import FieldError, Path, Steps, forbidden, invalid, not_supported, path_at, required
from .lists import check_items
from .names import (
    fully_qualified_name_ok,
    validate_dns_label,
    validate_dns_subdomain,
    validate_fully_qualified_name,
)
from .objectmeta import validate_object_meta, validate_object_meta_update
from .selectors import DERIVED_ATTRIBUTES_TOTAL_MAX_COST, check_derived_expression, selector_errors
from .taints import validate_device_toleration
from .values import as_dict, as_list, as_str, validate_immutable_field

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates
    from .specmemo import NewSpec, SpecMemo

__all__ = [
    "CLAIM_DEVICES_PATH", "RequestNames", "create_resource_claim", "default_device_claim",
    "default_resource_claim", "drop_disabled_device_fields", "prepare_new_devices", "prepare_resource_claim",
    "request_reference_ok", "uses_admin_access", "uses_consumable_capacity", "validate_claim_spec",
    "validate_claim_config", "validate_device_claim", "validate_request_reference", "validate_resource_claim",
]

# Limits of resource.k8s.io/v1 (k8s.io/api resource/v1 types.go).
DEVICE_REQUESTS_MAX = 32
DEVICE_SELECTORS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
DERIVED_ATTRIBUTES_MAX = 32
ALLOCATION_MODES = ("All", "ExactCount")


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


def uses_admin_access(devices: Any, status: Any = None) -> bool:
    for r in _requests(devices):
        if as_dict(r.get("exactly")).get("adminAccess") is not None:
            return True
    results = as_list(as_dict(as_dict(as_dict(status).get("allocation")).get("devices")).get("results"))
    return any(as_dict(res).get("adminAccess") is not None for res in results)


def _uses_tolerations(devices: Any) -> bool:
    return any(as_list(x.get("tolerations")) for x in _exact_and_subrequests(devices))


def uses_consumable_capacity(devices: Any) -> bool:
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
    enabled = effective_gates(gates).enabled  # (a Gate member needs no lookup in the table)
    requests = _requests(devices)  # dropping fields of requests leaves the list as it is

    def note(steps: Steps, gate: str) -> None:
        warnings.append(f"{path_at(steps)}: dropped because the feature gate {gate} is disabled")

    if not enabled(Gate.PRIORITIZED_LIST) and not (has_old and _uses_prioritized_list(old_devices)):
        for i, request in enumerate(requests):
            if "firstAvailable" in request:
                if as_list(request["firstAvailable"]):
                    note((path, "requests", i, "firstAvailable"), Gate.PRIORITIZED_LIST)
                del request["firstAvailable"]
    if not enabled(Gate.ADMIN_ACCESS) and not (has_old and uses_admin_access(old_devices, old_status)):
        for i, request in enumerate(requests):
            exactly = request.get("exactly")
            if isinstance(exactly, dict) and "adminAccess" in exactly:
                if exactly["adminAccess"] is not None:
                    note((path, "requests", i, "exactly", "adminAccess"), Gate.ADMIN_ACCESS)
                del exactly["adminAccess"]
    if not enabled(Gate.DEVICE_TAINTS) and not (has_old and _uses_tolerations(old_devices)):
        _drop_from_requests(requests, "tolerations", Gate.DEVICE_TAINTS, path, note)
    if not enabled(Gate.CONSUMABLE_CAPACITY) and not (has_old and uses_consumable_capacity(old_devices)):
        for c, constraint in enumerate(as_list(devices.get("constraints"))):
            if isinstance(constraint, dict) and "distinctAttribute" in constraint:
                if constraint["distinctAttribute"] is not None:
                    note((path, "constraints", c, "distinctAttribute"), Gate.CONSUMABLE_CAPACITY)
                del constraint["distinctAttribute"]
        _drop_from_requests(requests, "capacity", Gate.CONSUMABLE_CAPACITY, path, note)
    if not enabled(Gate.DERIVED_ATTRIBUTES) and not (has_old and _uses_derived_attributes(old_devices)):
        _drop_from_requests(requests, "derivedAttributes", Gate.DERIVED_ATTRIBUTES, path, note)
    return warnings


def _drop_from_requests(
    requests: list[dict], key: str, gate: str, path: Path, note: Callable[[Steps, str], None]
) -> None:
    """Remove ``key`` from every ``exactly`` and every subrequest."""
    for i, request in enumerate(requests):
        exactly = request.get("exactly")
        if isinstance(exactly, dict) and key in exactly:
            if exactly[key] not in (None, [], {}):
                note((path, "requests", i, "exactly", key), gate)
            del exactly[key]
        first_available = request.get("firstAvailable")
        if not first_available:
            continue
        for j, sub in enumerate(as_list(first_available)):
            if isinstance(sub, dict) and key in sub:
                if sub[key] not in (None, [], {}):
                    note((path, "requests", i, "firstAvailable", j, key), gate)
                del sub[key]


def prepare_resource_claim(obj: dict, old: dict | None, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """PrepareForCreate/PrepareForUpdate: defaults, status reset (create) or kept from the
    stored object (update), and the dropping of fields of disabled gates."""
    claim = default_resource_claim(obj)
    old_claim = default_resource_claim(old) if old is not None else None
    if old_claim is None:
        claim.pop("status", None)
    elif "status" in old_claim:
        claim["status"] = old_claim["status"]  # old_claim is this call's own copy, read only from here
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


def validate_resource_claim(obj: dict, old: dict | None, gates: "FeatureGates",
                            spec_errors: list[FieldError] | None = None) -> list[FieldError]:
    """Every field error of a (prepared) claim; on update only metadata and spec immutability.
    ``spec_errors``: those of the spec, when the caller has them already (:func:`create_resource_claim`)."""
    meta_path = Path("metadata")
    errs = validate_object_meta(obj.get("metadata"), True, meta_path)
    if old is not None:
        old_claim = default_resource_claim(old)
        errs.extend(validate_object_meta_update(obj.get("metadata"), old_claim.get("metadata"), meta_path))
        errs.extend(validate_immutable_field(obj.get("spec"), old_claim.get("spec"), Path("spec")))
        return errs
    errs.extend(validate_claim_spec(obj.get("spec"), Path("spec"), gates) if spec_errors is None else spec_errors)
    return errs


#: Where a claim's device spec sits.
CLAIM_DEVICES_PATH = Path.root("spec", "devices")


def prepare_new_devices(devices: dict, path: Path, gates: "FeatureGates") -> "NewSpec":
    """A new spec's ``devices`` (the caller's own copy, changed in place) as PrepareForCreate
    leaves them (defaults applied, the fields of disabled gates dropped), the warnings of the
    drops, and the errors of the result."""
    default_device_claim(devices)
    warnings = drop_disabled_device_fields(devices, None, gates, path)
    return devices, warnings, validate_device_claim(devices, path, gates)


def create_resource_claim(obj: dict, gates: "FeatureGates",
                          memo: "SpecMemo") -> tuple[dict, list[str], list[FieldError]]:
    """:func:`prepare_resource_claim` and :func:`validate_resource_claim` of a CREATE, with the
    spec prepared and validated through ``memo`` (claims made from one template share their spec).
    The prepared claim shares its metadata with ``obj``."""
    spec = obj.get("spec")
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(devices, dict):  # no devices: nothing to remember
        claim, warnings = prepare_resource_claim(obj, None, gates)
        return claim, warnings, validate_resource_claim(claim, None, gates)
    prepared, warnings, spec_errors = memo.new_spec(
        devices, CLAIM_DEVICES_PATH, gates, lambda copy: prepare_new_devices(copy, CLAIM_DEVICES_PATH, gates))
    claim = {key: ({**spec, "devices": prepared} if key == "spec" else value)
             for key, value in obj.items() if key != "status"}
    return claim, warnings, validate_resource_claim(claim, None, gates, spec_errors)


class RequestNames:
    """Request names of a claim and, for firstAvailable requests, their subrequest names."""

    def __init__(self, devices: Any) -> None:
        self.subrequests: dict[str, set[str] | None] = {}
        for request in as_list(as_dict(devices).get("requests")):
            if not isinstance(request, dict):
                continue
            subs = request.get("firstAvailable")
            self.subrequests[_text(request.get("name"))] = (
                {_name_of(s) for s in subs} if subs and isinstance(subs, list) else None)

    def has(self, reference: str) -> bool:
        """Whether ``reference`` names a request, or a request and one of its subrequests."""
        request, slash, subrequest = reference.partition("/")
        if not slash:
            return request in self.subrequests
        subs = self.subrequests.get(request)
        return subs is not None and "/" not in subrequest and subrequest in subs


class _Options:
    """State shared while validating one device claim: gates (the two every selector reads, read
    once), the request names references must name, the derived-attribute cost so far and (worked
    out when a derived attribute first asks) the attribute names each constraint target references."""

    def __init__(self, gates: "FeatureGates", devices: dict) -> None:
        self.gates = gates
        enabled = effective_gates(gates).enabled
        self.consumable_capacity = bool(enabled(Gate.CONSUMABLE_CAPACITY))
        self.list_type_attributes = bool(enabled(Gate.LIST_TYPE_ATTRIBUTES))
        self.devices = devices
        self.derived_cost = 0
        self._request_names: RequestNames | None = None
        self._constraint_attributes: dict[str, set[str]] | None = None

    def names(self) -> RequestNames:
        """The claim's request names (made when a constraint or config entry first asks)."""
        if self._request_names is None:
            self._request_names = RequestNames(self.devices)
        return self._request_names

    def referenced(self, attribute: str, request: str) -> bool:
        """Whether a constraint that applies to ``request`` (``req`` or ``req/sub``) names ``attribute``."""
        if self._constraint_attributes is None:
            self._constraint_attributes = _constraint_attributes(self.devices.get("constraints"))
        targets = self._constraint_attributes
        if attribute in targets.get("", ()):
            return True
        if attribute in targets.get(request, ()):
            return True
        parent, sep, _ = request.partition("/")
        return bool(sep) and attribute in targets.get(parent, ())


def _constraint_attributes(constraints: Any) -> dict[str, set[str]]:
    """The attribute each constraint matches or keeps distinct, by the request it targets
    (``""``: a constraint on every request)."""
    attributes: dict[str, set[str]] = {}
    for constraint in as_list(constraints):
        c = as_dict(constraint)
        attr = c.get("matchAttribute")
        if attr is None:
            attr = c.get("distinctAttribute")
        if attr is None:
            continue
        for target in as_list(c.get("requests")) or [""]:
            attributes.setdefault(as_str(target), set()).add(as_str(attr))
    return attributes


def validate_claim_spec(spec: Any, path: Path, gates: "FeatureGates") -> list[FieldError]:
    """The rules of a ResourceClaimSpec at ``path`` (``spec`` or ``spec.spec``)."""
    return validate_device_claim(as_dict(spec).get("devices"), path.child("devices"), gates)


# The rules below take their place as Steps (a path built only for an error: a claim's spec is
# checked for every claim a controller makes, and almost every one is valid).


def validate_device_claim(devices: Any, path: Path, gates: "FeatureGates") -> list[FieldError]:
    """Requests, constraints and config of one device claim, plus the derived-attribute budget."""
    devices = as_dict(devices)
    opts = _Options(gates, devices)
    errs = check_items(devices.get("requests"), (path, "requests"), DEVICE_REQUESTS_MAX, _validate_request,
                       opts, key=_name_of)
    errs += check_items(devices.get("constraints"), (path, "constraints"), DEVICE_CONSTRAINTS_MAX,
                        _validate_constraint, opts)
    config = devices.get("config")
    if config:
        errs += check_items(config, (path, "config"), DEVICE_CONFIG_MAX, _validate_config_entry, opts)
    if opts.derived_cost > DERIVED_ATTRIBUTES_TOTAL_MAX_COST:
        errs.append(
            forbidden(path, "too complex, total cost of derived attribute CEL expressions in the claim exceeds cost limit")
        )
    return errs


def _name_of(item: Any) -> str:
    """An item's ``name``, as the key of duplicate requests, subrequests and derived attributes."""
    return as_str(item.get("name")) if isinstance(item, dict) else ""


def _text(value: Any) -> str:
    """A string field as the API server decodes it (:func:`as_str`, with no call for a string)."""
    return value if type(value) is str else as_str(value)


def _label_errors(name: str, where: Steps) -> list[FieldError]:
    """:func:`validate_dns_label` of ``name`` at ``where``."""
    return [] if dns1123_label_ok(name) else validate_dns_label(name, path_at(where))


def _validate_request(request: Any, where: Steps, opts: _Options) -> list[FieldError]:
    if type(request) is not dict:
        request = as_dict(request)
    name = request.get("name")
    if type(name) is not str:
        name = as_str(name)
    errs = _label_errors(name, where + ("name",))
    first_available = request.get("firstAvailable")
    if type(first_available) is not list:
        first_available = as_list(first_available)
    exactly = request.get("exactly")
    has_exactly = exactly is not None
    if not first_available and not has_exactly:
        errs.append(required(path_at(where), "exactly one of `exactly` or `firstAvailable` is required"))
    elif first_available and has_exactly:
        errs.append(invalid(path_at(where), None,
                            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
    elif first_available:
        errs += check_items(first_available, where + ("firstAvailable",), FIRST_AVAILABLE_MAX,
                            _validate_subrequest, opts, name, key=_name_of)
    else:
        errs += _validate_device_selection(as_dict(exactly), where + ("exactly",), opts, name)
    return errs


def _validate_subrequest(sub: Any, where: Steps, opts: _Options, parent: str) -> list[FieldError]:
    sub = as_dict(sub)
    name = _text(sub.get("name"))
    errs = _label_errors(name, where + ("name",))
    errs += _validate_device_selection(sub, where, opts, f"{parent}/{name}")
    return errs


def _validate_device_selection(x: dict, where: Steps, opts: _Options, request_name: str) -> list[FieldError]:
    """Rules shared by ``exactly`` and a subrequest: class, selectors, derived attributes,
    allocation mode and count, tolerations."""
    errs: list[FieldError] = []
    class_name = x.get("deviceClassName")
    if type(class_name) is not str:
        class_name = as_str(class_name)
    if not class_name:
        errs.append(required(path_at(where + ("deviceClassName",))))
    elif not dns1123_subdomain_ok(class_name):
        errs += validate_dns_subdomain(class_name, path_at(where + ("deviceClassName",)))
    errs += check_items(x.get("selectors"), where + ("selectors",), DEVICE_SELECTORS_MAX, selector_errors,
                        opts.consumable_capacity, opts.list_type_attributes)
    derived = x.get("derivedAttributes")
    if derived:
        errs += check_items(derived, where + ("derivedAttributes",), DERIVED_ATTRIBUTES_MAX,
                            _validate_derived_attribute, opts, request_name, key=_name_of, short_circuit=False)
    errs += _validate_allocation_mode(x, where)
    tolerations = x.get("tolerations")
    if tolerations:
        for t, toleration in enumerate(as_list(tolerations)):
            errs += validate_device_toleration(as_dict(toleration), path_at(where + ("tolerations", t)))
    return errs


def _validate_allocation_mode(x: dict, where: Steps) -> list[FieldError]:
    mode = _text(x.get("allocationMode"))
    count = x.get("count") or 0
    if mode == "ExactCount":
        if not isinstance(count, int) or count <= 0:
            return [invalid(path_at(where + ("count",)), count, "must be greater than zero")]
    elif mode == "All":
        if count != 0:
            return [invalid(path_at(where + ("count",)), count, f"must not be specified when allocationMode is '{mode}'")]
    else:
        return [not_supported(path_at(where + ("allocationMode",)), mode, ALLOCATION_MODES)]
    return []


def _validate_derived_attribute(attr: Any, where: Steps, opts: _Options, request_name: str) -> list[FieldError]:
    """One derived attribute (at most 32 of them, and the items are still checked, with unique
    names): referenced by a constraint that targets this request, a valid expression."""
    a = as_dict(attr)
    errs: list[FieldError] = []
    name = _text(a.get("name"))
    if not name:
        errs.append(required(path_at(where + ("name",))))
    else:
        errs += validate_fully_qualified_name(name, path_at(where + ("name",)))
        if not opts.referenced(name, request_name):
            errs.append(
                invalid(
                    path_at(where + ("name",)),
                    name,
                    "must be referenced by at least one matchAttribute or distinctAttribute constraint "
                    "targeting this request",
                )
            )
    expression = _text(a.get("expression"))
    if not expression:
        errs.append(required(path_at(where + ("expression",))))
    else:
        cel_errs, cost = check_derived_expression(expression, path_at(where + ("expression",)), opts.gates)
        errs += cel_errs
        opts.derived_cost += cost
    return errs


def _validate_constraint(constraint: Any, where: Steps, opts: _Options) -> list[FieldError]:
    constraint = as_dict(constraint)
    errs = check_items(constraint.get("requests"), where + ("requests",), DEVICE_REQUESTS_MAX, _reference_errors,
                       opts.names(), key=as_str)
    match = constraint.get("matchAttribute")
    distinct = constraint.get("distinctAttribute")
    if match is not None:
        if not fully_qualified_name_ok(match):
            errs += validate_fully_qualified_name(as_str(match), path_at(where + ("matchAttribute",)))
    elif distinct is not None:
        if not fully_qualified_name_ok(distinct):
            errs += validate_fully_qualified_name(as_str(distinct), path_at(where + ("distinctAttribute",)))
    elif opts.consumable_capacity:
        errs.append(required(path_at(where), 'exactly one of "matchAttribute" or "distinctAttribute" is required'))
    else:
        errs.append(required(path_at(where + ("matchAttribute",))))
    return errs


def _reference_errors(reference: Any, where: Steps, request_names: RequestNames) -> list[FieldError]:
    """:func:`validate_request_reference` at ``where``."""
    reference = _text(reference)
    if request_reference_ok(reference, request_names):  # (spares the path)
        return []
    return validate_request_reference(reference, path_at(where), request_names)


def _validate_config_entry(config: Any, where: Steps, opts: _Options) -> list[FieldError]:
    return validate_claim_config(as_dict(config), path_at(where), opts.names())


_REFERENCE_MESSAGE = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def request_reference_ok(reference: str, request_names: RequestNames) -> bool:
    """Whether :func:`validate_request_reference` accepts ``reference``."""
    request, slash, subrequest = reference.partition("/")
    if not slash:
        return dns1123_label_ok(request) and request in request_names.subrequests
    return dns1123_label_ok(request) and dns1123_label_ok(subrequest) and request_names.has(reference)


def validate_request_reference(reference: str, path: Path, request_names: RequestNames) -> list[FieldError]:
    """``req`` or ``req/sub`` naming a request (or a subrequest of a firstAvailable request)."""
    if request_reference_ok(reference, request_names):
        return []
    return _reference_problems(reference, path, request_names)


def _reference_problems(reference: str, path: Path, request_names: RequestNames) -> list[FieldError]:
    """Every error of a reference, found the long way (what :func:`request_reference_ok` spares)."""
    segments = reference.split("/")
    if len(segments) > 2:
        return [invalid(path, reference, _REFERENCE_MESSAGE)]
    errs: list[FieldError] = []
    for segment in segments:
        errs += validate_dns_label(segment, path)
    if not request_names.has(reference):
        errs.append(invalid(path, reference, _REFERENCE_MESSAGE))
    return errs


def validate_claim_config(config: dict, path: Path, request_names: RequestNames) -> list[FieldError]:
    """One config entry of a claim (upstream validateDeviceClaimConfiguration): the requests it
    names, then the configuration; an allocation's config adds its source to these checks."""
    errs = check_items(config.get("requests"), (path, "requests"), DEVICE_REQUESTS_MAX, _reference_errors,
                       request_names, key=as_str)
    errs += validate_device_configuration(config, path)
    return errs
