"""The optional compiled build (``FAKEJS_MYPYC=1``, see setup.py): built as a user builds it, then tested.

The wheel is built from a copy of this tree with the command the docs give, and
its extension modules put beside that copy's sources.  Run from there: the modules setup.py lists are
extension modules; the unit tests and the parity tests of the publish and
delivery paths (fakejs's side) pass; and a parity campaign that holds this
tree's pure-Python server against the compiled one as its second server finds
no difference.  The rest of the suite tests the pure-Python build.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 900  # seconds: mypyc's C for the listed modules is one large file for one compiler
TESTS_TIMEOUT = 1200

# Not copied: version control, virtual environments, installed node modules, build output, caches.
_NOT_COPIED = shutil.ignore_patterns(
    ".git",
    "venv",
    "node_modules",
    "__pycache__",
    "*.so",
    "build",
    "dist",
    "site",
    "results",
    "*.egg-info",
    ".*_cache",
    ".hypothesis",
)

# The parity tests of the code setup.py compiles: the protocol, publishing, consumers, pulls, acks, KV.
PARITY_FILES = [
    "test_core_protocol.py",
    "test_core_nats_py.py",
    "test_json_rules.py",
    "test_stream_api.py",
    "test_stream_publish.py",
    "test_stream_counters.py",
    "test_stream_transforms.py",
    "test_consumer_api.py",
    "test_pull_requests.py",
    "test_push_consumers.py",
    "test_acks_and_state.py",
    "test_consume_loop.py",
    "test_priority_groups.py",
    "test_direct_get.py",
    "test_kv_and_object_store.py",
    "test_fast_batch.py",
    "test_atomic_batch.py",
    "test_delete_markers.py",
    "test_message_schedules.py",
    "test_persistence.py",
    "test_campaign_findings.py",
]

pytestmark = pytest.mark.slow


def compiled_modules() -> list[str]:
    """The dotted names of the modules setup.py's ``COMPILED`` lists (read, not run: running it builds)."""
    tree = ast.parse((REPOSITORY / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "COMPILED" for t in node.targets):
            paths = ast.literal_eval(node.value)
            return [path.removesuffix(".py").replace("/", ".") for path in paths]
    raise AssertionError("setup.py has no COMPILED list")


def _environment(**extra: str) -> dict[str, str]:
    """This process's environment without pytest's own variables (a worker's would mislead a nested run)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH", "FAKEJS_MYPYC"))}
    environment.update(extra)
    return environment


def _run(command: list[str], cwd: Path, timeout: int, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=_environment(**extra), capture_output=True, text=True, timeout=timeout, check=False
    )


def _tail(result: subprocess.CompletedProcess[str], lines: int = 60) -> str:
    return "\n".join((result.stdout + result.stderr).splitlines()[-lines:])


@pytest.fixture(scope="module")
def compiled_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of this tree with the compiled wheel unpacked over it."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) for the compiled build")
    base = tmp_path_factory.mktemp("compiled")
    tree, wheels = base / "tree", base / "wheels"
    shutil.copytree(REPOSITORY, tree, ignore=_NOT_COPIED)
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(tree)]
    built = _run(command, base, BUILD_TIMEOUT, FAKEJS_MYPYC="1")
    assert built.returncode == 0, _tail(built)
    [wheel] = wheels.glob("fakejs-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # its extension modules beside the copy's sources
        archive.extractall(tree, [name for name in archive.namelist() if name.endswith(".so")])
    yield tree
    shutil.rmtree(base, ignore_errors=True)


def test_a_plain_build_is_pure_python(tmp_path: Path) -> None:
    """Without FAKEJS_MYPYC the wheel is pure Python (no compiler, no mypy in the build)."""
    tree = tmp_path / "tree"
    shutil.copytree(REPOSITORY, tree, ignore=_NOT_COPIED)
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(tree)]
    built = _run(command, tmp_path, BUILD_TIMEOUT)
    assert built.returncode == 0, _tail(built)
    [wheel] = tmp_path.glob("fakejs-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    assert not [name for name in zipfile.ZipFile(wheel).namelist() if name.endswith(".so")]


def test_the_listed_modules_are_compiled(compiled_tree: Path) -> None:
    names = compiled_modules()
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    print(importlib.import_module(name).__file__)"
    shown = _run([sys.executable, "-c", script, *names], compiled_tree, 60, PYTHONPATH=str(compiled_tree))
    assert shown.returncode == 0, _tail(shown)
    files = shown.stdout.split()
    assert len(files) == len(names)
    assert all(file.startswith(str(compiled_tree)) and file.endswith(".so") for file in files), files
    [wheel] = (compiled_tree.parent / "wheels").glob("fakejs-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    assert {"fakejs/core/router.py", "fakejs/warm/launch.py"} <= shipped  # the sources ship beside them


def test_unit_and_parity_tests_pass_compiled(compiled_tree: Path) -> None:
    """The unit tests and fakejs's side of the parity tests of the compiled paths, on the compiled modules."""
    arguments = ["-q", "-p", "no:cacheprovider", "-n", "2", "-k", "not real", "tests/unit"]
    arguments += ["--deselect", "tests/unit/test_first_use.py"]  # a pure install in a new environment
    arguments += [f"tests/parity/{name}" for name in PARITY_FILES]
    script = (
        "import sys, pytest, fakejs.core.router as router\n"
        "assert router.__file__.endswith('.so'), router.__file__\n"
        "sys.exit(pytest.main(sys.argv[1:]))"
    )
    result = _run(
        [sys.executable, "-c", script, *arguments], compiled_tree, TESTS_TIMEOUT, PYTHONPATH=str(compiled_tree)
    )
    assert result.returncode == 0, _tail(result)
    assert " passed" in result.stdout and " failed" not in result.stdout


def test_a_campaign_finds_no_difference_between_the_builds(compiled_tree: Path, tmp_path: Path) -> None:
    """The campaign's first server is this tree's pure fakejs; its second, the compiled one (as a binary)."""
    binary = tmp_path / "compiled-fakejs"
    binary.write_text(f'#!/bin/sh\nPYTHONPATH="{compiled_tree}" exec "{sys.executable}" -m fakejs "$@"\n')
    binary.chmod(0o755)
    report = tmp_path / "report"
    command = [sys.executable, "-m", "fakejs.parity.cli", "run", "--local", "--workers", "1", "--seeds", "16"]
    command += ["--shrink", "none", "--quiet", "--nats-server", str(binary), "--out", str(report)]
    result = _run(command, tmp_path, TESTS_TIMEOUT)
    assert result.returncode == 0, _tail(result)
    totals = json.loads((report / "report.json").read_text())["totals"]
    assert totals["operations"] > 200
    assert totals["errors"] == 0
    assert totals["confirmed"] == 0, (report / "report.md").read_text()
