"""Source respellings for cel-go syntax that cel-cpp spells differently.

cel-go accepts the two-variable comprehension ``x.exists_one(k, v, p)``; cel-cpp
registers that macro only as ``existsOne``. The compiler retries a failed compile with
the respelled text, so expressions that compile as written pay nothing.
"""

from __future__ import annotations

_MACRO = "exists_one"
_CPP_SPELLING = "existsOne "  # same length: positions in error messages do not move


def string_spans(expression: str) -> list[tuple[int, int]]:
    """(start, end) of every string or bytes literal, so that text rewrites skip them."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(expression):
        ch = expression[i]
        if ch not in ("'", '"'):
            i += 1
            continue
        quote = expression[i:i + 3] if expression[i:i + 3] in ("'" * 3, '"' * 3) else ch
        raw = i > 0 and expression[i - 1] in "rR"
        j = i + len(quote)
        while j < len(expression) and not expression.startswith(quote, j):
            j += 2 if expression[j] == "\\" and not raw else 1
        spans.append((i, j + len(quote)))
        i = j + len(quote)
    return spans


def _argument_count(expression: str, paren: int, spans: list[tuple[int, int]]) -> int:
    """Top-level arguments of the call whose '(' is at ``paren``."""
    depth, commas, empty = 0, 0, True
    for k in range(paren, len(expression)):
        if any(a <= k < b for a, b in spans):
            empty = False
            continue
        c = expression[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                break
        elif c == "," and depth == 1:
            commas += 1
        elif not c.isspace() and depth >= 1:
            empty = False
    return 0 if empty else commas + 1


def respell_exists_one(expression: str) -> str:
    """The text with three-argument ``exists_one`` calls spelled ``existsOne``."""
    spans = string_spans(expression)
    out = list(expression)
    start = 0
    while (at := expression.find(_MACRO, start)) >= 0:
        start = at + len(_MACRO)
        if any(a <= at < b for a, b in spans):
            continue
        paren = start
        while paren < len(expression) and expression[paren].isspace():
            paren += 1
        if paren < len(expression) and expression[paren] == "(" \
                and _argument_count(expression, paren, spans) == 3:
            out[at:start] = list(_CPP_SPELLING)
    return "".join(out)
