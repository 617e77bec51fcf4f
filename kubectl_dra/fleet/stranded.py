"""Stranded devices: allocated claims that hold devices while no running pod uses them.

A claim is stranded when it is allocated and its ``status.reservedFor`` is empty, or names
only pods that are gone from the state (by namespace, name and, when both carry one, uid) or
that finished (phase Succeeded or Failed). A consumer that is not a pod (another resource)
counts as a user. Such devices are paid for and unused: a pod that finished without its
claim being released, a claim created by hand and never used, a controller that is down.

How long: from the last write of the claim's status when its managedFields record one (the
write that emptied reservedFor or allocated it), else from its creation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Iterable

from ..state import ClusterState
from ..state.snapshot import object_key
from ..types import Obj

#: pod phases after which a pod uses nothing
FINISHED_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True)
class StrandedClaim:
    """One allocated claim nobody running uses."""

    namespace: str
    name: str
    #: ``driver/pool/device`` of every device in its allocation
    devices: tuple[str, ...]
    #: why: ``not reserved`` or ``reserved for gone or finished pods: ns/a (gone), ns/b (Succeeded)``
    why: str
    #: RFC 3339 time from which it is known to hold the devices (see the module's docstring)
    since: str | None
    #: seconds from ``since`` to ``now`` (None when the claim carries no timestamp)
    age_seconds: float | None

    def to_dict(self) -> Obj:
        return {"namespace": self.namespace, "name": self.name, "devices": list(self.devices), "why": self.why,
                "since": self.since, "ageSeconds": None if self.age_seconds is None else int(self.age_seconds)}


def parse_time(text: object) -> datetime | None:
    """An RFC 3339 timestamp as the API server writes them; None when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def format_age(seconds: float | None) -> str:
    """kubectl's AGE style: ``45s``, ``12m``, ``5h``, ``3d``; ``<unknown>`` without a time."""
    if seconds is None:
        return "<unknown>"
    s = max(0, int(seconds))
    if s < 120:
        return f"{s}s"
    if s < 2 * 3600:
        return f"{s // 60}m"
    if s < 2 * 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


def _status_written(claim: Obj) -> str | None:
    """The latest time a manager wrote the claim's status (managedFields), else None."""
    times = []
    for entry in (claim.get("metadata") or {}).get("managedFields") or ():
        if isinstance(entry, dict) and entry.get("subresource") == "status" and parse_time(entry.get("time")):
            times.append(str(entry["time"]))
    return max(times, key=lambda t: parse_time(t) or datetime.min.replace(tzinfo=UTC)) if times else None


def _devices(allocation: Obj) -> tuple[str, ...]:
    results = (allocation.get("devices") or {}).get("results") or ()
    return tuple(f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in results if isinstance(r, dict))


class PodIndex:
    """The state's pods by (namespace, name), made once per call."""

    def __init__(self, pods: Iterable[Obj]) -> None:
        self.by_key: dict[tuple[str, str], Obj] = {}
        for pod in pods:
            ns, name = object_key(pod)
            self.by_key[(ns or "default", name)] = pod

    def find(self, namespace: str, name: str, uid: str | None) -> Obj | None:
        pod = self.by_key.get((namespace, name))
        if pod is None:
            return None
        pod_uid = (pod.get("metadata") or {}).get("uid")
        if uid and pod_uid and uid != pod_uid:
            return None  # a new pod of the same name: the reserving one is gone
        return pod


def _idle_reason(claim: Obj, namespace: str, pods: PodIndex, pods_known: bool) -> str | None:
    """Why nobody running uses the claim, or None when something may."""
    reserved = (claim.get("status") or {}).get("reservedFor") or []
    if not reserved:
        return "not reserved by any pod"
    if not pods_known:
        return None  # a state without pods cannot tell who is gone
    gone = []
    for ref in reserved:
        if not isinstance(ref, dict) or (ref.get("resource") or "pods") != "pods" or ref.get("apiGroup"):
            return None  # another kind of consumer: assumed to be using it
        pod = pods.find(namespace, str(ref.get("name") or ""), ref.get("uid"))
        if pod is None:
            gone.append(f"{namespace}/{ref.get('name')} (gone)")
            continue
        phase = (pod.get("status") or {}).get("phase")
        if phase not in FINISHED_PHASES:
            return None
        gone.append(f"{namespace}/{ref.get('name')} ({phase})")
    return "reserved only for pods that are gone or finished: " + ", ".join(gone)


def stranded_claims(state: ClusterState, now: datetime | None = None) -> list[StrandedClaim]:
    """Every stranded claim of the state (see the module's docstring), oldest first, then by name.

    ``now`` is when ages are measured to (default: the current time)."""
    now = now or datetime.now(UTC)
    pods = PodIndex(state.pods)
    found = []
    for claim in state.resource_claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if not isinstance(allocation, dict):
            continue
        devices = _devices(allocation)
        if not devices:
            continue
        ns, name = object_key(claim)
        ns = ns or "default"
        why = _idle_reason(claim, ns, pods, bool(state.pods))
        if why is None:
            continue
        since = _status_written(claim) or (claim.get("metadata") or {}).get("creationTimestamp")
        when = parse_time(since)
        age = (now - when).total_seconds() if when is not None else None
        found.append(StrandedClaim(ns, name, devices, why, since if when is not None else None, age))
    found.sort(key=lambda c: (-(c.age_seconds if c.age_seconds is not None else -1), c.namespace, c.name))
    return found
