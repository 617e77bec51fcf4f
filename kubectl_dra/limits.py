"""Limits kube-scheduler applies to DRA allocation, in one light module that the command
line can import without loading the allocator."""

from __future__ import annotations

#: the DynamicResources plugin's default ``filterTimeout``, in seconds
FILTER_TIMEOUT = 10.0
#: the scheduler's words for a node whose allocation ran past the filter timeout
TIMED_OUT = "timed out trying to allocate devices"
