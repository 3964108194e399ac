"""Authorization callouts in operator mode, on both targets: an account JWT's ``authorization``.

Facts pinned (nats-server 2.15.1): an account whose JWT has
``authorization { auth_users, allowed_accounts }`` is its own callout.  A
user JWT of that account (a bearer "sentinel") that is not one of
``auth_users`` has its login decided by the service subscribed to
``$SYS.REQ.USER.AUTH`` in the account: the request's ``sub`` is the
account; the answer, signed by the account, carries a user JWT issued by
the account (the user stays there) or by one of ``allowed_accounts`` (the
user goes there), with the JWT's permissions and name.  A user JWT issued
by an account that is not allowed is refused: ``-ERR 'Authorization
Violation'``, closed, and ``Account "A..." not permitted as valid account
option for auth callout for account "A..."`` (``[ERR] ... authentication
error - User "bob"`` first, the warning after it).  The service's own user
(one of ``auth_users``) logs in with its JWT as usual; a user in the
callout's account may not publish to ``$SYS.REQ.USER.AUTH``, and
``$SYS.REQ.USER.INFO``'s ``account_name`` is the account JWT's name and
``user_name`` the user JWT's.  The request's ``client_info.user`` of a
client that showed only a JWT is the JWT's user key.  An account's ``xkey``
encrypts its requests as the configuration's does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats

from fakejs.testkit.jwt import (
    Allow,
    AuthorizationRequest,
    CalloutService,
    CurveKey,
    Deny,
    Operator,
)
from tests.harness.callout import answer_callouts, sentinel_login, user_info
from tests.harness.configured import Start, configured_fixture
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT
from tests.harness.warning_lines import Lines, lines_fixture

OPERATOR = Operator("O")
SYSTEM = OPERATOR.account("SYS")
AUTH = OPERATOR.account("AUTH")
APP = OPERATOR.account("APP")
OTHER = OPERATOR.account("OTHER")
SERVICE = AUTH.user("service")
SENTINEL = AUTH.user("sentinel", bearer=True, pub_deny=[">"], sub_deny=[">"])
SEALED = OPERATOR.account("SEALED")
SEALED_SERVICE = SEALED.user("service")
SEALED_SENTINEL = SEALED.user("sentinel", bearer=True)
SEALED_XKEY = CurveKey()
SEALED.authorization = {"auth_users": [SEALED_SERVICE.public_key], "xkey": SEALED_XKEY.public_key}
lines = lines_fixture()
AUTH.authorization = {"auth_users": [SERVICE.public_key], "allowed_accounts": [APP.public_key]}


def decide(request: AuthorizationRequest) -> Allow | Deny:
    password = request.connect_opts.get("pass")
    if password == "secret":
        return Allow(APP.public_key, name="robert", user_signer=APP, pub_allow=["$SYS.REQ.USER.INFO"])
    if password == "local":
        return Allow(AUTH.public_key, pub_allow=["$SYS.REQ.USER.INFO"])
    if password == "other":
        return Allow(OTHER.public_key, user_signer=OTHER)
    return Deny("go away")


server = configured_fixture()


async def started(start: Start, tmp_path: Path) -> tuple[Target, Any, CalloutService]:
    config = OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, AUTH, APP, OTHER, SEALED])
    target = await start(config)
    service = CalloutService(AUTH, decide)
    nc = await nats.connect(target.url, user_credentials=SERVICE.write_creds(tmp_path / "service.creds"))
    await answer_callouts(nc, service)
    return target, nc, service


async def test_users_placed_by_the_service(server: Start, tmp_path: Path) -> None:
    target, service_nc, service = await started(server, tmp_path)
    try:
        client = await sentinel_login(target, SENTINEL.jwt, "secret")
        info = await user_info(client)
        await client.close()
        assert (info["user"], info["account"], info["account_name"]) == ("robert", APP.public_key, "APP")
        assert info["permissions"] == {"publish": {"allow": ["$SYS.REQ.USER.INFO"]}, "subscribe": {}}
        client = await sentinel_login(target, SENTINEL.jwt, "local")
        info = await user_info(client)
        await client.close()
        assert info["account"] == AUTH.public_key
        assert info["permissions"]["publish"] == {"allow": ["$SYS.REQ.USER.INFO"], "deny": ["$SYS.REQ.USER.AUTH"]}
    finally:
        await service_nc.close()
    request = service.requests[0]
    assert request.claims["sub"] == AUTH.public_key
    assert request.connect_opts["jwt"] == SENTINEL.jwt and request.connect_opts["user"] == "bob"


async def test_an_account_that_is_not_allowed(server: Start, tmp_path: Path, lines: Lines) -> None:
    target, service_nc, _ = await started(server, tmp_path)
    try:
        for password in ("other", "nope"):
            client = await sentinel_login(target, SENTINEL.jwt, password)
            await client.send(b"PING\r\n")
            assert await client.wait_closed()
            data = bytes(client.received)
            assert data[data.index(b"\r\n") + 2 :] == b"-ERR 'Authorization Violation'\r\n"
            await client.close()
        not_allowed = (
            f'Account "{OTHER.public_key}" not permitted as valid account option for auth callout '
            f'for account "{AUTH.public_key}"'
        )
        refusal = '[ERR] ADDR - authentication error - User "bob"'
        expected = [refusal, f"[WRN] {not_allowed}", refusal, "[WRN] Auth callout service returned an error: go away"]
        await lines.wait_for(target, expected, "the refusals' lines")
    finally:
        await service_nc.close()


async def test_the_request_names_a_jwt_user_by_its_key(server: Start, tmp_path: Path) -> None:
    target, service_nc, service = await started(server, tmp_path)
    try:
        client = await RawClient.connect(target.host, target.port)
        connect = {"verbose": False, "pedantic": False, "jwt": SENTINEL.jwt, "protocol": 1}
        await client.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        assert await client.wait_closed()
        await client.close()
        reply = await service_nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
    finally:
        await service_nc.close()
    assert service.requests[0].client_info["user"] == SENTINEL.public_key
    assert json.loads(reply.data)["data"] == {
        "user": SERVICE.public_key,
        "account": AUTH.public_key,
        "account_name": "AUTH",
        "user_name": "service",
        "permissions": {"publish": {"deny": ["$SYS.REQ.USER.AUTH"]}, "subscribe": {}},
    }


async def test_an_encrypted_account_callout(server: Start, tmp_path: Path) -> None:
    target, auth_nc, _ = await started(server, tmp_path)
    await auth_nc.close()
    service = CalloutService(SEALED, lambda _: Allow(SEALED.public_key, name="sealed"), xkey=SEALED_XKEY)
    creds = SEALED_SERVICE.write_creds(tmp_path / "sealed.creds")
    nc = await nats.connect(target.url, user_credentials=creds)
    headers: list[Any] = []
    await answer_callouts(nc, service, headers)
    try:
        client = await RawClient.connect(target.host, target.port)
        connect = {"verbose": False, "pedantic": False, "jwt": SEALED_SENTINEL.jwt, "protocol": 1}
        await client.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        await client.read_until(b"PONG\r\n")
        await client.close()
        server_xkey = nc._server_info["xkey"]
    finally:
        await nc.close()
    assert headers == [{"Nats-Server-Xkey": server_xkey}]
    assert service.requests[0].server_id["xkey"] == server_xkey
