"""Operator (JWT) mode's ``default_sentinel``: a client that brings no user JWT logs in with it.

The sentinel is a bearer user JWT (no signature asked): a client without
credentials becomes its user, in its account; a client with a user JWT of
its own logs in with that one.  With an account that is its own callout
(``authorization`` in its JWT), the sentinel of that account sends a
client that shows only a user name and password to the callout service.
A reload takes a new sentinel (``Reloaded: default_sentinel = <JWT>``).  The
start errors are ``test_operator_config``'s.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.testkit.jwt import AUTH_CALLOUT_SUBJECT, Allow, AuthorizationRequest, CalloutService, Deny, Operator
from tests.harness.configured import configured_fixture
from tests.harness.raw import RawClient
from tests.harness.reload import TARGETS, reload
from tests.harness.reload import start as start_file
from tests.harness.targets import Target
from tests.harness.wait import WAIT

Start = Callable[[str], Awaitable[Target]]


start = configured_fixture()


async def test_a_client_without_credentials_logs_in_as_the_sentinel(start: Start, tmp_path: Path) -> None:
    operator = Operator("O")
    system, app, other = operator.account("SYS"), operator.account("APP"), operator.account("OTHER")
    config = operator.server_config(system_account=system, accounts=[system, app, other])
    target = await start(config + f'default_sentinel: "{app.user("sentinel", bearer=True).jwt}"\n')
    creds = app.user("reader").write_creds(tmp_path / "reader.creds")
    reader = await nats.connect(target.url, user_credentials=creds, allow_reconnect=False)
    other_creds = other.user("o").write_creds(tmp_path / "other.creds")
    stranger = await nats.connect(target.url, user_credentials=other_creds, allow_reconnect=False)
    anonymous = await nats.connect(target.url, allow_reconnect=False)
    try:
        sub = await reader.subscribe("greetings")
        await reader.flush()
        await stranger.publish("greetings", b"from another account")
        await stranger.flush()
        await anonymous.publish("greetings", b"from the sentinel")
        await anonymous.flush()
        assert (await sub.next_msg(timeout=WAIT)).data == b"from the sentinel"
    finally:
        await anonymous.close()
        await stranger.close()
        await reader.close()


async def test_the_sentinel_of_a_callout_account_sends_a_password_to_the_service(start: Start, tmp_path: Path) -> None:
    operator = Operator("O")
    system, auth, app = operator.account("SYS"), operator.account("AUTH"), operator.account("APP")
    service_user = auth.user("service")
    auth.authorization = {"auth_users": [service_user.public_key], "allowed_accounts": [app.public_key]}
    sentinel = auth.user("sentinel", bearer=True, pub_deny=[">"], sub_deny=[">"])
    config = operator.server_config(system_account=system, accounts=[system, auth, app])
    target = await start(config + f'default_sentinel: "{sentinel.jwt}"\n')

    def decide(request: AuthorizationRequest) -> Allow | Deny:
        if request.connect_opts.get("pass") == "secret":
            return Allow(app.public_key, name="bob", user_signer=app)
        return Deny("go away")

    service = CalloutService(auth, decide)
    nc = await nats.connect(target.url, user_credentials=service_user.write_creds(tmp_path / "service.creds"))

    async def on_request(msg: Any) -> None:
        await msg.respond(service.answer(msg.data, msg.headers))

    await nc.subscribe(AUTH_CALLOUT_SUBJECT, cb=on_request)
    await nc.flush()
    try:
        for password, answer in (("secret", b"PONG\r\n"), ("wrong", b"-ERR 'Authorization Violation'\r\n")):
            client = await RawClient.connect(target.host, target.port)
            await client.read_until(b"\r\n")  # the INFO
            client.received.clear()
            connect = {"verbose": False, "pedantic": False, "user": "bob", "pass": password, "protocol": 1}
            await client.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
            first_line = (await client.read_until(b"\r\n", timeout=WAIT)).split(b"\r\n")[0] + b"\r\n"
            assert first_line == answer  # (an INFO may follow a login)
            await client.close()
    finally:
        await nc.close()


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_reload_takes_a_new_sentinel(kind: str, tmp_path: Path) -> None:
    operator = Operator("O")
    system, app, other = operator.account("SYS"), operator.account("APP"), operator.account("OTHER")
    config = operator.server_config(system_account=system, accounts=[system, app, other])
    first, second = app.user("first", bearer=True).jwt, other.user("second", bearer=True).jwt
    server = start_file(kind, config + f'default_sentinel: "{first}"\n', tmp_path)
    try:
        log = await reload(server, config + f'default_sentinel: "{second}"\n')
        assert f"[INF] Reloaded: default_sentinel = {second}" in log
        creds = other.user("reader").write_creds(tmp_path / "reader.creds")
        reader = await nats.connect(f"nats://127.0.0.1:{server.port}", user_credentials=creds, allow_reconnect=False)
        anonymous = await nats.connect(f"nats://127.0.0.1:{server.port}", allow_reconnect=False)
        try:
            sub = await reader.subscribe("greetings")
            await reader.flush()
            await anonymous.publish("greetings", b"from the new sentinel")
            await anonymous.flush()
            assert (await sub.next_msg(timeout=WAIT)).data == b"from the new sentinel"
        finally:
            await anonymous.close()
            await reader.close()
    finally:
        server.stop()
