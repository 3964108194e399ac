"""Operator (JWT) mode: a pushed account JWT that moves or drops ``exp`` moves its connected clients' end.

nats-server re-arms the account's expiry timer at each update
(``checkExpiration``): with a later ``exp`` or none, the clients outlive the
old one; with an earlier one, they are closed then (``-ERR 'Account
Authentication Expired'``).  That the old ``exp`` has passed is seen without
a sleep: a witness user whose own JWT ends a second after it is closed with
``User Authentication Expired`` (the account's error, had the old ``exp``
held).  The manual-clock form is ``tests/fakejs/test_operator_clock.py``.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import nats
import pytest

from fakejs.testkit.jwt import Account, Operator, push_account
from tests.harness.configured import configured_servers
from tests.harness.operator import closing_error, logged_in
from tests.harness.targets import Target

StartResolver = Callable[[Operator, Account, Account], Awaitable[Target]]
ACCOUNT_EXPIRED = b"-ERR 'Account Authentication Expired'\r\n"
USER_EXPIRED = b"-ERR 'User Authentication Expired'\r\n"


@pytest.fixture
async def start(target_kind: str, tmp_path: Path) -> AsyncIterator[StartResolver]:
    async with configured_servers(target_kind, tmp_path) as start_config:

        async def start_resolver(operator: Operator, system: Account, app: Account) -> Target:
            directory = tmp_path / "jwt"
            config = operator.server_config(
                system_account=system, accounts=[system, app], resolver="full", resolver_dir=directory
            )
            return await start_config(config)

        yield start_resolver


async def push(target: Target, system: Account, app: Account, expires: int) -> None:
    """The account's JWT pushed again, ``expires`` seconds from now (0: no ``exp``)."""
    app.expires = int(time.time()) + expires if expires else 0
    user = system.user("admin")
    admin = await nats.connect(
        target.url, user_jwt_cb=user.jwt_callback(), signature_cb=user.signature_callback(), allow_reconnect=False
    )
    try:
        assert (await push_account(admin, app))["data"]["code"] == 200
    finally:
        await admin.close()


@pytest.mark.parametrize("new_expires", [600, 0], ids=["later", "removed"])
async def test_the_clients_outlive_the_old_exp(start: StartResolver, new_expires: int) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", expires=5)
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("u"))
    witness = await logged_in(target, app.user("witness", expires=datetime.datetime.fromtimestamp(app.expires + 1)))
    try:
        await push(target, system, app, new_expires)
        assert await closing_error(witness) == USER_EXPIRED
        await client.send(b"PING\r\n")
        assert (await client.read_until(b"PONG\r\n")).replace(b"PING\r\n", b"") == b"PONG\r\n"
    finally:
        await client.close()
        await witness.close()


async def test_the_clients_end_at_an_earlier_exp(start: StartResolver) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", expires=600)
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("u"))
    try:
        await push(target, system, app, 2)
        assert await closing_error(client) == ACCOUNT_EXPIRED
    finally:
        await client.close()
