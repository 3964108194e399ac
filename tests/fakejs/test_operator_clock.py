"""Operator (JWT) mode on the manual clock: account JWTs and activation tokens end at their ``exp``, on the server clock.

The credentials are minted with the clock's own time, so a test moves the
clock past an ``exp`` an hour ahead instead of waiting for it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats
import pytest

from fakejs import ManualClock, Server, options_from_config
from fakejs.testkit.jwt import Account, Operator, push_account
from tests.harness.operator import login_connect
from tests.harness.raw import RawClient


def minted_on(clock: ManualClock) -> Operator:
    return Operator("O", now=lambda: clock.time_ns() / 1e9)


async def connect(server: Server, account: Account, tmp_path: Path, name: str, **options: object) -> nats.NATS:
    creds = account.user(name).write_creds(tmp_path / f"{name}.creds")
    return await nats.connect(server.url, user_credentials=creds, allow_reconnect=False, **options)  # type: ignore[arg-type]


async def test_the_accounts_clients_are_closed_at_its_exp() -> None:
    clock = ManualClock()
    operator = minted_on(clock)
    system, app = operator.account("SYS"), operator.account("APP", expires=3600)
    options = options_from_config(operator.server_config(system_account=system, accounts=[system, app]))
    async with Server(options, clock=clock) as server:
        client = await RawClient.connect("127.0.0.1", server.port)
        try:
            await client.send(await login_connect(client, app.user("u")) + b"PING\r\n")
            await client.read_until(b"PONG\r\n")
            client.received.clear()
            clock.advance(3599)
            await client.send(b"PING\r\n")
            await client.read_until(b"PONG\r\n")
            client.received.clear()
            clock.advance(2)
            await asyncio.wait_for(client.read_until(b"Expired'\r\n"), 5)
            assert bytes(client.received).replace(b"PING\r\n", b"") == b"-ERR 'Account Authentication Expired'\r\n"
        finally:
            await client.close()


async def test_an_import_ends_at_its_activations_exp(tmp_path: Path) -> None:
    clock = ManualClock()
    operator = minted_on(clock)
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[{"type": "stream", "subject": "news.>", "token_req": True}])
    importer = operator.account("IMP")
    token = exporter.activation(importer, "news.>", expires=3600)
    importer.imports.append({"type": "stream", "account": exporter.public_key, "subject": "news.>", "token": token})
    config = operator.server_config(system_account=system, accounts=[system, exporter, importer])
    async with Server(options_from_config(config), clock=clock) as server:
        reader = await connect(server, importer, tmp_path, "reader")
        writer = await connect(server, exporter, tmp_path, "writer")
        sub = await reader.subscribe("news.>")
        await reader.flush()

        async def first_after_publish() -> bytes:
            await writer.publish("news.today", b"exported")
            await writer.flush()
            await reader.publish("news.today", b"marker")
            return (await sub.next_msg(timeout=2)).data

        assert await first_after_publish() == b"exported"
        assert (await sub.next_msg(timeout=2)).data == b"marker"
        clock.advance(3601)
        assert await first_after_publish() == b"marker"
        await reader.close()
        await writer.close()


async def pong(client: RawClient) -> None:
    await client.send(b"PING\r\n")
    assert (await client.read_until(b"PONG\r\n")).replace(b"PING\r\n", b"") == b"PONG\r\n"  # (the server's PINGs)
    client.received.clear()


@pytest.mark.parametrize(
    ("new_expires", "alive_until", "closed_at"),
    [(7200, 7199, 7201), (60, 59, 61), (None, 7200, None)],
    ids=["later", "earlier", "removed"],
)
async def test_a_pushed_account_jwt_moves_its_clients_expiry(
    tmp_path: Path, new_expires: int | None, alive_until: int, closed_at: int | None
) -> None:
    clock = ManualClock()
    operator = minted_on(clock)
    system, app = operator.account("SYS"), operator.account("APP", expires=3600)
    config = operator.server_config(
        system_account=system, accounts=[system, app], resolver="full", resolver_dir=tmp_path / "jwt"
    )
    async with Server(options_from_config("port: -1\n" + config), clock=clock) as server:
        admin = await connect(server, system, tmp_path, "admin")
        client = await RawClient.connect("127.0.0.1", server.port)
        try:
            await client.send(await login_connect(client, app.user("u")) + b"PING\r\n")
            await client.read_until(b"PONG\r\n")
            client.received.clear()
            app.expires = int(clock.time_ns() / 1e9) + new_expires if new_expires else 0
            assert (await push_account(admin, app))["data"]["code"] == 200
            clock.advance(alive_until)
            await pong(client)
            if closed_at is not None:
                clock.advance(closed_at - alive_until)
                await asyncio.wait_for(client.read_until(b"Expired'\r\n"), 5)
                assert bytes(client.received).replace(b"PING\r\n", b"") == b"-ERR 'Account Authentication Expired'\r\n"
        finally:
            await client.close()
            await admin.close()
