"""``--signal COMMAND=PID`` and the signals a running server handles, on both servers.

``quit`` (SIGINT) and ``term`` (SIGTERM) stop the server (exit status 0),
``stop`` kills it (SIGKILL), ``reopen`` (SIGUSR1) opens the log file
again, ``ldm`` (SIGUSR2) enters lame duck mode, during which SIGTERM is
only logged; the sender's errors and exit status.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest

from fakejs.targets import ServerProcess
from tests.harness.raw import RawClient
from tests.harness.reload import TARGETS, logged, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, server_command
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)


def _send(kind: str, argument: str) -> tuple[int, str]:
    sent = subprocess.run([*server_command(kind), "-sl", argument], check=False, capture_output=True, text=True)
    assert sent.stdout == ""
    return sent.returncode, sent.stderr


async def _exit_status(server: ServerProcess) -> int:
    assert server.process is not None
    status = await asyncio.wait_for(asyncio.to_thread(server.process.wait), WAIT)
    server.process = None
    return status


@pytest.mark.parametrize("command", ["stop", "quit", "term", "reopen", "ldm", "reload"])
@pytest.mark.parametrize("kind", TARGETS)
def test_signal_to_a_missing_process(kind: str, command: str) -> None:
    assert _send(kind, f"{command}=999999999") == (1, f'nats-server: \nsignal "{command}" 999999999: no such process\n')


@pytest.mark.parametrize(
    "argument,error",
    [("foo=123", 'unknown signal "foo"'), ("foo=abc", "invalid pid: abc"), ("reload=12x*", "invalid pid: 12x")],
)
@pytest.mark.parametrize("kind", TARGETS)
def test_signal_errors(kind: str, argument: str, error: str) -> None:
    assert _send(kind, argument) == (1, f"nats-server: {error}\n")


@pytest.mark.parametrize("log_to", ["stderr", "log_file"])
@pytest.mark.parametrize("command,name", [("quit", "interrupt"), ("term", "terminated")])
@pytest.mark.parametrize("kind", TARGETS)
async def test_quit_and_term_stop_the_server(kind: str, command: str, name: str, log_to: str, tmp_path: Path) -> None:
    """Status 0, the shutdown lines to the end (in the log file, when there is one), the ports file removed."""
    ports = tmp_path / "ports"
    ports.mkdir()
    config = f'ports_file_dir: "{ports}"\n'
    if log_to == "log_file":  # the file the launcher reads stderr from: the lines reach it only through the log file
        config += f'log_file: "{tmp_path / kind / "server.log"}"\n'
    server = start(kind, config, tmp_path)
    try:
        assert server.process is not None
        await eventually(lambda: asyncio.to_thread(os.listdir, ports), what="the ports file")
        assert _send(kind, f"{command}={server.process.pid}") == (0, "")
        assert await _exit_status(server) == 0
        log = server.log_text(since_start=True)
        shutdown = log[log.index(f'[INF] Trapped "{name}" signal') :].splitlines()
        assert [line.split("] ", 2)[-1] for line in shutdown] == [
            f'Trapped "{name}" signal',
            "Initiating Shutdown...",
            "Server Exiting..",
        ], log
        assert os.listdir(ports) == []
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_reopen_without_a_log_file(kind: str, tmp_path: Path) -> None:
    server = start(kind, "", tmp_path)
    try:
        assert server.process is not None
        assert _send(kind, f"reopen={server.process.pid}") == (0, "")
        log = await logged(server, "File log re-open")
        assert 'Trapped "user defined signal 1" signal\n' in log
        assert "[INF] File log re-open ignored, not a file logger\n" in log
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_reopen_after_the_log_file_was_moved(kind: str, tmp_path: Path) -> None:
    log_file = tmp_path / kind / "server.log"
    server = start(kind, f'log_file: "{log_file}"\n', tmp_path)
    try:
        assert server.process is not None
        log_file.rename(tmp_path / f"{kind}-rotated.log")
        assert _send(kind, f"reopen={server.process.pid}") == (0, "")

        async def text() -> str:
            return log_file.read_text() if log_file.is_file() else ""

        reopened = await eventually(text, lambda value: "File log re-opened" in value, what="the new log file")
        assert reopened.endswith("[INF] File log re-opened\n")
        rotated = (tmp_path / f"{kind}-rotated.log").read_text()
        assert rotated.endswith('[INF] Trapped "user defined signal 1" signal\n')
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_term_during_lame_duck_mode_is_only_logged(kind: str, tmp_path: Path) -> None:
    server = start(kind, 'lame_duck_duration: "30s"\nlame_duck_grace_period: "20s"\n', tmp_path)
    try:
        assert server.process is not None
        pid = server.process.pid
        client = await RawClient.connect("127.0.0.1", server.port)  # lame duck mode ends at once without clients
        await client.send(b"CONNECT {}\r\nPING\r\n")
        await client.read_until(b"PONG\r\n")
        assert _send(kind, f"ldm={pid}") == (0, "")
        await logged(server, "[INF] Entering lame duck mode, stop accepting new clients\n")
        assert _send(kind, f"term={pid}") == (0, "")
        await logged(server, 'Trapped "terminated" signal')
        assert server.process.poll() is None  # still in lame duck mode
        assert _send(kind, f"stop={pid}") == (0, "")
        assert await _exit_status(server) == -signal.SIGKILL
        await client.close()
    finally:
        server.stop()
