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
from .resourceclaim import (
    default_device_claim,
    drop_disabled_device_fields,
    prepare_new_devices,
    validate_claim_spec,
)
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
                                     spec_errors: list[FieldError] | None = None) -> list[FieldError]:
    """Every field error of a (prepared) template; on update only metadata and spec immutability.
    ``spec_errors``: those of the claim spec, when the caller has them already
    (:func:`create_resource_claim_template`)."""
    meta_path = Path("metadata")
    errs = validate_object_meta(obj.get("metadata"), True, meta_path)
    if old is not None:
        old_template = default_resource_claim_template(old)
        errs.extend(validate_object_meta_update(obj.get("metadata"), old_template.get("metadata"), meta_path))
        errs.extend(validate_immutable_field(obj.get("spec"), old_template.get("spec"), Path("spec")))
        return errs
    spec = as_dict(obj.get("spec"))
    errs.extend(validate_template_meta(spec.get("metadata"), Path.root("spec", "metadata")))
    if spec_errors is None:
        spec_errors = validate_claim_spec(spec.get("spec"), Path.root("spec", "spec"), gates)
    errs.extend(spec_errors)
    return errs


#: Where a template's device spec sits.
TEMPLATE_DEVICES_PATH = Path.root("spec", "spec", "devices")


def create_resource_claim_template(obj: dict, gates: "FeatureGates",
                                   memo: "SpecMemo") -> tuple[dict, list[str], list[FieldError]]:
    """:func:`prepare_resource_claim_template` and :func:`validate_resource_claim_template` of a
    CREATE, with the claim spec prepared and validated through ``memo``. The prepared template
    shares its metadata with ``obj``."""
    spec = obj.get("spec")
    claim_spec = spec.get("spec") if isinstance(spec, dict) else None
    devices = claim_spec.get("devices") if isinstance(claim_spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(claim_spec, dict) or not isinstance(devices, dict):
        template, warnings = prepare_resource_claim_template(obj, None, gates)
        return template, warnings, validate_resource_claim_template(template, None, gates)
    prepared, warnings, spec_errors = memo.new_spec(
        devices, TEMPLATE_DEVICES_PATH, gates, lambda copy: prepare_new_devices(copy, TEMPLATE_DEVICES_PATH, gates))
    new_spec = {key: ({**claim_spec, "devices": prepared} if key == "spec" else value) for key, value in spec.items()}
    template = {key: (new_spec if key == "spec" else value) for key, value in obj.items()}
    return template, warnings, validate_resource_claim_template(template, None, gates, spec_errors)
