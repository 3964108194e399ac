"""INFO's and /varz's build fields on both targets: ``git_commit`` and ``xkey``.

Facts pinned (nats-server 2.15.1):

- every INFO a client gets (the greeting and the one answering CONNECT)
  has ``git_commit`` right after ``proto`` (the 7-character commit of the
  build, ``b2fd3ef`` for the 2.15.1 release) and ``xkey`` after
  ``api_lvl``, its last field: the server's curve public key, an nkey
  starting with ``X``, one per server;
- ``/varz`` has ``git_commit`` in the same place, no ``xkey``, and no
  ``connect_urls`` on a server outside a cluster.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from fakejs.gocompat.curvekeys import PREFIX_BYTE_CURVE, crc16
from tests.harness.monitoring import fetch
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target

RELEASE_COMMIT = "b2fd3ef"


def is_curve_public_key(key: str) -> bool:
    """An nkey of the curve kind: 56 base32 characters of prefix, 32 key bytes and their CRC-16."""
    raw = base64.b32decode(key + "=" * (-len(key) % 8))
    body, checksum = raw[:-2], raw[-2:]
    return len(raw) == 35 and body[0] == PREFIX_BYTE_CURVE and crc16(body) == int.from_bytes(checksum, "little")


def nats_server_keys(info: dict[str, Any]) -> list[str]:
    """INFO's keys in order, without fakejs's own ``fakejs`` (its last key)."""
    return [key for key in info if key != "fakejs"]


async def greeting_and_connect_info(target: Target) -> tuple[dict[str, Any], dict[str, Any]]:
    client = await RawClient.connect(target.host, target.port)
    try:
        greeting = await client.read_until(b"\r\n")
        await client.send(b'CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n')
        await client.read_until(b'"connect_info":true')
        await client.read_until(b"\r\n")
        lines = bytes(client.received).split(b"\r\n")
    finally:
        await client.close()
    second = next(line for line in lines[1:] if line.startswith(b"INFO "))
    return json.loads(greeting[5:-3]), json.loads(second[5:].rstrip())


async def test_info_has_the_build_commit_and_the_curve_key_where_nats_server_puts_them(target: Target) -> None:
    greeting, connect_info = await greeting_and_connect_info(target)
    assert connect_info["connect_info"] is True
    for info in (greeting, connect_info):
        keys = nats_server_keys(info)
        assert keys[:6] == ["server_id", "server_name", "version", "proto", "git_commit", "go"]
        assert keys[-2:] == ["api_lvl", "xkey"]
        assert info["git_commit"] == RELEASE_COMMIT
        assert is_curve_public_key(info["xkey"]), info["xkey"]
    assert connect_info["xkey"] == greeting["xkey"]
    if target.is_fake:
        assert list(greeting)[-1] == "fakejs"


async def test_each_server_has_its_own_curve_key(make_target: Any) -> None:
    first, second = await make_target(Settings(jetstream=False)), await make_target(Settings(jetstream=False))
    first_info, _ = await greeting_and_connect_info(first)
    second_info, _ = await greeting_and_connect_info(second)
    assert first_info["xkey"] != second_info["xkey"]


async def test_varz_has_the_build_commit_but_no_curve_key(make_target: Any) -> None:
    target = await make_target(Settings(monitor=True, jetstream=False))
    _, _, body = await fetch(target.http_port, "/varz")
    varz = json.loads(body)
    assert list(varz)[:6] == ["server_id", "server_name", "version", "proto", "git_commit", "go"]
    assert varz["git_commit"] == RELEASE_COMMIT
    assert "xkey" not in varz and "connect_urls" not in varz
