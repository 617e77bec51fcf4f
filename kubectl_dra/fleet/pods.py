"""Pods as the fleet commands read them: pending or placed, the scheduler's queue order,
whether they use DRA, and what makes two pods' questions the same (one Job's replicas)."""

from __future__ import annotations

from typing import Any, Iterable

import orjson

from ..gates import FeatureGates, Gate
from ..preview.targets import class_for_resource, extended_resource_classes
from ..state import ClusterState
from ..state.snapshot import object_key
from ..types import Obj
from .stranded import FINISHED_PHASES, parse_time


def pod_key(pod: Obj) -> tuple[str, str]:
    """(namespace, name) of a pod (namespace ``default`` when it names none)."""
    ns, name = object_key(pod)
    return (ns or "default", name)


def finished(pod: Obj) -> bool:
    """Succeeded or Failed: the pod uses nothing and will not be scheduled again."""
    return (pod.get("status") or {}).get("phase") in FINISHED_PHASES


def is_pending(pod: Obj) -> bool:
    """Waiting for the scheduler: no node yet, not finished, not being deleted."""
    if (pod.get("spec") or {}).get("nodeName"):
        return False
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return not finished(pod)


def runs_on(pod: Obj, nodes: set[str]) -> bool:
    """Bound to one of ``nodes`` and not finished (what a drain evicts)."""
    return (pod.get("spec") or {}).get("nodeName") in nodes and not finished(pod)


def claim_entries(pod: Obj) -> list[Obj]:
    """The pod's ``spec.resourceClaims`` entries (dicts only)."""
    return [e for e in (pod.get("spec") or {}).get("resourceClaims") or () if isinstance(e, dict)]


class DraUse:
    """Whether pods use DRA: claims, or extended resources a DeviceClass backs (made once per state)."""

    def __init__(self, state: ClusterState, gates: FeatureGates) -> None:
        self.state = state
        self.extended = extended_resource_classes(state.device_classes) \
            if gates.enabled(Gate.EXTENDED_RESOURCE) else None

    def uses(self, pod: Obj) -> bool:
        if claim_entries(pod):
            return True
        if self.extended is None:
            return False
        spec = pod.get("spec") or {}
        for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
            resources = (container or {}).get("resources") or {}
            for name in [*(resources.get("requests") or {}), *(resources.get("limits") or {})]:
                if class_for_resource(str(name), self.extended, self.state) is not None:
                    return True
        return False


def priority(pod: Obj) -> int:
    """``spec.priority`` (0 when unset, as admission leaves it without a PriorityClass)."""
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def queue_order(pods: Iterable[Obj]) -> list[Obj]:
    """The scheduler's default queue order (PrioritySort): higher priority first, then the
    earlier creation time (pods without one last), then namespace and name for a stable answer."""
    def key(pod: Obj) -> tuple[Any, ...]:
        created = parse_time((pod.get("metadata") or {}).get("creationTimestamp"))
        return (-priority(pod), created is None, created.timestamp() if created else 0.0, pod_key(pod))
    return sorted(pods, key=key)


#: metadata fields that tell replicas apart without changing what the scheduler decides
_PER_POD_META = ("name", "generateName", "uid", "resourceVersion", "creationTimestamp", "managedFields",
                 "ownerReferences", "annotations", "generation")


def spec_signature(pod: Obj, claims_by_key: dict[tuple[str, str], Obj]) -> bytes:
    """What decides a pod's answer, as bytes: pods with equal signatures get the same answer
    (the replicas of one Job). The pod's spec and labels, and for each claim entry the claim
    it stands for as stored (spec and status, not its name) or that it is not created yet."""
    ns, _ = pod_key(pod)
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in _PER_POD_META}
    statuses = {s.get("name"): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or () if isinstance(s, dict)}
    claims: list[Any] = []
    for entry in claim_entries(pod):
        name = entry.get("resourceClaimName") or statuses.get(entry.get("name"))
        claim = claims_by_key.get((ns, str(name))) if name else None
        if claim is None:
            claims.append(["not-created", entry])
        elif entry.get("resourceClaimName"):
            claims.append(["named", name])  # the same claim for every pod naming it
        else:
            claims.append(["own", claim.get("spec"), _status_without_self(claim, pod)])
    status = {k: v for k, v in (pod.get("status") or {}).items() if k == "extendedResourceClaimStatus"}
    return orjson.dumps([ns, meta, pod.get("spec"), claims, status], option=orjson.OPT_SORT_KEYS)


def _status_without_self(claim: Obj, pod: Obj) -> Any:
    """A pod's own claim's status with the pod's reservation left out (it names the pod)."""
    status = dict(claim.get("status") or {})
    uid = (pod.get("metadata") or {}).get("uid")
    reserved = [r for r in status.get("reservedFor") or () if not (isinstance(r, dict) and r.get("uid") == uid)]
    if reserved or "reservedFor" in status:
        status["reservedFor"] = reserved
    return status
