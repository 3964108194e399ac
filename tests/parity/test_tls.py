"""TLS on the client port, on both targets: INFO's fields, the handshake's order and failures, monitoring.

Both servers get the same ``tls {}`` block and the same throwaway
certificates (:class:`fakejs.testkit.certs.TestCertificates`); clients are
nats-py with an ``ssl`` context, or raw sockets where the bytes matter.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import ssl
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nats.errors import Error as NatsError

from fakejs.testkit.certs import TestCertificates
from tests.harness.configured import Start, configured_servers
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target
from tests.harness.tls import closed, connect, connz, mapped_config, refused

CONNECT_PING = b'CONNECT {"verbose":false}\r\nPING\r\n'


@pytest.fixture
def certs(tmp_path: Path) -> TestCertificates:
    return TestCertificates(tmp_path / "certs")


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False, monitor=True)) as start:
        yield start


def info_of(line: bytes) -> dict[str, Any]:
    assert line.startswith(b"INFO "), line
    return json.loads(line[5:].strip())


async def greeting(target: Target) -> tuple[RawClient, dict[str, Any], list[str]]:
    client = await RawClient.connect(target.host, target.port)
    raw = await client.read_until(b"\r\n")
    line = raw.split(b"\r\n", 1)[0]
    return client, info_of(line), list(json.loads(line[5:]).keys())


async def tls_client(
    target: Target, context: ssl.SSLContext, first: bool = False
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw TLS connection: the plain INFO read first unless ``first`` (handshake_first)."""
    reader, writer = await asyncio.open_connection(target.host, target.port)
    if not first:
        await asyncio.wait_for(reader.readline(), 5)
    await asyncio.wait_for(writer.start_tls(context, server_hostname="localhost"), 5)
    return reader, writer


async def varz(target: Target) -> dict[str, Any]:
    def fetch() -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{target.http_port}/varz", timeout=5) as response:
            return json.loads(response.read())

    return await asyncio.to_thread(fetch)


@pytest.mark.parametrize("verify", [False, True])
async def test_info_announces_tls(server: Start, certs: TestCertificates, verify: bool) -> None:
    target = await server(certs.config_block(verify=verify))
    client, info, keys = await greeting(target)
    await client.close()
    assert info.get("tls_required") is True
    assert info.get("tls_verify", False) is verify
    assert "tls_available" not in info
    tls_keys = ["tls_required", "tls_verify"] if verify else ["tls_required"]
    assert keys[keys.index("headers") + 1 : keys.index("max_payload")] == tls_keys


async def test_client_talks_through_tls(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(verify=True))
    nc = await connect(target, certs.client_ssl_context(client=True))
    sub = await nc.subscribe("tls.x")
    await nc.publish("tls.x", b"secret")
    msg = await sub.next_msg(timeout=3)
    assert msg.data == b"secret"
    await nc.close()


async def test_plain_client_under_tls_is_dropped(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block())
    client, _, _ = await greeting(target)
    await client.send(CONNECT_PING)
    assert await client.wait_closed(5)
    rest = bytes(client.received).split(b"\r\n", 1)[1]
    assert rest in (b"", b"-ERR 'Secure Connection - TLS Required'\r\n")
    assert [c["reason"] for c in await closed(target)] == ["TLS Handshake Failure"]


async def test_silent_client_times_out(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(extra="timeout: 0.5"))
    client, _, _ = await greeting(target)
    assert await client.wait_closed(10)
    rest = bytes(client.received).split(b"\r\n", 1)[1]
    assert rest in (b"", b"-ERR 'Secure Connection - TLS Required'\r\n")
    assert [c["reason"] for c in await closed(target)] == ["TLS Handshake Failure"]


async def test_verify_wants_a_client_certificate(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(verify=True))
    assert await refused(target, certs.client_ssl_context())
    assert [c["reason"] for c in await closed(target)] == ["TLS Handshake Failure"]


