"""The documentation site builds with MkDocs in strict mode: no broken link, anchor or page left out of the nav.

Every code example on its pages (and in README.md) runs as a test of its own: see
tests/harness/doc_examples.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        check=False,
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "guide" / "pytest" / "index.html").is_file()


def test_the_readme_links_only_to_pages_that_exist() -> None:
    readme = (REPOSITORY / "README.md").read_text()
    targets = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert targets, "the front page links into the docs"
    missing = [target for target in targets if not (REPOSITORY / target).is_file()]
    assert not missing, missing


def test_the_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPOSITORY / "README.md").read_text()
    ci = (REPOSITORY / ".ci" / "run").read_text()
    command = next(line for line in readme.splitlines() if line.startswith("pip install -e '.[test]'"))
    assert command in ci.splitlines()


def test_the_front_page_stays_short() -> None:
    assert len((REPOSITORY / "README.md").read_text().splitlines()) <= 300
