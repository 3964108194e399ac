"""How a websocket client is closed, fakejs against nats-server: the close frame (or none) and the error line.

nats-server picks the close code from the reason it closes a client for
(1009 for a payload over max_payload, 1008 for a refused login, 1002 for
a bad protocol version, 1001 for a stale connection, 1000 when the client
shut its side).  Input its parser rejects otherwise ends the client as a
``Read Error``: whatever was answered in that read is lost, no close frame
is sent, and the error line reads ``read error: ...``.
"""

from __future__ import annotations

import asyncio
import json
import struct
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.configured import configured_servers
from tests.harness.error_lines import ErrorLines, error_lines_of
from tests.harness.targets import Settings, Target
from tests.harness.wait import eventually
from tests.harness.websocket import PLAIN, UPGRADE, WAIT, Raw, frame, ws_port

HTTP = 'http: "127.0.0.1:-1"\n'
LIMITS = "max_payload: 100\nmax_control_line: 64\n"


@pytest.fixture
def fake_errors() -> Iterator[ErrorLines]:
    with error_lines_of("wid") as lines:
        yield lines


def error_lines(target: Target, fake_errors: ErrorLines) -> list[str]:
    return fake_errors.of(target)


def close_frame(code: int, text: str) -> tuple[int, bytes]:
    return 0x88, struct.pack(">H", code) + text.encode()


async def closed_reasons(target: Target) -> list[str]:
    """The reasons ``/connz?state=closed`` gives, once it lists a connection (nats-server records a
    closed connection a moment after it logs why)."""
    url = f"http://127.0.0.1:{target.http_port}/connz?state=closed"

    async def reasons() -> list[str]:
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=WAIT).read())
        return [c["reason"] for c in json.loads(body)["connections"]]

    return await eventually(reasons, what="a closed connection in /connz", timeout=WAIT)


async def test_payload_over_max_payload_closes_with_1009(target_kind: str, tmp_path: Path, fake_errors) -> None:
    """-ERR, then 1009 "Maximum Message Payload Exceeded"; two error lines, the second the read loop's."""
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(HTTP + LIMITS + PLAIN)
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false}\r\nPUB a 200\r\n' + b"x" * 200 + b"\r\n"))
        assert await raw.frame() == (0x82, b"-ERR 'Maximum Payload Violation'\r\n")
        assert await raw.frame() == close_frame(1009, "Maximum Message Payload Exceeded")
        assert await raw.rest() == b""
        expected = ["maximum payload exceeded: 200 vs 100", "read error: maximum payload exceeded"]
        assert await target.elapse_until(lambda: error_lines(target, fake_errors) == expected, WAIT)
        assert await closed_reasons(target) == ["Maximum Message Payload Exceeded"]


def compressed_frame(payload: bytes) -> bytes:
    """A masked binary frame carrying ``payload`` deflated (permessage-deflate, the sync tail cut off)."""
    deflater = zlib.compressobj(wbits=-15)
    data = (deflater.compress(payload) + deflater.flush(zlib.Z_SYNC_FLUSH))[:-4]
    raw = frame(2, data)
    return bytes([raw[0] | 0x40]) + raw[1:]


async def test_a_message_inflating_beyond_max_payload_is_a_read_error(
    target_kind: str, tmp_path: Path, fake_errors
) -> None:
    """The operations in its first max_payload bytes are done; then no close frame, a Read Error.

    (What the client itself was sent in that read may or may not get out first: not compared.)
    """
    import nats

    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(HTTP + "max_payload: 100\nwebsocket { port: -1, no_tls: true, compression: true }\n")
        received: list[bytes] = []
        tcp = await nats.connect(target.url, allow_reconnect=False)

        async def collect(msg: nats.aio.msg.Msg) -> None:
            received.append(msg.data)

        await tcp.subscribe("a", cb=collect)
        await tcp.flush()
        raw = await Raw.open(ws_port(target))
        raw.send(UPGRADE + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
        assert (await raw.http_reply()).startswith(b"HTTP/1.1 101 ")
        # 21 bytes of CONNECT and SUB, then 12-byte PUBs: six fit in the first 100 bytes
        raw.send(compressed_frame(b"CONNECT {}\r\nSUB b 1\r\n" + b"PUB a 1\r\nx\r\n" * 20))
        rest = await raw.rest()
        assert all(rest[at] != 0x88 for at in _frame_starts(rest))
        assert await target.elapse_until(
            lambda: error_lines(target, fake_errors) == ["read error: maximum payload exceeded"], WAIT
        )
        assert await closed_reasons(target) == ["Read Error"]
        await tcp.flush()
        await target.elapse_until(lambda: len(received) >= 6, WAIT)
        assert received == [b"x"] * 6
        await tcp.close()


def _frame_starts(data: bytes) -> list[int]:
    """Where each server frame of ``data`` starts."""
    starts, at = [], 0
    while at + 2 <= len(data):
        starts.append(at)
        length, at = data[at + 1] & 0x7F, at + 2
        if length == 126:
            length, at = int.from_bytes(data[at : at + 2], "big"), at + 2
        elif length == 127:
            length, at = int.from_bytes(data[at : at + 8], "big"), at + 8
        at += length
    return starts


READ_ERRORS = {
    "unknown_operation": (b"FOO\r\n", "Client parser ERROR, state=0, i=0: proto='\"FOO\\r\"...'"),
    "bad_pub_arguments": (b"PUB a b c d\r\n", 'processPub Parse Error: "a b c d"'),
    "headers_not_announced": (b"HPUB a 5 2\r\n", "message headers not supported"),
}


@pytest.mark.parametrize("name", sorted(READ_ERRORS))
async def test_parser_errors_close_without_a_frame(name: str, target_kind: str, tmp_path: Path, fake_errors) -> None:
    """No close frame, just EOF; a ``read error:`` line; closed as a Read Error.

    What was answered in that read is dropped (nats-server's writer may get an ``-ERR`` out in a race
    with the close: the bytes before EOF are compared on fakejs only).
    """
    data, line = READ_ERRORS[name]
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(HTTP + LIMITS + PLAIN)
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false}\r\nPING\r\n'))
        assert await raw.frame() == (0x82, b"PONG\r\n")
        raw.send(frame(2, data))
        rest = await raw.rest()
        assert all(rest[at] != 0x88 for at in _frame_starts(rest))
        if target.is_fake:
            assert rest == b""
        assert await target.elapse_until(lambda: error_lines(target, fake_errors) == [f"read error: {line}"], WAIT)
        assert await closed_reasons(target) == ["Read Error"]


