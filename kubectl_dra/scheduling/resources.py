"""A pod's resource requests and a node's allocatable, in the units kube-scheduler counts.

The requests are worked out as upstream's resource helpers do (component-helpers
``PodRequests``): the containers' requests summed; each init container's requests, plus
those of the restartable init containers (sidecars) before it, taken as a maximum; the
sidecars' own requests added to the total; pod-level requests (cpu, memory, hugepages-*)
replacing the aggregate where set and the feature is on; ``spec.overhead`` added. A
missing request of a resource whose limit is set is the limit, as API defaulting makes it.

Units are those of the scheduler's ``framework.Resource``: cpu in millicores, everything
else (memory, ephemeral-storage, hugepages-*, extended resources) as whole units, each
rounded up from the exact sum.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..errors import DraError, InputError
from ..quantity import Quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
HUGEPAGES_PREFIX = "hugepages-"
#: resources the pod-level ``spec.resources`` may set (with the hugepages-* family)
POD_LEVEL = (CPU, MEMORY)

Requests = dict[str, int]


def is_native(name: str) -> bool:
    """A resource in the kubernetes.io namespace (no prefix, or one ending in kubernetes.io)."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """Upstream IsExtendedResourceName: a prefixed name outside kubernetes.io (``nvidia.com/gpu``)."""
    return not is_native(name) and not name.startswith("requests.")


def is_counted(name: str) -> bool:
    """Whether NodeResourcesFit counts the resource: cpu, memory, ephemeral-storage and the
    scalar resources (extended, hugepages-*, prefixed native, attachable volumes)."""
    return (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_extended(name) or name.startswith(HUGEPAGES_PREFIX)
            or (("/" in name) and "kubernetes.io/" in name) or name.startswith("attachable-volumes-"))


#: a quantity's JSON value -> its exact amount in nano-units (bounded; the answer depends on
#: the value alone): a cluster's pods repeat a handful of request values
_NANOS: dict[tuple[type, Any], int] = {}
_NANOS_LIMIT = 4096


def quantity(value: Any, where: str) -> int:
    """The exact amount of a quantity field in nano-units (no parsed quantity is finer);
    :class:`InputError` naming ``where`` when malformed."""
    key = (type(value), value) if isinstance(value, (str, int)) else None
    found = _NANOS.get(key) if key is not None else None
    if found is not None:
        return found
    try:
        nanos = Quantity.from_json(value).nanos()
    except DraError as exc:
        raise InputError(f"{where}: {value!r} is not a valid quantity ({exc})") from None
    if key is not None:
        if len(_NANOS) >= _NANOS_LIMIT:
            _NANOS.clear()
        _NANOS[key] = nanos
    return nanos


def to_units(name: str, nanos: int) -> int:
    """A resource's exact amount (nano-units) in the scheduler's units (millicores for cpu,
    whole units otherwise), rounded away from zero as upstream's MilliValue/Value do."""
    step = 10**6 if name == CPU else 10**9
    magnitude = -(-abs(nanos) // step)  # ceil(|nanos| / step)
    return magnitude if nanos >= 0 else -magnitude


def _resource_list(values: Any, where: str) -> dict[str, int]:
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise InputError(f"{where}: must be a map of resource names to quantities")
    return {str(k): quantity(v, f"{where}[{k}]") for k, v in values.items()}


def container_requests(container: Mapping[str, Any], where: str, field: str = "", index: int = 0) -> dict[str, int]:
    """A container's requests, each missing one defaulted from its limit. ``where``, ``field``
    and ``index`` say where it is (``<where>: spec.<field>[<index>]``), for messages only."""
    resources = container.get("resources")
    if not resources:
        return {}
    requests, limits = resources.get("requests"), resources.get("limits")
    if not limits and isinstance(requests, dict):  # the usual case: requests of known values
        out: dict[str, int] = {}
        for name, value in requests.items():
            nanos = _NANOS.get((type(value), value)) if isinstance(value, (str, int)) else None
            out[str(name)] = nanos if nanos is not None else quantity(
                value, f"{_path(where, field, index)}.resources.requests[{name}]")
        return out
    path = _path(where, field, index)
    return {**_resource_list(limits, f"{path}.resources.limits"),
            **_resource_list(requests, f"{path}.resources.requests")}


def _path(where: str, field: str, index: int) -> str:
    return f"{where}: spec.{field}[{index}]" if field else where


def _add(into: dict[str, int], values: Mapping[str, int]) -> None:
    for k, v in values.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], values: Mapping[str, int]) -> None:
    for k, v in values.items():
        if k not in into or v > into[k]:
            into[k] = v


def _is_pod_level(name: str) -> bool:
    return name in POD_LEVEL or name.startswith(HUGEPAGES_PREFIX)


def _resize_infeasible(pod: Mapping[str, Any]) -> bool:
    """A PodResizePending condition with reason Infeasible: the kubelet will not apply the resize."""
    return any((c or {}).get("type") == "PodResizePending" and (c or {}).get("status") == "True"
               and (c or {}).get("reason") == "Infeasible" for c in (pod.get("status") or {}).get("conditions") or [])


