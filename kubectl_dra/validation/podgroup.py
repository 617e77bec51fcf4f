"""PodGroup (scheduling.k8s.io): the DRA part, ``spec.resourceClaims`` (gate
DRAWorkloadResourceClaims), and its create/update strategy (``admission-claims.md`` section 11).

Only the DRA fields and the object metadata are checked; the rest of the
PodGroup (scheduling policy, constraints) belongs to other API rules.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from . import common
from .field import FieldError, Path, invalid, required
from .resourceclaim import as_dict, as_list, as_str, check_list, immutable

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates

WORKLOAD_RESOURCE_CLAIMS = "DRAWorkloadResourceClaims"
#: At most this many claims per PodGroup (also the Workload's pod-group templates).
POD_GROUP_RESOURCE_CLAIMS_MAX = 4


def prepare_pod_group(obj: dict, old: dict | None, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """Drop ``spec.resourceClaims`` (and their status) when the gate is off, unless the stored
    PodGroup already had claims."""
    group = copy.deepcopy(obj)
    warnings: list[str] = []
    if gates.enabled(WORKLOAD_RESOURCE_CLAIMS):
        return group, warnings
    if old is not None and as_list(as_dict(old.get("spec")).get("resourceClaims")):
        return group, warnings
    spec = group.get("spec")
    if isinstance(spec, dict) and "resourceClaims" in spec:
        if as_list(spec["resourceClaims"]):
            warnings.append(
                f"spec.resourceClaims: dropped because the feature gate {WORKLOAD_RESOURCE_CLAIMS} is disabled"
            )
        del spec["resourceClaims"]
    status = group.get("status")
    if isinstance(status, dict) and "resourceClaimStatuses" in status:
        del status["resourceClaimStatuses"]
    return group, warnings


def validate_pod_group(obj: dict, old: dict | None, gates: "FeatureGates") -> list[FieldError]:
    """Metadata and ``spec.resourceClaims``; on update the claims are immutable."""
    meta_path = Path("metadata")
    errs = common.validate_object_meta(obj.get("metadata"), True, meta_path)
    claims_path = Path.root("spec", "resourceClaims")
    claims = as_dict(obj.get("spec")).get("resourceClaims")
    if old is not None:
        errs.extend(common.validate_object_meta_update(obj.get("metadata"), old.get("metadata"), meta_path))
        errs.extend(immutable(claims, as_dict(old.get("spec")).get("resourceClaims"), claims_path))
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
        errs.extend(common.validate_dns_label(name, path.child("name")))
    sources = 0
    for key in ("resourceClaimName", "resourceClaimTemplateName"):
        if claim.get(key) is not None:
            sources += 1
            errs.extend(common.validate_dns_subdomain(as_str(claim[key]), path.child(key)))
    if sources != 1:
        errs.append(invalid(path, claim, "must specify exactly one of resourceClaimName or resourceClaimTemplateName"))
    return errs
