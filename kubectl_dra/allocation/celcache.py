"""CEL for the allocator: compile once per expression, evaluate once per device.

Selector results depend only on the expression and the device, never on the node or
on what else is allocated, so they are cached on the device's view, which outlives
one Allocator (that is what makes whole-cluster previews fast). Errors are cached too
and re-raised.
"""

from __future__ import annotations

from typing import Any

from ..errors import CELCompileError, CELRuntimeError
from ..model.devices import DeviceView


#: compiled expressions, shared by every Allocator (compilation does not depend on the cluster)
_COMPILED: dict[tuple[str, str], Any] = {}


class _Failure:
    """A cached evaluation error."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class CelCache:
    """Compiled expressions and per-device results, keyed by expression text."""

    def __init__(self) -> None:
        self._compiled: dict[tuple[str, str], Any] = _COMPILED

    def compile(self, expression: str, result: str = "bool") -> Any:
        """The compiled expression; raises CELCompileError (cached) when it does not compile."""
        key = (expression, result)
        compiled = self._compiled.get(key)
        if compiled is None:
            from ..cel import compile_expression

            try:
                compiled = compile_expression(expression, result=result)
            except CELCompileError as exc:
                compiled = _Failure(exc)
            self._compiled[key] = compiled
        if isinstance(compiled, _Failure):
            raise compiled.error
        return compiled

    @staticmethod
    def device_input(device: DeviceView) -> Any:
        """The CEL view of a device, built once per device."""
        if device.cel_input is None:
            from ..cel import make_device_input

            device.cel_input = make_device_input(device.slice.driver, device.raw)
        return device.cel_input

    def _run(self, expression: str, result: str, device: DeviceView) -> Any:
        key = (expression, result)
        per_device = device.cel_results
        cached = per_device.get(key, per_device)
        if cached is per_device:
            compiled = self.compile(expression, result)
            try:
                if result == "bool":
                    cached = bool(compiled.matches(self.device_input(device)))
                else:
                    cached = compiled.evaluate(self.device_input(device))
            except CELRuntimeError as exc:
                cached = _Failure(exc)
            per_device[key] = cached
        if isinstance(cached, _Failure):
            raise cached.error
        return cached

    def matches(self, expression: str, device: DeviceView) -> bool:
        """Whether a selector expression is true for the device (CEL errors raise)."""
        return self._run(expression, "bool", device)

    def evaluate(self, expression: str, device: DeviceView) -> Any:
        """The value of an expression for the device (derived attributes)."""
        return self._run(expression, "any", device)
