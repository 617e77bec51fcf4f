"""Limits kube-scheduler applies to DRA allocation, and its words for a node it gives up
on, in one light module that every layer (and the command line) can import cheaply."""

from __future__ import annotations

#: the DynamicResources plugin's default ``filterTimeout``, in seconds
FILTER_TIMEOUT = 10.0
#: the scheduler's words for a node whose allocation ran past the filter timeout
TIMED_OUT = "timed out trying to allocate devices"
#: the scheduler's words when the DRA plugin finds no allocation on a node
CANNOT_ALLOCATE = "cannot allocate all claims"

# Limits of resource.k8s.io/v1 (k8s.io/api resource/v1 types.go) that the allocator enforces
# too, besides validation.
#: AllocationResultsMaxSize: devices in one claim's allocation
ALLOCATION_RESULTS_MAX = 32
#: FirstAvailableDeviceRequestMaxSize: subrequests of one request (the scheduler also scores by it)
FIRST_AVAILABLE_MAX = 8
