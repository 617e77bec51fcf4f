"""One exception tree for people-facing errors.

Every error a user can cause ends as a subclass of :class:`DraError` whose message
names the object, the field and the reason. The CLI maps ``exit_code`` to the process
exit status; the webhook maps errors to HTTP statuses. No other exception type should
escape to a user.
"""

from __future__ import annotations


class DraError(Exception):
    """Base of all kubectl-dra errors meant for people."""

    #: process exit status the CLI uses for this error (2: usage or access error)
    exit_code: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(DraError):
    """The command line is wrong: unknown flag value, missing target, bad combination."""


class InputError(DraError):
    """An input file or document cannot be read or parsed (malformed YAML, unknown kind)."""


class NotFoundError(DraError):
    """A named object (claim, class, template, pod, node) is not in the cluster state."""


class FeatureGateError(UsageError):
    """A --feature-gates or --kubernetes-version value is not understood."""


class ClusterAccessError(DraError):
    """The live cluster could not be read (auth, missing API, timeout, server error)."""


class CELError(DraError):
    """Base of CEL problems (compile errors and runtime errors)."""


class CELCompileError(CELError):
    """A CEL expression does not compile; the message carries upstream-style positions."""


class CELRuntimeError(CELError):
    """Evaluating a CEL expression against a device failed (e.g. ``no such key``)."""


class AllocationError(DraError):
    """Allocation failed with an error, as upstream's ``Allocate`` returns one.

    This is distinct from "unschedulable": an error means the allocator could not
    decide (a CEL runtime error, a disabled feature that a claim requires, ...).
    """

    exit_code = 1


class AllocationTimeout(AllocationError):
    """The search ran past its deadline (the scheduler's filter timeout)."""


class ValidationFailed(DraError):
    """Raised by helpers that want to stop at the first invalid object (rare; most
    validation returns lists of field errors instead)."""

    exit_code = 1


class MetadataError(DraError):
    """A device metadata file cannot be decoded (KEP-5304 protocol)."""

    exit_code = 1
