"""Results of kubectl_dra.cel never depend on what the process compiled or evaluated before."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kubectl_dra.cel import compile_expression, make_device_input
from kubectl_dra.cel import compiler
from kubectl_dra.errors import CELCompileError

NO_DEVICE = make_device_input("", {"name": "d"})
_PROBE = (
    "from kubectl_dra.cel import compile_expression, make_device_input\n"
    "d = make_device_input('', {'name': 'd'})\n"
    "print(str(compile_expression('quantity(\"1073741824\")', result='any').evaluate(d)))\n"
)


def _fresh_process_text() -> str:
    """What a process that never parsed "1Gi" prints for quantity("1073741824")."""
    return subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_quantity_text_does_not_depend_on_history() -> None:
    fresh = _fresh_process_text()
    compile_expression('quantity("1Gi")', result="any").evaluate(NO_DEVICE)
    after = str(compile_expression('quantity("1073741824")', result="any").evaluate(NO_DEVICE))
    assert after == fresh == "1073741824"


def test_compile_errors_raise_every_time_and_cache_is_bounded() -> None:
    for _ in range(2):
        with pytest.raises(CELCompileError) as err:
            compile_expression("device.nope == 1")
        assert "undefined field 'nope'" in str(err.value)
    compiler._compiled.clear()
    for i in range(compiler.limits.COMPILE_CACHE_SIZE + 10):
        compile_expression(f"{i} == {i}")
    assert len(compiler._compiled._items) == compiler.limits.COMPILE_CACHE_SIZE
