"""What ``/connz`` shows of a client an authorization callout logged in (configuration mode).

nats-server names it by the user JWT's ``name``, shows its account as
``issuer_key`` and ``name_tag``, and no ``jwt`` (the response's user JWT is
not the client's).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import nkeys
import pytest

from fakejs.testkit.jwt import AUTH_CALLOUT_SUBJECT, Allow, AuthorizationRequest, CalloutService, Key
from tests.harness.configured import Start, configured_servers
from tests.harness.monitoring import monitor
from tests.harness.targets import Settings

ISSUER = Key(nkeys.PREFIX_BYTE_ACCOUNT)
CONFIG = f"""
accounts {{
  AUTH {{ users: [ {{user: auth, password: pwd}} ] }}
  APP {{}}
  SYS {{}}
}}
system_account: SYS
authorization {{
  auth_callout {{ issuer: {ISSUER.public_key}, auth_users: [auth], account: AUTH }}
}}
"""


def decide(request: AuthorizationRequest) -> Allow:
    return Allow("APP", name="robert") if request.connect_opts.get("pass") == "secret" else Allow("APP")


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False, monitor=True)) as start:
        yield start


async def test_a_callout_user_shows_its_account_as_issuer_key(server: Start) -> None:
    target = await server(CONFIG)
    service = CalloutService(ISSUER, decide)
    service_nc = await nats.connect(target.url, user="auth", password="pwd")

    async def on_request(msg: Any) -> None:
        await msg.respond(service.answer(msg.data, msg.headers))

    await service_nc.subscribe(AUTH_CALLOUT_SUBJECT, cb=on_request)
    await service_nc.flush()
    nc = await nats.connect(target.url, user="bob", password="secret", allow_reconnect=False, max_reconnect_attempts=0)
    try:
        connz = await monitor(target, "/connz?auth=true&acc=APP")
    finally:
        await nc.close()
        await service_nc.close()
    (entry,) = connz["connections"]  # type: ignore[index]
    wanted = ("authorized_user", "account", "jwt", "issuer_key", "name_tag", "tags")
    assert {key: entry[key] for key in wanted if key in entry} == {
        "authorized_user": "robert",
        "account": "APP",
        "issuer_key": "APP",
        "name_tag": "APP",
    }
