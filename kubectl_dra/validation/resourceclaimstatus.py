"""ResourceClaim status subresource: what it accepts (``admission-claims.md`` section 10).

The scheduler writes ``allocation`` and ``reservedFor``; drivers write ``devices``. The status
strategy takes spec and most metadata from the stored claim, removes the statuses of devices
that are no longer allocated and drops the fields of disabled gates; validation checks the
allocation results and configuration, the consumer references and the device statuses
(conditions, data, network data).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..gates import Gate
from ..limits import ALLOCATION_RESULTS_MAX
from ..model.jsoncopy import copy_json
from .config import validate_raw_extension
from .devicestatus import validate_conditions, validate_network_data, validate_uid
from .field import FieldError, Path, forbidden, invalid, not_supported, required, too_many
from .binding import validate_binding_conditions, validate_skip_node_operations
from .gating import gate_enabled
from .lists import check_list
from .names import validate_device_name, validate_driver_name, validate_pool_name
from .nodeselector import validate_node_selector
from .objectmeta import validate_object_meta_update
from .resourceclaim import (
    DEVICE_CONFIG_MAX,
    RequestNames,
    default_resource_claim,
    uses_admin_access,
    uses_consumable_capacity,
    validate_claim_config,
    validate_request_reference,
)
from .taints import validate_device_toleration
from .values import as_dict, as_list, as_str, validate_immutable_field

if TYPE_CHECKING:  # pragma: no cover
    from ..gates import FeatureGates

__all__ = ["admin_access_status_request", "prepare_resource_claim_status", "validate_resource_claim_status"]


RESERVED_FOR_MAX = 256
ALLOCATION_CONFIG_MAX = 2 * DEVICE_CONFIG_MAX  # class + claim
DEVICE_STATUS_CONDITIONS_MAX = 8
DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
CONFIG_SOURCES = ("FromClaim", "FromClass")
_STATUS_RESET_META = ("labels", "annotations", "finalizers", "ownerReferences", "deletionTimestamp", "generation")


def _results(status: Any) -> list[dict]:
    allocation = as_dict(as_dict(status).get("allocation"))
    return [r for r in as_list(as_dict(allocation.get("devices")).get("results")) if isinstance(r, dict)]


def _device_id(entry: dict) -> tuple[str, str, str]:
    return as_str(entry.get("driver")), as_str(entry.get("pool")), as_str(entry.get("device"))


def prepare_resource_claim_status(obj: dict, old: dict, gates: "FeatureGates") -> tuple[dict, list[str]]:
    """The status strategy's PrepareForUpdate: spec and most metadata come from the stored
    claim, device statuses of deallocated devices vanish, fields of disabled gates are dropped."""
    claim = copy_json(obj)
    stored = default_resource_claim(old)
    if "spec" in stored:
        claim["spec"] = copy_json(stored["spec"])
    else:
        claim.pop("spec", None)
    if not isinstance(claim.get("metadata"), dict):
        claim["metadata"] = {}
    meta = claim["metadata"]
    old_meta = as_dict(stored.get("metadata"))
    for key in _STATUS_RESET_META:
        if key in old_meta:
            meta[key] = copy_json(old_meta[key])
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
    if not (gate_enabled(gates, Gate.RESOURCE_CLAIM_DEVICE_STATUS) or as_list(old_status.get("devices"))):
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

    if not gate_enabled(gates, Gate.ADMIN_ACCESS) and not uses_admin_access(devices, old_status):
        drop_from_results("adminAccess", Gate.ADMIN_ACCESS)
    if not gate_enabled(gates, Gate.RESOURCE_CLAIM_DEVICE_STATUS) and not as_list(old_status.get("devices")):
        if as_list(status.get("devices")):
            warnings.append(f"status.devices: dropped because the feature gate {Gate.RESOURCE_CLAIM_DEVICE_STATUS} is disabled")
        status.pop("devices", None)
    if not gate_enabled(gates, Gate.DEVICE_BINDING_CONDITIONS) and not any(
        r.get("bindingConditions") or r.get("bindingFailureConditions") for r in old_results
    ):
        drop_from_results("bindingConditions", Gate.DEVICE_BINDING_CONDITIONS)
        drop_from_results("bindingFailureConditions", Gate.DEVICE_BINDING_CONDITIONS)
    if not gate_enabled(gates, Gate.CONSUMABLE_CAPACITY) and not (
        uses_consumable_capacity(devices)
        or any(r.get("shareID") is not None or r.get("consumedCapacity") for r in old_results)
    ):
        drop_from_results("shareID", Gate.CONSUMABLE_CAPACITY)
        drop_from_results("consumedCapacity", Gate.CONSUMABLE_CAPACITY)
        for device in as_list(status.get("devices")):
            if isinstance(device, dict):
                device.pop("shareID", None)
    if not gate_enabled(gates, Gate.OPTIONAL_NODE_OPERATIONS) and not any(r.get("skipNodeOperations") for r in old_results):
        drop_from_results("skipNodeOperations", Gate.OPTIONAL_NODE_OPERATIONS)
    if not gate_enabled(gates, Gate.DEVICE_TAINTS) and not any(r.get("tolerations") for r in old_results):
        drop_from_results("tolerations", Gate.DEVICE_TAINTS)
    return warnings


def validate_resource_claim_status(obj: dict, old: dict, gates: "FeatureGates") -> list[FieldError]:
    """ValidateResourceClaimStatusUpdate: metadata update rules and the status rules."""
    stored = default_resource_claim(old)
    errs = validate_object_meta_update(obj.get("metadata"), stored.get("metadata"), Path("metadata"))
    request_names = RequestNames(as_dict(obj.get("spec")).get("devices"))
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


def _validate_status_update(status: dict, old_status: dict, deleted: bool, names: RequestNames) -> list[FieldError]:
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
        errs += validate_immutable_field(allocation, old_allocation, path.child("allocation"))
    elif allocation is not None:
        errs += _validate_allocation(as_dict(allocation), path.child("allocation"), names)
    return errs


def _validate_consumer_reference(ref: dict, path: Path) -> list[FieldError]:
    return [required(path.child(key)) for key in ("resource", "name", "uid") if not as_str(ref.get(key))]


def _validate_allocation(allocation: dict, path: Path, names: RequestNames) -> list[FieldError]:
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
        errs += validate_node_selector(allocation["nodeSelector"], path.child("nodeSelector"))
    return errs


def _validate_result(result: dict, path: Path, names: RequestNames) -> list[FieldError]:
    errs = validate_request_reference(as_str(result.get("request")), path.child("request"), names)
    errs += validate_driver_name(as_str(result.get("driver")), path.child("driver"))
    errs += validate_pool_name(as_str(result.get("pool")), path.child("pool"))
    errs += validate_device_name(as_str(result.get("device")), path.child("device"))
    errs += validate_binding_conditions(result, path)
    for t, toleration in enumerate(as_list(result.get("tolerations"))):
        errs += validate_device_toleration(as_dict(toleration), path.child("tolerations").index(t))
    if result.get("shareID") is not None:
        errs += validate_uid(as_str(result.get("shareID")), path.child("shareID"))
    if result.get("skipNodeOperations") is not None:
        errs += validate_skip_node_operations(result.get("skipNodeOperations"), path.child("skipNodeOperations"))
    return errs


def _validate_allocation_config(config: dict, path: Path, names: RequestNames) -> list[FieldError]:
    source = as_str(config.get("source"))
    errs: list[FieldError] = []
    if not source:
        errs.append(required(path.child("source")))
    elif source not in CONFIG_SOURCES:
        errs.append(not_supported(path.child("source"), source, CONFIG_SOURCES))
    errs += validate_claim_config(config, path, names)
    return errs


def _validate_device_status(device: dict, path: Path, allocated: set[tuple[str, str, str, str]]) -> list[FieldError]:
    errs = validate_driver_name(as_str(device.get("driver")), path.child("driver"))
    errs += validate_pool_name(as_str(device.get("pool")), path.child("pool"))
    errs += validate_device_name(as_str(device.get("device")), path.child("device"))
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
        errs += validate_raw_extension(device, "data", path.child("data"), False, DEVICE_STATUS_DATA_MAX_LENGTH)
    if device.get("networkData") is not None:
        errs += validate_network_data(as_dict(device.get("networkData")), path.child("networkData"))
    return errs
