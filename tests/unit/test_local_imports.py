"""An import inside a function says why it is there: in a comment on the line before it or on its own line.

fakejs imports at module top level unless there is a reason not to: a server started
from the command line should not pay for what it does not run (the route table, TLS,
the monitoring documents, configuration files...), an optional or heavy dependency
(pyspark, trustme, cryptography, nats-py) loads only where it is used.  A reason is
a comment; the consecutive imports of one block share the comment above the first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "fakejs"


def function_local_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def commented(node: ast.Import | ast.ImportFrom, lines: list[str], import_lines: set[int]) -> bool:
    """A comment on the import's own line, or on the line before the block of imports it is part of."""
    if "#" in lines[node.lineno - 1]:
        return True
    line = node.lineno - 1
    while line in import_lines:  # the 1-based numbers of the lines local imports are written on
        line -= 1
    return line >= 1 and lines[line - 1].lstrip().startswith("#")


def uncommented_imports(path: Path) -> list[str]:
    text = path.read_text()
    lines = text.splitlines()
    imports = list(function_local_imports(ast.parse(text)))
    import_lines = {line for node in imports for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    return [
        f"{path.relative_to(REPO)}:{node.lineno}: {lines[node.lineno - 1].strip()}"
        for node in imports
        if not commented(node, lines, import_lines)
    ]


@pytest.mark.parametrize(
    "module", [str(path.relative_to(REPO)) for path in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in path.parts]
)
def test_a_function_local_import_has_a_comment_saying_why(module: str) -> None:
    found = uncommented_imports(REPO / module)
    assert not found, "imports inside functions without a comment saying why:\n" + "\n".join(found)


def test_an_import_block_shares_the_comment_above_it() -> None:
    text = "def f():\n    # why\n    import a\n    import b\n\n    import c\n"
    tree = ast.parse(text)
    imports = list(function_local_imports(tree))
    lines = text.splitlines()
    import_lines = {3, 4, 6}
    assert [commented(node, lines, import_lines) for node in imports] == [True, True, False]
