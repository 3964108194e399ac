"""The command line: the same arguments start nats-server and fakejs alike.

A harness that execs ``nats-server -a HOST -p -1 -js -sd DIR -m -1`` can
exec ``fakejs`` instead: both print the listen line and ``Server is ready``,
serve clients, and shut down cleanly on SIGINT/SIGTERM with status 0.
"""

from __future__ import annotations

import asyncio
import pstats
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nats
import pytest

from tests.harness.command_line import finish, start, wait_ready
from tests.harness.targets import server_command
from tests.harness.wait import WAIT

LOG_LINE = re.compile(r"^\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[(INF|WRN|ERR|DBG|TRC)\] ")


async def _connected_raw_client(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A protocol client that has had its PONG: the server knows it when the signal comes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    assert (await reader.readuntil(b"\r\n")).startswith(b"INFO ")
    writer.write(b'CONNECT {"verbose":false,"protocol":1}\r\nSUB held 1\r\nPING\r\n')
    assert await reader.readuntil(b"PONG\r\n") == b"PONG\r\n"
    writer.write(b"PING\r\n")  # the INFO that follows the first PONG comes before the second
    assert (await reader.readuntil(b"PONG\r\n")).endswith(b"PONG\r\n")
    return reader, writer


@pytest.mark.parametrize("sig,name", [(signal.SIGTERM, "terminated"), (signal.SIGINT, "interrupt")])
async def test_start_serve_and_stop(target_kind: str, tmp_path, sig: int, name: str) -> None:
    """The publish acknowledged before the signal is in the store the next start reads;
    a client still connected sees its connection closed, and nothing before that."""
    store = str(tmp_path)
    process = start(target_kind, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", store, "-m", "-1")
    try:
        log = await wait_ready(process)
        listen = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", log)
        assert listen, log
        assert re.search(r"Starting http monitor on 127\.0\.0\.1:\d+", log), log
        assert all(LOG_LINE.match(line) for line in log.splitlines() if line.strip()), log
        nc = await nats.connect(f"nats://127.0.0.1:{listen.group(1)}")
        sub = await nc.subscribe("cli")
        await nc.publish("cli", b"works")
        assert (await sub.next_msg(timeout=WAIT)).data == b"works"
        js = nc.jetstream()
        await js.add_stream(name="KEPT", subjects=["kept"])
        assert (await js.publish("kept", b"acknowledged")).seq == 1
        await nc.close()
        reader, writer = await _connected_raw_client(int(listen.group(1)))
        started = time.monotonic()
        rc, rest = await finish(process, sig)
        assert rc == 0
        assert time.monotonic() - started < 5
        assert f'Trapped "{name}" signal' in rest
        assert "Server Exiting.." in rest
        assert await reader.read() == b""  # closed, without an -ERR
        writer.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    process = start(target_kind, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", store)
    try:
        log = await wait_ready(process)
        listen = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", log)
        assert listen, log
        nc = await nats.connect(f"nats://127.0.0.1:{listen.group(1)}")
        kept = await nc.jetstream().get_msg("KEPT", 1)
        assert (kept.subject, kept.data) == ("kept", b"acknowledged")
        await nc.close()
    finally:
        process.kill()
        process.wait()


async def test_go_style_flags(target_kind: str, tmp_path) -> None:
    """One or two dashes, ``-flag=value``: Go's flag syntax."""
    process = start(target_kind, "--addr=127.0.0.1", "-port=-1", "--js", "-n", "cli-name")
    try:
        log = await wait_ready(process)
        port = re.search(r"127\.0\.0\.1:(\d+)", log).group(1)
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        assert nc._server_info["server_name"] == "cli-name"
        await nc.close()
    finally:
        process.kill()
        process.wait()


async def test_version(target_kind: str) -> None:
    out = subprocess.run(server_command(target_kind) + ["--version"], capture_output=True, timeout=10, check=False)
    assert out.returncode == 0
    first = out.stdout.decode().splitlines()[0]
    assert first == "nats-server: v2.15.1"
    assert re.search(r"v(\d+)\.(\d+)\.(\d+)", first).groups() == ("2", "15", "1")  # type: ignore[union-attr]


async def test_missing_config_file(target_kind: str, tmp_path: Path) -> None:
    missing = tmp_path / "x.conf"
    out = subprocess.run(
        server_command(target_kind) + ["-c", str(missing)], capture_output=True, timeout=10, check=False
    )
    assert out.returncode == 1
    assert out.stderr == f"nats-server: open {missing}: no such file or directory\n".encode()


@pytest.mark.fake_only
async def test_port_zero_means_default_port_like_nats_server() -> None:
    from fakejs.cli import command_line

    assert command_line(["-p", "0"]).options.port == 4222
    assert command_line(["-p", "-1"]).options.port == 0


@pytest.mark.fake_only
async def test_a_profiled_server_writes_its_profile_after_sigterm(tmp_path: Path) -> None:
    """The command-line process skips the interpreter's teardown, but not under a profiler: it writes its file."""
    profile = tmp_path / "fakejs.prof"
    process = subprocess.Popen(
        [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "fakejs", "-a", "127.0.0.1", "-p", "-1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        await wait_ready(process)
        rc, rest = await finish(process, signal.SIGTERM)
        assert rc == 0
        assert "Server Exiting.." in rest
        profiled = pstats.Stats(str(profile)).get_stats_profile().func_profiles.values()
        assert any(function.file_name.endswith("fakejs/cli/__init__.py") for function in profiled)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_stop_with_an_idle_http_connection_is_clean(target_kind: str) -> None:
    """A keep-alive connection left open on the monitoring port does not trouble the shutdown."""
    process = start(target_kind, "-a", "127.0.0.1", "-p", "-1", "-m", "-1")
    try:
        log = await wait_ready(process)
        monitor = re.search(r"Starting http monitor on 127\.0\.0\.1:(\d+)", log)
        assert monitor, log
        reader, writer = await asyncio.open_connection("127.0.0.1", int(monitor.group(1)))
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
        assert (await reader.readuntil(b'{"status":"ok"}')).startswith(b"HTTP/1.1 200 OK\r\n")
        rc, rest = await finish(process, signal.SIGTERM)  # the connection is idle, and still open
        assert rc == 0
        assert "Server Exiting.." in rest
        assert "Traceback" not in rest and "CancelledError" not in rest, rest
        assert await reader.read() == b""  # the server closed it
        writer.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
