"""Servers of both kinds run on a configuration file: the commands, the file written, the error lines compared."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.harness.targets import FAKEJS_COMMAND, REAL_BINARY

FAKE = FAKEJS_COMMAND


def run(command: list[str], *args: str) -> tuple[int, str]:
    out = subprocess.run([*command, *args], capture_output=True, text=True, timeout=30, check=False)
    return out.returncode, out.stderr


def real() -> list[str]:
    assert REAL_BINARY is not None
    return [REAL_BINARY]


def lines(stderr: str) -> tuple[str, list[str]]:
    """The first line's prefix, and the lines without it (sorted: Go's map order is random)."""
    prefix, _, rest = stderr.partition(": ")
    return prefix, sorted(rest.split("\n"))


def write(tmp_path: Path, text: str, name: str = "server.conf") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)
