"""Servers of this test's kind in operator (JWT) mode, configured from credentials minted by :mod:`fakejs.testkit.jwt`."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from fakejs.testkit.jwt import Account, Operator, User
from tests.harness.configured import configured_servers
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT

StartOperator = Callable[..., Awaitable[Target]]


def operator_start_fixture() -> Any:
    """A test module's ``start`` fixture: ``await start(operator, system_account, *accounts)`` starts a server.

    The server trusts ``operator``, names ``system_account`` as its system
    account and preloads every account given in a ``MEMORY`` resolver.
    """

    @pytest.fixture
    async def start(target_kind: str, tmp_path: Path) -> AsyncIterator[StartOperator]:
        async with configured_servers(target_kind, tmp_path) as start_config:

            async def start_operator(operator: Operator, system: Account, *accounts: Account) -> Target:
                config = operator.server_config(system_account=system, accounts=[system, *accounts])
                return await start_config(config)

            yield start_operator

    return start


async def login_connect(client: RawClient, user: User, sign: bool = True, **options: object) -> bytes:
    """Read the server's INFO (then cleared) and make the CONNECT line that logs ``user`` in.

    It carries ``options`` and the user's JWT, and, unless not ``sign``, the
    INFO's nonce signed with the user's key (base64url, as clients send it).
    """
    await client.read_until(b"\r\n")
    nonce = json.loads(bytes(client.received)[5:].split(b"\r\n")[0])["nonce"]
    client.received.clear()
    login: dict[str, object] = {"verbose": False, **options, "jwt": user.jwt}
    if sign:
        login["sig"] = base64.urlsafe_b64encode(user.sign(nonce.encode())).rstrip(b"=").decode()
    return f"CONNECT {json.dumps(login)}\r\n".encode()


async def logged_in(target: Target, user: User, sign: bool = True) -> RawClient:
    """A raw client logged in as ``user`` (its first PONG read and cleared); unsigned unless ``sign``."""
    client = await RawClient.connect(target.host, target.port)
    await client.send(await login_connect(client, user, sign) + b"PING\r\n")
    await asyncio.wait_for(client.read_until(b"PONG\r\n"), WAIT)
    client.received.clear()
    return client


async def closing_error(client: RawClient) -> bytes:
    """The ``-ERR ... Expired'`` line the server closes ``client`` with (its own PINGs before it left out)."""
    await asyncio.wait_for(client.read_until(b"Expired'\r\n"), WAIT)
    return bytes(client.received).replace(b"PING\r\n", b"")


async def answer(client: RawClient, script: bytes) -> bytes:
    """What the server answers ``script`` and a PING (then cleared)."""
    await client.send(script + b"PING\r\n")
    await asyncio.wait_for(client.read_until(b"PONG\r\n"), WAIT)
    received = bytes(client.received)
    client.received.clear()
    return received


async def login_reply(target: Target, user: User) -> bytes:
    """The first line the server sends back to ``user``'s login and a PING (the client then closed)."""
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.send(await login_connect(client, user) + b"PING\r\n")
        return await asyncio.wait_for(client.read_until(b"\r\n"), WAIT)
    finally:
        await client.close()
