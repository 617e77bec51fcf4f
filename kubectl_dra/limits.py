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

# Bounds on what kubectl-dra reads, one home per kind (the README's "Input limits" lists them).
# Each stops hostile or broken input with a one-line error (exit 2) before it can hang the
# command or take unbounded memory; CEL's own bounds (cost, string growth) are in cel/limits.py.

#: deepest nesting of lists and mappings in a file (the API server's JSON decoder stops at 10000)
MAX_DEPTH = 10000
#: longest integer literal in a file: Python's own guard against quadratic int parsing (a
#: Kubernetes integer is 64-bit, 19 digits; opaque parameters may hold longer ones)
MAX_INTEGER_DIGITS = 4300
#: largest file (or stdin) read: bigger inputs are refused before they are read into memory
MAX_INPUT_BYTES = 512 * 1024 * 1024
#: significant digits of a quantity, and the decimal exponent span any quantity arithmetic may
#: bridge exactly: a valid quantity such as ``1e999999999`` parses, prints and compares, but a sum
#: or an exact value needing more digits is an error, never a number that large
MAX_QUANTITY_DIGITS = 4000
#: largest body of one API server response a live read accepts
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
#: the most a directory walk (``metadata --dir``) visits, the largest file it reads and the
#: most it reads in all (it opens regular files only, and follows no link out of the directory)
MAX_WALK_ENTRIES = 20_000
MAX_WALK_FILE_BYTES = 16 * 1024 * 1024
MAX_WALK_TOTAL_BYTES = 256 * 1024 * 1024
