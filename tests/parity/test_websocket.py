"""WebSocket clients, fakejs against nats-server: the upgrade, frames, close frames, and nats.js over ws.

Raw sockets check the bytes a client sees (the 101 reply, Go's error
replies, control frames); the ``websockets`` library and nats.js's
``wsconnect`` check that real clients work, sharing subjects and JetStream
with TCP clients.  Every server listens on a free websocket port
(``port: -1``), read back from fakejs or from nats-server's log.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import struct
from pathlib import Path

import pytest
import websockets

from tests.harness.configured import configured_servers
from tests.harness.websocket import KEY, PLAIN, UPGRADE, WAIT, Raw, frame, ws_port

JS_DIR = Path(__file__).resolve().parent.parent / "js"
ACCEPT = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


async def test_upgrade_reply_and_info(target_kind: str, tmp_path: Path) -> None:
    """The 101 reply (permessage-deflate, configured headers) and INFO naming the websocket port."""
    config = 'websocket { port: -1, no_tls: true, compression: true, headers { X-Served-By: "nats" } }\n'
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(config)
        port = ws_port(target)
        raw = await Raw.open(port)
        raw.send(UPGRADE + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
        assert (
            await raw.http_reply()
            == (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Accept: {ACCEPT}\r\n"
                "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"
                "X-Served-By: nats\r\n\r\n"
            ).encode()
        )
        b0, _ = await raw.frame()
        assert b0 == 0xC2  # final, compressed, binary: INFO is over the 64-byte threshold
        raw.close()
        plain = await Raw.open(port)
        info = await plain.upgraded()
        assert (info["host"], info["port"]) == ("0.0.0.0", port)
        assert "tls_required" not in info
        plain.close()


REFUSED = {
    "post": (UPGRADE.replace("GET", "POST"), 405, "Method Not Allowed"),
    "no_upgrade": (UPGRADE.replace("Upgrade: websocket\r\n", ""), 400, "Bad Request"),
    "no_connection": (UPGRADE.replace("Connection: Upgrade\r\n", "Connection: keep-alive\r\n"), 400, "Bad Request"),
    "no_key": (UPGRADE.replace(f"Sec-WebSocket-Key: {KEY}\r\n", ""), 400, "Bad Request"),
    "short_key": (UPGRADE.replace(KEY, "abc"), 400, "Bad Request"),
    "version": (UPGRADE.replace("Version: 13", "Version: 8"), 400, "Bad Request"),
    "mqtt": (UPGRADE.replace("GET / ", "GET /mqtt "), 404, "Not Found"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
async def test_refused_upgrade_keeps_the_connection(name: str, target_kind: str, tmp_path: Path) -> None:
    """Go's http.Error reply; the HTTP/1.1 connection stays open and may upgrade next."""
    request, status, text = REFUSED[name]
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start(PLAIN)))
        raw.send(request + "\r\n")
        assert (
            await raw.http_reply()
            == (
                f"HTTP/1.1 {status} {text}\r\nContent-Type: text/plain; charset=utf-8\r\nSec-Websocket-Version: 13\r\n"
                f"X-Content-Type-Options: nosniff\r\nDate: *\r\nContent-Length: {len(text) + 1}\r\n\r\n{text}\n"
            ).encode()
        )
        await raw.upgraded()
        raw.close()


async def test_unparsable_request(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start(PLAIN)))
        raw.send("garbage\r\n\r\n")
        assert await raw.rest() == (
            b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
        )


@pytest.mark.parametrize(
    "origin,status",
    [("http://localhost", 101), ("http://localhost:80", 101), ("http://other", 403), ("https://localhost", 403)],
)
async def test_same_origin(origin: str, status: int, target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start("websocket { port: -1, no_tls: true, same_origin: true }\n")))
        raw.send(UPGRADE + f"Origin: {origin}\r\n\r\n")
        assert (await raw.http_reply()).startswith(f"HTTP/1.1 {status} ".encode())
        raw.close()


