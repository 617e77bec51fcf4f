"""The structured allocator: upstream kube-scheduler's DRA device allocation, in Python.

Public interface::

    Allocator(state, gates).allocate(node, claims, tracer=None) -> AllocationOutcome

Modules, in the order data flows through them:

- :mod:`.allocator` -- the entry point: one Allocator per feature set over a snapshot;
  feature gates as upstream ``Features``; allocate() runs one search per node
- :mod:`.index` -- what is derived from a snapshot (slice views, pools per node, classes,
  in-use devices, remembered selector answers), owned by the caller: change the state and
  build a new :class:`~.index.ClusterIndex`
- :mod:`.pools` -- the pools a node sees (generation, resourceSliceCount, incomplete
  and invalid pools, node selection, search order)
- :mod:`.inuse` -- devices held by allocated claims (exclusive, shared, admin access)
- :mod:`.preparation` -- the checks of every claim and request before searching, as
  upstream's Allocate and validateDeviceRequest make them
- :mod:`.search` -- the first-fit backtracking search, as upstream allocateOne /
  allocateDevice; :mod:`.pruning` -- its cuts for "all devices" requests (ours)
- :mod:`.counters` -- shared counters and compatibility groups (KEP-4815)
- :mod:`.capacity` -- consumable capacity and request-policy rounding
- :mod:`.constraints` -- matchAttribute / distinctAttribute, scalar and list semantics
- :mod:`.taints` -- device taints and request tolerations
- :mod:`.gated` -- what the allocator cannot use while a feature gate is off (also read by
  ``kubectl dra usage``'s notes)
- :mod:`.results` -- AllocationResult dicts (results, config, node selector) and the score
- :mod:`.celcache` -- compiled selectors and per-device results
- :mod:`.rejections` -- the words of every rejection; :mod:`.trace` -- the optional
  observer explain attaches (the same search runs with or without it)
"""

from .outcome import AllocationOutcome
from .trace import NullTracer, Rejection, RejectionCode, Tracer
from .allocator import Allocator, Features

__all__ = ["Allocator", "AllocationOutcome", "Features", "NullTracer", "Rejection", "RejectionCode", "Tracer"]
