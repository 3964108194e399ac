"""The wheel a plain ``pip install .`` builds: shipped scenarios found by name, type information and data shipped."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_ships_scenarios_and_py_typed(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("fakejs-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"fakejs/scenarios/{path.name}" for path in (REPO / "scenarios").glob("*.toml")}
    assert len(shipped) == 10
    assert shipped <= names
    assert "fakejs/py.typed" in names
    assert "fakejs/scenarios/__init__.py" in names
    assert {"fakejs/testkit/timeline_page.css", "fakejs/testkit/timeline_page.js"} <= names  # the page's style, script


def test_shipped_scenarios_are_found_by_name() -> None:
    from fakejs.testkit.scenarios import load_scenario, shipped_names

    names = shipped_names()
    assert names == sorted(path.stem for path in (REPO / "scenarios").glob("*.toml"))
    assert load_scenario("consumer-deleted").name == "consumer-deleted"