async def test_verify_refuses_a_certificate_of_another_ca(
    server: Start, certs: TestCertificates, tmp_path: Path
) -> None:
    target = await server(certs.config_block(verify=True))
    other = TestCertificates(tmp_path / "other")
    stranger = other.issue_client("stranger", "stranger@fakejs.test")
    assert await refused(target, certs.client_ssl_context(client=stranger))
    assert not await refused(target, certs.client_ssl_context(client=True))


async def test_handshake_first(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(extra="handshake_first: true"))
    client = await RawClient.connect(target.host, target.port)
    assert not await client.read_some(0.5)  # no INFO before the handshake
    await client.close()
    reader, writer = await tls_client(target, certs.client_ssl_context(), first=True)
    info = info_of(await asyncio.wait_for(reader.readline(), 5))
    assert info["tls_required"] is True
    writer.close()
    nc = await connect(target, certs.client_ssl_context(), tls_handshake_first=True)
    await nc.flush(timeout=3)
    await nc.close()
    clients = await closed(target, 2)
    assert clients[-1].get("tls_first") is True
    assert await refused(target, certs.client_ssl_context())  # the usual upgrade after INFO: no INFO comes


@pytest.mark.parametrize("setting", ["auto", '"300ms"'])
async def test_handshake_first_falls_back(server: Start, certs: TestCertificates, setting: str) -> None:
    target = await server(certs.config_block(extra=f"handshake_first: {setting}"))
    client, info, _ = await greeting(target)  # silent: plain INFO after the delay
    await client.close()
    assert info["tls_required"] is True
    nc = await connect(target, certs.client_ssl_context())
    await nc.flush(timeout=3)
    await nc.close()
    nc = await connect(target, certs.client_ssl_context(), tls_handshake_first=True)
    await nc.flush(timeout=3)
    await nc.close()
    firsts = [c.get("tls_first", False) for c in await closed(target, 3)]
    assert firsts[-2:] == [False, True]


async def test_allow_non_tls(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block() + "allow_non_tls: true\n")
    client, info, keys = await greeting(target)
    await client.close()
    assert "tls_required" not in info and info["tls_available"] is True
    assert keys[keys.index("headers") + 1] == "tls_available"
    plain = await connect(target, None)
    await plain.flush(timeout=3)
    reader, writer = await tls_client(target, certs.client_ssl_context())
    writer.write(CONNECT_PING)
    assert await asyncio.wait_for(reader.readline(), 5) == b"PONG\r\n"
    versions = sorted(c.get("tls_version", "") for c in (await connz(target))["connections"])
    assert versions == ["", "1.3"]
    await plain.close()
    writer.close()


async def test_allow_non_tls_with_handshake_first(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(extra="handshake_first: auto") + "allow_non_tls: true\n")
    client, info, _ = await greeting(target)
    await client.close()
    assert "tls_required" not in info and info["tls_available"] is True
    reader, writer = await tls_client(target, certs.client_ssl_context(), first=True)
    info = info_of(await asyncio.wait_for(reader.readline(), 5))
    assert info["tls_required"] is True and info["tls_available"] is True
    writer.close()
    plain = await connect(target, None)
    await plain.flush(timeout=3)
    await plain.close()


async def test_min_version(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(extra='min_version: "1.3"'))
    old = certs.client_ssl_context()
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    assert await refused(target, old)
    assert not await refused(target, certs.client_ssl_context())


async def test_cipher_suites_govern_tls12(server: Start, certs: TestCertificates) -> None:
    suites = '["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"]'
    target = await server(certs.config_block(extra=f"cipher_suites: {suites}"))
    context = certs.client_ssl_context()
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    nc = await connect(target, context)
    await nc.flush(timeout=3)
    info = (await connz(target))["connections"][0]
    await nc.close()
    assert info["tls_version"] == "1.2"
    assert info["tls_cipher_suite"] in json.loads(suites)


