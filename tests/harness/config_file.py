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


def option_errors_alike(path: str) -> str:
    """``-t -c path`` fails on both with status 1 and the same error lines (in any order); fakejs's stderr returned."""
    real_status, real_err = run(real(), "-t", "-c", path)
    fake_status, fake_err = run(FAKE, "-t", "-c", path)
    assert real_status == 1, real_err
    assert (fake_status, lines(fake_err)) == (real_status, lines(real_err))
    return fake_err


def start_errors_alike(path: str) -> None:
    """The file passes ``-t`` on nats-server, but starting on it fails on both with status 1 and the same stderr."""
    assert run(real(), "-t", "-c", path)[0] == 0
    real_status, real_err = run(real(), "-c", path)
    fake_status, fake_err = run(FAKE, "-c", path)
    assert real_status == 1
    assert (fake_status, fake_err) == (real_status, real_err)
