"""Operator-mode authorization callouts follow account JWTs pushed later, on both targets.

Facts pinned (nats-server 2.15.1), with a full resolver: an account JWT
pushed to ``$SYS.REQ.CLAIMS.UPDATE`` that adds ``authorization`` makes the
account a callout for the next logins (its bearer sentinel, logged in as
itself before, is now placed by the service); one that changes
``auth_users`` sends the service's own user JWT, no longer among them, to
the callout; one without ``authorization`` ends the callout (the sentinel
logs in as itself again).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.testkit.jwt import (
    AUTH_CALLOUT_SUBJECT,
    Allow,
    AuthorizationRequest,
    CalloutService,
    Deny,
    Operator,
    push_account,
)
from tests.harness.configured import Start, configured_fixture
from tests.harness.raw import RawClient
from tests.harness.wait import WAIT

NOW = [time.time() - 100]  # the operator's clock: each account JWT pushed is issued a second after the last
OPERATOR = Operator("O", now=lambda: NOW[0])
SYSTEM = OPERATOR.account("SYS")
AUTH = OPERATOR.account("AUTH")
APP = OPERATOR.account("APP")
SERVICE = AUTH.user("service")
OTHER_SERVICE = AUTH.user("other")
SENTINEL = AUTH.user("sentinel", bearer=True)
ADMIN = SYSTEM.user("admin")


def decide(request: AuthorizationRequest) -> Allow | Deny:
    if request.connect_opts.get("pass") == "secret":
        return Allow(APP.public_key, name="robert", user_signer=APP, pub_allow=["$SYS.REQ.USER.INFO"])
    return Deny("go away")


server = configured_fixture()


async def signed_in(url: str, user: Any) -> Any:
    return await nats.connect(
        url, user_jwt_cb=user.jwt_callback(), signature_cb=user.signature_callback(), allow_reconnect=False
    )


async def sentinel_login(host: str, port: int) -> tuple[str, str]:
    """The user JWT's name and the account a bearer sentinel with ``bob``'s password logs in as, or ``("", "")`` if refused."""
    client = await RawClient.connect(host, port)
    connect = {"verbose": False, "pedantic": False, "jwt": SENTINEL.jwt, "user": "bob", "pass": "secret"}
    script = b"CONNECT " + json.dumps({**connect, "protocol": 1, "headers": True}).encode() + b"\r\n"
    await client.send(script + b"SUB _INBOX.me 1\r\nPUB $SYS.REQ.USER.INFO _INBOX.me 0\r\n\r\n")
    try:
        data = await client.read_until(b"}}\r\n", timeout=WAIT)
    except Exception:
        return "", ""
    finally:
        await client.close()
    info = json.loads(data[data.rindex(b"\r\n", 0, len(data) - 2) + 2 : -2])["data"]
    return info["user_name"], info["account_name"]


async def pushed(admin: Any, authorization: dict[str, Any]) -> None:
    NOW[0] += 1
    AUTH.authorization = authorization
    reply = await push_account(admin, AUTH)
    assert reply["data"]["code"] == 200


async def test_a_pushed_account_jwt_changes_the_callout(server: Start, tmp_path: Path) -> None:
    AUTH.authorization = {}
    config = OPERATOR.server_config(
        system_account=SYSTEM, accounts=[SYSTEM, AUTH, APP], resolver="full", resolver_dir=tmp_path / "jwt"
    )
    target = await server(config)
    admin = await signed_in(target.url, ADMIN)
    service = CalloutService(AUTH, decide)
    service_nc = await signed_in(target.url, SERVICE)

    async def on_request(msg: Any) -> None:
        await msg.respond(service.answer(msg.data, msg.headers))

    await service_nc.subscribe(AUTH_CALLOUT_SUBJECT, cb=on_request)
    await service_nc.flush()
    try:
        assert await sentinel_login(target.host, target.port) == ("sentinel", "AUTH")
        await pushed(admin, {"auth_users": [SERVICE.public_key], "allowed_accounts": [APP.public_key]})
        assert await sentinel_login(target.host, target.port) == ("sentinel", "APP")
        assert len(service.requests) == 1
        await pushed(admin, {"auth_users": [OTHER_SERVICE.public_key], "allowed_accounts": [APP.public_key]})
        with pytest.raises(nats.errors.Error, match="Authorization Violation"):  # called out now, and refused
            await signed_in(target.url, SERVICE)
        assert service.requests[-1].client_info["user"] == SERVICE.public_key
        await pushed(admin, {})
        assert await sentinel_login(target.host, target.port) == ("sentinel", "AUTH")
        assert len(service.requests) == 2  # the sentinel's, the service user's
    finally:
        await service_nc.close()
        await admin.close()
