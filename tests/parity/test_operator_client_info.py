"""What nats-server tells of a JWT user's client: connect events, ``/connz`` and ``$SYS.REQ.USER.INFO``.

A client logged in with a user JWT shows the JWT, the key that issued it
(the account or its signing key), its account's JWT name as ``name_tag``
and the JWT's ``tags`` in ``$SYS.ACCOUNT.<account>.CONNECT`` and
``DISCONNECT`` events, in ``/connz?auth=true``, and in the closed
connections ``/connz`` keeps (with the user's name as ``name_tag`` unless
``auth``); a bearer token's JWT is left out of ``/connz``.  A user name
sent in CONNECT beside the JWT is the client's ``user``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.testkit.jwt import Account, Operator, User
from tests.harness.configured import configured_servers
from tests.harness.monitoring import monitor
from tests.harness.operator import StartOperator, login_connect
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target
from tests.harness.wait import eventually


@pytest.fixture
async def start(target_kind: str, tmp_path: Path) -> AsyncIterator[StartOperator]:
    async with configured_servers(target_kind, tmp_path, Settings(monitor=True)) as start_config:

        async def start_operator(operator: Operator, system: Account, *accounts: Account) -> Target:
            return await start_config(operator.server_config(system_account=system, accounts=[system, *accounts]))

        yield start_operator


async def logged_in(target: Target, login: User, **options: object) -> RawClient:
    """A raw client logged in as ``login`` with the CONNECT ``options`` (a PONG seen)."""
    client = await RawClient.connect(target.host, target.port)
    connect = json.loads((await login_connect(client, login)).removeprefix(b"CONNECT "))
    await client.send(b"CONNECT " + json.dumps({**connect, **options}).encode() + b"\r\nPING\r\n")
    await client.read_until(b"PONG\r\n")
    return client


def jwt_fields(document: dict[str, Any]) -> dict[str, Any]:
    """The fields of a client's document that its JWT login sets, in the order given."""
    wanted = ("user", "authorized_user", "jwt", "issuer_key", "name_tag", "tags")
    return {key: value for key, value in document.items() if key in wanted}


async def test_connect_and_disconnect_events_carry_the_jwt(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    key = app.signing_key()
    target = await start(operator, system, app)
    user = app.user("alice", signer=key, tags=["blue", "green"])
    watcher = system.user("watcher")
    events: list[tuple[str, dict[str, Any]]] = []
    nc = await nats.connect(target.url, user_jwt_cb=watcher.jwt_callback(), signature_cb=watcher.signature_callback())
    try:

        async def heard(msg: Any) -> None:
            events.append((msg.subject.rsplit(".", 1)[1], json.loads(msg.data)["client"]))

        await nc.subscribe(f"$SYS.ACCOUNT.{app.public_key}.*", cb=heard)
        await nc.flush()
        client = await logged_in(target, user, name="probe")
        await client.close()

        async def heard_both() -> int:
            return len(events)

        await eventually(heard_both, lambda count: count == 2, what="the CONNECT and DISCONNECT events")
    finally:
        await nc.close()
    expected = {"jwt": user.jwt, "issuer_key": key.public_key, "name_tag": "APP", "tags": ["blue", "green"]}
    for kind, info in events:
        assert list(info)[-6:] == ["jwt", "issuer_key", "name_tag", "tags", "kind", "client_type"], kind
        assert jwt_fields(info) == {"user": user.public_key, **expected}, kind
    assert [kind for kind, _ in events] == ["CONNECT", "DISCONNECT"]


async def test_connz_shows_the_jwt_with_auth_and_keeps_it_for_closed_clients(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("alice", tags=["blue"])
    client = await logged_in(target, user, name="probe")
    try:
        open_auth = await monitor(target, "/connz?auth=true")
        open_plain = await monitor(target, "/connz")
    finally:
        await client.close()
    shown = {"jwt": user.jwt, "issuer_key": app.public_key}
    (entry,) = open_auth["connections"]  # type: ignore[index]
    assert jwt_fields(entry) == {"authorized_user": user.public_key, **shown, "name_tag": "APP", "tags": ["blue"]}
    (entry,) = open_plain["connections"]  # type: ignore[index]
    assert jwt_fields(entry) == {}

    async def closed(query: str) -> dict[str, Any]:
        connections: list[dict[str, Any]] = (await monitor(target, f"/connz?state=closed{query}"))["connections"]  # type: ignore[assignment]
        return connections[0] if connections else {}

    assert jwt_fields(await eventually(lambda: closed(""), what="the closed connection")) == {
        **shown,
        "name_tag": "alice",
        "tags": ["blue"],
    }
    assert jwt_fields(await closed("&auth=true")) == {
        "authorized_user": user.public_key,
        **shown,
        "name_tag": "APP",
        "tags": ["blue"],
    }


async def test_connz_leaves_out_a_bearer_tokens_jwt(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("bearer", bearer=True)
    client = await logged_in(target, user)
    try:
        (entry,) = (await monitor(target, "/connz?auth=true"))["connections"]  # type: ignore[index]
    finally:
        await client.close()
    assert jwt_fields(entry) == {"authorized_user": user.public_key, "issuer_key": app.public_key, "name_tag": "APP"}


async def test_a_user_name_sent_beside_the_jwt_is_the_clients_user(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("alice")
    client = await logged_in(target, user, user="bob", headers=True, protocol=1)
    try:
        client.received.clear()
        await client.send(b"SUB _INBOX.info 1\r\nPUB $SYS.REQ.USER.INFO _INBOX.info 0\r\n\r\n")
        await client.read_until(b"}}\r\n")
        info = json.loads(bytes(client.received).split(b"\r\n")[1])["data"]
        (entry,) = (await monitor(target, "/connz?auth=true"))["connections"]  # type: ignore[index]
    finally:
        await client.close()
    assert (info["user"], info["account"], info["user_name"]) == ("bob", app.public_key, "alice")
    assert jwt_fields(entry) == {
        "authorized_user": "bob",
        "jwt": user.jwt,
        "issuer_key": app.public_key,
        "name_tag": "APP",
    }


async def test_the_system_accounts_connz_request_shows_the_jwt_with_auth(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user, watcher = app.user("alice", tags=["blue"]), system.user("watcher")
    client = await logged_in(target, user)
    nc = await nats.connect(target.url, user_jwt_cb=watcher.jwt_callback(), signature_cb=watcher.signature_callback())
    try:
        query = json.dumps({"auth": True, "acc": app.public_key}).encode()
        reply = await nc.request("$SYS.REQ.SERVER.PING.CONNZ", query, timeout=5)
        plain = await nc.request("$SYS.REQ.SERVER.PING.CONNZ", json.dumps({"acc": app.public_key}).encode())
    finally:
        await nc.close()
        await client.close()
    (entry,) = json.loads(reply.data)["data"]["connections"]
    shown = {"jwt": user.jwt, "issuer_key": app.public_key, "name_tag": "APP", "tags": ["blue"]}
    assert jwt_fields(entry) == {"authorized_user": user.public_key, **shown}
    (entry,) = json.loads(plain.data)["data"]["connections"]
    assert jwt_fields(entry) == {}
