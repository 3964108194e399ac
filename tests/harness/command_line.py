"""A server process started from the command line, as a harness starts one: ready when it logs, stopped by a signal."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

from fakejs.targets.real import START_TIMEOUT
from tests.harness.targets import server_command


def start(kind: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(server_command(kind) + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


async def wait_ready(process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT) -> str:
    """Read the log until 'Server is ready'; returns the log so far."""
    assert process.stdout is not None
    os.set_blocking(process.stdout.fileno(), False)
    log = b""
    deadline = time.monotonic() + timeout
    while b"Server is ready" not in log:
        chunk = process.stdout.read()
        if chunk:
            log += chunk
        elif process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"not ready: {log.decode(errors='replace')}")
        else:
            await asyncio.sleep(0.01)
    return log.decode()


async def finish(process: subprocess.Popen[bytes], sig: int) -> tuple[int, str]:
    process.send_signal(sig)
    rc = await asyncio.to_thread(process.wait, 10)
    assert process.stdout is not None
    os.set_blocking(process.stdout.fileno(), True)
    return rc, process.stdout.read().decode()
