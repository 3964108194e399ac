"""Operator-mode authorization callouts on both targets: users of scoped signing keys, failed logins.

Facts pinned (nats-server 2.15.1):

- the service's user JWT may be issued by a scoped signing key of the
  account it places the user in (``issuer_account`` naming the account):
  the user gets the scope's template (``{{name()}}`` expanded with the
  JWT's name), and the login is the account's; such a JWT with
  permissions of its own is refused (``User JWT is not valid: scoped
  users require no permissions or limits set``);
- a user JWT of a callout's account refused after its account was found
  (here: no signature of the nonce) is still called out, but to the
  client's account before any login, ``$G``, where no service answers: the
  client is refused after the login time-out, no request reaches the
  service, and the account is told (``$SYS.ACCOUNT.CLIENT.AUTH.ERR``,
  ``acc`` the account, ``reason`` empty).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.testkit.jwt import Allow, AuthorizationRequest, CalloutService, Deny, Operator
from tests.harness.callout import answer_callouts, sentinel_login, user_info
from tests.harness.configured import Start, configured_servers
from tests.harness.targets import Target
from tests.harness.wait import WAIT
from tests.harness.warning_lines import Lines, lines_fixture

OPERATOR = Operator("O")
SYSTEM = OPERATOR.account("SYS")
AUTH = OPERATOR.account("AUTH")
APP = OPERATOR.account("APP")
SERVICE = AUTH.user("service")
SENTINEL = AUTH.user("sentinel", bearer=True)
UNSIGNED = AUTH.user("unsigned")  # not a bearer: its CONNECT must sign the nonce
AUTH_SCOPE = AUTH.scoped_signing_key("callers", pub_allow=["{{name()}}.>", "$SYS.REQ.USER.INFO"])
APP_SCOPE = APP.scoped_signing_key("apps", sub_allow=["_INBOX.>"], pub_allow=["$SYS.REQ.USER.INFO"])
lines = lines_fixture()
AUTH_ERROR = "$SYS.ACCOUNT.CLIENT.AUTH.ERR"
AUTH.authorization = {"auth_users": [SERVICE.public_key], "allowed_accounts": [APP.public_key]}


def decide(request: AuthorizationRequest) -> Allow | Deny:
    password = request.connect_opts.get("pass")
    if password == "auth":
        return Allow(AUTH.public_key, name="robert", user_signer=AUTH_SCOPE, issuer_account=AUTH.public_key)
    if password == "app":
        return Allow(APP.public_key, name="ann", user_signer=APP_SCOPE, issuer_account=APP.public_key)
    if password == "own":  # a scoped user with permissions of its own
        return Allow(AUTH.public_key, user_signer=AUTH_SCOPE, issuer_account=AUTH.public_key, pub_allow=["x"])
    return Deny("go away")


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path) as start:
        yield start


async def started(start: Start, tmp_path: Path) -> tuple[Target, Any, CalloutService]:
    config = OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, AUTH, APP])
    target = await start(config)
    service = CalloutService(AUTH, decide)
    nc = await nats.connect(target.url, user_credentials=SERVICE.write_creds(tmp_path / "service.creds"))
    await answer_callouts(nc, service)
    return target, nc, service


async def test_a_user_of_a_scoped_signing_key(server: Start, tmp_path: Path) -> None:
    target, service_nc, _ = await started(server, tmp_path)
    try:
        found = []
        for password in ("auth", "app"):
            client = await sentinel_login(target, SENTINEL.jwt, password)
            found.append(await user_info(client))
            await client.close()
    finally:
        await service_nc.close()
    auth, app = found
    auth["permissions"]["publish"]["allow"].sort()  # nats-server lists them in its subject index's order
    assert (auth["user"], auth["account_name"], app["user"], app["account_name"]) == ("robert", "AUTH", "ann", "APP")
    assert auth["permissions"] == {
        "publish": {"allow": ["$SYS.REQ.USER.INFO", "robert.>"], "deny": ["$SYS.REQ.USER.AUTH"]},
        "subscribe": {},
    }
    assert app["permissions"] == {"publish": {"allow": ["$SYS.REQ.USER.INFO"]}, "subscribe": {"allow": ["_INBOX.>"]}}


async def test_a_scoped_user_with_permissions_of_its_own(server: Start, tmp_path: Path, lines: Lines) -> None:
    target, service_nc, _ = await started(server, tmp_path)
    try:
        client = await sentinel_login(target, SENTINEL.jwt, "own")
        await client.send(b"PING\r\n")
        assert await client.wait_closed()
        await client.close()
        assert bytes(client.received).endswith(b"-ERR 'Authorization Violation'\r\n")
        expected = [
            '[ERR] ADDR - authentication error - User "bob"',
            "[WRN] User JWT is not valid: scoped users require no permissions or limits set",
        ]
        await lines.wait_for(target, expected)
    finally:
        await service_nc.close()


async def test_a_login_refused_in_a_callout_account_waits_for_a_callout(server: Start, tmp_path: Path) -> None:
    target, service_nc, service = await started(server, tmp_path)
    events = await service_nc.subscribe(AUTH_ERROR)
    await service_nc.flush()
    try:
        started_at = time.monotonic()
        client = await sentinel_login(target, UNSIGNED.jwt, "auth")  # no signature: refused once the account is found
        await client.send(b"PING\r\n")
        assert await client.wait_closed()
        waited = time.monotonic() - started_at
        await client.close()
        event = json.loads((await events.next_msg(timeout=WAIT)).data)
    finally:
        await service_nc.close()
    assert bytes(client.received).endswith(b"-ERR 'Authorization Violation'\r\n")
    assert service.requests == [] and waited >= 1.9  # the request went to $G, where nobody answers
    client_info = event["client"]
    assert (client_info["acc"], client_info["user"], client_info["name_tag"]) == (AUTH.public_key, "bob", "$G")
    assert event["reason"] == ""
