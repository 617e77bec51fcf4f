"""CEL for the allocator: compiled programs from ``kubectl_dra.cel``, results per device.

Compiling is owned by :func:`kubectl_dra.cel.compile_expression` (one bounded memo of
expression text -> program or compile error). Selector results depend only on the
expression and the device, never on the node or on what else is allocated, so they
are kept on the device's view, which its index owns. Evaluation errors are kept too
and re-raised.
"""

from __future__ import annotations

from typing import Any

from ..errors import CELRuntimeError
from ..model.devices import DeviceView
from ..cel import compile_expression, make_device_input


class _Failure:
    """A cached evaluation error."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class CelCache:
    """Selector evaluation for the allocator, with results kept per device view."""

    @staticmethod
    def compile(expression: str, result: str = "bool") -> Any:
        """The compiled expression; raises CELCompileError when it does not compile."""
        return compile_expression(expression, result=result)

    @staticmethod
    def device_input(device: DeviceView) -> Any:
        """The CEL view of a device, built once per device."""
        if device.cel_input is None:
            device.cel_input = make_device_input(device.slice.driver, device.raw)
        return device.cel_input

    def _run(self, expression: str, result: str, device: DeviceView) -> Any:
        key = (expression, result)
        per_device = device.answers()
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
