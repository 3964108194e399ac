"""Configuration reload of ``tls { }``, on both servers: new certificates for new connections.

Connections made before the reload keep the session they have; new ones
get the new certificate (and the new verification rules); a file that
keeps the same settings reloads TLS all the same, as on nats-server; TLS
turned on or off applies to new connections.
"""

from __future__ import annotations

import re
import ssl
from pathlib import Path

import nats
import pytest

from fakejs.server.tls_names import public_key_fingerprint
from fakejs.testkit.certs import CertificateFiles, TestCertificates
from tests.harness.raw import RawClient
from tests.harness.reload import TARGETS, logged, reload, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)


def _reloaded(log: str) -> list[str]:
    return re.findall(r"\[INF\] (Reloaded: .*)\n", log)


async def _connects(url: str, certificates: TestCertificates, client: bool | CertificateFiles = False) -> bool:
    try:
        nc = await nats.connect(
            url,
            tls=certificates.client_ssl_context(client),
            tls_hostname="localhost",
            allow_reconnect=False,
            max_reconnect_attempts=0,
            connect_timeout=WAIT,
        )
        await nc.flush(timeout=WAIT)  # a refused certificate may be closed only after the handshake
    except Exception:
        return False
    await nc.close()
    return True


@pytest.mark.parametrize("kind", TARGETS)
async def test_new_certificates_serve_new_connections(kind: str, tmp_path: Path) -> None:
    first = TestCertificates(tmp_path / f"{kind}-ca1")
    second = TestCertificates(tmp_path / f"{kind}-ca2")
    server = start(kind, first.config_block(), tmp_path)
    try:
        url = f"tls://127.0.0.1:{server.port}"
        before = await nats.connect(
            url, tls=first.client_ssl_context(), tls_hostname="localhost", allow_reconnect=False
        )
        log = await reload(server, first.config_block())  # the same block: reloaded all the same, as on nats-server
        assert _reloaded(log) == ["Reloaded: authorization users", "Reloaded: accounts", "Reloaded: tls = enabled"]
        log = await reload(server, second.config_block(verify=True), count=2)
        assert _reloaded(log)[3:] == ["Reloaded: authorization users", "Reloaded: accounts", "Reloaded: tls = enabled"]
        assert not await _connects(url, first, client=True)
        assert not await _connects(url, second)  # verify: a client certificate is required now
        assert await _connects(url, second, client=True)
        await before.flush(timeout=WAIT)  # the connection made before keeps its session
        await before.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_tls_timeout(kind: str, tmp_path: Path) -> None:
    certificates = TestCertificates(tmp_path / f"{kind}-ca")
    server = start(kind, certificates.config_block(), tmp_path)
    try:
        log = await reload(server, certificates.config_block(extra="timeout: 3"))
        assert _reloaded(log) == [
            "Reloaded: authorization users",
            "Reloaded: accounts",
            "Reloaded: authorization timeout = 4",  # the login time follows the handshake's when not set
            "Reloaded: tls timeout = 3",
            "Reloaded: tls = enabled",
        ]
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_tls_turned_on_then_off(kind: str, tmp_path: Path) -> None:
    certificates = TestCertificates(tmp_path / f"{kind}-ca")
    server = start(kind, "", tmp_path)
    try:
        plain = await RawClient.connect("127.0.0.1", server.port)
        await plain.read_until(b"\r\n")
        log = await reload(server, certificates.config_block())
        assert _reloaded(log)[2:] == ["Reloaded: authorization timeout = 3", "Reloaded: tls = enabled"]
        assert await _connects(f"tls://127.0.0.1:{server.port}", certificates)
        greeted = await RawClient.connect("127.0.0.1", server.port)
        assert b'"tls_required":true' in await greeted.read_until(b"\r\n")
        await plain.send(b"CONNECT {}\r\nPING\r\n")  # connected before: still plain text
        assert (await plain.read_until(b"PONG\r\n")).endswith(b"PONG\r\n")
        log = await reload(server, "", count=2)
        assert _reloaded(log)[-2:] == ["Reloaded: authorization timeout = 2", "Reloaded: tls = disabled"]
        again = await RawClient.connect("127.0.0.1", server.port)
        assert b"tls_required" not in await again.read_until(b"\r\n")
        for client in (plain, greeted, again):
            await client.close()
    finally:
        server.stop()


def _pin(certificate: str) -> str:
    return public_key_fingerprint(ssl.PEM_cert_to_DER_cert(Path(certificate).read_text()))


@pytest.mark.parametrize("kind", TARGETS)
async def test_new_pinned_certs(kind: str, tmp_path: Path) -> None:
    certificates = TestCertificates(tmp_path / f"{kind}-ca")
    other = certificates.issue_client("other", "other@fakejs.test")
    first = f'pinned_certs: ["{_pin(certificates.client_cert_file)}"]'
    server = start(kind, certificates.config_block(verify=True, extra=first), tmp_path)
    try:
        url = f"tls://127.0.0.1:{server.port}"
        before = await nats.connect(
            url, tls=certificates.client_ssl_context(True), tls_hostname="localhost", allow_reconnect=False
        )
        await before.flush(timeout=WAIT)
        second = f'pinned_certs: ["{_pin(other.cert_file)}", "{"0" * 64}"]'
        log = await reload(server, certificates.config_block(verify=True, extra=second))
        assert _reloaded(log)[2:] == ["Reloaded: tls = enabled", "Reloaded: 2 pinned_certs"]
        # The connected client whose certificate is no longer pinned is closed once the reload is done.
        done = log.index("Reloaded server configuration")
        log = await logged(server, "[INF] Disconnect 1 clients due to pinned certs reload\n")
        assert log.index("Disconnect 1 clients") > done

        async def closed() -> bool:
            return before.is_closed

        await eventually(closed, what="the unpinned client closed")
        assert not await _connects(url, certificates, client=True)
        assert await _connects(url, certificates, other)
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_handshake_first(kind: str, tmp_path: Path) -> None:
    certificates = TestCertificates(tmp_path / f"{kind}-ca")
    server = start(kind, certificates.config_block(), tmp_path)
    try:
        url = f"tls://127.0.0.1:{server.port}"
        log = await reload(server, certificates.config_block(extra="handshake_first: true"))
        assert _reloaded(log)[2:] == ["Reloaded: tls = enabled", "Reloaded: Client TLS handshake first: true"]
        nc = await nats.connect(
            url, tls=certificates.client_ssl_context(), tls_hostname="localhost", tls_handshake_first=True
        )
        await nc.flush(timeout=WAIT)
        await nc.close()
        log = await reload(server, certificates.config_block(extra="handshake_first: auto"), count=2)
        assert _reloaded(log)[-1] == "Reloaded: Client TLS handshake first fallback delay: 50ms"
        assert await _connects(url, certificates)  # silent for 50 ms: INFO in plain text, as before
    finally:
        server.stop()
