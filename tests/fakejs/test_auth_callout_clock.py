"""An authorization callout's time-out runs on the server's clock: a manual clock decides when a login fails.

In operator mode too, for a user JWT refused after its callout account was
found (nats-server calls out to ``$G`` for it, where no service answers).
"""

from __future__ import annotations

import json
from typing import Any

import nkeys

from fakejs import ManualClock, Server, options_from_config
from fakejs.core.users import AuthCallout, User
from fakejs.testkit.jwt import Key, Operator
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


async def test_a_jwt_refused_in_a_callout_account_waits_for_the_clock() -> None:
    operator = Operator("O")
    system, auth = operator.account("SYS"), operator.account("AUTH")
    service, unsigned = auth.user("service"), auth.user("unsigned")
    auth.authorization = {"auth_users": [service.public_key]}
    options = options_from_config(text=operator.server_config(system_account=system, accounts=[system, auth]))
    options.auth_timeout = 2.0
    clock = ManualClock()
    async with Server(options, clock=clock) as server:
        client = await RawClient.connect("127.0.0.1", server.port)
        connect = {"verbose": False, "pedantic": False, "jwt": unsigned.jwt, "protocol": 1}  # no signature
        await client.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        await client.read_until(b"\r\n")  # the greeting

        async def holding() -> list[Any]:
            return [session for session in server.broker.clients.values() if session.paused]

        [session] = await eventually(holding, what="the callout to start")
        clock.advance(1.9)
        assert not session.closed and session.paused
        clock.advance(0.2)
        assert await client.wait_closed()
        assert bytes(client.received).endswith(b"-ERR 'Authorization Violation'\r\n")
        await client.close()
