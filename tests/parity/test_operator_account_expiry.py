"""Operator (JWT) mode: an account JWT that expires while its clients are connected, and one expired at start.

nats-server closes every client of the account at its JWT's ``exp``
(``-ERR 'Account Authentication Expired'``); a user JWT that expires first
ends its own login ('User Authentication Expired').  An account already
expired refuses its users, and nats-server warns of it at start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakejs.testkit.jwt import Operator
from tests.harness.operator import StartOperator, closing_error, logged_in, login_connect, operator_start_fixture
from tests.harness.raw import RawClient
from tests.harness.reload import TARGETS, logged, start

start_operator = operator_start_fixture()


async def test_the_accounts_clients_are_closed_when_its_jwt_expires(start_operator: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", expires=3)
    target = await start_operator(operator, system, app)
    first, second = await logged_in(target, app.user("a")), await logged_in(target, app.user("b", expires=60))
    try:
        assert await closing_error(first) == b"-ERR 'Account Authentication Expired'\r\n"
        assert await closing_error(second) == b"-ERR 'Account Authentication Expired'\r\n"
    finally:
        await first.close()
        await second.close()


async def test_a_user_that_expires_before_its_account_ends_its_own_login(start_operator: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", expires=60)
    target = await start_operator(operator, system, app)
    client = await logged_in(target, app.user("brief", expires=2))
    try:
        assert await closing_error(client) == b"-ERR 'User Authentication Expired'\r\n"
    finally:
        await client.close()


@pytest.mark.parametrize("kind", TARGETS)
async def test_an_account_expired_at_start_is_warned_of_and_refused(kind: str, tmp_path: Path) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", expires=-60)
    server = start(kind, operator.server_config(system_account=system, accounts=[system, app]), tmp_path)
    try:
        log = await logged(server, "Server is ready")
        warnings = [line.split("[WRN] ", 1)[1] for line in log.splitlines() if "[WRN] " in line]
        assert warnings == [f"Account [{app.public_key}] has validation issues:", "  - claim is expired"]
        client = await RawClient.connect("127.0.0.1", server.port)
        try:
            await client.send(await login_connect(client, app.user("late")) + b"PING\r\n")
            assert await client.read_until(b"\r\n") == b"-ERR 'Authorization Violation'\r\n"
        finally:
            await client.close()
    finally:
        server.stop()
