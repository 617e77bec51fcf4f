"""ResourceClaimTemplate: defaults, the create/update strategy and its field rules.

The claim spec lives at ``spec.spec`` and follows the ResourceClaim rules
(:mod:`.resourceclaim`); ``spec.metadata`` only carries labels and annotations.
On update the whole ``spec`` is immutable (``admission-claims.md`` section 8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.jsoncopy import copy_json
from .field import FieldError, Path
from .objectmeta import validate_object_meta, validate_object_meta_update, validate_template_meta
from .resourceclaim import default_device_claim, drop_disabled_device_fields, validate_claim_spec
from .values import as_dict, validate_immutable_field

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates
    from .specmemo import SpecMemo


def default_resource_claim_template(obj: dict) -> dict:
    """The template as the API server decodes it (claim-spec defaults applied), as a new dict."""
    out = copy_json(obj)
    claim_spec = as_dict(out.get("spec")).get("spec")
    if isinstance(claim_spec, dict):
        default_device_claim(claim_spec.get("devices"))
    return out


def prepare_resource_claim_template(
    obj: dict, old: dict | None, gates: "FeatureGates"
) -> tuple[dict, list[str]]:
    """PrepareForCreate/PrepareForUpdate: defaults and the dropping of fields of disabled
    gates that the stored template did not already use."""
    template = default_resource_claim_template(obj)
    claim_spec = as_dict(template.get("spec")).get("spec")
    if not isinstance(claim_spec, dict):
        return template, []
    old_devices = None
    if old is not None:
        old_template = default_resource_claim_template(old)
        old_devices = as_dict(as_dict(as_dict(old_template.get("spec")).get("spec")).get("devices"))
    warnings = drop_disabled_device_fields(
        claim_spec.get("devices"), old_devices, gates, Path.root("spec", "spec", "devices")
    )
    return template, warnings


def validate_resource_claim_template(obj: dict, old: dict | None, gates: "FeatureGates",
                                     memo: "SpecMemo | None" = None) -> list[FieldError]:
    """Every field error of a (prepared) template; on update only metadata and spec immutability.
    ``memo`` remembers the errors of claim specs seen before."""
    meta_path = Path("metadata")
    errs = validate_object_meta(obj.get("metadata"), True, meta_path)
    if old is not None:
        old_template = default_resource_claim_template(old)
        errs.extend(validate_object_meta_update(obj.get("metadata"), old_template.get("metadata"), meta_path))
        errs.extend(validate_immutable_field(obj.get("spec"), old_template.get("spec"), Path("spec")))
        return errs
    spec = as_dict(obj.get("spec"))
    errs.extend(validate_template_meta(spec.get("metadata"), Path.root("spec", "metadata")))
    errs.extend(validate_claim_spec(spec.get("spec"), Path.root("spec", "spec"), gates, memo))
    return errs