async def test_allowed_origins(target_kind: str, tmp_path: Path) -> None:
    config = 'websocket { port: -1, no_tls: true, allowed_origins: ["https://app.example:8443"] }\n'
    async with configured_servers(target_kind, tmp_path) as start:
        port = ws_port(await start(config))
        for origin, status in (("https://app.example:8443", 101), ("https://app.example", 403), ("", 101)):
            raw = await Raw.open(port)
            raw.send(UPGRADE + (f"Origin: {origin}\r\n" if origin else "") + "\r\n")
            assert (await raw.http_reply()).startswith(f"HTTP/1.1 {status} ".encode()), origin
            raw.close()


async def test_frames_both_ways(target_kind: str, tmp_path: Path) -> None:
    """Text, binary and fragmented client messages; pings answered; a close frame echoed, then EOF."""
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start(PLAIN)))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false}\r\nSUB a 1\r\n') + frame(1, b"PUB a 2\r\nhi\r\nPI", fin=False))
        raw.send(frame(9, b"ping!") + frame(0, b"NG\r\n"))
        frames = [await raw.frame()]
        while b"".join(p for b0, p in frames if b0 == 0x82) != b"MSG a 1 2\r\nhi\r\nPONG\r\n":
            frames.append(await raw.frame())  # nats-server may send the MSG before the rest of the message arrives
        assert [f for f in frames if f[0] != 0x82] == [(0x8A, b"ping!")]
        raw.send(frame(8, struct.pack(">H", 1000) + b"bye"))
        assert await raw.frame() == (0x88, struct.pack(">H", 1000) + b"bye")
        assert await raw.rest() == b""


BROKEN = {
    "unmasked": (frame(2, b"PING\r\n", mask=False), "mask bit missing"),
    "rsv2": (frame(2, b"PING\r\n", rsv=0x20), "RSV2 and RSV3 must be clear"),
    "uncompressed_rsv1": (
        frame(2, b"PING\r\n", rsv=0x40),
        "compressed frame received without negotiated permessage-deflate",
    ),
    "lone_continuation": (frame(0, b"PING\r\n"), "invalid continuation frame"),
    "opcode": (frame(5, b"x"), "unknown opcode 5"),
    "big_ping": (frame(9, b"x" * 126), "control frame length bigger than maximum allowed of 125 bytes"),
    "close_one_byte": (frame(8, b"x"), "close frame payload cannot be 1 byte"),
    "close_status": (frame(8, struct.pack(">H", 1005)), "invalid close status code 1005"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
async def test_broken_frames_end_the_connection(name: str, target_kind: str, tmp_path: Path) -> None:
    """The connection ends; a close frame, when it gets out first, is 1002 with nats-server's text.

    (nats-server may close the socket before its close frame is written: that part is not compared.)
    """
    data, text = BROKEN[name]
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start(PLAIN)))
        await raw.upgraded()
        raw.send(data)
        rest = await raw.rest()
        if rest:
            assert rest == bytes([0x88, 2 + len(text)]) + struct.pack(">H", 1002) + text.encode()


async def test_close_frame_for_an_authentication_failure(target_kind: str, tmp_path: Path) -> None:
    config = PLAIN + "authorization { user: a, password: b }\n"
    async with configured_servers(target_kind, tmp_path) as start:
        raw = await Raw.open(ws_port(await start(config)))
        info = await raw.upgraded()
        assert info["auth_required"] is True
        raw.send(frame(2, b'CONNECT {"verbose":false,"user":"a","pass":"x"}\r\n'))
        assert await raw.frame() == (0x82, b"-ERR 'Authorization Violation'\r\n")
        assert await raw.frame() == (0x88, struct.pack(">H", 1008) + b"Authentication Failure")
        assert await raw.rest() == b""


