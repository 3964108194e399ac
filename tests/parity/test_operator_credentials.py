"""Operator (JWT) mode with credentials from fakejs.testkit.jwt: what nats-server accepts and refuses.

The server gets :meth:`Operator.server_config` (the operator JWT, the system
account and a MEMORY resolver with the accounts preloaded); clients log in
with a ``.creds`` file, with nats-py's callbacks, or raw with the JWT and
the nonce's signature in CONNECT.  Both targets run the same tests.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nats
import pytest

from fakejs.testkit.jwt import Operator, User
from tests.harness.configured import configured_servers
from tests.harness.operator import StartOperator, login_connect, operator_start_fixture
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually

AUTH_VIOLATION = b"-ERR 'Authorization Violation'\r\n"

start = operator_start_fixture()


@pytest.fixture
def operator() -> Operator:
    return Operator("O")


async def raw_login(target: Target, user: User, script: bytes = b"", sign: bool = True) -> bytes:
    """CONNECT with the user's JWT and the nonce signed (unless not ``sign``), then ``script`` and a PING:
    what the server answered (a client of protocol 0, which gets no INFO after it)."""
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.send(await login_connect(client, user, sign) + script + b"PING\r\n")
        await client.read_until(b"PONG\r\n")
        return bytes(client.received)
    finally:
        await client.close()


async def test_the_info_after_login_names_the_account(start: StartOperator, operator: Operator) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    client = await RawClient.connect(target.host, target.port)
    user = app.user("judy")
    try:
        await client.send(await login_connect(client, user, protocol=1) + b"PING\r\n")
        await client.read_until(b"} \r\n")
        await client.read_until(b"PONG\r\n")
        lines = bytes(client.received).split(b"\r\n")
        infos = [json.loads(line.removeprefix(b"INFO ")) for line in lines if line.startswith(b"INFO ")]
        assert b"PONG" in lines and len(infos) == 1
        assert (infos[0]["connect_info"], infos[0]["remote_account"]) == (True, app.public_key)
    finally:
        await client.close()


async def echo(nc: nats.NATS, subject: str = "orders.new") -> bytes:
    """Subscribe and publish on ``subject`` over one connection: the payload that came back."""
    sub = await nc.subscribe(subject)
    await nc.flush()
    await nc.publish(subject, b"hello")
    return (await sub.next_msg(timeout=WAIT)).data


async def test_creds_file_logs_in(start: StartOperator, operator: Operator, tmp_path: Path) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    creds = app.user("alice").write_creds(tmp_path / "alice.creds")
    nc = await nats.connect(target.url, user_credentials=creds, allow_reconnect=False)
    try:
        assert await echo(nc) == b"hello"
    finally:
        await nc.close()


async def test_jwt_and_signature_callbacks_log_in(start: StartOperator, operator: Operator) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("bob")
    with_callbacks = await nats.connect(
        target.url, user_jwt_cb=user.jwt_callback(), signature_cb=user.signature_callback(), allow_reconnect=False
    )
    with_seed = await nats.connect(
        target.url, user_jwt_cb=user.jwt_callback(), nkeys_seed_str=user.seed, allow_reconnect=False
    )
    try:
        assert await echo(with_callbacks) == b"hello"
        assert await echo(with_seed) == b"hello"
    finally:
        await with_callbacks.close()
        await with_seed.close()


async def test_accounts_are_isolated(start: StartOperator, operator: Operator, tmp_path: Path) -> None:
    system, app, other = operator.account("SYS"), operator.account("APP"), operator.account("OTHER")
    target = await start(operator, system, app, other)
    app_nc = await nats.connect(target.url, user_credentials=app.user("a").write_creds(tmp_path / "a.creds"))
    other_nc = await nats.connect(target.url, user_credentials=other.user("b").write_creds(tmp_path / "b.creds"))
    try:
        sub = await app_nc.subscribe("orders.new")
        await app_nc.flush()
        await other_nc.publish("orders.new", b"from OTHER")
        await other_nc.flush()  # the server has routed it (to nobody in APP) before this PONG
        await app_nc.publish("orders.new", b"from APP")
        assert (await sub.next_msg(timeout=WAIT)).data == b"from APP"
    finally:
        await asyncio.gather(app_nc.close(), other_nc.close())


async def test_publish_allow_only_gets_the_permissions_violation(start: StartOperator, operator: Operator) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("carol", pub_allow=["orders.>"])
    answer = await raw_login(target, user, b"PUB orders.new 2\r\nhi\r\nPUB other 2\r\nhi\r\n")
    assert answer == b"-ERR 'Permissions Violation for Publish to \"other\"'\r\nPONG\r\n"
    errors: list[Exception] = []

    async def record_error(error: Exception) -> None:
        errors.append(error)

    async def recorded_errors() -> list[Exception]:
        return errors

    creds = app.user("dave", pub_allow=["orders.>"], sub_allow=["orders.>"])
    nc = await nats.connect(
        target.url, user_jwt_cb=creds.jwt_callback(), signature_cb=creds.signature_callback(), error_cb=record_error
    )
    try:
        assert await echo(nc) == b"hello"
        await nc.publish("other", b"x")
        await nc.flush()
        await eventually(recorded_errors, what="the permissions violation")
        assert str(errors[0]) == 'nats: permissions violation for publish to "other"'
    finally:
        await nc.close()


REFUSED_USERS = {
    "expired": {"expires": -5},
    "not-yet-valid": {"not_before": 60},
    "websocket-only": {"allowed_connection_types": ["WEBSOCKET"]},
    "other-source": {"src": ["10.0.0.0/8"]},
}


@pytest.mark.parametrize("options", REFUSED_USERS.values(), ids=REFUSED_USERS.keys())
async def test_users_refused_by_their_claims(
    start: StartOperator, operator: Operator, options: dict[str, object]
) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    assert await raw_login(target, app.user("refused", **options)) == AUTH_VIOLATION
    assert await raw_login(target, app.user("standard", allowed_connection_types=["STANDARD"])) == b"PONG\r\n"


async def test_revoked_and_unsigned_users_are_refused(start: StartOperator, operator: Operator) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    revoked = app.user("revoked")
    app.revoke(revoked)
    everyone = operator.account("EVERYONE")
    before = everyone.user("before")
    everyone.revoke("*")
    target = await start(operator, system, app, everyone)
    assert await raw_login(target, revoked) == AUTH_VIOLATION
    assert await raw_login(target, before) == AUTH_VIOLATION
    assert await raw_login(target, app.user("unsigned"), sign=False) == AUTH_VIOLATION
    assert await raw_login(target, app.user("bearer", bearer=True), sign=False) == b"PONG\r\n"
    expired = app.user("expired", expires=-5)
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(
            target.url,
            user_jwt_cb=expired.jwt_callback(),
            signature_cb=expired.signature_callback(),
            allow_reconnect=False,
            max_reconnect_attempts=0,
        )


async def test_account_connection_limit(start: StartOperator, operator: Operator, tmp_path: Path) -> None:
    system, app = operator.account("SYS"), operator.account("APP", limits={"conn": 1})
    target = await start(operator, system, app)
    first = await nats.connect(target.url, user_credentials=app.user("a").write_creds(tmp_path / "a.creds"))
    try:
        answer = await raw_login(target, app.user("b"))
        assert answer == b"-ERR 'maximum account active connections exceeded'\r\n"
    finally:
        await first.close()


async def test_operator_jwt_from_a_file(target_kind: str, tmp_path: Path, operator: Operator) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    config = operator.server_config(system_account=system, accounts=[system, app], operator_file=tmp_path / "op.jwt")
    assert config.startswith(f'operator: "{tmp_path / "op.jwt"}"\n')
    async with configured_servers(target_kind, tmp_path) as start_config:
        target = await start_config(config)
        assert await raw_login(target, app.user("ivan")) == b"PONG\r\n"


async def test_a_user_of_another_operator_is_refused(start: StartOperator, operator: Operator) -> None:
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    stranger = Operator("STRANGER").account("APP").user("eve")
    assert await raw_login(target, stranger) == AUTH_VIOLATION


async def test_signing_keys_issue_accounts_and_users(start: StartOperator, operator: Operator) -> None:
    operator_key = operator.signing_key()
    system = operator.account("SYS")
    app = operator.account("APP", signer=operator_key)
    account_key = app.signing_key()
    target = await start(operator, system, app)
    user = app.user("frank", signer=account_key)
    nc = await nats.connect(
        target.url, user_jwt_cb=user.jwt_callback(), signature_cb=user.signature_callback(), allow_reconnect=False
    )
    try:
        assert await echo(nc) == b"hello"
    finally:
        await nc.close()
    unnamed_key = operator.account("APP2").signing_key()  # a key APP's JWT does not name
    assert await raw_login(target, app.user("mallory", signer=unnamed_key)) == AUTH_VIOLATION


async def test_jetstream_enabled_account_creates_a_stream(start: StartOperator, operator: Operator) -> None:
    system, app, plain = operator.account("SYS"), operator.account("APP", jetstream=True), operator.account("PLAIN")
    target = await start(operator, system, app, plain)
    user, plain_user = app.user("grace"), plain.user("heidi")
    nc = await nats.connect(
        target.url, user_jwt_cb=user.jwt_callback(), signature_cb=user.signature_callback(), allow_reconnect=False
    )
    plain_nc = await nats.connect(
        target.url,
        user_jwt_cb=plain_user.jwt_callback(),
        signature_cb=plain_user.signature_callback(),
        allow_reconnect=False,
    )
    try:
        js = nc.jetstream()
        info = await js.add_stream(name="ORDERS", subjects=["orders.>"])
        assert info.config.name == "ORDERS"
        ack = await js.publish("orders.new", b"one")
        assert (ack.stream, ack.seq) == ("ORDERS", 1)
        reply = await plain_nc.request("$JS.API.INFO", b"", timeout=WAIT)
        assert json.loads(reply.data)["error"] == {
            "code": 503,
            "err_code": 10039,
            "description": "JetStream not enabled for account",
        }
    finally:
        await asyncio.gather(nc.close(), plain_nc.close())
