"""Operator (JWT) mode with a full or cache account resolver: account JWTs pushed, looked up, listed, deleted.

Each test starts a server of its kind with :meth:`Operator.server_config`
(``resolver="full"`` or ``"cache"``, the JWT directory under the test's
temporary directory, the system account preloaded) and talks to it as a
user of the system account: ``$SYS.REQ.CLAIMS.UPDATE`` and its kin answer
with nats-server's JSON, and a pushed account's users log in, lose their
connection when a new JWT lowers a limit or revokes them.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import nats
import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from fakejs.core.jwt.claims import decode
from fakejs.monitoring.claims_pack import store_hash
from fakejs.testkit.jwt import Account, Operator, User, push_account
from tests.harness import reload as reloads
from tests.harness.configured import configured_servers
from tests.harness.operator import login_connect
from tests.harness.raw import RawClient
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Target
from tests.harness.warning_lines import Lines, lines_fixture


def still_operator() -> Operator:
    """An operator whose JWTs (its accounts' too) carry one issue time: the kit mints a JWT at each read."""
    moment = time.time()
    return Operator("O", now=lambda: moment)


class ReloadedTarget(Target):
    """Where a server started from a file for a reload listens."""

    kind = "file"


StartResolver = Callable[..., Awaitable[Target]]
lines = lines_fixture()
AUTH_VIOLATION = b"-ERR 'Authorization Violation'\r\n"


@pytest.fixture
async def start(target_kind: str, tmp_path: Path) -> AsyncIterator[StartResolver]:
    """``await start(operator, system, kind="full", allow_delete=False)``: a server whose resolver keeps JWTs in a directory."""
    async with configured_servers(target_kind, tmp_path) as start_config:

        async def start_resolver(operator: Operator, system: Account, kind: str = "full", **options: Any) -> Target:
            directory = tmp_path / "jwt"
            config = operator.server_config(
                system_account=system, accounts=[system], resolver=kind, resolver_dir=directory, **options
            )
            return await start_config(config)

        yield start_resolver


async def connect(target: Target, user: User) -> Client:
    return await nats.connect(
        f"nats://{target.host}:{target.port}",
        user_jwt_cb=user.jwt_callback(),
        signature_cb=user.signature_callback(),
        allow_reconnect=False,
    )


async def request(connection: Client, subject: str, payload: bytes = b"") -> Any:
    """The reply's JSON, without its ``server`` block."""
    answer = json.loads((await connection.request(subject, payload, timeout=5)).data)
    answer.pop("server")
    return answer


async def raw_login(target: Target, user: User) -> RawClient:
    """A raw client sending ``user``'s login and a PING (the answer left to read)."""
    client = await RawClient.connect(target.host, target.port)
    await client.send(await login_connect(client, user) + b"PING\r\n")
    return client


async def logged_in(target: Target, user: User) -> RawClient:
    """A raw client logged in as ``user``, its first PONG read and cleared."""
    client = await raw_login(target, user)
    await client.read_until(b"PONG\r\n")
    client.received.clear()
    return client


async def answer_to(client: RawClient, script: bytes = b"") -> bytes:
    """What the server answers ``script`` and a PING (cleared after)."""
    await client.send(script + b"PING\r\n")
    await client.read_until(b"PONG\r\n")
    received = bytes(client.received)
    client.received.clear()
    return received


async def test_a_pushed_account_is_stored_looked_up_listed_and_logs_in(start: StartResolver, tmp_path: Path) -> None:
    operator = still_operator()
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        refused = await raw_login(target, app.user("early"))
        await refused.read_until(AUTH_VIOLATION)
        await refused.close()
        reply = await push_account(admin, app)
        assert reply["data"] == {"account": app.public_key, "code": 200, "message": "jwt updated"}
        assert (tmp_path / "jwt" / f"{app.public_key}.jwt").read_text() == app.jwt
        lookup = await admin.request(f"$SYS.REQ.ACCOUNT.{app.public_key}.CLAIMS.LOOKUP", b"", timeout=5)
        assert lookup.data == app.jwt.encode()
        missing = operator.account("NOT-PUSHED")
        lookup = await admin.request(f"$SYS.REQ.ACCOUNT.{missing.public_key}.CLAIMS.LOOKUP", b"", timeout=5)
        assert lookup.data == b""
        assert await request(admin, "$SYS.REQ.CLAIMS.LIST") == {"data": sorted([system.public_key, app.public_key])}
        client = await raw_login(target, app.user("alice"))
        await client.read_until(b"PONG\r\n")
        await client.close()
    finally:
        await admin.close()


async def test_pushed_accounts_export_and_import(start: StartResolver, lines: Lines) -> None:
    """An importer made after the start gets its exporter's stream, the exporter made with it (no fetch failed)."""
    operator = Operator("O")
    system = operator.account("SYS")
    shop = operator.account("SHOP", exports=[{"type": "stream", "subject": "orders.>"}])
    audit = operator.account("AUDIT", imports=[{"type": "stream", "account": shop.public_key, "subject": "orders.>"}])
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        await push_account(admin, shop)
        await push_account(admin, audit)
        reader = await connect(target, audit.user("reader"))
        sub = await reader.subscribe("orders.>")
        await reader.flush()
        writer = await connect(target, shop.user("writer"))
        await writer.publish("orders.new", b"for the auditors")
        assert (await sub.next_msg(timeout=5)).data == b"for the auditors"
        await reader.close()
        await writer.close()
        assert not [line for line in lines.of(target) if "account missing" in line or "Can't locate" in line]
    finally:
        await admin.close()


async def test_a_pack_request_gets_every_jwt_then_an_empty_message(start: StartResolver) -> None:
    operator = still_operator()
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        await push_account(admin, app)
        inbox = admin.new_inbox()
        sub = await admin.subscribe(inbox)
        await admin.publish("$SYS.REQ.CLAIMS.PACK", b"", reply=inbox)
        messages = [await sub.next_msg(timeout=5) for _ in range(3)]
        expected = sorted(f"{account.public_key}|{account.jwt}".encode() for account in (system, app))
        assert sorted(message.data for message in messages[:2]) == expected
        assert messages[2].data == b""
        ours = store_hash([system.jwt, app.jwt])
        await admin.publish("$SYS.REQ.CLAIMS.PACK", ours, reply=inbox)
        assert (await sub.next_msg(timeout=5)).data == b""
    finally:
        await admin.close()


async def test_updates_that_are_refused(start: StartResolver) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        named = f"$SYS.REQ.ACCOUNT.{system.public_key}.CLAIMS.UPDATE"
        assert await request(admin, named, app.jwt.encode()) == {
            "error": {
                "account": system.public_key,
                "code": 500,
                "description": "jwt update resulted in error - subject does not match jwt content",
            }
        }
        for subject in (named, "$SYS.REQ.CLAIMS.UPDATE"):
            assert await request(admin, subject, b"garbage") == {
                "error": {
                    "account": "n/a",
                    "code": 500,
                    "description": "jwt update resulted in error - expected 3 chunks",
                }
            }
    finally:
        await admin.close()


async def test_a_strict_operator_refuses_accounts_it_signed_itself(start: StartResolver) -> None:
    operator = Operator("O", strict_signing_key_usage=True)
    signer = operator.signing_key()
    system = operator.account("SYS", signer=signer)
    own, signed = operator.account("OWN"), operator.account("SIGNED", signer=signer)
    user_signer = system.signing_key()  # a strict operator's accounts sign their users with signing keys too
    target = await start(operator, system)
    admin = await connect(target, system.user("admin", signer=user_signer))
    try:
        assert await request(admin, "$SYS.REQ.CLAIMS.UPDATE", own.jwt.encode()) == {
            "error": {
                "account": own.public_key,
                "code": 500,
                "description": "jwt update resulted in error - operator requires issuer to be a signing key",
            }
        }
        assert (await push_account(admin, signed))["data"]["message"] == "jwt updated"
    finally:
        await admin.close()


async def test_a_new_jwt_lowers_the_connection_limit_and_revokes_a_user(start: StartResolver) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    users = [app.user(name) for name in ("u1", "u2", "u3")]
    clients: list[RawClient] = []
    try:
        await push_account(admin, app)
        for user in users:
            clients.append(await logged_in(target, user))
        app.limits["conn"] = 2
        assert (await push_account(admin, app))["data"]["message"] == "jwt updated"
        await clients[2].read_until(b"-ERR 'maximum account active connections exceeded'\r\n")
        assert await clients[2].wait_closed()
        assert await answer_to(clients[0]) == b"PONG\r\n"
        app.revoke(users[0], at=operator.now() + 5)
        assert (await push_account(admin, app))["data"]["message"] == "jwt updated"
        await clients[0].read_until(b"-ERR 'User Authentication Revoked'\r\n")
        assert await clients[0].wait_closed()
        assert await answer_to(clients[1]) == b"PONG\r\n"
    finally:
        for client in clients:
            await client.close()
        await admin.close()


async def test_a_new_jwt_lowers_the_subscription_limit(start: StartResolver) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        await push_account(admin, app)
        client = await logged_in(target, app.user("subscriber"))
        app.limits["subs"] = 3
        await push_account(admin, app)
        assert await answer_to(client, b"SUB a 1\r\nSUB b 2\r\nSUB c 3\r\n") == b"PONG\r\n"
        assert await answer_to(client, b"SUB d 4\r\n") == b"-ERR 'maximum subscriptions exceeded'\r\nPONG\r\n"
        await client.close()
    finally:
        await admin.close()


@pytest.mark.parametrize("allow_delete", [False, True])
async def test_delete(start: StartResolver, tmp_path: Path, allow_delete: bool) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, allow_delete=allow_delete)
    admin = await connect(target, system.user("admin"))
    try:
        await push_account(admin, app)
        client = await logged_in(target, app.user("alice"))
        answer = await request(admin, "$SYS.REQ.CLAIMS.DELETE", operator.delete_request(app).encode())
        who = f"delete accounts request by {operator.public_key} failed"
        if not allow_delete:
            assert answer == {"error": {"code": 500, "description": f"{who} - delete must be enabled in server config"}}
            assert await answer_to(client) == b"PONG\r\n"
        else:
            assert answer == {"data": {"code": 200, "message": "deleted 1 accounts"}}
            await client.read_until(b"-ERR 'Account Authentication Expired'\r\n")
            assert await client.wait_closed()
            assert (tmp_path / "jwt" / f"{app.public_key}.jwt.deleted").exists()
            assert await request(admin, "$SYS.REQ.CLAIMS.DELETE", operator.delete_request(system).encode()) == {
                "error": {"code": 500, "description": f"{who} - not allowed to delete system account"}
            }
            again = await request(admin, "$SYS.REQ.CLAIMS.DELETE", operator.delete_request(app).encode())
            assert again == {"data": {"code": 200, "message": "deleted 1 accounts"}}
        await client.close()
    finally:
        await admin.close()


