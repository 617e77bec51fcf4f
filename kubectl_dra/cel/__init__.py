"""The DRA CEL environment: compile, validate and evaluate device selectors.

Built on cel-expr-python (Google's cel-cpp) plus a Kubernetes layer: the quantity,
semver and regex libraries, upstream's ``device`` variable, ``includes()``, the
unknown-domain default, upstream's error texts and a static cost estimate. No
engine type leaks out of this package.
"""

from __future__ import annotations

from kubectl_dra.cel.compiler import (
    MAX_COST,
    MAX_LENGTH,
    CheckResult,
    CompiledExpression,
    check_expression,
    compile_expression,
)
from kubectl_dra.cel.device import DeviceInput, make_device_input

__all__ = [
    "MAX_COST",
    "MAX_LENGTH",
    "CheckResult",
    "CompiledExpression",
    "DeviceInput",
    "check_expression",
    "compile_expression",
    "make_device_input",
]
