"""verify_and_map on the fake alone: what it logs (the harness does not read the real server's log)."""

from __future__ import annotations

import logging
from pathlib import Path

import nats
import pytest

from fakejs import Server
from fakejs.core.users import User
from fakejs.testkit.certs import DEFAULT_CLIENT, TestCertificates


@pytest.mark.parametrize("named", ["", "someone"])
async def test_user_named_in_connect_is_overridden_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, named: str
) -> None:
    certs = TestCertificates(tmp_path)
    config = certs.tls_config(verify=True, verify_and_map=True)
    caplog.set_level(logging.WARNING, logger="fakejs")
    async with Server(tls=config, users=[User(name=DEFAULT_CLIENT)]) as server:
        options: dict[str, object] = {"user": named, "password": ""} if named else {}
        nc = await nats.connect(
            server.url,
            tls=certs.client_ssl_context(client=True),
            tls_hostname="localhost",
            allow_reconnect=False,
            **options,
        )
        await nc.flush(timeout=3)
        await nc.close()
    warnings = [r.getMessage() for r in caplog.records if "user required from cert" in r.getMessage()]
    expected = [f'User "{named}" found in connect proto, but user required from cert'] if named else []
    assert warnings == expected