async def test_a_new_jwt_below_the_subscriptions_a_client_has(start: StartResolver) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        await push_account(admin, app)
        client = await logged_in(target, app.user("subscriber"))
        assert await answer_to(client, b"SUB a 1\r\nSUB b 2\r\n") == b"PONG\r\n"
        app.limits["subs"] = 1
        await push_account(admin, app)
        await client.read_until(b"-ERR 'maximum subscriptions exceeded'\r\n")
        assert await client.wait_closed()
    finally:
        await admin.close()


async def test_a_directory_written_before_the_start(target_kind: str, tmp_path: Path) -> None:
    """JWT files as nats-server writes them (``<key>.jwt``, the JWT alone) are read when a user logs in."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    directory = tmp_path / "jwt"
    directory.mkdir()
    (directory / f"{app.public_key}.jwt").write_text(app.jwt)
    stranger = Operator("X").account("STRANGER")
    (directory / f"{stranger.public_key}.jwt").write_text(stranger.jwt)
    async with configured_servers(target_kind, tmp_path) as start_config:
        config = operator.server_config(
            system_account=system, accounts=[system], resolver="full", resolver_dir=directory
        )
        target = await start_config(config)
        client = await logged_in(target, app.user("alice"))
        await client.close()
        refused = await raw_login(target, stranger.user("mallory"))
        await refused.read_until(AUTH_VIOLATION)
        await refused.close()
    preloaded = decode((directory / f"{system.public_key}.jwt").read_text())  # (a JWT is minted at each read)
    assert (preloaded.subject, preloaded.issuer) == (system.public_key, operator.public_key)


async def test_a_jwt_no_trusted_operator_issued(start: StartResolver) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        await push_account(admin, app)
        client = await logged_in(target, app.user("alice"))
        impostor = Operator("X")
        forged = impostor.account("APP", seed=app.seed, limits={"conn": 0})
        reply = await push_account(admin, forged)
        assert reply["data"] == {"account": app.public_key, "code": 200, "message": "jwt updated"}
        assert await answer_to(client) == b"PONG\r\n"
        await client.close()
        not_self_signed = forged.jwt  # an account's JWT is no operator's delete request
        answer = await request(admin, "$SYS.REQ.CLAIMS.DELETE", not_self_signed.encode())
        assert answer == {
            "error": {
                "code": 500,
                "description": f"delete accounts request by {app.public_key} failed - delete must be enabled in server config",
            }
        }
    finally:
        await admin.close()


async def test_a_pushed_account_that_does_not_validate(start: StartResolver, tmp_path: Path) -> None:
    """An account JWT nats-io/jwt finds invalid (a mapping over 100%) is refused with its issues, and not stored."""
    operator = Operator("O")
    system = operator.account("SYS")
    app = operator.account("APP", mappings={"a": [{"subject": "b", "weight": 101}]})
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    issues = (
        'validation errors: [Mapping "a" has a weight 101 that exceeds 100 '
        'Mapping "a" exceeds 100% among all of it\'s weighted to mappings]'
    )
    try:
        for subject in ("$SYS.REQ.CLAIMS.UPDATE", f"$SYS.REQ.ACCOUNT.{app.public_key}.CLAIMS.UPDATE"):
            reply = await request(admin, subject, app.jwt.encode())
            assert reply == {
                "error": {"account": app.public_key, "code": 500, "description": f"jwt validation failed - {issues}"}
            }
        assert not (tmp_path / "jwt" / f"{app.public_key}.jwt").exists()
        client = await raw_login(target, app.user("alice"))
        await client.read_until(AUTH_VIOLATION)
        await client.close()
    finally:
        await admin.close()


async def test_a_memory_resolver_takes_updates_for_the_accounts_it_has(target_kind: str, tmp_path: Path) -> None:
    operator = Operator("O")
    system, app, other = operator.account("SYS"), operator.account("APP"), operator.account("OTHER")
    async with configured_servers(target_kind, tmp_path) as start_config:
        target = await start_config(operator.server_config(system_account=system, accounts=[system, app]))
        admin = await connect(target, system.user("admin"))
        try:
            clients = [await logged_in(target, app.user(name)) for name in ("u1", "u2")]
            app.limits["conn"] = 1
            subject = f"$SYS.REQ.ACCOUNT.{app.public_key}.CLAIMS.UPDATE"
            reply = await request(admin, subject, app.jwt.encode())
            assert reply == {"data": {"account": app.public_key, "code": 200, "message": "jwt updated"}}
            await clients[1].read_until(b"-ERR 'maximum account active connections exceeded'\r\n")
            assert await clients[1].wait_closed()
            subject = f"$SYS.REQ.ACCOUNT.{other.public_key}.CLAIMS.UPDATE"
            reply = await request(admin, subject, other.jwt.encode())
            assert reply == {"data": {"account": other.public_key, "code": 200, "message": "jwt update skipped"}}
            forged = Operator("X").account("APP", seed=app.seed)
            subject = f"$SYS.REQ.ACCOUNT.{app.public_key}.CLAIMS.UPDATE"
            reply = await request(admin, subject, forged.jwt.encode())
            assert reply == {
                "error": {
                    "account": app.public_key,
                    "code": 500,
                    "description": "jwt update resulted in error - account validation failed",
                }
            }
            reply = await request(admin, subject, b"")
            assert reply == {
                "error": {
                    "account": app.public_key,
                    "code": 500,
                    "description": "jwt update error - request body is empty",
                }
            }
            for client in clients:
                await client.close()
        finally:
            await admin.close()


async def test_a_cache_resolver_updates_the_accounts_it_has(target_kind: str, tmp_path: Path) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    async with configured_servers(target_kind, tmp_path) as start_config:
        config = operator.server_config(
            system_account=system, accounts=[system, app], resolver="cache", resolver_dir=tmp_path / "jwt"
        )
        target = await start_config(config)
        admin = await connect(target, system.user("admin"))
        try:
            client = await logged_in(target, app.user("alice"))
            app.revoke(client_user := app.user("bob"))
            bob = await logged_in(target, client_user)
            reply = await push_account(admin, app)
            assert reply["data"] == {"account": app.public_key, "code": 200, "message": "jwt updated cache"}
            await bob.read_until(b"-ERR 'User Authentication Revoked'\r\n")
            assert await bob.wait_closed()
            assert await answer_to(client) == b"PONG\r\n"
            await client.close()
        finally:
            await admin.close()


@asynccontextmanager
async def pushed_jetstream_account(start: StartResolver) -> AsyncIterator[tuple[Client, Account, JetStreamContext]]:
    """An account with JetStream pushed to a started server: the system user's connection (to push it again),
    the account (to change its limits) and its user's JetStream context."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", jetstream=True)
    target = await start(operator, system)
    admin = await connect(target, system.user("admin"))
    try:
        await push_account(admin, app)
        nc = await connect(target, app.user("alice"))
        try:
            yield admin, app, nc.jetstream()
        finally:
            await nc.close()
    finally:
        await admin.close()


