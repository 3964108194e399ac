"""The server's own events in its system account, on both targets: lame duck mode and shutdown.

Facts pinned (nats-server 2.15.1), as a client of the system account sees them:

- entering lame duck mode publishes ``$SYS.SERVER.<id>.LAMEDUCK`` and an
  orderly shutdown ``$SYS.SERVER.<id>.SHUTDOWN``; the payload of each is the
  bare ``ServerInfo`` (``name``, ``host``, ``id``, ``ver``, ``feature_flags``,
  ``jetstream``, ``flags``, ``seq``, ``time``), not wrapped in an event;
- the shutdown event is the server's last: the clients it closes while
  shutting down get no ``DISCONNECT`` event.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nats.aio.msg import Msg

from tests.harness.configured import Start, configured_servers
from tests.harness.system_account import SERVER_INFO_KEYS, SYSTEM, login
from tests.harness.targets import FakeTarget, RealTarget, Settings, Target
from tests.harness.wait import WAIT, eventually

# The grace period and duration nats-server allows at the least (duration) and a short grace.
LAME_DUCK = 'lame_duck_duration: "30s"\nlame_duck_grace_period: "1s"\n'


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=True)) as start:
        yield start


class Heard:
    """The messages of a subscription, decoded, in order."""

    def __init__(self) -> None:
        self.docs: list[tuple[str, dict[str, Any]]] = []

    async def add(self, msg: Msg) -> None:
        self.docs.append((msg.subject, json.loads(msg.data)))

    def on(self, suffix: str) -> list[dict[str, Any]]:
        return [doc for subject, doc in self.docs if subject.endswith(suffix)]


async def enter_lame_duck(target: Target) -> asyncio.Task[None] | None:
    """Put the server in lame duck mode (nats-server: SIGUSR2); fakejs's runs as a task, returned."""
    if isinstance(target, FakeTarget):
        assert target.server is not None
        return asyncio.ensure_future(target.server.lame_duck())
    else:
        assert isinstance(target, RealTarget) and target.process is not None and target.process.process is not None
        target.process.process.send_signal(signal.SIGUSR2)
        return None


def assert_server_info(doc: dict[str, Any], server_id: str) -> None:
    assert list(doc) == SERVER_INFO_KEYS, doc
    assert (doc["id"], doc["host"], doc["ver"], doc["jetstream"], doc["flags"]) == (
        server_id,
        "127.0.0.1",
        "2.15.1",
        True,
        7,
    )


async def test_shutdown_is_the_last_event(server: Start) -> None:
    target = await server(SYSTEM)
    sys = await login(target, "sys", allow_reconnect=False)
    other = await login(target, "a", allow_reconnect=False)
    heard = Heard()
    await sys.subscribe("$SYS.SERVER.*.SHUTDOWN", cb=heard.add)
    await sys.subscribe("$SYS.ACCOUNT.*.DISCONNECT", cb=heard.add)
    await sys.flush()
    server_id = sys._server_info["server_id"]
    try:
        await target.stop()
        shutdown = await eventually(lambda: asyncio.sleep(0, heard.on(".SHUTDOWN")), what="the SHUTDOWN event")
        assert heard.docs[0][0] == f"$SYS.SERVER.{server_id}.SHUTDOWN"
        assert_server_info(shutdown[0], server_id)
        assert not heard.on(".DISCONNECT")
    finally:
        await other.close()
        await sys.close()


async def test_lame_duck_mode_is_announced(server: Start) -> None:
    target = await server(SYSTEM + LAME_DUCK)
    sys = await login(target, "sys", allow_reconnect=False)
    heard = Heard()
    await sys.subscribe("$SYS.SERVER.*.LAMEDUCK", cb=heard.add)
    await sys.flush()
    server_id = sys._server_info["server_id"]
    running: asyncio.Task[None] | None = None
    try:
        running = await enter_lame_duck(target)
        lame_duck = await eventually(
            lambda: asyncio.sleep(0, heard.on(".LAMEDUCK")), what="the LAMEDUCK event", timeout=WAIT
        )
        assert heard.docs[0][0] == f"$SYS.SERVER.{server_id}.LAMEDUCK"
        assert_server_info(lame_duck[0], server_id)
    finally:
        await sys.close()
        if running is not None:
            running.cancel()
