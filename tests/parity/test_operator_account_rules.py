"""Operator (JWT) mode: what an account JWT says of its users and subjects: default permissions and mappings.

A user JWT without permissions of its own gets its account's
``default_permissions``; the account's weighted ``mappings`` route what
its clients publish.  Both targets run the same tests, logged in raw.
"""

from __future__ import annotations

import pytest

from fakejs.testkit.jwt import Operator
from tests.harness.operator import (
    StartOperator,
    answer,
    logged_in,
    login_connect,
    login_reply,
    operator_start_fixture,
)
from tests.harness.raw import RawClient

start = operator_start_fixture()

DEFAULTS = {"pub": {"deny": ["secret.>"]}, "sub": {"allow": ["public.>", "_INBOX.>"]}}


async def test_a_user_without_permissions_gets_the_accounts_defaults(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", default_permissions=DEFAULTS)
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("plain"))
    try:
        assert await answer(client, b"PUB secret.x 0\r\n\r\n") == (
            b"-ERR 'Permissions Violation for Publish to \"secret.x\"'\r\nPONG\r\n"
        )
        assert await answer(client, b"SUB private.x 1\r\n") == (
            b"-ERR 'Permissions Violation for Subscription to \"private.x\"'\r\nPONG\r\n"
        )
        assert (
            await answer(client, b"SUB public.x 2\r\nPUB public.x 2\r\nhi\r\n") == b"MSG public.x 2 2\r\nhi\r\nPONG\r\n"
        )
    finally:
        await client.close()


async def test_a_user_with_its_own_permissions_does_not_get_the_defaults(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", default_permissions=DEFAULTS)
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("own", pub_allow=["secret.>"]))
    try:
        assert (
            await answer(client, b"SUB secret.x 1\r\nPUB secret.x 2\r\nhi\r\n") == b"MSG secret.x 1 2\r\nhi\r\nPONG\r\n"
        )
    finally:
        await client.close()


async def test_an_accounts_mapping_routes_what_its_clients_publish(start: StartOperator) -> None:
    operator = Operator("O")
    mappings = {"orders.*": [{"subject": "orders.v2.$1"}], "all": [{"subject": "everything", "weight": 100}]}
    system, app = operator.account("SYS"), operator.account("APP", mappings=mappings)
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("u"))
    try:
        script = b"SUB orders.v2.new 1\r\nSUB everything 2\r\nPUB orders.new 2\r\nhi\r\nPUB all 3\r\nall\r\n"
        assert await answer(client, script) == b"MSG orders.v2.new 1 2\r\nhi\r\nMSG everything 2 3\r\nall\r\nPONG\r\n"
    finally:
        await client.close()


@pytest.mark.parametrize(
    "destinations",
    [[{"subject": "b", "weight": 60}, {"subject": "c", "weight": 60}], [{"subject": "b", "weight": 101}]],
    ids=["over 100 in all", "one over 100"],
)
async def test_mappings_over_100_percent_make_the_account_invalid(
    start: StartOperator, destinations: list[dict[str, object]]
) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", mappings={"a": destinations})
    target = await start(operator, system, app)
    assert await login_reply(target, app.user("u")) == b"-ERR 'Authorization Violation'\r\n"


# A limit left out of a JWT is Go's zero value for nats-server: it allows none (nats-io/jwt writes -1 for none).


async def test_an_accounts_conn_limit_left_out_allows_no_client(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", limits={"conn": 0})
    target = await start(operator, system, app)
    assert await login_reply(target, app.user("u")) == b"-ERR 'maximum account active connections exceeded'\r\n"


@pytest.mark.parametrize("whose", ["account", "user"])
async def test_a_subs_limit_left_out_allows_no_subscription(start: StartOperator, whose: str) -> None:
    """With a limit of 0 the client is at it as it logs in: told, then closed."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", limits={"subs": 0} if whose == "account" else {})
    target = await start(operator, system, app)
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.send(await login_connect(client, app.user("u", limits={"subs": 0} if whose == "user" else {})))
        assert await client.wait_closed()
        assert b"-ERR 'maximum subscriptions exceeded'\r\n" in bytes(client.received)
    finally:
        await client.close()


async def test_an_accounts_payload_limit_left_out_allows_no_payload(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", limits={"payload": 0})
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("u"))
    try:
        assert await answer(client, b"PUB a 0\r\n\r\n") == b"PONG\r\n"
        await client.send(b"PUB a 1\r\nx\r\n")
        assert await client.read_until(b"\r\n") == b"-ERR 'Maximum Payload Violation'\r\n"
    finally:
        await client.close()


PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-"


@pytest.mark.parametrize("sampling", [100, 0], ids=["all", "left out: all"])
async def test_an_accounts_trace_destination_gets_sampled_messages(start: StartOperator, sampling: int) -> None:
    operator = Operator("O")
    system = operator.account("SYS")
    app = operator.account("APP", trace={"dest": "traces", "sampling": sampling})
    target = await start(operator, system, app)
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.send(await login_connect(client, app.user("u"), headers=True) + b"PING\r\n")
        await client.read_until(b"PONG\r\n")
        client.received.clear()
        header = f"NATS/1.0\r\ntraceparent: {PARENT}01\r\n\r\n".encode()
        script = (
            b"SUB traces 1\r\nSUB x 2\r\n" + f"HPUB x {len(header)} {len(header) + 2}\r\n".encode() + header + b"hi\r\n"
        )
        await client.send(script + b"PING\r\n")
        await client.read_until(b"MSG traces 1 ")
        await client.read_until(b"PONG\r\n")
        assert b"HMSG x 2 " in bytes(client.received)
    finally:
        await client.close()


async def test_a_trace_destination_with_a_wildcard_makes_the_account_invalid(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", trace={"dest": "traces.*"})
    target = await start(operator, system, app)
    assert await login_reply(target, app.user("u")) == b"-ERR 'Authorization Violation'\r\n"