async def test_a_pushed_accounts_jetstream_and_its_limits(start: StartResolver) -> None:
    async with pushed_jetstream_account(start) as (admin, app, js):
        await js.add_stream(name="ONE", subjects=["one"], storage="memory")
        app.limits["streams"] = 1
        await push_account(admin, app)
        with pytest.raises(nats.js.errors.BadRequestError) as refused:
            await js.add_stream(name="TWO", subjects=["two"], storage="memory")
        assert (refused.value.err_code, refused.value.description) == (10027, "maximum number of streams reached")
        assert (await js.account_info()).limits.max_streams == 1


async def test_a_pushed_memory_limit_stops_publishes_to_a_stream_made_before(start: StartResolver) -> None:
    """Publishes met no account limit when the stream was made; the pushed JWT's limit is met by the next one."""
    async with pushed_jetstream_account(start) as (admin, app, js):
        await js.add_stream(name="MEM", subjects=["mem"], storage="memory")
        assert (await js.publish("mem", b"x" * 200)).seq == 1
        app.limits["mem_storage"] = 100
        await push_account(admin, app)
        with pytest.raises(nats.js.errors.APIError) as refused:
            await js.publish("mem", b"x" * 200)
        assert (refused.value.err_code, refused.value.description) == (10002, "resource limits exceeded for account")


