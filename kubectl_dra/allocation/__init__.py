"""The structured allocator: upstream kube-scheduler's DRA device allocation, in Python.

Public interface::

    Allocator(state, gates).allocate(node, claims, tracer=None) -> AllocationOutcome

Modules, in the order data flows through them:

- :mod:`.allocator` -- the entry point; indexes slices (shared by Allocators over the
  same objects), classes and in-use devices; feature gates as upstream ``Features``
- :mod:`.pools` -- the pools a node sees (generation, resourceSliceCount, incomplete
  and invalid pools, node selection, search order)
- :mod:`.inuse` -- devices held by allocated claims (exclusive, shared, admin access)
- :mod:`.search` -- the first-fit backtracking search, counters, compatibility groups,
  taints, constraints, derived attributes, tracing
- :mod:`.capacity` -- consumable capacity and request-policy rounding
- :mod:`.constraints` -- matchAttribute / distinctAttribute, scalar and list semantics
- :mod:`.results` -- AllocationResult dicts (results, config, node selector) and the score
- :mod:`.celcache` -- compiled selectors and per-device results
- :mod:`.trace` -- the optional observer used by explain

Cluster objects are treated as immutable snapshots: views and CEL results are cached
by object identity, so change a slice by loading a new state, not in place.
"""

from .outcome import AllocationOutcome
from .trace import NullTracer, Rejection, RejectionCode, Tracer
from .allocator import Allocator, Features

__all__ = ["Allocator", "AllocationOutcome", "Features", "NullTracer", "Rejection", "RejectionCode", "Tracer"]
