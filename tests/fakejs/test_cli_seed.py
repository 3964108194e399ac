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
    parser = cli.build_parser()
    args = parser.parse_args(cli._normalise(argv))
    assert cli.options_from_args(args).seed == 42


def test_no_seed_by_default() -> None:
    assert cli.options_from_args(cli.build_parser().parse_args([])).seed is None


def test_help_documents_the_seed_as_fakejs_only() -> None:
    text = cli.build_parser().format_help()
    assert "--seed N" in text and "fakejs: seed every random choice" in text


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
