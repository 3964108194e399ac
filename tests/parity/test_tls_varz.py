"""/varz for a server with TLS, on both targets: the TLS fields nats-server shows and how it writes them."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fakejs.testkit.certs import TestCertificates
from tests.harness.configured import Start, configured_servers
from tests.harness.targets import Settings, Target

# trustme's certificates expire at the start of the year 3000.
NOT_AFTER = "3000-01-01T00:00:00Z"


@pytest.fixture
def certs(tmp_path: Path) -> TestCertificates:
    return TestCertificates(tmp_path / "certs")


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False, monitor=True)) as start:
        yield start


async def varz_text(target: Target) -> str:
    def fetch() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{target.http_port}/varz", timeout=5) as response:
            return str(response.read().decode())

    return await asyncio.to_thread(fetch)


async def test_certificate_expiry_and_timeout(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(extra="timeout: 0.5"))
    doc: dict[str, Any] = json.loads(await varz_text(target))
    assert doc["tls_cert_not_after"] == NOT_AFTER
    assert doc["tls_timeout"] == 0.5
    keys = list(doc)
    assert keys.index("tls_cert_not_after") > keys.index("slow_consumer_stats")
    assert "tls_ocsp_peer_verify" not in doc


async def test_whole_seconds_are_written_as_integers(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(extra="timeout: 3"))
    assert '"tls_timeout":3,' in (await varz_text(target)).replace(" ", "").replace("\n", "")


async def test_plain_server_has_no_expiry(server: Start) -> None:
    target = await server("")
    doc = json.loads(await varz_text(target))
    assert "tls_cert_not_after" not in doc and doc["tls_timeout"] == 2
    assert "tls_cert_not_after" not in doc["websocket"]


async def test_websocket_certificate_expiry(server: Start, certs: TestCertificates) -> None:
    tls = f'tls {{ cert_file: "{certs.server_cert_file}", key_file: "{certs.server_key_file}" }}'
    target = await server(f"websocket {{ port: -1, {tls} }}\n")
    doc = json.loads(await varz_text(target))
    assert doc["websocket"]["tls_cert_not_after"] == NOT_AFTER
    assert list(doc["websocket"])[-1] == "tls_cert_not_after"
    assert "tls_cert_not_after" not in doc
