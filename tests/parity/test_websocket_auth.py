"""Websocket clients logging in, fakejs against nats-server.

The ``websocket {}`` block's own ``authorization {}`` and ``no_auth_user``
replace the server's for websocket clients (users and nkeys stay the
server's); ``user_cookie`` / ``pass_cookie`` / ``token_cookie`` take missing
credentials from the upgrade request's cookies; a user's
``allowed_connection_types`` tells WEBSOCKET from STANDARD clients; the
block's ``ping_interval`` is the websocket clients' own.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import nats
import pytest
from nats.errors import Error as NatsError

from tests.harness.configured import configured_servers
from tests.harness.websocket import UPGRADE, Raw, frame, ws_port

PLAIN = "websocket { port: -1, no_tls: true%s }\n"
VIOLATION = b"-ERR 'Authorization Violation'\r\n"


async def greeted(port: int, headers: str = "") -> tuple[Raw, dict[str, object]]:
    """An upgraded raw client (with extra request headers) and its INFO."""
    raw = await Raw.open(port)
    raw.send(UPGRADE + headers + "\r\n")
    assert (await raw.http_reply()).startswith(b"HTTP/1.1 101 ")
    b0, payload = await raw.frame()
    assert b0 == 0x82 and payload.startswith(b"INFO ")
    return raw, json.loads(payload[5:])


async def log_in(raw: Raw, **credentials: str) -> bytes:
    """CONNECT (with ``credentials``) and PING: the server's first answer (``PONG`` or an ``-ERR``)."""
    connect = {"verbose": False, **credentials}
    raw.send(frame(2, f"CONNECT {json.dumps(connect)}\r\nPING\r\n".encode()))
    _, payload = await raw.frame()
    return payload


async def login_answers(port: int, attempts: list[dict[str, str]], headers: str = "") -> list[bytes]:
    answers = []
    for credentials in attempts:
        raw, _ = await greeted(port, headers)
        answers.append(await log_in(raw, **credentials))
        raw.close()
    return answers


async def tcp_login(url: str, **credentials: str) -> bool:
    try:
        nc = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=5, **credentials)
    except (NatsError, OSError):
        return False
    await nc.close()
    return True


async def test_block_authorization_overrides_the_server(target_kind: str, tmp_path: Path) -> None:
    """Websocket clients use the block's user and password; TCP clients keep the server's."""
    config = "authorization { user: s, password: s }\n" + PLAIN % ", authorization { user: w, password: w }"
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(config)
        port = ws_port(target)
        raw, info = await greeted(port)
        assert info["auth_required"] is True
        raw.close()
        answers = await login_answers(port, [{"user": "w", "pass": "w"}, {"user": "s", "pass": "s"}])
        assert answers == [b"PONG\r\n", VIOLATION]
        user_url = target.url.replace("nats://", "nats://s:s@")
        assert await tcp_login(user_url)


async def test_block_token_without_server_auth(target_kind: str, tmp_path: Path) -> None:
    """Only websocket clients need the token; their INFO says so."""
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(PLAIN % ", authorization { token: t }")
        port = ws_port(target)
        raw, info = await greeted(port)
        assert info["auth_required"] is True
        raw.close()
        assert await login_answers(port, [{"auth_token": "t"}, {}]) == [b"PONG\r\n", VIOLATION]
        assert await tcp_login(target.url)


async def test_block_auth_timeout(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(PLAIN % ", authorization { token: t, timeout: 1 }")
        raw, _ = await greeted(ws_port(target))
        await target.elapse(1.5)
        assert await raw.frame() == (0x82, b"-ERR 'Authentication Timeout'\r\n")
        assert await raw.frame() == (0x88, struct.pack(">H", 1008) + b"Authentication Timeout")
        raw.close()


USERS = (
    "authorization { users: [\n"
    "  {user: a, password: a}\n"
    '  {user: b, password: b, permissions: { publish: { deny: "secret" } }}\n'
    "] }\n"
)


async def test_block_no_auth_user(target_kind: str, tmp_path: Path) -> None:
    """A websocket client without credentials becomes the block's no_auth_user (with its permissions)."""
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(USERS + PLAIN % ", no_auth_user: b")
        raw, info = await greeted(ws_port(target))
        assert info["auth_required"] is True
        assert await log_in(raw) == b"PONG\r\n"
        raw.send(frame(2, b"PUB secret 0\r\n\r\n"))
        assert await raw.frame() == (0x82, b"-ERR 'Permissions Violation for Publish to \"secret\"'\r\n")
        raw.close()
        assert not await tcp_login(target.url)  # plain clients have no no_auth_user


@pytest.mark.parametrize(
    "cookies,block",
    [
        ("user=a; pass=a", ', user_cookie: "user", pass_cookie: "pass"'),
        ("tok=t", ', token_cookie: "tok", authorization { token: t }'),
    ],
)
async def test_credentials_from_cookies(cookies: str, block: str, target_kind: str, tmp_path: Path) -> None:
    """The upgrade request's cookies stand in for CONNECT's missing credentials (CONNECT's own win)."""
    config = (USERS if "user" in block else "") + PLAIN % block
    async with configured_servers(target_kind, tmp_path) as start:
        port = ws_port(await start(config))
        with_cookies = await login_answers(port, [{}], f"Cookie: {cookies}\r\n")
        without = await login_answers(port, [{}])
        wrong = {"user": "a", "pass": "x"} if "user" in block else {"auth_token": "x"}
        overridden = await login_answers(port, [wrong], f"Cookie: {cookies}\r\n")
        assert (with_cookies, without, overridden) == ([b"PONG\r\n"], [VIOLATION], [VIOLATION])


async def test_allowed_connection_types(target_kind: str, tmp_path: Path) -> None:
    config = (
        "authorization { users: [\n"
        '  {user: w, password: x, allowed_connection_types: ["WEBSOCKET"]}\n'
        '  {user: t, password: x, allowed_connection_types: ["STANDARD"]}\n'
        "] }\n" + PLAIN % ""
    )
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(config)
        answers = await login_answers(ws_port(target), [{"user": "w", "pass": "x"}, {"user": "t", "pass": "x"}])
        assert answers == [b"PONG\r\n", VIOLATION]
        assert await tcp_login(target.url.replace("nats://", "nats://t:x@"))
        assert not await tcp_login(target.url.replace("nats://", "nats://w:x@"))


async def test_block_ping_interval(target_kind: str, tmp_path: Path) -> None:
    """Websocket clients are pinged on the block's interval, not the server's (2 minutes)."""
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(PLAIN % ', ping_interval: "1s"')
        raw, _ = await greeted(ws_port(target))
        assert await log_in(raw) == b"PONG\r\n"
        await target.elapse(1.5)
        assert await raw.frame() == (0x82, b"PING\r\n")
        raw.close()


async def test_server_no_auth_user_for_websocket_clients(target_kind: str, tmp_path: Path) -> None:
    """Without a block of its own, a websocket client may be the server's no_auth_user; its INFO still says auth_required."""
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(USERS + "no_auth_user: b\n" + PLAIN % "")
        raw, info = await greeted(ws_port(target))
        assert info.get("auth_required") is True
        assert await log_in(raw) == b"PONG\r\n"
        raw.close()