async def test_a_bad_connect_json_closes_without_a_frame(target_kind: str, tmp_path: Path, fake_errors) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(PLAIN)
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, b"CONNECT {x\r\n"))
        rest = await raw.rest()
        assert all(rest[at] != 0x88 for at in _frame_starts(rest))
        if target.is_fake:
            assert rest == b""
        line = "read error: invalid character 'x' looking for beginning of object key string"
        assert await target.elapse_until(lambda: error_lines(target, fake_errors) == [line], WAIT)


CLOSED_WHERE_READ = {
    "control_line": (
        b"CONNECT {}\r\nSUB " + b"a" * 80 + b" 1\r\n",
        b"+OK\r\n-ERR 'maximum control line exceeded'\r\n",
        (1008, "Maximum Control Line Exceeded"),
        ["read error: maximum control line exceeded"],
    ),
    "client_err": (b"CONNECT {}\r\n-ERR bad\r\n", b"+OK\r\n", (1002, "Parse Error"), ["Client Error bad"]),
    "protocol_version": (
        b'CONNECT {"protocol":5}\r\n',
        b"-ERR 'invalid client protocol'\r\n",
        (1002, "Bad Client Protocol Version"),
        ["read error: invalid client protocol"],
    ),
    "no_responders": (
        b'CONNECT {"no_responders":true}\r\n',
        b"-ERR 'no responders requires headers support'\r\n",
        (1011, "No Responders Requires Headers"),
        ["read error: no responders requires headers support"],
    ),
}


@pytest.mark.parametrize("name", sorted(CLOSED_WHERE_READ))
async def test_errors_closed_where_read_keep_their_close_frame(
    name: str, target_kind: str, tmp_path: Path, fake_errors
) -> None:
    data, answer, (code, reason), lines = CLOSED_WHERE_READ[name]
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(LIMITS + PLAIN)
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, data))
        assert await raw.frame() == (0x82, answer)
        assert await raw.frame() == close_frame(code, reason)
        assert await raw.rest() == b""
        assert await target.elapse_until(lambda: error_lines(target, fake_errors) == lines, WAIT)


async def test_a_failed_login_logs_the_read_error_too(target_kind: str, tmp_path: Path, fake_errors) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(PLAIN + "authorization { user: a, password: b }\n")
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false,"user":"a","pass":"x"}\r\n'))
        assert await raw.frame() == (0x82, b"-ERR 'Authorization Violation'\r\n")
        assert await raw.frame() == close_frame(1008, "Authentication Failure")
        assert await raw.rest() == b""
        expected = ['authentication error - User "a"', "read error: authentication error"]
        assert await target.elapse_until(lambda: error_lines(target, fake_errors) == expected, WAIT)


async def test_a_client_that_shuts_its_side_gets_1000(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start(PLAIN)))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false}\r\nPING\r\n'))
        assert await raw.frame() == (0x82, b"PONG\r\n")
        raw.writer.write_eof()
        assert await raw.frame() == close_frame(1000, "Client Closed")
        assert await raw.rest() == b""


async def test_a_stale_client_gets_1001(target_kind: str, tmp_path: Path) -> None:
    settings = Settings(ping_interval=1.0, ping_max=1)
    async with configured_servers(target_kind, tmp_path, settings) as start:
        target = await start(PLAIN)
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false}\r\n'))
        assert await raw.frame() == (0x82, b"PING\r\n")  # unanswered: the next one finds the client stale
        assert await raw.frame() == (0x82, b"-ERR 'Stale Connection'\r\n")
        assert await raw.frame() == close_frame(1001, "Stale Connection")
        assert await raw.rest() == b""


async def test_server_shutdown_sends_1001(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(PLAIN)
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false}\r\nPING\r\n'))
        assert await raw.frame() == (0x82, b"PONG\r\n")
        await target.stop()
        assert await raw.frame() == close_frame(1001, "Server Shutdown")
        assert await raw.rest() == b""


async def test_a_sub_beyond_max_subscriptions_leaves_the_websocket_open(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start("max_subscriptions: 1\n" + PLAIN)))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false}\r\nSUB a 1\r\nSUB b 2\r\n'))
        assert await raw.frame() == (0x82, b"-ERR 'maximum subscriptions exceeded'\r\n")
        raw.send(frame(2, b"PING\r\n"))
        assert await raw.frame() == (0x82, b"PONG\r\n")
        raw.close()
