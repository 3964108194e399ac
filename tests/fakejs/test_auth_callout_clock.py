"""An authorization callout's time-out runs on the server's clock: a manual clock decides when a login fails."""

from __future__ import annotations

import json
from typing import Any

import nkeys

from fakejs import ManualClock, Server
from fakejs.core.users import AuthCallout, User
from fakejs.testkit.jwt import Key
from tests.harness.raw import RawClient
from tests.harness.wait import eventually

ISSUER = Key(nkeys.PREFIX_BYTE_ACCOUNT)


async def test_the_login_waits_for_the_clock() -> None:
    clock = ManualClock()
    callout = AuthCallout(ISSUER.public_key, "$G", ("auth",))
    async with Server(users=[User("auth", "pwd")], auth_callout=callout, auth_timeout=2.0, clock=clock) as server:
        client = await RawClient.connect("127.0.0.1", server.port)
        connect = {"verbose": False, "pedantic": False, "user": "bob", "pass": "x", "protocol": 1}
        await client.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        await client.read_until(b"\r\n")  # the greeting

        async def holding() -> list[Any]:
            """The sessions whose input waits for a callout."""
            return [session for session in server.broker.clients.values() if session.paused]

        [session] = await eventually(holding, what="the callout to start")
        clock.advance(1.9)  # the login time-out is the server's clock's
        assert not session.closed and session.paused
        clock.advance(0.2)
        assert await client.wait_closed()
        assert b"-ERR 'Authorization Violation'\r\n" in bytes(client.received)
        assert b"PONG" not in bytes(client.received)  # the PING waited for the login, which failed
        await client.close()
