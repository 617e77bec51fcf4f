"""DeviceClass (``resource.k8s.io/v1``): the API server's create/update strategy and validation.

``prepare_device_class`` clears the namespace of this cluster-scoped kind (no field of a DeviceClass
is dropped in 1.37: ``extendedResourceName`` belongs to the locked GA gate DRAExtendedResource).
``validate_device_class`` returns the errors of ``ValidateDeviceClass`` (create) or
``ValidateDeviceClassUpdate`` (update: selectors/config identical to the stored lists are not
re-checked, as after upstream PR #134358).
"""

from __future__ import annotations

from typing import Any

from kubectl_dra.gates import GateReader

from .config import validate_opaque_configuration
from .field import FieldError, Path, invalid, required
from ..nameformats import is_qualified_name
from .lists import validate_list
from .objectmeta import validate_object_meta, validate_object_meta_update
from .selectors import validate_selectors
from .values import semantic_equal

__all__ = [
    "is_extended_resource_name",
    "prepare_device_class",
    "validate_device_class",
]

MAX_SELECTORS = 32
MAX_CONFIGS = 32
REQUESTS_PREFIX = "requests."
NATIVE_PREFIX = "kubernetes.io/"

def prepare_device_class(obj: dict[str, Any], old: dict[str, Any] | None, gates: GateReader | None) -> dict[str, Any]:
    """Apply the create/update strategy (a namespace on this cluster-scoped kind is cleared):
    ``obj`` is not written to; the result is ``obj`` itself when nothing changes, else a copy
    of its spine without the namespace. ``obj`` fits the DeviceClass decode schema (:mod:`.schema`)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "namespace" in meta:
        return {**obj, "metadata": {k: v for k, v in meta.items() if k != "namespace"}}
    return obj


def validate_device_class(obj: dict[str, Any], old: dict[str, Any] | None, gates: GateReader | None) -> list[FieldError]:
    """Field errors for creating (``old`` None) or updating a DeviceClass, after preparation;
    both objects fit the DeviceClass decode schema (:mod:`.schema`)."""
    meta_path = Path.root("metadata")
    errs = validate_object_meta(obj.get("metadata"), False, meta_path)
    old_spec: dict[str, Any] | None = None
    if old is not None:
        errs.extend(validate_object_meta_update(obj.get("metadata"), old.get("metadata"), meta_path))
        old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    spec = given if isinstance(given := obj.get("spec"), dict) else {}
    errs.extend(_validate_spec(spec, old_spec, Path.root("spec"), gates))
    return _dedupe(errs)


def _dedupe(errs: list[FieldError]) -> list[FieldError]:
    """Drop exact repeats (create and update metadata rules both run on update)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[FieldError] = []
    for e in errs:
        k = (e.type, e.field, e.message)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out


def _validate_spec(spec: dict[str, Any], old_spec: dict[str, Any] | None, path: Path, gates: GateReader | None) -> list[FieldError]:
    """DeviceClassSpec: selectors (CEL), config (opaque), extendedResourceName."""
    selectors = spec.get("selectors") or []
    stored = old_spec is not None and semantic_equal(old_spec.get("selectors"), selectors)
    errs = validate_selectors(selectors, path.child("selectors"), gates, stored=stored, max_items=MAX_SELECTORS)
    config = spec.get("config") or []
    stored = old_spec is not None and semantic_equal(old_spec.get("config"), config)
    errs.extend(
        validate_list(config, path.child("config"), MAX_CONFIGS, lambda c, p: _validate_class_config(c, p, stored))
    )
    name = spec.get("extendedResourceName")
    if name is not None and not is_extended_resource_name(str(name)):
        errs.append(invalid(path.child("extendedResourceName"), name, "must be a valid extended resource name"))
    return errs


def _validate_class_config(config: Any, path: Path, stored: bool) -> list[FieldError]:
    """DeviceClassConfiguration: ``opaque`` is required (the only kind)."""
    config = config if isinstance(config, dict) else {}
    if config.get("opaque") is None:
        return [required(path.child("opaque"), "")]
    return validate_opaque_configuration(config["opaque"], path.child("opaque"), stored)


def is_extended_resource_name(name: str) -> bool:
    """Whether ``name`` is an extended resource name: domain-prefixed, not ``kubernetes.io/``, not
    ``requests.``-prefixed, and a qualified name once ``requests.`` is prepended."""
    if "/" not in name or NATIVE_PREFIX in name or name.startswith(REQUESTS_PREFIX):
        return False
    return not is_qualified_name(REQUESTS_PREFIX + name)
