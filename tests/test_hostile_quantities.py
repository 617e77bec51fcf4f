"""Quantities of absurd magnitude (issue 23): ``1e999999999`` is a valid quantity (upstream parses
it into an int64 mantissa with a decimal scale, and validation accepts any parsed capacity), so it
loads, compares and prints; arithmetic that would need more than MAX_QUANTITY_DIGITS digits is an
error, and nothing computes the number itself: preview, usage and fit finish in bounded time."""

from __future__ import annotations

import faulthandler
from pathlib import Path

import pytest

from kubectl_dra.cel import compile_expression, make_device_input
from kubectl_dra.errors import CELRuntimeError
from kubectl_dra.limits import MAX_QUANTITY_DIGITS
from kubectl_dra.quantity import Quantity, QuantityError
from tests.cli_support import run

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "kubectl_dra" / "demo" / "cluster.yaml"
CLAIM = "claim/ml-team/trainer-a-gpu"
HUGE = "1e999999999"
DEVICE = make_device_input("gpu.example.com", {"name": "d", "capacity": {"memory": {"value": HUGE}}})


@pytest.fixture(autouse=True)
def _no_hang():
    """A regression here would hang the suite: dump the stacks and stop instead."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def evaluate(expression: str):
    return compile_expression(expression, result="any").evaluate(DEVICE)


@pytest.mark.parametrize("expression,expected", [
    (f'quantity("{HUGE}").isGreaterThan(quantity("1"))', True),
    (f'quantity("-{HUGE}").isLessThan(quantity("1e-999999999"))', True),
    (f'quantity("{HUGE}").compareTo(quantity("1e999999998"))', 1),
    (f'quantity("{HUGE}") == quantity("1e999999998")', False),
    (f'quantity("{HUGE}") == quantity("{HUGE}")', True),
    (f'quantity("{HUGE}").isInteger()', False),  # not an int64
    (f'quantity("{HUGE}").asApproximateFloat() > 1.0e300', True),
    ('quantity("1e-999999999").asApproximateFloat() == 1.0e-9', True),  # parsing rounds up to 1n
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))', True),
    (f'device.capacity["gpu.example.com"].memory.compareTo(quantity("{HUGE}"))', 0),
    (f'isQuantity("{HUGE}")', True),
])
def test_huge_quantities_compare_without_being_computed(expression: str, expected) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize("expression,message", [
    (f'quantity("{HUGE}").add(quantity("1")).isGreaterThan(quantity("1"))', "too large to compute"),
    (f'quantity("{HUGE}").sub(1).isGreaterThan(quantity("1"))', "too large to compute"),
    ('device.capacity["gpu.example.com"].memory.add(quantity("1")).isLessThan(quantity("1"))', "too large to compute"),
    (f'quantity("{HUGE}").asInteger() > 0', "cannot convert value to integer"),
])
def test_arithmetic_beyond_the_digit_bound_is_an_evaluation_error(expression: str, message: str) -> None:
    with pytest.raises(CELRuntimeError, match=message):
        evaluate(expression)


def test_the_quantity_type_keeps_its_bound() -> None:
    huge = Quantity.parse(HUGE)
    assert str(huge) == HUGE and huge > Quantity.parse("1Ei") and -huge < Quantity.parse("-1")
    with pytest.raises(QuantityError, match="too large"):
        huge.nanos()
    with pytest.raises(QuantityError, match="too far apart"):
        huge + Quantity.parse("1")
    assert MAX_QUANTITY_DIGITS < 4300  # below Python's own int/str conversion guard


def _demo_with(tmp_path: Path, old: str, new: str, count: int = 1) -> str:
    text = DEMO.read_text()
    assert old in text
    path = tmp_path / "state.yaml"
    path.write_text(text.replace(old, new, count))
    return str(path)


@pytest.mark.parametrize("old,new", [
    ("value: 10Gi", f"value: {HUGE}"),  # a partition's capacity (what hung fit)
    ("value: 80Gi", f"value: {HUGE}"),  # a shared counter
    ("value: 80Gi", "value: 1e-999999999"),
    ('device.attributes["gpu.example.com"].type == "gpu"',
     f"quantity('{HUGE}').isGreaterThan(device.capacity['gpu.example.com'].memory)"),
    ('device.attributes["gpu.example.com"].type == "gpu"',
     f"device.capacity['gpu.example.com'].memory.add(quantity('{HUGE}')).isGreaterThan(quantity('1'))"),
])
@pytest.mark.parametrize("command", [["fit", CLAIM], ["preview", CLAIM], ["usage"], ["explain", CLAIM]])
def test_commands_finish_on_huge_quantities(tmp_path: Path, capsys, old: str, new: str, command: list[str]) -> None:
    state = _demo_with(tmp_path, old, new, count=100)
    code, out, err = run(capsys, *command, "--state", state)
    assert code in (0, 1), err
    assert "internal error" not in err and "Traceback" not in err
