"""A new project with only what the front page says installed runs the front page's first test green.

A fresh virtualenv gets ``pip install "<fakejs>[pytest]"`` (a copy of the package's sources, so the
build leaves nothing in the repository), and the README's ``test_orders.py`` runs there, alone in an
empty directory, with pytest's defaults: no configuration, no conftest.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "tools", "README.md", "fakejs", "scenarios")


def _front_page_test_file() -> tuple[str, str]:
    readme = (REPOSITORY / "README.md").read_text()
    found = re.search(r"<!-- example: test-file (\S+) -->\n```python\n(.*?)```", readme, re.S)
    assert found, "the front page shows a test file"
    return found.group(1), found.group(2)


def _run(command: list[str], cwd: Path) -> str:
    finished = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, f"{' '.join(command)}:\n{finished.stdout}\n{finished.stderr}"
    return finished.stdout


@pytest.mark.slow
def test_the_front_page_install_runs_the_first_test(tmp_path: Path) -> None:
    package = tmp_path / "fakejs"
    package.mkdir()
    for name in SOURCES:
        source = REPOSITORY / name
        if source.is_dir():
            shutil.copytree(source, package / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, package / name)
    _run([sys.executable, "-m", "venv", str(tmp_path / "venv")], tmp_path)
    python = str(tmp_path / "venv" / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", "./fakejs[pytest]"], tmp_path)  # the front page's line
    project = tmp_path / "project"
    project.mkdir()
    name, text = _front_page_test_file()
    (project / name).write_text(text)
    output = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    summary = output.strip().splitlines()[-1]
    assert re.match(r"\d+ passed in ", summary), output
