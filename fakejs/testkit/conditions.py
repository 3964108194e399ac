"""What a test waits for, in words: the text of a condition, and the error when it never came true.

``wait_for(lambda: server.state()["streams"])`` that times out says which
condition it waited for (the lambda's own source text), for how long, and
what the condition last gave, instead of a bare ``TimeoutError``.
"""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["describe", "not_met"]

# How much of the condition's last value, and of its source, an error shows.
SHOWN = 200


def describe(condition: Callable[..., Any]) -> str:
    """The condition as the test wrote it: a lambda's source text, or a function's qualified name."""
    name = getattr(condition, "__qualname__", None)
    if name is None:
        return repr(condition)
    if not name.endswith("<lambda>"):
        return f"{name}()"
    code = getattr(condition, "__code__", None)
    where = f"the lambda at {code.co_filename}:{code.co_firstlineno}" if code is not None else name
    return _lambda_source(condition) or where


def _lambda_source(condition: Callable[..., Any]) -> str | None:
    """The text of the lambda on its source line (the one compiled alike when a line has several)."""
    try:
        lines, _ = inspect.getsourcelines(condition)
    except (OSError, TypeError):
        return None
    found = list(_lambdas("".join(lines)))
    code = getattr(condition, "__code__", None)
    for text in found:
        if code is not None and _compiled(text) == code.co_code:
            return text
    return found[0] if found else None


def _lambdas(source: str) -> Iterator[str]:
    """Each lambda expression in ``source``, whitespace collapsed: the longest text from ``lambda`` on that parses as one."""
    start = source.find("lambda")
    while start >= 0:
        tail = source[start : start + 4 * SHOWN]
        for end in range(len(tail), 0, -1):
            try:
                tree = ast.parse(f"({tail[:end]})", mode="eval")
            except SyntaxError:
                continue
            if isinstance(tree.body, ast.Lambda):  # not yet a lambda: a tuple of it and the next argument
                yield " ".join(_without_comments(tail[:end]).split())
                break
        start = source.find("lambda", start + 1)


def _without_comments(text: str) -> str:
    """``text`` less its comments (each runs to the end of its line)."""
    lines = text.split("\n")
    try:
        comments = [
            token.start
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return text
    for row, column in comments:
        lines[row - 1] = lines[row - 1][:column]
    return "\n".join(lines)


def _compiled(text: str) -> bytes | None:
    try:
        compiled = compile(f"({text})", "<condition>", "eval")
    except SyntaxError:
        return None
    lambda_code = next((c for c in compiled.co_consts if inspect.iscode(c)), None)
    return lambda_code.co_code if lambda_code is not None else None


def not_met(condition: Callable[..., Any], waited: str, last: Any) -> TimeoutError:
    """The error for a condition still false after ``waited`` (``"5.0 s"``), with the value it last gave."""
    shown = repr(last)
    if len(shown) > SHOWN:
        shown = shown[:SHOWN] + "..."
    return TimeoutError(f"{describe(condition)} was still false after {waited} (last value: {shown})")
