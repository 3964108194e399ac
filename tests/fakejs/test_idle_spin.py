"""A server's loop kept polling after its clients' reads (``--spin``), and left to sleep once they are quiet."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time

import nats
import pytest

from fakejs.server import Server
from fakejs.server.idle_spin import IdleSpin
from fakejs.warm.launch import SWITCH
from tests.harness.command_line import finish, wait_ready
from tests.harness.targets import server_command


async def test_each_client_read_touches_the_server_s_spin() -> None:
    async with Server() as server:
        assert server.idle_spin is None  # an embedded server leaves its host's loop alone
        server.idle_spin = spin = IdleSpin(60.0, crowded=lambda: False)
        nc = await nats.connect(server.url)
        try:
            await nc.flush()
            assert spin.running and spin.reads >= 1
            spin.window = 0.0  # the next turn finds the window passed
            for _ in range(100):
                if not spin.running:
                    break
                await asyncio.sleep(0)
            assert not spin.running
            reads = spin.reads
            spin.window = 60.0
            await nc.flush()
            assert spin.running and spin.reads > reads
        finally:
            spin.window = 0.0  # ends on its next turn: nothing left queued on the test's loop
            await nc.close()


def cpu_ticks(pid: int) -> int:
    """The process's user and system time, in clock ticks (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


async def settles(pid: int, timeout: float = 10.0) -> bool:
    """Whether the process's CPU time stops growing for 0.3 s (a spinning loop adds ticks every 10 ms)."""
    deadline = time.monotonic() + timeout
    ticks = cpu_ticks(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.3)
        now = cpu_ticks(pid)
        if now == ticks:
            return True
        ticks = now
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process's CPU time from /proc")
async def test_a_command_line_server_sleeps_once_its_client_is_quiet() -> None:
    # Without the forkserver: the process measured is the server, not a launcher handing over to one
    process = subprocess.Popen(
        [*server_command("fake"), "-a", "127.0.0.1", "-p", "-1", "--spin", "100000"],  # 100 ms after each read
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, SWITCH: "0"},
    )
    try:
        log = await wait_ready(process)
        port = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", log)
        assert port is not None
        nc = await nats.connect(f"nats://127.0.0.1:{port.group(1)}")
        try:
            assert await settles(process.pid)
            for _ in range(20):
                await nc.flush()  # a PING read: a new window each time
            assert await settles(process.pid)  # the window passed: the loop sleeps in its poll
            await nc.flush()  # and still serves
        finally:
            await nc.close()
    finally:
        await finish(process, signal.SIGTERM)
