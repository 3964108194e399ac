"""Configuration reload of ``accounts { }``, on both servers.

Users moved to another account (their clients closed), accounts added and
removed, exports and imports changed: subscriptions already made in the
importing account start (or stop) receiving what the exporter publishes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.harness.reload import TARGETS, login, reload, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)

TWO = """
accounts {
  A: { users: [{user: a, password: a}, {user: m, password: m}] }
  B: { users: [{user: b, password: b}] }
}
"""

# m moves to B; B imports A's "news.>" as a stream; C is new.
MOVED_AND_IMPORTED = """
accounts {
  A: { users: [{user: a, password: a}], exports: [{stream: "news.>"}] }
  B: { users: [{user: b, password: b}, {user: m, password: m}], imports: [{stream: {account: A, subject: "news.>"}}] }
  C: { users: [{user: c, password: c}] }
}
"""

# B is gone (and its import with it).
WITHOUT_B = """
accounts {
  A: { users: [{user: a, password: a}, {user: m, password: m}], exports: [{stream: "news.>"}] }
}
"""


@pytest.mark.parametrize("kind", TARGETS)
async def test_moved_user_is_closed_and_a_new_import_reaches_existing_subscriptions(kind: str, tmp_path: Path) -> None:
    server = start(kind, TWO, tmp_path)
    try:
        a, b, m = await login(server, "a", "a"), await login(server, "b", "b"), await login(server, "m", "m")
        await b.send(b"SUB news.> 1\r\nPING\r\n")
        await b.read_until(b"PONG\r\n")
        b.received.clear()
        log = await reload(server, MOVED_AND_IMPORTED)
        assert re.findall(r"\[INF\] (Reloaded.*)\n", log) == [
            "Reloaded: authorization users",
            "Reloaded: accounts",
            re.findall(r"Reloaded server configuration.*", log)[0],
        ]
        assert await m.wait_closed() and bytes(m.received) == b""
        await a.send(b"PUB news.today 2\r\nhi\r\nPING\r\n")
        await a.read_until(b"PONG\r\n")
        assert await b.read_until(b"hi\r\n") == b"MSG news.today 1 2\r\nhi\r\n"
        moved, added = await login(server, "m", "m"), await login(server, "c", "c")
        await moved.send(b"SUB news.> 1\r\nPING\r\n")
        await moved.read_until(b"PONG\r\n")
        await a.send(b"PUB news.later 1\r\nx\r\nPING\r\n")
        await a.read_until(b"PONG\r\n")
        assert (await moved.read_until(b"x\r\n")).endswith(b"MSG news.later 1 1\r\nx\r\n")
        for client in (a, b, m, moved, added):
            await client.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_removed_account_closes_its_clients_and_its_import_stops(kind: str, tmp_path: Path) -> None:
    server = start(kind, MOVED_AND_IMPORTED, tmp_path)
    try:
        a, b = await login(server, "a", "a"), await login(server, "b", "b")
        await b.send(b"SUB news.> 1\r\nPING\r\n")
        await b.read_until(b"PONG\r\n")
        await a.send(b"SUB news.> 7\r\nPING\r\n")
        await a.read_until(b"PONG\r\n")
        await reload(server, WITHOUT_B)
        assert await b.wait_closed() and bytes(b.received) == b"PONG\r\n"
        a.received.clear()
        await a.send(b"PUB news.x 1\r\nz\r\nPING\r\n")
        assert await a.read_until(b"PONG\r\n") == b"MSG news.x 7 1\r\nz\r\nPONG\r\n"
        await a.close()
        await b.close()
    finally:
        server.stop()


SERVICE = """
accounts {
  A: { users: [{user: a, password: a}], exports: [{service: "help"}] }
  B: { users: [{user: b, password: b}], imports: [{service: {account: A, subject: "help"}}] }
}
"""


@pytest.mark.parametrize("kind", TARGETS)
async def test_removed_service_import_gives_no_responders(kind: str, tmp_path: Path) -> None:
    server = start(kind, SERVICE, tmp_path)
    try:
        a, b = await login(server, "a", "a"), await login(server, "b", "b")
        await a.send(b"SUB help 1\r\nPING\r\n")
        await a.read_until(b"PONG\r\n")
        await b.send(
            b'CONNECT {"headers":true,"no_responders":true,"verbose":false}\r\nSUB r 9\r\nPUB help r 1\r\nq\r\nPING\r\n'
        )
        await b.read_until(b"PONG\r\n")
        assert b"MSG help 1 _R_." in await a.read_until(b"q\r\n")
        log = await reload(server, SERVICE.replace('imports: [{service: {account: A, subject: "help"}}]', ""))
        assert "Reloaded: accounts" in log
        b.received.clear()
        await b.send(b"PUB help r 1\r\nq\r\nPING\r\n")
        assert (await b.read_until(b"PONG\r\n")).startswith(b"HMSG r 9 ")
        assert b"503" in bytes(b.received)
        for client in (a, b):
            await client.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_account_added_without_jetstream_is_told_so(kind: str, tmp_path: Path) -> None:
    store = tmp_path / f"{kind}-js"
    with_jetstream = f"""
jetstream {{ store_dir: "{store}" }}
accounts {{
  A: {{ jetstream: enabled, users: [{{user: a, password: a}}] }}
}}
"""
    server = start(kind, with_jetstream, tmp_path)
    try:
        added = with_jetstream.replace("\n}\n", "\n  B: { users: [{user: b, password: b}] }\n}\n")
        await reload(server, added)
        b = await login(server, "b", "b")
        await b.send(b"SUB r 1\r\nPUB $JS.API.INFO r 0\r\n\r\n")
        reply = await b.read_until(b"}\r\n")
        assert b'"error":{"code":503,"err_code":10039,"description":"JetStream not enabled for account"}' in reply
        await b.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_request_in_flight_gets_its_response_across_a_reload(kind: str, tmp_path: Path) -> None:
    server = start(kind, SERVICE, tmp_path)
    try:
        a, b = await login(server, "a", "a"), await login(server, "b", "b")
        await a.send(b"SUB help 1\r\nPING\r\n")
        await a.read_until(b"PONG\r\n")
        await b.send(b"SUB r 9\r\nPUB help r 1\r\nq\r\nPING\r\n")
        await b.read_until(b"PONG\r\n")
        request = await a.read_until(b"q\r\n")
        reply = re.search(rb"MSG help 1 (_R_\.\S+)", request)
        assert reply is not None
        added = SERVICE.replace("\n}\n", "\n  C: { users: [{user: c, password: c}] }\n}\n")
        await reload(server, added)
        b.received.clear()
        await a.send(b"PUB " + reply.group(1) + b" 6\r\nanswer\r\nPING\r\n")
        await a.read_until(b"PONG\r\n")
        assert (await b.read_until(b"answer\r\n")).endswith(b"MSG r 9 6\r\nanswer\r\n")
        for client in (a, b):
            await client.close()
    finally:
        server.stop()
