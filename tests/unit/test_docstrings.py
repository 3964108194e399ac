"""Every public class in fakejs says what it holds and does (docs/contributing/index.md).

A class whose name does not start with ``_`` carries a docstring: one to
three lines on what it holds and does, with the nats-server name when it
mirrors one.  Nested classes count as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "fakejs"


def undocumented_classes() -> list[str]:
    """``path:line Name`` of every public class under fakejs/ without a docstring."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and ast.get_docstring(node) is None:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    return found


def test_every_public_class_has_a_docstring() -> None:
    assert undocumented_classes() == []
