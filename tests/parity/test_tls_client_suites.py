"""TLS the way client libraries' own suites start it: command-line flags and a handshake-first file.

nats.py's harness execs ``nats-server -p P -a 127.0.0.1 --tls --tlscert F
--tlskey F [--tlsverify --tlscacert F]`` or ``--config F`` with a ``tls {
handshake_first: true }`` block; these tests exec fakejs the same way and run
the same client cases (connect, subscribe, a custom TLS hostname, the
``tls://`` scheme, mutual TLS) on both programs with the same certificate
files.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from pathlib import Path

import nats
import nats.errors
import pytest

from fakejs.testkit.certs import TestCertificates
from tests.harness.command_line import finish, start, wait_ready
from tests.harness.wait import WAIT

# What nats-py raises when the server will not talk to it (no server answered its way, a handshake failed)
REFUSED = (nats.errors.NoServersError, nats.errors.Error, ssl.SSLError, OSError, TimeoutError)


@pytest.fixture
def certs(tmp_path: Path) -> TestCertificates:
    return TestCertificates(tmp_path / "certs")


async def launched(kind: str, *args: str) -> tuple[object, int]:
    process = start(kind, "-a", "127.0.0.1", "-p", "-1", *args)
    try:
        log = await wait_ready(process)
    except BaseException:
        process.kill()
        process.wait()
        raise
    port = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", log)
    assert port, log
    return process, int(port.group(1))


def tls_flags(certs: TestCertificates, verify: bool = False) -> list[str]:
    flags = ["--tls", "--tlscert", certs.server_cert_file, "--tlskey", certs.server_key_file]
    if verify:
        flags += ["--tlsverify", "--tlscacert", certs.ca_file]
    return flags


async def round_trip(nc: nats.NATS) -> None:
    sub = await nc.subscribe("tls.>")
    await nc.publish("tls.one", b"hello", headers={"H": "v"})
    msg = await sub.next_msg(timeout=WAIT)
    assert (msg.subject, msg.data, msg.headers) == ("tls.one", b"hello", {"H": "v"})
    await nc.close()


async def test_flags_serve_tls_to_a_client_trusting_the_ca(target_kind: str, certs: TestCertificates) -> None:
    process, port = await launched(target_kind, *tls_flags(certs))
    try:
        nc = await nats.connect(f"nats://127.0.0.1:{port}", tls=certs.client_ssl_context())
        assert nc._server_info.get("tls_required") is True
        await round_trip(nc)
        # the tls:// scheme, and a hostname other than the one dialled (nats.py's tls_hostname)
        nc = await nats.connect(f"tls://127.0.0.1:{port}", tls=certs.client_ssl_context(), tls_hostname="localhost")
        await round_trip(nc)
    finally:
        await finish(process, 15)


async def test_a_plain_client_cannot_talk_to_a_tls_server(target_kind: str, certs: TestCertificates) -> None:
    process, port = await launched(target_kind, *tls_flags(certs))
    try:
        with pytest.raises(REFUSED):
            await nats.connect(f"nats://127.0.0.1:{port}", allow_reconnect=False, connect_timeout=2)
    finally:
        await finish(process, 15)


async def test_tlsverify_asks_for_the_client_certificate(target_kind: str, certs: TestCertificates) -> None:
    process, port = await launched(target_kind, *tls_flags(certs, verify=True))
    try:
        nc = await nats.connect(f"nats://127.0.0.1:{port}", tls=certs.client_ssl_context(client=True))
        assert nc._server_info.get("tls_verify") is True
        await round_trip(nc)
        with pytest.raises(REFUSED):
            await nats.connect(
                f"nats://127.0.0.1:{port}",
                tls=certs.client_ssl_context(client=False),
                allow_reconnect=False,
                connect_timeout=2,
                max_reconnect_attempts=0,
            )
    finally:
        await finish(process, 15)


async def test_a_handshake_first_file(target_kind: str, certs: TestCertificates, tmp_path: Path) -> None:
    config = tmp_path / "tls.conf"
    config.write_text(certs.config_block(extra="handshake_first: true"))
    process, port = await launched(target_kind, "--config", str(config))
    try:
        nc = await nats.connect(f"tls://127.0.0.1:{port}", tls=certs.client_ssl_context(), tls_handshake_first=True)
        await round_trip(nc)
        # a client that waits for INFO first never gets one: the server waits for its handshake
        with pytest.raises(REFUSED):
            await nats.connect(
                f"tls://127.0.0.1:{port}", tls=certs.client_ssl_context(), allow_reconnect=False, connect_timeout=1
            )
    finally:
        await finish(process, 15)


def https_get(port: int, path: str, context: ssl.SSLContext) -> dict[str, object]:
    import json
    import urllib.request

    with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=context, timeout=5) as reply:
        return dict(json.loads(reply.read()))


async def test_https_port_serves_varz_over_tls(target_kind: str, certs: TestCertificates) -> None:
    process = start(target_kind, "-a", "127.0.0.1", "-p", "-1", *tls_flags(certs, verify=True), "-ms", "-1")
    try:
        log = await wait_ready(process)
        monitor = re.search(r"Starting https monitor on 127\.0\.0\.1:(\d+)", log)
        assert monitor, log
        # no client certificate is asked for on the monitoring port, even under --tlsverify
        varz = await asyncio.to_thread(https_get, int(monitor.group(1)), "/varz", certs.client_ssl_context())
        assert (varz["https_port"], varz["http_port"], varz["tls_verify"]) == (-1, 0, True)
    finally:
        await finish(process, 15)


@pytest.mark.parametrize(
    "extra,fatal",
    [
        (["-m", "-1"], "Can't start monitoring: can't specify both HTTP (-1) and HTTPs (-1) ports"),
        ([], "Can't start monitoring: TLS cert and key required for HTTPS"),
    ],
)
async def test_https_port_refusals(target_kind: str, certs: TestCertificates, extra: list[str], fatal: str) -> None:
    tls = tls_flags(certs) if extra else []
    process = start(target_kind, "-a", "127.0.0.1", "-p", "-1", *tls, "-ms", "-1", *extra)
    rc = await asyncio.to_thread(process.wait, 10)
    assert process.stdout is not None
    output = process.stdout.read().decode()
    assert rc == 1, output
    assert f"[FTL] {fatal}" in output, output
