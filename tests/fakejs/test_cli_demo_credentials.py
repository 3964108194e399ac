"""``fakejs --demo_credentials DIR``: operator (JWT) mode with credentials made at start, their paths in the log."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import nats
import pytest

from fakejs import cli
from tests.harness.command_line import finish, start, wait_ready
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON

CREDS = re.compile(r"user credentials:\s+(\S+)")
PORT = re.compile(r"Listening for client connections on 127\.0\.0\.1:(\d+)")


async def serve_and_use(directory: Path) -> tuple[str, str]:
    """Start ``fakejs --demo_credentials directory``, use JetStream as its user; the log's first line and creds path."""
    process = start("fake", "-p", "-1", "--demo_credentials", str(directory))
    try:
        log = await wait_ready(process)
        creds, port = CREDS.search(log), PORT.search(log)
        assert creds and port, log
        nc = await nats.connect(f"nats://127.0.0.1:{port.group(1)}", user_credentials=creds.group(1))
        try:
            js = nc.jetstream()
            await js.add_stream(name="DEMO", subjects=["demo.>"])
            assert (await js.publish("demo.1", b"hello")).seq >= 1
        finally:
            await nc.close()
    finally:
        rc, _ = await finish(process, signal.SIGTERM)
    assert rc == 0
    first = next(line for line in log.splitlines() if "--demo_credentials" in line)
    return first, creds.group(1)


async def test_demo_credentials_are_made_then_served_again(tmp_path: Path) -> None:
    first, creds = await serve_and_use(tmp_path / "demo")
    assert "credentials made for this run" in first and Path(creds) == tmp_path / "demo" / "user.creds"
    before = Path(creds).read_text()
    again, _ = await serve_and_use(tmp_path / "demo")
    assert "credentials found" in again
    assert Path(creds).read_text() == before


@pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)
def test_nats_server_serves_the_demo_configuration(tmp_path: Path) -> None:
    cli.command_line(["--demo_credentials", str(tmp_path)])
    real = subprocess.run(
        [str(REAL_BINARY), "-t", "-c", str(tmp_path / "server.conf")],
        check=False,
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert real.returncode == 0, real.stderr


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["--demo_credentials", "d", "-c", "x.conf"],
            "fakejs: --demo_credentials writes and serves its own configuration: give it no -c\n",
        ),
        (["--demo_credentials", "/proc/nope"], "fakejs: --demo_credentials /proc/nope: No such file or directory\n"),
    ],
)
def test_demo_credentials_refusals(argv: list[str], message: str) -> None:
    with pytest.raises(cli.Exit) as end:
        cli.command_line(argv)
    assert (end.value.status, end.value.stderr) == (1, message)
