"""max_subscriptions, fakejs against nats-server: of the server, of an account, and which one wins.

A SUB beyond a client's limit is answered ``-ERR 'maximum subscriptions
exceeded'`` (no ``+OK``) and the client stays; the error line is logged
once every 2 seconds per account.  A client's limit is its account's
``limits { max_subscriptions }`` lowered to the server's when that is lower;
a client whose limit is 0 is told at login and closed.  ``/varz`` shows the
server's limit when one is set.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.configured import configured_servers
from tests.harness.error_lines import ErrorLines, error_lines_of
from tests.harness.raw import RawClient
from tests.harness.targets import Target

WAIT = 10.0
HTTP = 'http: "127.0.0.1:-1"\n'
TOO_MANY = b"-ERR 'maximum subscriptions exceeded'\r\n"
ACCOUNTS = """
max_subscriptions: 3
accounts {
  ZERO: { users: [ { user: zero, password: p } ], limits: { max_subs: 0 } }
  LOW: { users: [ { user: low, password: p } ], limits: { max_subscriptions: 1 } }
  HIGH: { users: [ { user: high, password: p } ], limits: { max_subs: 5 } }
  NONE: { users: [ { user: none, password: p } ] }
}
"""


@pytest.fixture
def fake_errors() -> Iterator[ErrorLines]:
    with error_lines_of("cid") as lines:
        yield lines


def error_lines(target: Target, fake_errors: ErrorLines) -> list[str]:
    return fake_errors.of(target)


async def monitored(target: Target, path: str) -> dict:  # type: ignore[type-arg]
    url = f"http://127.0.0.1:{target.http_port}{path}"
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=WAIT).read())
    return json.loads(body)  # type: ignore[no-any-return]


async def conversation(target: Target, data: bytes, until: bytes) -> tuple[RawClient, bytes]:
    """Send ``data`` on a new connection; what came after INFO once ``until`` arrived."""
    client = await RawClient.connect(target.host, target.port)
    await client.read_until(b"\r\n")
    await client.send(data)
    received = await client.read_until(until)
    return client, received[received.index(b"\r\n") + 2 :]


async def test_a_sub_beyond_the_limit_is_refused_and_the_client_stays(
    target_kind: str, tmp_path: Path, fake_errors
) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start("max_subscriptions: 2\n")
        script = b"CONNECT {}\r\nSUB a 1\r\nSUB b 2\r\nSUB c 3\r\nSUB b 2\r\nUNSUB 1\r\nSUB d 4\r\nPING\r\n"
        client, answer = await conversation(target, script, b"PONG\r\n")
        assert answer == b"+OK\r\n+OK\r\n+OK\r\n" + TOO_MANY * 2 + b"+OK\r\n+OK\r\nPONG\r\n"
        await client.send(b"PUB d 2\r\nhi\r\nPING\r\n")
        assert (await client.read_until(b"hi\r\nPONG\r\n")).endswith(b"PONG\r\n+OK\r\nMSG d 4 2\r\nhi\r\nPONG\r\n")
        assert not client.closed
        # two refusals, one error line: it is logged once every 2 seconds per account
        assert error_lines(target, fake_errors) == ["maximum subscriptions exceeded"]
        await client.close()


@pytest.mark.parametrize("user,allowed", [("low", 1), ("high", 3), ("none", 3)])
async def test_the_lower_of_the_account_and_server_limits_wins(
    user: str, allowed: int, target_kind: str, tmp_path: Path
) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(ACCOUNTS)
        subs = b"".join(f"SUB s{n} {n}\r\n".encode() for n in range(1, 6))
        connect = f'CONNECT {{"verbose":true,"user":"{user}","pass":"p"}}\r\n'.encode()
        client, answer = await conversation(target, connect + subs + b"PING\r\n", b"PONG\r\n")
        assert answer == b"+OK\r\n" * (1 + allowed) + TOO_MANY * (5 - allowed) + b"PONG\r\n"
        await client.close()


async def test_a_client_whose_limit_is_zero_is_told_at_login_and_closed(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(HTTP + ACCOUNTS)
        connect = b'CONNECT {"verbose":false,"user":"zero","pass":"p"}\r\nSUB a 1\r\nPING\r\n'
        client, _ = await conversation(target, connect, b"PONG\r\n")
        assert await client.wait_closed(WAIT)
        # the login's -ERR comes from its own goroutine in nats-server: before or after the SUB's
        answer = bytes(client.received[client.received.index(b"\r\n") + 2 :])
        assert answer.replace(TOO_MANY, b"") == b"PONG\r\n" and answer.count(TOO_MANY) == 2

        async def reasons() -> list[str]:
            return [c["reason"] for c in (await monitored(target, "/connz?state=closed"))["connections"]]

        assert await target.elapse_until(reasons, WAIT) == ["Maximum Subscriptions Exceeded"]


async def test_varz_shows_the_server_limit_when_set(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        limited = await start(HTTP + "max_subs: 7\n")
        unlimited = await start(HTTP)
        assert (await monitored(limited, "/varz"))["max_subscriptions"] == 7
        assert "max_subscriptions" not in await monitored(unlimited, "/varz")