def _with_status(pod: Mapping[str, Any], container: Mapping[str, Any], reqs: dict[str, int],
                 statuses: Mapping[str, Any], where: str) -> dict[str, int]:
    """A running container's requests as the scheduler counts them after an in-place resize:
    the largest of spec, allocated and actual (only allocated and actual when the resize is
    infeasible); the spec alone when the status reports no resources."""
    status = statuses.get(str(container.get("name") or ""))
    if not isinstance(status, dict) or not isinstance(status.get("resources"), dict):
        return reqs
    actual = _resource_list((status.get("resources") or {}).get("requests"), f"{where}.resources.requests")
    allocated = _resource_list(status.get("allocatedResources"), f"{where}.allocatedResources")
    out = {} if _resize_infeasible(pod) else dict(reqs)
    _max(out, allocated)
    _max(out, actual)
    return out


def pod_request_values(pod: Mapping[str, Any], pod_level: bool = True, where: str = "",
                       use_status: bool = False) -> dict[str, int]:
    """The pod's exact requests per resource (before rounding to the scheduler's units);
    ``use_status``: a bound pod's container statuses count (in-place resize), as in the
    scheduler's NodeInfo."""
    spec = pod.get("spec") or {}
    where = where or "pod"
    status = pod.get("status") or {}
    if not (spec.get("initContainers") or spec.get("overhead") or (pod_level and spec.get("resources"))
            or (use_status and status.get("containerStatuses"))):
        # the usual pod: app containers only, their requests summed
        summed: dict[str, int] = {}
        for i, container in enumerate(spec.get("containers") or ()):
            for name, amount in container_requests(container or {}, where, "containers", i).items():
                summed[name] = summed.get(name, 0) + amount
        return summed
    statuses = {str(s.get("name")): s for s in status.get("containerStatuses") or [] if isinstance(s, dict)} \
        if use_status else {}
    init_statuses = {str(s.get("name")): s for s in status.get("initContainerStatuses") or []
                     if isinstance(s, dict)} if use_status else {}
    total: dict[str, int] = {}
    for i, container in enumerate(spec.get("containers") or []):
        reqs = container_requests(container or {}, where, "containers", i)
        if statuses:
            reqs = _with_status(pod, container or {}, reqs, statuses, f"{where}: status.containerStatuses")
        _add(total, reqs)
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for i, container in enumerate(spec.get("initContainers") or []):
        reqs = container_requests(container or {}, where, "initContainers", i)
        if (container or {}).get("restartPolicy") == "Always":
            if init_statuses:
                reqs = _with_status(pod, container or {}, reqs, init_statuses, f"{where}: status.initContainerStatuses")
            _add(total, reqs)
            _add(sidecars, reqs)
            using = dict(sidecars)
        else:
            using = dict(reqs)
            _add(using, sidecars)
        _max(init_max, using)
    _max(total, init_max)
    if pod_level:
        pod_resources = spec.get("resources") or {}
        level = {k: v for k, v in {**_resource_list(pod_resources.get("limits"), f"{where}: spec.resources.limits"),
                                   **_resource_list(pod_resources.get("requests"),
                                                    f"{where}: spec.resources.requests")}.items()
                 if _is_pod_level(k)}
        total.update(level)
    _add(total, _resource_list(spec.get("overhead"), f"{where}: spec.overhead"))
    return total


def pod_requests(pod: Mapping[str, Any], pod_level: bool = True, where: str = "", use_status: bool = False) -> Requests:
    """The pod's requests in the scheduler's units, counted resources only, zeros left out."""
    values = pod_request_values(pod, pod_level, where, use_status)
    return {k: n for k, v in values.items() if _counted(k) and (n := to_units(k, v)) != 0}


#: resource name -> whether NodeResourcesFit counts it (the answer depends on the name alone)
_COUNTED: dict[str, bool] = {}


def _counted(name: str) -> bool:
    found = _COUNTED.get(name)
    if found is None:
        if len(_COUNTED) >= 4096:
            _COUNTED.clear()
        found = _COUNTED[name] = is_counted(name)
    return found


def allocatable(node: Mapping[str, Any], where: str) -> Requests | None:
    """A node's ``status.allocatable`` in the scheduler's units (``pods`` included); None
    when the node has no allocatable at all (the scheduler then sees zero of everything)."""
    values = (node.get("status") or {}).get("allocatable")
    if not values:
        return None
    parsed = _resource_list(values, f"{where}: status.allocatable")
    return {k: to_units(k, v) for k, v in parsed.items()}


def add_into(total: Requests, values: Mapping[str, int]) -> None:
    """Add one pod's requests to a node's requested total."""
    for k, v in values.items():
        total[k] = total.get(k, 0) + v


def describe_amount(name: str, units: int) -> str:
    """An amount for people: cpu as cores (``7.5``), bytes as Ki/Mi/Gi when exact."""
    if name == CPU:
        return f"{units / 1000:g}" if units % 1000 else str(units // 1000)
    if name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith(HUGEPAGES_PREFIX):
        for suffix, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if units and units % size == 0:
                return f"{units // size}{suffix}"
    return str(units)


def names(values: Iterable[str]) -> list[str]:
    """Resource names in the order the scheduler checks them: cpu, memory, ephemeral-storage, then the rest sorted."""
    fixed = [n for n in (CPU, MEMORY, EPHEMERAL_STORAGE) if n in values]
    return fixed + sorted(n for n in values if n not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS))
