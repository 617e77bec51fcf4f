"""kube-scheduler's default-profile Filter plugins for pods, beside the DRA allocator: one
module per plugin (:mod:`.nodeunschedulable`, :mod:`.nodename`, :mod:`.tainttoleration`,
:mod:`.nodeaffinity`, :mod:`.nodeports`, :mod:`.noderesources`, :mod:`.podtopologyspread`,
:mod:`.interpodaffinity`), the pod-requests arithmetic (:mod:`.resources`), the per-snapshot
NodeInfo index (:mod:`.nodeinfo`), and the chain in the profile's order with the FitError
wording (:mod:`.chain`, :mod:`.status`). No click, no client: core only.
"""

from .chain import DYNAMIC_RESOURCES, FILTER_ORDER, MODELLED, NOT_MODELLED, PodFilters, filter_nodes
from .nodeinfo import NodeInfo, PodInfo, SchedulingIndex
from .resources import pod_requests
from .status import Status, fit_error

__all__ = ["DYNAMIC_RESOURCES", "FILTER_ORDER", "MODELLED", "NOT_MODELLED", "NodeInfo", "PodFilters", "PodInfo",
           "SchedulingIndex", "Status", "filter_nodes", "fit_error", "pod_requests"]
