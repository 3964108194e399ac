"""Exports and imports between accounts, on both servers started from the same configuration text.

Until fakejs serves the ``accounts`` block, the fake variants skip (the
reason names the refusal found when loading the text), so they run for real
as soon as it does.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

import nats
import pytest

from tests.harness.configured import Start, configured_servers
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT

REPLY = re.compile(rb"MSG \S+ \d+ (_R_\.[0-9A-Za-z]{6}\.[0-9A-Za-z]{6}) ")
INFO = re.compile(rb'Nats-Request-Info: \{"acc":"B","rtt":\d+\}\r\n')

CONFIG = """
accounts {
  A {
    users: [{user: a, password: a}]
    exports: [
      {stream: "ev.>"}
      {stream: "t.*"}
      {service: "svc.one"}
      {service: "svc.many", response_type: Stream, response_threshold: "1s"}
      {service: "api.>"}
      {service: "chk", response_type: chunked}
    ]
  }
  B {
    users: [{user: b, password: b}]
    imports: [
      {stream: {account: A, subject: "ev.>"}, prefix: "from.a"}
      {stream: {account: A, subject: "t.*"}, to: "tt.$1.x"}
      {service: {account: A, subject: "svc.one"}, to: "uno"}
      {service: {account: A, subject: "svc.many"}}
      {service: {account: A, subject: "api.>"}, to: "remote.>"}
      {service: {account: A, subject: "chk"}}
    ]
  }
}
"""

JS_CONFIG = """
accounts {
  JS {
    jetstream: enabled
    users: [{user: js, password: js}]
    exports: [
      {service: "$JS.API.>"}
      {service: "$JS.ACK.>"}
      {service: "orders.>"}
    ]
  }
  APP {
    users: [{user: app, password: app}]
    imports: [
      {service: {account: JS, subject: "$JS.API.>"}, to: "JS.API.>"}
      {service: {account: JS, subject: "$JS.ACK.>"}}
      {service: {account: JS, subject: "orders.>"}}
    ]
  }
}
"""


@pytest.fixture
async def server(target_kind: str, tmp_path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path) as start:
        yield start


async def login(target: Target, user: str) -> RawClient:
    client = await RawClient.connect(target.host, target.port)
    connect = {"verbose": False, "user": user, "pass": user, "headers": True, "no_responders": True, "protocol": 1}
    await client.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
    await client.read_until(b"PONG\r\n")
    client.received.clear()
    return client


async def synced(client: RawClient, data: bytes) -> bytes:
    """Send ``data`` and a PING; what arrived up to the PONG (without it)."""
    await client.send(data + b"PING\r\n")
    await client.read_until(b"PONG\r\n")
    got = bytes(client.received)
    client.received.clear()
    return re.sub(rb"INFO \{.*?\} \r\n", b"", got).replace(b"PING\r\n", b"").removesuffix(b"PONG\r\n")


async def request_reply(a: RawClient, b: RawClient, request: bytes) -> tuple[bytes, bytes]:
    """B sends ``request``; what A received and the ``_R_`` reply subject it carries."""
    await synced(b, request)
    await asyncio.sleep(0.05)
    got = await synced(a, b"")
    match = REPLY.search(got)
    assert match is not None, got
    return got, match.group(1)


async def test_stream_imports_keep_reply_and_headers(server: Start) -> None:
    target = await server(CONFIG)
    a, b = await login(target, "a"), await login(target, "b")
    await synced(b, b"SUB from.> 1\r\nSUB ev.> 2\r\nSUB tt.> 3\r\n")
    await synced(a, b"PUB ev.x rep.y 2\r\nhi\r\nHPUB ev.h 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPUB t.q 2\r\nho\r\n")
    await asyncio.sleep(0.05)
    assert await synced(b, b"") == (
        b"MSG from.a.ev.x 1 rep.y 2\r\nhi\r\nHMSG from.a.ev.h 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\nMSG tt.q.x 3 2\r\nho\r\n"
    )
    await a.close()
    await b.close()


async def test_singleton_service_takes_one_response(server: Start) -> None:
    target = await server(CONFIG)
    a, b = await login(target, "a"), await login(target, "b")
    await synced(a, b"SUB svc.one 5\r\n")
    await synced(b, b"SUB inbox.> 9\r\n")
    got, reply = await request_reply(a, b, b"PUB uno inbox.1 3\r\nreq\r\n")
    assert got.startswith(b"HMSG svc.one 5 _R_.") and INFO.search(got) and got.endswith(b"\r\n\r\nreq\r\n")
    await synced(a, b"PUB " + reply + b" 2\r\nr1\r\nPUB " + reply + b" 2\r\nr2\r\n")
    await asyncio.sleep(0.05)
    assert await synced(b, b"") == b"MSG inbox.1 9 2\r\nr1\r\n"
    await a.close()
    await b.close()


async def test_stream_service_takes_responses_until_the_threshold(server: Start) -> None:
    target = await server(CONFIG)
    a, b = await login(target, "a"), await login(target, "b")
    await synced(a, b"SUB svc.many 6\r\nSUB chk 7\r\n")
    await synced(b, b"SUB inbox.> 9\r\n")
    _, reply = await request_reply(a, b, b"PUB svc.many inbox.2 3\r\nreq\r\n")
    await synced(a, b"PUB " + reply + b" 2\r\nr1\r\nPUB " + reply + b" 2\r\nr2\r\n")
    await asyncio.sleep(0.05)
    assert await synced(b, b"") == b"MSG inbox.2 9 2\r\nr1\r\nMSG inbox.2 9 2\r\nr2\r\n"
    await asyncio.sleep(2.2)
    await synced(a, b"PUB " + reply + b" 2\r\nr3\r\n")
    await asyncio.sleep(0.05)
    assert await synced(b, b"") == b""
    _, reply = await request_reply(a, b, b"PUB chk inbox.3 3\r\nreq\r\n")
    await synced(a, b"PUB " + reply + b" 2\r\nr1\r\nPUB " + reply + b" 0\r\n\r\nPUB " + reply + b" 2\r\nr3\r\n")
    await asyncio.sleep(0.05)
    assert await synced(b, b"") == b"MSG inbox.3 9 2\r\nr1\r\nMSG inbox.3 9 0\r\n\r\n"
    await a.close()
    await b.close()


async def test_no_responders_across_an_import(server: Start) -> None:
    target = await server(CONFIG)
    a, b = await login(target, "a"), await login(target, "b")
    await synced(b, b"SUB inbox.> 1\r\n")
    assert await synced(b, b"PUB uno inbox.1 3\r\nreq\r\nPUB remote.foo inbox.2 3\r\nreq\r\n") == (
        b"HMSG inbox.1 1 35 35\r\nNATS/1.0 503\r\nNats-Subject: uno\r\n\r\n\r\n"
        b"HMSG inbox.2 1 42 42\r\nNATS/1.0 503\r\nNats-Subject: remote.foo\r\n\r\n\r\n"
    )
    await synced(a, b"SUB > 2\r\n")
    await synced(b, b"PUB remote.foo.bar 3\r\nreq\r\n")
    await asyncio.sleep(0.05)
    got = await synced(a, b"")
    assert got.startswith(b"HMSG api.foo.bar 2 ")
    assert INFO.search(got) and got.endswith(b"\r\n\r\nreq\r\n")
    await a.close()
    await b.close()


async def test_jetstream_of_another_account(server: Start) -> None:
    """The documented pattern: APP uses JS's JetStream through imports, with the API under ``JS.API``."""
    target = await server(JS_CONFIG)
    nc = await nats.connect(f"nats://app:app@{target.host}:{target.port}")
    try:
        js = nc.jetstream(prefix="JS.API")
        info = await js.add_stream(name="ORDERS", subjects=["orders.>"])
        assert info.config.name == "ORDERS"
        ack = await js.publish("orders.1", b"one")
        assert (ack.stream, ack.seq) == ("ORDERS", 1)
        sub = await js.pull_subscribe("orders.>", durable="C", stream="ORDERS")
        msgs = await sub.fetch(1, timeout=WAIT)
        assert [(m.subject, m.data) for m in msgs] == [("orders.1", b"one")]
        await msgs[0].ack_sync()
        consumer = await js.consumer_info("ORDERS", "C")
        assert (consumer.num_ack_pending, consumer.delivered.stream_seq) == (0, 1)
    finally:
        await nc.close()
