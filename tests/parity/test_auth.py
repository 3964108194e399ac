"""Token and user/password authentication, on both targets."""

from __future__ import annotations

import nats
import pytest

from tests.harness.raw import record
from tests.harness.targets import Settings
from tests.harness.wait import WAIT

AUTH_VIOLATION = b"-ERR 'Authorization Violation'\r\n"

TOKEN = Settings(token="s3cret")
USER = Settings(user="alice", password="wonderland")


@pytest.mark.parametrize(
    "settings,connect,accepted",
    [
        (TOKEN, b'{"verbose":false,"auth_token":"s3cret"}', True),
        (TOKEN, b'{"verbose":false,"auth_token":"wrong"}', False),
        (TOKEN, b'{"verbose":false}', False),
        (TOKEN, b'{"verbose":false,"user":"alice","pass":"s3cret"}', False),
        (USER, b'{"verbose":false,"user":"alice","pass":"wonderland"}', True),
        (USER, b'{"verbose":false,"user":"alice","pass":"nope"}', False),
        (USER, b'{"verbose":false,"user":"bob","pass":"wonderland"}', False),
        (USER, b'{"verbose":false,"auth_token":"wonderland"}', False),
        (USER, b'{"verbose":true,"user":"alice","pass":"wonderland"}', True),
    ],
    ids=[
        "token-ok",
        "token-wrong",
        "token-missing",
        "token-userpass",
        "user-ok",
        "user-wrong-pass",
        "user-wrong-user",
        "user-token",
        "user-verbose",
    ],
)
async def test_connect_credentials(make_target, settings: Settings, connect: bytes, accepted: bool) -> None:
    target = await make_target(settings)
    transcript = await record(target.host, target.port, [b"CONNECT " + connect + b"\r\nPING\r\n"])
    assert transcript.infos()[0]["auth_required"] is True
    body = transcript.without_greeting()
    if accepted:
        assert not transcript.closed
        assert body == (b"+OK\r\nPONG\r\n" if b'"verbose":true' in connect else b"PONG\r\n")
    else:
        assert transcript.closed
        assert body == AUTH_VIOLATION


@pytest.mark.parametrize("first", [b"PING\r\n", b"SUB a 1\r\n", b"PUB a 0\r\n\r\n", b"XYZ\r\n"])
async def test_operations_before_connect_are_refused(make_target, first: bytes) -> None:
    target = await make_target(TOKEN)
    transcript = await record(target.host, target.port, [first])
    assert transcript.without_greeting() == AUTH_VIOLATION
    assert transcript.closed


async def test_connect_with_bad_op_name_is_unknown_operation(make_target) -> None:
    target = await make_target(TOKEN)
    transcript = await record(target.host, target.port, [b"CONNEX {}\r\n"])
    assert transcript.without_greeting() == b"-ERR 'Unknown Protocol Operation'\r\n"
    assert transcript.closed


@pytest.mark.slow
async def test_authentication_timeout(make_target) -> None:
    target = await make_target(TOKEN.with_(auth_timeout=0.5))
    transcript = await record(target.host, target.port, [], sync=False, quiet=WAIT)  # ends at the hang-up
    assert transcript.without_greeting() == b"-ERR 'Authentication Timeout'\r\n"
    assert transcript.closed


async def test_no_auth_info_has_no_auth_required(target) -> None:
    transcript = await record(target.host, target.port, [])
    assert "auth_required" not in transcript.infos()[0]


async def test_nats_py_with_token(make_target) -> None:
    target = await make_target(TOKEN)
    nc = await nats.connect(target.url, token="s3cret")
    sub = await nc.subscribe("x")
    await nc.publish("x", b"1")
    assert (await sub.next_msg(timeout=WAIT)).data == b"1"
    await nc.close()


async def test_nats_py_with_user_password(make_target) -> None:
    target = await make_target(USER)
    nc = await nats.connect(target.url, user="alice", password="wonderland")
    assert nc.is_connected
    await nc.close()


async def test_nats_py_rejected(make_target) -> None:
    target = await make_target(USER)
    errors: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    with pytest.raises(Exception):  # noqa: B017 - nats-py raises whatever its reconnect logic last saw; the error callback names the cause
        await nats.connect(
            target.url, user="alice", password="x", allow_reconnect=False, error_cb=on_error, connect_timeout=2
        )
    assert any("Authorization Violation" in str(e) for e in errors)
