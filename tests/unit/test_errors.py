"""The JetStream error table and every place that raises from it."""

from __future__ import annotations

import ast
import pathlib
import re

import fakejs
from fakejs.jetstream.errors import BY_ERR_CODE, ERRORS, api_error

PACKAGE = pathlib.Path(fakejs.__file__).parent


def test_table_is_complete() -> None:
    assert len(ERRORS) == 227
    assert sorted(BY_ERR_CODE) == list(range(10002, 10229))


def test_placeholders_are_filled() -> None:
    error = api_error("JSStreamWrongLastSequenceErrF", seq=7)
    assert error.to_dict() == {"code": 400, "err_code": 10071, "description": "wrong last sequence: 7"}


def _calls() -> list[tuple[str, int, str, set[str]]]:
    found = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "api_error"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                keywords = {k.arg for k in node.keywords if k.arg}
                found.append((str(path.relative_to(PACKAGE)), node.lineno, node.args[0].value, keywords))
    return found


def test_every_raise_names_a_real_error_with_its_placeholders() -> None:
    calls = _calls()
    assert len(calls) > 50
    problems = []
    for where, line, name, keywords in calls:
        spec = ERRORS.get(name)
        if spec is None:
            problems.append(f"{where}:{line} unknown error {name}")
            continue
        wanted = set(re.findall(r"\{(\w+)\}", spec.description))
        if wanted != keywords:
            problems.append(f"{where}:{line} {name} needs {sorted(wanted)}, given {sorted(keywords)}")
    assert not problems, "\n".join(problems)
