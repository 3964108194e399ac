"""wss through a configuration file, fakejs against nats-server: ``websocket { port: -1, tls { ... } }``.

A ``websockets`` client trusting the test CA talks NATS over wss; INFO
carries the TLS fields nats-server gives websocket clients; a plain
``ws://`` request to the wss port gets what Go's HTTPS server answers; the
ports file lists the port as ``wss://``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import websockets

from fakejs.testkit.certs import TestCertificates
from tests.harness.configured import configured_servers
from tests.harness.websocket import UPGRADE, WAIT, ws_port


@pytest.fixture
def certs(tmp_path: Path) -> TestCertificates:
    return TestCertificates(tmp_path / "certs")


def wss_block(certs: TestCertificates, extra: str = "") -> str:
    return "websocket {\n  port: -1\n" + extra + certs.config_block() + "}\n"


async def test_wss_client_and_info(certs: TestCertificates, target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(wss_block(certs))
        port = ws_port(target)
        async with websockets.connect(f"wss://localhost:{port}", ssl=certs.client_ssl_context()) as ws:
            info = json.loads((await ws.recv())[5:])
            fields = {key: info.get(key) for key in ("host", "port", "tls_required", "tls_verify", "tls_available")}
            assert fields == {
                "host": "0.0.0.0",
                "port": port,
                "tls_required": True,
                "tls_verify": None,
                "tls_available": True,
            }
            await ws.send(b'CONNECT {"verbose":false}\r\nSUB a 1\r\nPUB a 2\r\nhi\r\nPING\r\n')
            received = b""
            while not received.endswith(b"PONG\r\n"):
                received += await ws.recv()
            assert received == b"MSG a 1 2\r\nhi\r\nPONG\r\n"


async def test_plain_request_to_the_wss_port(certs: TestCertificates, target_kind: str, tmp_path: Path) -> None:
    """Go's HTTPS server answers an HTTP request in plain text with a 400, then closes."""
    async with configured_servers(target_kind, tmp_path) as start:
        port = ws_port(await start(wss_block(certs)))
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write((UPGRADE + "\r\n").encode())
        answer = await asyncio.wait_for(reader.read(), WAIT)
        writer.close()
        assert answer == b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"


async def ports_file(directory: Path, deadline: float = 5.0) -> Path:
    """The server's ports file, once written (nats-server writes it after it starts listening)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        found = await asyncio.to_thread(lambda: list(directory.glob("*.ports")))
        if found and found[0].stat().st_size:
            return found[0]
        assert loop.time() < end, "no ports file"
        await asyncio.sleep(0.02)


async def test_ports_file_names_wss(certs: TestCertificates, target_kind: str, tmp_path: Path) -> None:
    directory = tmp_path / "ports"
    directory.mkdir()
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(f'ports_file_dir: "{directory}"\n' + wss_block(certs, '  host: "127.0.0.1"\n'))
        port = ws_port(target)
        path = await ports_file(directory)
        assert json.loads(path.read_text())["websocket"] == [f"wss://127.0.0.1:{port}"]
