"""The JSON types of every field the commands read, checked once where objects enter.

The API server decodes every object into typed structs, so a stored object never holds
``labels: "x"`` or ``spec.taints: 5``; files can. Checking the types of the fields that
kubectl-dra reads, when a file is loaded, lets the core trust them: a wrong type is one
:class:`~kubectl_dra.errors.InputError` naming the object and the field path (exit 2), as
``kubectl apply``'s strict decoding refuses such a file, never an internal error later.

The DRA kinds use the decode schemas admission uses too (:data:`kubectl_dra.schema.SCHEMAS`);
this module adds the core/v1 fields (Node, Pod, Namespace) and the Pod and PodGroup fields
that scheduling reads. Fields not listed are kept as they are and never read.
"""

from __future__ import annotations

from typing import Any

from ..schema import ANY, BOOL, INT, QUANTITY, SCHEMAS, STR, Schema, decode_misfits

_LABELS = ("map", STR)
_QUANTITIES = ("map", QUANTITY)
_REQUIREMENT = {"key": STR, "operator": STR, "values": [STR]}
_TERM = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
_NODE_SELECTOR = {"nodeSelectorTerms": [_TERM]}
_TOLERATION = {"key": STR, "operator": STR, "value": STR, "effect": STR, "tolerationSeconds": INT}
_LABEL_SELECTOR = {"matchLabels": _LABELS, "matchExpressions": [{"key": STR, "operator": STR, "values": [STR]}]}
_POD_AFFINITY_TERM = {"labelSelector": _LABEL_SELECTOR, "namespaces": [STR], "topologyKey": STR}
_CONTAINER = {"name": STR, "restartPolicy": STR,
              "resources": {"requests": _QUANTITIES, "limits": _QUANTITIES,
                            "claims": [{"name": STR, "request": STR}]}}
_META = {"labels": _LABELS, "annotations": _LABELS}

#: kind -> the types of the fields the commands read beyond the admission schemas
_EXTRA: dict[str, dict[str, Any]] = {
    "Node": {
        "metadata": _META,
        "spec": {"unschedulable": BOOL, "taints": [{"key": STR, "value": STR, "effect": STR}]},
        "status": {"allocatable": _QUANTITIES, "capacity": _QUANTITIES},
    },
    "Namespace": {"metadata": _META},
    "Pod": {
        "metadata": _META,
        "spec": {
            "nodeName": STR, "nodeSelector": _LABELS, "schedulerName": STR, "priority": INT,
            "tolerations": [_TOLERATION],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": _NODE_SELECTOR,
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": INT, "preference": _TERM}],
                },
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_POD_AFFINITY_TERM]},
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_POD_AFFINITY_TERM]},
            },
            "schedulingGroup": {"podGroupName": STR},
            "containers": [_CONTAINER], "initContainers": [_CONTAINER], "ephemeralContainers": [_CONTAINER],
            "overhead": _QUANTITIES,
        },
        "status": {
            "phase": STR, "nominatedNodeName": STR,
            "resourceClaimStatuses": [{"name": STR, "resourceClaimName": STR}],
            "extendedResourceClaimStatus": {
                "resourceClaimName": STR,
                "requestMappings": [{"containerName": STR, "resourceName": STR, "requestName": STR}],
            },
            "conditions": [{"type": STR, "status": STR, "reason": STR, "message": STR}],
        },
    },
    "PodGroup": {"metadata": _META},
}


def _merge(base: Any, extra: Any) -> Any:
    """Two schemas as one: object members of both (recursively); otherwise ``base`` wins."""
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(extra)
        for key, sub in base.items():
            out[key] = _merge(sub, extra[key]) if key in extra else sub
        return out
    if isinstance(base, list) and isinstance(extra, list):
        return [_merge(base[0], extra[0])]
    return base


#: kind -> the types of every field the commands read (built once, at import)
LOAD_SCHEMAS: dict[str, dict[str, Any]] = {
    kind: _merge(SCHEMAS.get(kind, {}), _EXTRA.get(kind, {})) for kind in {*SCHEMAS, *_EXTRA}
}


#: kind -> its load schema compiled once (compiling costs ~20 times a check)
_COMPILED: dict[str, Schema] = {kind: Schema(spec) for kind, spec in LOAD_SCHEMAS.items()}


def shapes_fit(obj: dict[str, Any], kind: str) -> bool:
    """Whether every field the commands read holds its JSON type (one pass, nothing built)."""
    schema = _COMPILED.get(kind)
    return schema is None or schema.fits(obj)


def shape_errors(obj: dict[str, Any], kind: str) -> list[str]:
    """``field.path: must be …`` for every value of the wrong JSON type (empty when all fit)."""
    schema = _COMPILED.get(kind)
    if schema is None:
        return []
    return [str(misfit) for misfit in decode_misfits(obj, kind, schema)]


__all__ = ["ANY", "LOAD_SCHEMAS", "shape_errors", "shapes_fit"]