async def test_connz_and_varz_show_tls(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block(verify=True, extra="timeout: 3"))
    nc = await connect(target, certs.client_ssl_context(client=True))
    await nc.flush(timeout=3)
    plain = (await connz(target))["connections"][0]
    detailed = (await connz(target, "?auth=true"))["connections"][0]
    doc = await varz(target)
    await nc.close()
    # Go prefers AES-128 where OpenSSL takes the client's first choice: either is a TLS 1.3 suite.
    assert plain["tls_version"] == "1.3" and plain["tls_cipher_suite"].startswith("TLS_AES_")
    assert "tls_peer_certs" not in plain and "tls_first" not in plain
    der = ssl.PEM_cert_to_DER_cert(Path(certs.client_cert_file).read_text())
    peer = detailed["tls_peer_certs"][0]
    assert peer["cert_sha256"] == hashlib.sha256(der).hexdigest()
    assert len(peer["spki_sha256"]) == 64 and peer["subject"].startswith("CN=fakejs client")
    keys = list(doc)
    assert keys[keys.index("port") + 1 : keys.index("port") + 3] == ["tls_required", "tls_verify"]
    assert (doc["tls_timeout"], doc["auth_timeout"]) == (3, 4)


async def test_pinned_certs(server: Start, certs: TestCertificates) -> None:
    der = ssl.PEM_cert_to_DER_cert(Path(certs.client_cert_file).read_text())
    target = await server(certs.config_block(verify=True))
    nc = await connect(target, certs.client_ssl_context(client=True))
    await nc.flush(timeout=3)
    pin = (await connz(target, "?auth=true"))["connections"][0]["tls_peer_certs"][0]["spki_sha256"]
    await nc.close()
    assert pin != hashlib.sha256(der).hexdigest()
    other = certs.issue_client("other", "other@fakejs.test")
    pinned = await server(certs.config_block(verify=True, extra=f'pinned_certs: ["{pin}"]'))
    assert not await refused(pinned, certs.client_ssl_context(client=True))
    assert await refused(pinned, certs.client_ssl_context(client=other))


async def test_verify_and_map_by_email(server: Start, certs: TestCertificates) -> None:
    users = '    { user: "client@fakejs.test", permissions: { publish: "allowed.>", subscribe: "_INBOX.>" } }'
    target = await server(mapped_config(certs, users))
    errors: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    nc = await connect(target, certs.client_ssl_context(client=True), error_cb=on_error)
    await nc.publish("allowed.x", b"")
    await nc.publish("denied.x", b"")
    await nc.flush(timeout=3)
    for _ in range(100):
        if errors:
            break
        await asyncio.sleep(0.02)
    await nc.close()
    assert any("denied.x" in str(e) for e in errors), errors
    user = (await closed(target))[0]["authorized_user"]
    assert user == "client@fakejs.test"


@pytest.mark.parametrize("name", ["CN=dn user,OU=Eng,O=Acme", "O=Acme,OU=Eng,CN=dn user"])
async def test_verify_and_map_by_subject(server: Start, certs: TestCertificates, name: str) -> None:
    files = certs.issue_client(
        "dn", "dn@fakejs.test", common_name="dn user", organization="Acme", organizational_unit="Eng"
    )
    target = await server(mapped_config(certs, f'    {{ user: "{name}" }}'))
    assert not await refused(target, certs.client_ssl_context(client=files))
    assert await refused(target, certs.client_ssl_context(client=True))  # maps to nobody


async def test_tls_with_user_and_password(server: Start, certs: TestCertificates) -> None:
    target = await server(certs.config_block() + "authorization { user: a, password: s3cret }\n")
    assert not await refused(target, certs.client_ssl_context(), user="a", password="s3cret")
    assert await refused(target, certs.client_ssl_context(), user="a", password="wrong")


async def test_tls_with_accounts(server: Start, certs: TestCertificates) -> None:
    accounts = (
        "accounts {\n  A { users: [ { user: a, password: a } ] }\n  B { users: [ { user: b, password: b } ] }\n}\n"
    )
    target = await server(certs.config_block() + accounts)
    a = await connect(target, certs.client_ssl_context(), user="a", password="a")
    b = await connect(target, certs.client_ssl_context(), user="b", password="b")
    sub = await b.subscribe("x")
    await b.flush(timeout=3)
    await a.publish("x", b"hi")
    await a.flush(timeout=3)
    with pytest.raises(NatsError):
        await sub.next_msg(timeout=0.3)
    await a.close()
    await b.close()
