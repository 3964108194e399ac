"""``fakejs --tls-selfsigned``: TLS with certificates made at start, their paths in the log (for docker run and CI)."""

from __future__ import annotations

import os
import re
import signal
import ssl
import subprocess
from pathlib import Path

import nats
import pytest

from fakejs import cli
from tests.harness.command_line import finish, start, wait_ready
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON

PATHS = re.compile(r"CA bundle:\s+(\S+).*client certificate:\s+(\S+).*client key:\s+(\S+)", re.S)


def paths(log: str) -> tuple[str, str, str]:
    found = PATHS.search(log)
    assert found, log
    return found.group(1), found.group(2), found.group(3)


async def test_self_signed_certificates_serve_tls_and_go_away_at_exit() -> None:
    process = start("fake", "-p", "-1", "--tls-selfsigned")
    try:
        log = await wait_ready(process)
        ca, _, _ = paths(log)
        port = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", log)
        assert port and "TLS required for client connections" in log, log
        nc = await nats.connect(f"tls://localhost:{port.group(1)}", tls=ssl.create_default_context(cafile=ca))
        assert nc._server_info["tls_required"] is True
        await nc.close()
    finally:
        rc, _ = await finish(process, signal.SIGTERM)
    assert rc == 0
    assert not os.path.exists(os.path.dirname(ca))  # a temporary directory is the run's own


async def test_tlsverify_with_self_signed_certificates_asks_for_the_client_certificate(tmp_path: Path) -> None:
    process = start("fake", "-p", "-1", "--tls-selfsigned", "--tlsverify", "--tls_dir", str(tmp_path))
    try:
        log = await wait_ready(process)
        ca, cert, key = paths(log)
        assert Path(ca).parent == tmp_path
        url = "nats://127.0.0.1:" + re.findall(r"client connections on 127\.0\.0\.1:(\d+)", log)[0]
        context = ssl.create_default_context(cafile=ca)
        context.load_cert_chain(cert, key)
        nc = await nats.connect(url, tls=context)
        assert nc._server_info["tls_verify"] is True
        await nc.close()
    finally:
        await finish(process, signal.SIGTERM)
    assert Path(ca).exists()  # a directory given is left for the clients


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--tls_dir", "/tmp/x"], "fakejs: --tls_dir needs --tls-selfsigned\n"),
        (
            ["--tls-selfsigned", "--tlscert", "c.pem"],
            "fakejs: --tls-selfsigned makes its own certificates: give it no --tlscert, --tlskey or --tlscacert\n",
        ),
    ],
)
def test_self_signed_refusals(argv: list[str], message: str) -> None:
    with pytest.raises(cli.Exit) as end:
        cli.command_line(argv)
    assert (end.value.status, end.value.stderr) == (1, message)


@pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)
def test_the_flag_is_fakejs_s_own() -> None:
    """nats-server has no such flag (so a harness passing it knows it runs fakejs); fakejs's usage lists it."""
    real = subprocess.run(
        [str(REAL_BINARY), "--tls-selfsigned"], check=False, capture_output=True, text=True, timeout=10
    )
    assert "flag provided but not defined: -tls-selfsigned" in real.stderr
    assert "--tls-selfsigned" in cli.USAGE
