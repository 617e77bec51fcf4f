"""``kubectl dra fit``'s core: how many more replicas of a preview target fit, where, and
what runs out first. No click here: the presenter is :mod:`kubectl_dra.cli.fit`.

Modelled: DRA devices only (devices, shared counters, consumable capacity, shares of
multi-allocatable devices). CPU, memory, pod limits and other scheduler plugins are not, so
the count is an upper bound.
"""

from .document import fit_document, summary
from .run import RANKED, SPREAD, FitResult, PoolCount, Replica, count_fit, final_state, stop_reasons

__all__ = ["FitResult", "PoolCount", "RANKED", "Replica", "SPREAD", "count_fit", "final_state", "fit_document",
           "stop_reasons", "summary"]
