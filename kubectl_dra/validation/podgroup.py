"""PodGroup (scheduling.k8s.io): the DRA part, ``spec.resourceClaims`` (gate
DRAWorkloadResourceClaims), and its create/update strategy (``admission-claims.md`` section 11).

Only the DRA fields and the object metadata are checked; the rest of the
PodGroup (scheduling policy, constraints) belongs to other API rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..gates import Gate
from ..model.jsoncopy import copy_json
from .field import FieldError, Path, duplicate, invalid, required
from .gating import gate_enabled
from .lists import check_list
from .names import validate_dns_label, validate_dns_subdomain
from .objectmeta import validate_object_meta, validate_object_meta_update
from .values import as_dict, as_list, as_str, validate_immutable_field

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates

#: At most this many claims per PodGroup (also the Workload's pod-group templates).
POD_GROUP_RESOURCE_CLAIMS_MAX = 4


def prepare_pod_group(obj: dict, old: dict | None, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """Drop ``spec.resourceClaims`` (and their status) when the gate is off, unless the stored
    PodGroup already had claims."""
    group = copy_json(obj)
    warnings: list[str] = []
    if gate_enabled(gates, Gate.WORKLOAD_RESOURCE_CLAIMS):
        return group, warnings
    if old is not None and as_list(as_dict(old.get("spec")).get("resourceClaims")):
        return group, warnings
    spec = group.get("spec")
    if isinstance(spec, dict) and "resourceClaims" in spec:
        if as_list(spec["resourceClaims"]):
            warnings.append(
                f"spec.resourceClaims: dropped because the feature gate {Gate.WORKLOAD_RESOURCE_CLAIMS} is disabled"
            )
        del spec["resourceClaims"]
    status = group.get("status")
    if isinstance(status, dict) and "resourceClaimStatuses" in status:
        del status["resourceClaimStatuses"]
    return group, warnings


def validate_pod_group(obj: dict, old: dict | None, gates: "FeatureGates") -> list[FieldError]:
    """Metadata and ``spec.resourceClaims``; on update the claims are immutable."""
    meta_path = Path("metadata")
    errs = validate_object_meta(obj.get("metadata"), True, meta_path)
    claims_path = Path.root("spec", "resourceClaims")
    claims = as_dict(obj.get("spec")).get("resourceClaims")
    if old is not None:
        errs.extend(validate_object_meta_update(obj.get("metadata"), old.get("metadata"), meta_path))
        errs.extend(validate_immutable_field(claims, as_dict(old.get("spec")).get("resourceClaims"), claims_path))
        return errs
    errs.extend(validate_pod_group_resource_claims(claims, claims_path))
    return errs


def validate_pod_group_resource_claims(claims: Any, path: Path) -> list[FieldError]:
    """At most 4 entries, unique names, each a DNS-label name with exactly one source."""
    return check_list(
        claims,
        path,
        POD_GROUP_RESOURCE_CLAIMS_MAX,
        lambda c, p: validate_claim_reference(as_dict(c), p),
        key=lambda c: as_str(as_dict(c).get("name")),
    )


def validate_claim_reference(claim: dict, path: Path) -> list[FieldError]:
    """One PodGroupResourceClaim: name a DNS label, exactly one of resourceClaimName and
    resourceClaimTemplateName, each a DNS subdomain."""
    errs: list[FieldError] = []
    name = as_str(claim.get("name"))
    if not name:
        errs.append(required(path.child("name")))
    else:
        errs.extend(validate_dns_label(name, path.child("name")))
    sources = 0
    for key in ("resourceClaimName", "resourceClaimTemplateName"):
        if claim.get(key) is not None:
            sources += 1
            errs.extend(validate_dns_subdomain(as_str(claim[key]), path.child(key)))
    if sources != 1:
        errs.append(invalid(path, claim, "must specify exactly one of resourceClaimName or resourceClaimTemplateName"))
    return errs


def prepare_pod_group_status(obj: dict, old: dict, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """The status subresource: the spec comes from the stored PodGroup; claim statuses are
    dropped when the gate is off and the stored PodGroup had no claims."""
    group = copy_json(obj)
    if "spec" in old:
        group["spec"] = copy_json(old["spec"])
    warnings: list[str] = []
    used = bool(as_list(as_dict(old.get("spec")).get("resourceClaims")))
    status = group.get("status")
    if not gate_enabled(gates, Gate.WORKLOAD_RESOURCE_CLAIMS) and not used and isinstance(status, dict):
        if as_list(status.get("resourceClaimStatuses")):
            warnings.append(
                f"status.resourceClaimStatuses: dropped because the feature gate {Gate.WORKLOAD_RESOURCE_CLAIMS} is disabled"
            )
        status.pop("resourceClaimStatuses", None)
    return group, warnings


def validate_pod_group_status(obj: dict, old: dict, gates: "FeatureGates") -> list[FieldError]:
    """Claim statuses must name a claim of the spec, once each, with a valid claim name."""
    errs = validate_object_meta_update(obj.get("metadata"), old.get("metadata"), Path("metadata"))
    claim_names = {as_str(as_dict(c).get("name")) for c in as_list(as_dict(obj.get("spec")).get("resourceClaims"))}
    path = Path.root("status", "resourceClaimStatuses")
    seen: set[str] = set()
    for k, entry in enumerate(as_list(as_dict(obj.get("status")).get("resourceClaimStatuses"))):
        entry = as_dict(entry)
        item = path.index(k)
        name = as_str(entry.get("name"))
        if name not in claim_names:
            errs.append(invalid(item.child("name"), name, "must match the name of an entry in `spec.resourceClaims`"))
        if name in seen:
            errs.append(duplicate(item, name))
        seen.add(name)
        if entry.get("resourceClaimName") is not None:
            errs.extend(validate_dns_subdomain(as_str(entry["resourceClaimName"]), item.child("resourceClaimName")))
    return errs
