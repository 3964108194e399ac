"""An account asked of the cluster waits the resolver's ``timeout`` on the cluster's clock (fakejs only).

Two in-process nodes with cache resolvers (which do not answer lookups): a
login for an account neither holds waits, its input held, until the manual
clock passes the ``timeout``; meanwhile other clients of the node go on.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from fakejs import ServerOptions, options_from_config
from fakejs.targets.fake_cluster import FakeCluster
from fakejs.testkit.jwt import Operator
from tests.harness.operator import login_connect
from tests.harness.raw import RawClient
from tests.harness.wait import eventually

AUTH_VIOLATION = b"-ERR 'Authorization Violation'\r\n"


def operator_settings(config: str) -> dict[str, Any]:
    """The server options the configuration sets (those differing from the defaults), for every node."""
    options, defaults = options_from_config(text=config), ServerOptions()
    fields = (field.name for field in dataclasses.fields(options))
    return {name: getattr(options, name) for name in fields if getattr(options, name) != getattr(defaults, name)}


async def test_a_login_waits_for_the_fetch_timeout_on_the_cluster_clock(tmp_path: Path) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    config = operator.server_config(
        system_account=system, accounts=[system], resolver="cache", resolver_dir=tmp_path / "jwt"
    )
    config = config.replace("type: cache,", 'type: cache, timeout: "5s",')
    cluster = FakeCluster(2, clock="manual", **operator_settings(config)).start()
    try:
        server = cluster.server(1)
        waiting = await RawClient.connect("127.0.0.1", server.port)
        await waiting.send(await login_connect(waiting, app.user("alice")) + b"PING\r\n")

        async def holding() -> list[Any]:
            """The node's sessions whose input waits for their account."""
            return cluster.call(lambda: [session for session in server.broker.clients.values() if session.paused])

        [session] = await eventually(holding, what="the lookup to start")
        other = await RawClient.connect("127.0.0.1", server.port)
        await other.send(await login_connect(other, system.user("admin")) + b"PING\r\n")
        assert b"PONG\r\n" in await other.read_until(b"PONG\r\n")  # the node goes on meanwhile
        cluster.advance(4.9)
        assert cluster.call(lambda: not session.closed and session.paused)
        cluster.advance(0.2)
        assert await waiting.wait_closed()
        assert AUTH_VIOLATION in bytes(waiting.received) and b"PONG" not in bytes(waiting.received)
        await waiting.close()
        await other.close()
        assert cluster.take_errors() == []
    finally:
        cluster.stop()