async def test_websockets_library_with_compression(target_kind: str, tmp_path: Path) -> None:
    """A compressing client and a TCP client share a subject; large messages go out deflated both ways."""
    import nats

    config = "websocket { port: -1, no_tls: true, compression: true }\n"
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(config)
        tcp = await nats.connect(target.url)
        try:
            async with websockets.connect(f"ws://127.0.0.1:{ws_port(target)}", compression="deflate") as ws:
                assert "permessage-deflate" in ws.response.headers["Sec-WebSocket-Extensions"]
                assert (await ws.recv()).startswith(b"INFO ")
                await ws.send(b'CONNECT {"verbose":false}\r\nSUB big 1\r\nPING\r\n')
                assert await ws.recv() == b"PONG\r\n"
                payload = b"0123456789" * 300
                await tcp.publish("big", payload)
                await tcp.flush()
                assert await ws.recv() == b"MSG big 1 3000\r\n" + payload + b"\r\n"
                sub = await tcp.subscribe("back")
                await tcp.flush()
                await ws.send(b"PUB back 3000\r\n" + payload + b"\r\n")
                assert (await sub.next_msg(WAIT)).data == payload
        finally:
            await tcp.close()


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found")
    for package in ("nats-core", "jetstream", "transport-node"):
        if not (JS_DIR / "node_modules" / "@nats-io" / package).is_dir():
            pytest.skip(f"tests/js/node_modules lacks @nats-io/{package} (npm ci in tests/js)")
    if not (JS_DIR / "node_modules" / "ws").is_dir():
        pytest.skip("tests/js/node_modules lacks ws (npm ci in tests/js)")
    return node


@pytest.mark.parametrize("compression", [False, True])
async def test_nats_js_wsconnect(compression: bool, target_kind: str, tmp_path: Path) -> None:
    """nats.js wsconnect(): pub/sub, headers, request/reply with a TCP client, JetStream publish and fetch."""
    node = _node()
    config = f"websocket {{ port: -1, no_tls: true, compression: {str(compression).lower()} }}\n"
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(config)
        port = ws_port(target)
        proc = await asyncio.create_subprocess_exec(
            node,
            str(JS_DIR / "ws_roundtrip.mjs"),
            f"ws://127.0.0.1:{port}",
            target.url,
            cwd=JS_DIR,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, (out.decode(), err.decode())
        doc = json.loads(out.decode().strip().splitlines()[-1])
    assert doc == {
        "info": {"port": port, "headers": True},
        "toWs": {"data": "hello ws", "header": "one"},
        "toTcpLength": 5000,
        "replies": ["tcp:a", "ws:b"],
        "js": {"acks": [1, 2, 3], "got": ["m1", "m2", "m3"]},
        "closeError": None,
    }


async def test_varz_websocket_section(target_kind: str, tmp_path: Path) -> None:
    import urllib.request

    config = (
        'http: "127.0.0.1:-1"\n'
        'websocket { port: -1, no_tls: true, compression: true, same_origin: true, allowed_origins: ["http://a.example"] }\n'
    )
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(config)
        port = ws_port(target)
        url = f"http://127.0.0.1:{target.http_port}/varz"
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=WAIT).read())
        assert json.loads(body)["websocket"] == {
            "host": "0.0.0.0",
            "port": port,
            "no_tls": True,
            "same_origin": True,
            "allowed_origins": ["http://a.example"],
            "compression": True,
        }


async def test_connz_types_websocket_clients(target_kind: str, tmp_path: Path) -> None:
    """/connz: a websocket client is ``"type": "websocket"`` (a TCP client ``"nats"``), open or closed."""
    import urllib.request

    import nats

    async with configured_servers(target_kind, tmp_path) as start:
        target = await start('http: "127.0.0.1:-1"\n' + PLAIN)
        tcp = await nats.connect(target.url, name="tcp")
        raw = await Raw.open(ws_port(target))
        await raw.upgraded()
        raw.send(frame(2, b'CONNECT {"verbose":false,"name":"ws"}\r\nPING\r\n'))
        assert await raw.frame() == (0x82, b"PONG\r\n")

        async def types(state: str) -> dict[str, str]:
            url = f"http://127.0.0.1:{target.http_port}/connz?state={state}"
            body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=WAIT).read())
            return {c["name"]: c["type"] for c in json.loads(body)["connections"]}

        try:
            assert await types("open") == {"tcp": "nats", "ws": "websocket"}
            raw.close()
            assert await target.elapse_until(lambda: types("closed"), WAIT) == {"ws": "websocket"}
        finally:
            await tcp.close()
