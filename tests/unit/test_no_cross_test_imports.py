"""No module of the tests imports a test module: what several test modules share lives in tests/harness/.

A test module used as a library is a test module other modules depend on, and a fixture imported
from one is flagged by ruff (F811) where a test takes it: helpers go to a module of tests/harness/,
and fixtures several modules use to the ``conftest.py`` of their folder.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


def dotted(path: Path, root: Path) -> str:
    """``tests.fakejs.test_x`` for ``<root>/tests/fakejs/test_x.py``."""
    return ".".join(path.relative_to(root).with_suffix("").parts)


def imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """Every dotted name the import statement may load: its modules, and ``module.name`` for each name it takes."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".")[: -node.level]
        base = ".".join([*package, base] if base else package)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def imports_of_test_modules(path: Path, root: Path, test_modules: set[str]) -> list[str]:
    """``file:line: statement`` for each import of a test module (one of ``test_modules``) in ``path``."""
    text = path.read_text()
    lines = text.splitlines()
    module = dotted(path, root)
    return [
        f"{path.relative_to(root)}:{node.lineno}: {lines[node.lineno - 1].strip()}"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and any(name in test_modules and name != module for name in imported(node, module))
    ]


def python_files(tests: Path) -> list[Path]:
    return sorted(path for path in tests.rglob("*.py") if "node_modules" not in path.parts)


def test_no_module_of_the_tests_imports_a_test_module() -> None:
    files = python_files(TESTS)
    test_modules = {dotted(path, REPO) for path in files if path.name.startswith("test_")}
    found = [line for path in files for line in imports_of_test_modules(path, REPO, test_modules)]
    assert not found, "test modules imported (move what they share to tests/harness/ or a conftest.py):\n" + "\n".join(
        found
    )


def test_an_import_of_a_test_module_is_found_however_it_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "tests" / "fakejs"
    folder.mkdir(parents=True)
    (folder / "test_shared.py").write_text("def helper() -> None: ...\n")
    (folder / "test_user.py").write_text(
        "from tests.fakejs.test_shared import helper\n"
        "import tests.fakejs.test_shared\n"
        "from tests.fakejs import test_shared\n"
        "from .test_shared import helper as again\n"
        "from . import test_shared as relative\n"
        "from tests.harness.replicated import wait\n"
        "from tests.fakejs import clients\n"
    )
    found = imports_of_test_modules(folder / "test_user.py", tmp_path, {"tests.fakejs.test_shared"})
    assert [line.split(": ", 1)[0] for line in found] == [f"tests/fakejs/test_user.py:{line}" for line in range(1, 6)]
