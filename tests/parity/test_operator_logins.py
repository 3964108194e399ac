"""Operator (JWT) mode logins beyond the credentials: limits, bearer users, sources, a login's end at ``exp``.

Each test starts a server of its kind with :meth:`Operator.server_config`
and logs in raw: CONNECT with the user's JWT and the nonce signed.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from pathlib import Path

from fakejs.testkit.jwt import Operator, User
from tests.harness.configured import configured_servers
from tests.harness.error_lines import client_lines_of
from tests.harness.operator import StartOperator, answer, logged_in, login_connect, operator_start_fixture
from tests.harness.raw import RawClient

start = operator_start_fixture()

TOO_MANY_SUBS = b"-ERR 'maximum subscriptions exceeded'\r\nPONG\r\n"


async def test_the_users_subscription_limit(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("few", limits={"subs": 1}))
    try:
        assert await answer(client, b"SUB a 1\r\n") == b"PONG\r\n"
        assert await answer(client, b"SUB b 2\r\n") == TOO_MANY_SUBS
    finally:
        await client.close()


async def test_the_accounts_subscription_limit_lowers_the_users(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", limits={"subs": 2})
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("many", limits={"subs": 5}))
    try:
        assert await answer(client, b"SUB a 1\r\nSUB b 2\r\n") == b"PONG\r\n"
        assert await answer(client, b"SUB c 3\r\n") == TOO_MANY_SUBS
    finally:
        await client.close()


async def test_a_user_from_its_source_network_and_with_denied_subjects(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("local", src=["10.0.0.0/8", "127.0.0.0/8"], pub_deny=["secret.>"], sub_deny=["hidden"])
    client = await logged_in(target, user)
    try:
        assert await answer(client, b"PUB secret.x 0\r\n\r\n") == (
            b"-ERR 'Permissions Violation for Publish to \"secret.x\"'\r\nPONG\r\n"
        )
        assert await answer(client, b"SUB hidden 1\r\n") == (
            b"-ERR 'Permissions Violation for Subscription to \"hidden\"'\r\nPONG\r\n"
        )
    finally:
        await client.close()


async def test_payload_limits_of_users_and_accounts(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", limits={"payload": 8})
    target = await start(operator, system, app)
    for limits, size in (({"payload": 4}, 6), ({}, 9)):
        client = await logged_in(target, app.user("sender", limits=limits))
        try:
            await client.send(b"PUB a 3\r\nabc\r\nPUB a %d\r\n%s\r\nPING\r\n" % (size, b"x" * size))
            await asyncio.wait_for(client.read_until(b"Violation'\r\n"), 5)
            assert bytes(client.received) == b"-ERR 'Maximum Payload Violation'\r\n"
        finally:
            await client.close()


async def test_an_account_that_disallows_bearer_users(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", limits={"disallow_bearer": True})
    target = await start(operator, system, app)
    client = await RawClient.connect(target.host, target.port)
    try:
        bearer = app.user("bearer", bearer=True)
        await client.send(await login_connect(client, bearer, sign=False) + b"PING\r\n")
        await asyncio.wait_for(client.read_until(b"Violation'\r\n"), 5)
        assert bytes(client.received) == b"-ERR 'Authorization Violation'\r\n"
    finally:
        await client.close()


async def test_a_user_is_closed_when_its_jwt_expires(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("brief", expires=2))
    try:
        await asyncio.wait_for(client.read_until(b"Expired'\r\n"), 5)
        assert bytes(client.received) == b"-ERR 'User Authentication Expired'\r\n"
    finally:
        await client.close()


async def test_the_debug_lines_of_refused_logins(target_kind: str, tmp_path: Path) -> None:
    """Under ``debug: true`` each refused login is told in nats-server's words, before its error line."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", limits={"disallow_bearer": True})
    scoped = app.scoped_signing_key("scoped", pub_allow=["{{nope()}}"])
    user = app.user("u")
    header, claims, _ = user.jwt.split(".")
    hour = datetime.datetime.now(datetime.UTC).hour
    later = (f"{(hour + 2) % 24:02}:00:00", f"{(hour + 3) % 24:02}:00:00")  # a range an hour away from now
    cases: list[tuple[dict[str, object], str]] = [
        ({}, "Authentication requires a user JWT"),
        ({"jwt": f"{header}.{claims}.AAAA"}, "Authentication requires a user JWT"),
        ({"jwt": user.jwt}, "Signature missing"),
        ({"jwt": user.jwt, "sig": "AAAA"}, "Signature not verified"),
        ({"jwt": user.jwt, "sig": "%%%"}, "Signature not valid base64"),
        ({"jwt": app.user("e", expires=-10).jwt}, "User JWT no longer valid: &{Issues:[claim is expired]}"),
        ({"jwt": Operator("X").account("A").user("z").jwt}, "Account JWT lookup error: account missing"),
        ({"jwt": app.user("b", bearer=True).jwt}, "Account does not allow bearer tokens"),
        ({"jwt": app.user("w", allowed_connection_types=["WEBSOCKET"]).jwt}, "Connection type not allowed"),
        ({"jwt": app.user("m", signer=operator.account("OTHER")).jwt}, "User JWT issuer is not known"),
        (
            {"jwt": app.user("own", signer=scoped, pub_allow=["x"]).jwt},
            "User JWT is not valid: scoped users require no permissions or limits set",
        ),
        ({"jwt": app.user("t", signer=scoped).jwt}, "User JWT generated invalid permissions"),
        ({"sign": app.user("s", src=["10.0.0.0/8"])}, "Bad src Ip 127.0.0.1"),  # an error line, not a debug one
        ({"sign": app.user("o", times=[later], times_location="UTC")}, "Outside connect times"),  # an error line too
    ]
    expected: list[str] = []
    with client_lines_of("cid") as fake_lines:
        async with configured_servers(target_kind, tmp_path) as start_config:
            config = operator.server_config(system_account=system, accounts=[system, app]) + "debug: true\n"
            target = await start_config(config)
            for connect, reason in cases:
                client = await RawClient.connect(target.host, target.port)
                signer = connect.pop("sign", None)
                if isinstance(signer, User):
                    line = await login_connect(client, signer)
                else:
                    await client.read_until(b"\r\n")
                    line = f"CONNECT {json.dumps({'verbose': False, **connect})}\r\n".encode()
                await client.send(line)
                await client.read_until(b"Violation'\r\n")
                await client.close()
                expected += ["Client connection created", reason, "authentication error"]
                expected += ["Client connection closed: Authentication Failure"]
            assert await target.elapse_until(lambda: fake_lines.of(target) == expected, 5), fake_lines.of(target)
