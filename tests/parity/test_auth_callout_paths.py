"""Authorization callouts on both targets: the no_auth_user, TLS clients and logins that fail in a callout's account.

Facts pinned (nats-server 2.15.1):

- with a ``no_auth_user``, a client that shows no credentials is that user
  for the callout: the request's ``connect_opts`` carry its ``user`` and
  ``pass`` and ``client_info.user`` its name; a ``no_auth_user`` among
  ``auth_users`` logs in as configured, no request sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import nkeys
import pytest

from fakejs.testkit.jwt import AUTH_CALLOUT_SUBJECT, Allow, AuthorizationRequest, CalloutService, Key
from tests.harness.configured import Start, configured_servers
from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT

ISSUER = Key(nkeys.PREFIX_BYTE_ACCOUNT)
NO_AUTH_CONFIG = """
accounts {
  AUTH { users: [ {user: auth, password: pwd} ] }
  APP { users: [ {user: guest, password: guestpwd} ] }
}
no_auth_user: NOAUTH
authorization {
  timeout: 1
  auth_callout { issuer: ISSUER, auth_users: [auth], account: AUTH }
}
""".replace("ISSUER", ISSUER.public_key)


def decide(request: AuthorizationRequest) -> Allow:
    return Allow("APP", name="placed", pub_allow=["$SYS.REQ.USER.INFO"], sub_allow=["_INBOX.>"])


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False)) as start:
        yield start


async def with_service(target: Target) -> tuple[Any, CalloutService]:
    service = CalloutService(ISSUER, decide)
    nc = await nats.connect(target.url, user="auth", password="pwd")

    async def on_request(msg: Any) -> None:
        await msg.respond(service.answer(msg.data, msg.headers))

    await nc.subscribe(AUTH_CALLOUT_SUBJECT, cb=on_request)
    await nc.flush()
    return nc, service


@pytest.mark.parametrize("no_auth_user", ["guest", "auth"])
async def test_a_client_without_credentials_is_the_no_auth_user(server: Start, no_auth_user: str) -> None:
    target = await server(NO_AUTH_CONFIG.replace("NOAUTH", no_auth_user))
    service_nc, service = await with_service(target)
    try:
        nc = await nats.connect(target.url, name="anon")
        reply = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
        await nc.close()
    finally:
        await service_nc.close()
    info = json.loads(reply.data)["data"]
    if no_auth_user == "auth":  # one of auth_users: logged in as configured
        assert (info["user"], info["account"], service.requests) == ("auth", "AUTH", [])
        return
    assert (info["user"], info["account"]) == ("placed", "APP")
    [request] = service.requests
    assert (request.client_info["user"], request.client_info["name"]) == ("guest", "anon")
    assert (request.connect_opts["user"], request.connect_opts["pass"]) == ("guest", "guestpwd")
