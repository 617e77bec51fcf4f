"""``kubectl dra fit``'s core: how many more replicas of a preview target fit, where, and
what runs out first. No click here: the presenter is :mod:`kubectl_dra.cli.fit`.

Modelled: kube-scheduler's default Filter plugins for the target's pods (each replica is
bound as a pod: requests, host ports, labels for spread and anti-affinity) and DynamicResources
(devices, shared counters, consumable capacity, shares). Volumes and preemption are not, so
the count is an upper bound only for those.
"""

from .document import fit_document, summary
from .run import RANKED, SPREAD, FitResult, PoolCount, Replica, count_fit, final_state, stop_reasons

__all__ = ["FitResult", "PoolCount", "RANKED", "Replica", "SPREAD", "count_fit", "final_state", "fit_document",
           "stop_reasons", "summary"]
