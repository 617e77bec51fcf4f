"""NodeResourcesFit: the pod's requests against what the node's allocatable leaves after the
requests of the pods already bound to it; also the node's pod count.

An extended resource that a DeviceClass backs (DRA extended resources) is not checked
here on a node that does not offer it through a device plugin (allocatable 0): the
DynamicResources filter allocates devices for it there, so it is never counted twice.
"""

from __future__ import annotations

from typing import AbstractSet

from .nodeinfo import NodeInfo
from .resources import Requests, describe_amount, names
from .status import Status

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"


def insufficient(resource: str) -> str:
    """The scheduler's words for one resource short: ``Insufficient cpu``."""
    return f"Insufficient {resource}"


def fits_request(requests: Requests, node: NodeInfo, dra_backed: AbstractSet[str] = frozenset()) -> Status | None:
    """Every resource the node is short of, in the scheduler's order (pods, cpu, memory,
    ephemeral-storage, then scalar resources)."""
    reasons: list[str] = []
    detail: list[str] = []
    allowed = node.allowed_pods
    if len(node.pods) + 1 > allowed:
        reasons.append(TOO_MANY_PODS)
        detail.append(f"pods: {len(node.pods)} of {allowed} already bound, the pod needs 1 more")
    for resource in names(requests):
        wanted = requests[resource]
        if wanted <= 0:
            continue
        have = node.allocatable_of(resource)
        if resource in dra_backed and have == 0:
            continue  # served by the DynamicResources filter on this node
        left = have - node.requested.get(resource, 0)
        if wanted > left:
            reasons.append(insufficient(resource))
            detail.append(f"{resource}: {describe_amount(resource, max(left, 0))} of "
                          f"{describe_amount(resource, have)} left, the pod needs {describe_amount(resource, wanted)}")
    if not reasons:
        return None
    if node.allocatable is None:
        detail.append("the node has no status.allocatable: the scheduler sees zero of every resource")
    return Status(NAME, tuple(reasons), tuple(detail))
