"""``fakejs --seed N``: a fakejs-only flag that seeds every random choice of the server."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakejs import cli
from fakejs.gocompat import ids


@pytest.mark.parametrize("argv", [["--seed", "42"], ["-seed", "42"], ["-seed=42"], ["--seed=42"]])
def test_seed_flag_reaches_the_options(argv: list[str]) -> None:
    assert cli.command_line(argv).options.seed == 42


def test_no_seed_by_default() -> None:
    assert cli.command_line([]).options.seed is None


def test_help_documents_the_seed_as_fakejs_only() -> None:
    text = cli.USAGE
    fakejs_section = text[text.index("fakejs Options:") :]
    assert "--seed <n>" in fakejs_section and "Seed every random choice" in fakejs_section


def _server_id(tmp_path: Path, seed: int) -> str:
    log_path = tmp_path / f"fakejs-{time.monotonic_ns()}.log"
    command = [sys.executable, "-m", "fakejs", "-a", "127.0.0.1", "-p", "-1", "-l", str(log_path), "--seed", str(seed)]
    process = subprocess.Popen(command)
    try:
        deadline = time.monotonic() + 15
        while True:
            log = log_path.read_text() if log_path.exists() else ""
            if "Server is ready" in log:
                break
            assert process.poll() is None and time.monotonic() < deadline, log
            time.sleep(0.01)
    finally:
        process.terminate()
        process.wait(10)
    [line] = [line for line in log.splitlines() if "  ID:" in line]
    return line.split()[-1]


def test_seeded_command_line_server_has_the_seeded_id(tmp_path: Path) -> None:
    expected = ids.server_id(ids.new_random(42))
    assert _server_id(tmp_path, 42) == expected
    assert _server_id(tmp_path, 42) == expected
