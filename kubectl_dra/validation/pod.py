"""Pod: the DRA parts only (``admission-claims.md`` section 12).

``spec.resourceClaims`` (name, exactly one source) and the ``resources.claims``
of every container, init container and ephemeral container (and pod-level
``spec.resources.claims``) that must name one of them. On update the claims are
part of the immutable pod spec.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from .field import FieldError, Path, duplicate, forbidden, required
from .names import validate_dns_label
from .objectmeta import validate_object_meta, validate_object_meta_update
from .podgroup import validate_claim_reference
from .values import as_dict, as_list, as_str, normalized

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates

_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
_NOT_FOUND = "FieldValueNotFound"


def prepare_pod(obj: dict, old: dict | None, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """Pods get no DRA defaults and no DRA fields are dropped: the object is unchanged."""
    return copy.deepcopy(obj), []


def validate_pod(obj: dict, old: dict | None, gates: "FeatureGates") -> list[FieldError]:
    """Metadata, pod claims and container claim references; on update the DRA fields are immutable."""
    meta_path = Path("metadata")
    errs = validate_object_meta(obj.get("metadata"), True, meta_path)
    spec = as_dict(obj.get("spec"))
    if old is not None:
        errs.extend(validate_object_meta_update(obj.get("metadata"), old.get("metadata"), meta_path))
        if _dra_fields(spec) != _dra_fields(as_dict(old.get("spec"))):
            errs.append(
                forbidden(
                    Path("spec"),
                    "pod updates may not change fields other than `spec.containers[*].image`, "
                    "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` "
                    "(only additions to existing tolerations), `spec.terminationGracePeriodSeconds` "
                    "(allow it to be set to 1 if it was previously negative); resource claims are immutable",
                )
            )
        return errs
    errs.extend(validate_pod_resource_claims(spec))
    return errs


def _dra_fields(spec: dict) -> Any:
    """The DRA-relevant part of a pod spec, normalized for comparison."""
    containers = {
        kind: [as_list(as_dict(as_dict(c).get("resources")).get("claims")) for c in as_list(spec.get(kind))]
        for kind in _CONTAINER_LISTS
        if kind != "ephemeralContainers"  # ephemeral containers change through their own subresource
    }
    return normalized(
        {
            "resourceClaims": as_list(spec.get("resourceClaims")),
            "podResources": as_list(as_dict(spec.get("resources")).get("claims")),
            "containers": containers,
        }
    )


def validate_pod_resource_claims(spec: dict) -> list[FieldError]:
    """``spec.resourceClaims`` and every ``resources.claims`` that refers to them."""
    errs: list[FieldError] = []
    claims_path = Path.root("spec", "resourceClaims")
    names: set[str] = set()
    for i, claim in enumerate(as_list(spec.get("resourceClaims"))):
        claim = as_dict(claim)
        path = claims_path.index(i)
        name = as_str(claim.get("name"))
        if name and name in names:
            errs.append(duplicate(path.child("name"), name))
            errs.extend(_source_errors(claim, path))
            continue
        if name:
            names.add(name)
        errs.extend(validate_claim_reference(claim, path))
    resources = spec.get("resources")
    if isinstance(resources, dict):
        errs.extend(_container_claims(resources.get("claims"), names, Path.root("spec", "resources", "claims")))
    for kind in _CONTAINER_LISTS:
        for c, container in enumerate(as_list(spec.get(kind))):
            claims = as_dict(as_dict(container).get("resources")).get("claims")
            path = Path.root("spec", kind).index(c).child("resources", "claims")
            errs.extend(_container_claims(claims, names, path))
    return errs


def _source_errors(claim: dict, path: Path) -> list[FieldError]:
    """The source rules of a pod claim whose name was already reported as a duplicate."""
    errs = [e for e in validate_claim_reference(claim, path) if not e.field.endswith(".name")]
    return errs


def _container_claims(claims: Any, pod_claims: set[str], path: Path) -> list[FieldError]:
    """Container ``resources.claims``: name required and one of the pod's claims, optional
    request a DNS label, each name/request pair at most once."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for k, claim in enumerate(as_list(claims)):
        claim = as_dict(claim)
        item = path.index(k)
        name = as_str(claim.get("name"))
        if not name:
            errs.append(required(item))
            continue
        key = name
        request = as_str(claim.get("request"))
        if request:
            errs.extend(validate_dns_label(request, item.child("request")))
            key = f"{name}/{request}"
        if key in seen:
            errs.append(duplicate(item, key))
        else:
            seen.add(key)
        if name not in pod_claims:
            known = ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            errs.append(FieldError(_NOT_FOUND, str(item), name, f"must be one of the names in pod.spec.resourceClaims{known}"))
    return errs