async def test_a_cache_resolver_alone(start: StartResolver) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, kind="cache")
    admin = await connect(target, system.user("admin"))
    try:
        assert (await push_account(admin, app))["data"] == {
            "account": app.public_key,
            "code": 200,
            "message": "jwt update cache skipped",
        }
        refused = await raw_login(target, app.user("alice"))
        await refused.read_until(AUTH_VIOLATION)
        await refused.close()
        assert await request(admin, "$SYS.REQ.CLAIMS.LIST") == {"data": [system.public_key]}
    finally:
        await admin.close()


@pytest.mark.parametrize("kind", ["real", "fake"])
async def test_a_reload_keeps_the_pushed_accounts_and_their_clients(kind: str, tmp_path: Path) -> None:
    if kind == "real" and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    config = operator.server_config(
        system_account=system, accounts=[system], resolver="full", resolver_dir=tmp_path / "jwt"
    )
    server = reloads.start(kind, config, tmp_path)
    try:
        target = ReloadedTarget()
        target.port = server.port
        admin = await connect(target, system.user("admin"))
        await push_account(admin, app)
        client = await logged_in(target, app.user("alice"))
        await reloads.reload(server, config + "debug: true\n")
        assert await answer_to(client) == b"PONG\r\n"
        later = await logged_in(target, app.user("bob"))
        await later.close()
        await client.close()
        await admin.close()
    finally:
        server.stop()
