"""The monitoring endpoints harnesses poll: /healthz and /varz, on both targets."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import nats
import pytest

from tests.harness.targets import Settings

# /varz fields nats tooling reads, with their JSON types.
VARZ_FIELDS = {
    "server_id": str,
    "server_name": str,
    "version": str,
    "proto": int,
    "host": str,
    "port": int,
    "max_connections": int,
    "ping_interval": int,
    "ping_max": int,
    "http_port": int,
    "auth_timeout": (int, float),
    "max_control_line": int,
    "max_payload": int,
    "max_pending": int,
    "write_deadline": int,
    "start": str,
    "now": str,
    "uptime": str,
    "mem": int,
    "cores": int,
    "connections": int,
    "total_connections": int,
    "in_msgs": int,
    "out_msgs": int,
    "in_bytes": int,
    "out_bytes": int,
    "slow_consumers": int,
    "subscriptions": int,
    "jetstream": dict,
}


async def fetch(port: int, path: str) -> tuple[int, str, bytes]:
    def get() -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                return response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.read()

    return await asyncio.to_thread(get)


async def test_healthz(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    status, ctype, body = await fetch(target.http_port, "/healthz")
    assert (status, ctype, body) == (200, "application/json", b'{"status":"ok"}')


async def test_unknown_path(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    status, _, body = await fetch(target.http_port, "/nope")
    assert status == 404
    assert body == b"404 page not found\n"


async def test_varz_shape_and_counters(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    nc = await nats.connect(target.url)
    sub = await nc.subscribe("v")
    await nc.publish("v", b"12345")
    await sub.next_msg(timeout=2)
    status, ctype, body = await fetch(target.http_port, "/varz")
    assert status == 200 and ctype == "application/json"
    varz = json.loads(body)
    for name, kind in VARZ_FIELDS.items():
        assert isinstance(varz[name], kind), name
    assert varz["version"] == "2.15.1"
    assert varz["port"] == target.port
    assert varz["http_port"] == -1  # configured as "any free port"
    assert varz["max_payload"] == 1048576
    assert varz["ping_interval"] == 120_000_000_000
    assert varz["write_deadline"] == 10_000_000_000
    assert varz["connections"] == 1
    assert varz["in_msgs"] >= 1 and varz["out_msgs"] >= 1
    assert varz["in_bytes"] >= 5
    assert varz["start"].endswith("Z") and "T" in varz["start"]
    await nc.close()


@pytest.mark.fake_only
async def test_fakejs_names_itself_in_varz(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    _, _, body = await fetch(target.http_port, "/varz")
    assert json.loads(body)["fakejs"]["version"]
