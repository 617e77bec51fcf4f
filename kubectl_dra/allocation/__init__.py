"""The structured allocator: upstream kube-scheduler's DRA device allocation, in Python.

Public interface::

    Allocator(state, gates).allocate(node, claims, tracer=None) -> AllocationOutcome
"""

from .outcome import AllocationOutcome
from .trace import NullTracer, Rejection, RejectionCode, Tracer
from .allocator import Allocator

__all__ = ["Allocator", "AllocationOutcome", "NullTracer", "Rejection", "RejectionCode", "Tracer"]
