"""Helpers of the configuration reload tests: a server started with ``-c FILE``, the file rewritten, SIGHUP."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from fakejs.targets import ServerProcess
from tests.harness.raw import RawClient
from tests.harness.targets import server_command
from tests.harness.wait import eventually

TARGETS = ["real", "fake"]
DONE = "Reloaded server configuration"
FAILED = "[ERR] Failed to reload server configuration: "


def start(kind: str, config: str, tmp_path: Path) -> ServerProcess:
    store = tmp_path / kind
    store.mkdir()
    return ServerProcess(command=server_command(kind), config="port: -1\n" + config, store_dir=str(store)).start()


def rewrite(server: ServerProcess, config: str, port: int = -1) -> None:
    """The server's configuration file becomes ``config`` on ``port`` (a free one by default)."""
    path = os.path.join(server.store_dir, "nats-server.conf")
    with open(path, "w") as handle:
        handle.write(f"port: {port}\n" + config)


def hangup(server: ServerProcess) -> None:
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGHUP)


async def logged(server: ServerProcess, text: str, count: int = 1) -> str:
    async def log() -> str:
        return server.log_text(since_start=True)

    return await eventually(log, lambda value: value.count(text) >= count, what=repr(text))


async def reload(server: ServerProcess, config: str, count: int = 1) -> str:
    """Rewrite the file, SIGHUP, and the log once the ``count``-th reload (or its failure) is logged."""
    rewrite(server, config)
    hangup(server)

    async def log() -> str:
        return server.log_text(since_start=True)

    def finished(value: str) -> bool:
        return value.count(DONE) + value.count(FAILED) >= count

    return await eventually(log, finished, what="the reload")


def failure(log: str) -> str:
    """The error of the last failed reload."""
    return log.rsplit(FAILED, 1)[1].splitlines()[0]


async def login(server: ServerProcess, user: str, password: str) -> RawClient:
    client = await RawClient.connect("127.0.0.1", server.port)
    await client.send(f'CONNECT {{"user":"{user}","pass":"{password}","verbose":false}}\r\nPING\r\n'.encode())
    assert (await client.read_until(b"PONG\r\n")).endswith(b"PONG\r\n")
    client.received.clear()
    return client
