"""The DRA CEL environment: compile, validate and evaluate device selectors.

Built on cel-expr-python (Google's cel-cpp) plus a Kubernetes layer: the apiserver
libraries (quantity, semver, regex, lists, IP, CIDR, URL, format), upstream's
``device`` variable, ``includes()``, the unknown-domain default, upstream's error
texts and a static cost estimate. No engine type leaks out of this package.

The engine is imported on first use of a name below, so ``kubectl_dra.cel.limits``
can be read without loading it.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "MAX_COST": "kubectl_dra.cel.compiler",
    "MAX_LENGTH": "kubectl_dra.cel.compiler",
    "CheckResult": "kubectl_dra.cel.compiler",
    "CompiledExpression": "kubectl_dra.cel.compiler",
    "check_expression": "kubectl_dra.cel.compiler",
    "compile_expression": "kubectl_dra.cel.compiler",
    "DeviceInput": "kubectl_dra.cel.device",
    "make_device_input": "kubectl_dra.cel.device",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Load the engine-backed names lazily (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kubectl_dra.cel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
