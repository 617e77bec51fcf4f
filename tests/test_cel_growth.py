"""String (and list) growth in CEL is part of the cost (issue 23): nested ``replace()`` calls or
doubling binds would build terabytes; upstream's actual-cost accounting stops them, and so do we
before the value is built, with upstream's words. Ordinary replace/concatenation is unchanged."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from kubectl_dra.cel import compile_expression, make_device_input
from kubectl_dra.cel.limits import ACTUAL_COST_EXCEEDED, MAX_STRING_LENGTH
from kubectl_dra.errors import CELRuntimeError
from tests.cli_support import run

DEMO = Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml"
DEVICE = make_device_input("d.example.com", {"name": "x", "attributes": {"model": {"string": "a100"}}})


def nested_replace(levels: int, factor: int = 10) -> str:
    expr = "'aaaaaaaaaa'"
    for _ in range(levels):
        expr = f"{expr}.replace('a', '{'a' * factor}')"
    return expr


def doubling(levels: int, seed: str) -> str:
    binds = "".join(f"cel.bind(x{i + 1}, x{i} + x{i}, " for i in range(levels))
    return f"cel.bind(x0, {seed}, {binds}x{levels}.size() > 0" + ")" * (levels + 1)


def evaluate(expression: str, result: str = "any"):
    return compile_expression(expression, result=result).evaluate(DEVICE)


@pytest.mark.parametrize("expression,expected", [
    ("'abc'.replace('b', 'XY')", "aXYc"),
    ("'abc'.replace('', '-')", "-a-b-c-"),  # Go's strings.Replace with an empty old string
    ("'aaa'.replace('a', 'b', 2)", "bba"),
    ("'aaa'.replace('a', 'b', 0)", "aaa"),
    ("'aaa'.replace('a', 'b', -2)", "bbb"),
    ("device.attributes['d.example.com'].model.replace('a', 'A')", "A100"),
    ("'ab' + 'cd'", "abcd"),
    ("device.driver + '/' + device.attributes['d.example.com'].model", "d.example.com/a100"),
    ("[1, 2] + [3]", [1, 2, 3]),
    ("(['a'] + ['b']) == ['a', 'b']", True),
    (nested_replace(5), "a" * 10 ** 6),  # within the bound
])
def test_growth_within_the_bound_is_evaluated_as_before(expression: str, expected) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize("expression", [
    nested_replace(12) + ".size() > 0",
    nested_replace(7) + ".size() > 0",  # 10**8 characters: over the bound, not yet gigabytes
    doubling(28, "'aaaaaaaaaaaaaaaa'"),
    doubling(24, "['a', 'a']"),  # a list bound is tighter: MAX_LIST_LENGTH
])
def test_growth_past_the_bound_is_upstreams_cost_limit_error(expression: str) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = 2 * 1024 ** 3  # far below what building the value would take
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    try:
        with pytest.raises(CELRuntimeError, match=ACTUAL_COST_EXCEEDED):
            evaluate(expression, result="bool")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert MAX_STRING_LENGTH == 10 * 1_000_000


def test_a_class_with_a_growing_selector_is_a_node_error_not_a_crash(tmp_path: Path, capsys) -> None:
    text = DEMO.read_text()
    old = 'device.attributes["gpu.example.com"].type == "gpu"'
    path = tmp_path / "state.yaml"
    path.write_text(text.replace(old, nested_replace(4, 1000).replace("'", '"') + ".size() > 0"))
    code, out, err = run(capsys, "fit", "claim/ml-team/trainer-a-gpu", "--state", str(path))
    assert code == 1 and ACTUAL_COST_EXCEEDED in out, (out, err)
    code, out, err = run(capsys, "validate", "-f", str(path))
    assert code == 1 and "too complex, exceeds cost limit" in out  # the API server refuses it outright
