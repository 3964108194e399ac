"""File storage across restarts: streams, messages, dedup and consumers come back.

The same client code runs against both targets: store, restart the server on
the same port and store directory, and compare what it reports.  The kill -9
test runs each server as a subprocess and kills it right after the last
acknowledgement: every acknowledged message must be there afterwards.
"""

from __future__ import annotations

import json
import time

import nats
import pytest

from fakejs.targets import ServerProcess
from tests.harness.js import api, create_stream, normalize
from tests.harness.targets import FAKEJS_COMMAND, REAL_BINARY, REAL_MISSING_REASON, Target
from tests.harness.wait import WAIT


async def fetch(nc: nats.NATS, stream: str, consumer: str, batch: int) -> list:
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    await nc.publish(
        f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}",
        json.dumps({"batch": batch, "expires": 500_000_000}).encode(),
        reply=inbox,
    )
    msgs = []
    while len(msgs) < batch:
        msg = await sub.next_msg(timeout=WAIT)
        if msg.headers and "Status" in msg.headers:
            break
        msgs.append(msg)
    await sub.unsubscribe()
    return msgs


async def test_file_streams_and_consumers_survive_a_restart(target: Target) -> None:
    nc = await nats.connect(target.url)
    await create_stream(nc, {"name": "S", "subjects": ["s.>"], "storage": "file"})
    await create_stream(nc, {"name": "M", "subjects": ["m.>"], "storage": "memory"})
    js = nc.jetstream()
    for i in range(6):
        await js.publish(f"s.{i % 3}", f"v{i}".encode(), headers={"Nats-Msg-Id": f"id-{i}"})
    await js.publish("m.x", b"gone")
    await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 2})
    config = {"durable_name": "C", "ack_policy": "explicit", "ack_wait": 30_000_000_000}
    reply = await api(nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": config})
    assert "error" not in reply, reply
    delivered = await fetch(nc, "S", "C", 3)
    assert len(delivered) == 3
    for msg in delivered[:2]:
        await msg.ack_sync()
    before_stream = normalize(await api(nc, "$JS.API.STREAM.INFO.S"))
    before_consumer = normalize(await api(nc, "$JS.API.CONSUMER.INFO.S.C"))
    await nc.close()

    await target.restart()

    nc = await nats.connect(target.url)
    after_stream = normalize(await api(nc, "$JS.API.STREAM.INFO.S"))
    after_consumer = normalize(await api(nc, "$JS.API.CONSUMER.INFO.S.C"))
    assert after_stream["state"] == before_stream["state"]
    assert after_stream["config"] == before_stream["config"]
    # Last-activity times are not kept across a restart.
    for key in ("delivered", "ack_floor"):
        before_consumer[key].pop("last_active")
    for key in ("delivered", "ack_floor", "num_ack_pending", "num_pending", "config"):
        assert after_consumer[key] == before_consumer[key], key
    names = await api(nc, "$JS.API.STREAM.NAMES")
    assert names["streams"] == ["S"]  # memory streams do not survive
    # The duplicate window survived too.
    ack = await nc.request("s.0", b"again", headers={"Nats-Msg-Id": "id-3"}, timeout=WAIT)
    assert ack.data == b'{"stream":"S","seq":4,"duplicate": true}'
    # Delivery goes on where it stopped.
    more = await fetch(nc, "S", "C", 3)
    assert [m.metadata.sequence.stream for m in more] == [5, 6]
    await nc.close()


async def test_purges_and_limits_survive_a_restart(target: Target) -> None:
    nc = await nats.connect(target.url)
    await create_stream(nc, {"name": "P", "subjects": ["p.>"], "storage": "file", "max_msgs_per_subject": 2})
    js = nc.jetstream()
    for i in range(10):
        await js.publish(f"p.{i % 3}", str(i).encode())
    await api(nc, "$JS.API.STREAM.PURGE.P", {"filter": "p.1"})
    await api(nc, "$JS.API.STREAM.PURGE.P", {"seq": 7})
    before = normalize(await api(nc, "$JS.API.STREAM.INFO.P", {"deleted_details": True}))
    await nc.close()
    await target.restart()
    nc = await nats.connect(target.url)
    after = normalize(await api(nc, "$JS.API.STREAM.INFO.P", {"deleted_details": True}))
    assert after["state"] == before["state"]
    ack = await nc.request("p.9", b"x", timeout=WAIT)
    assert ack.data == b'{"stream":"P","seq":11}'
    await nc.close()


def _server(kind: str, store: str) -> ServerProcess:
    """The server as a subprocess (fakejs through its command line) on ``store``, not started."""
    log_name = f"{kind}-{time.monotonic_ns()}.log"
    if kind == "real":
        if REAL_BINARY is None:
            pytest.skip(REAL_MISSING_REASON)
        return ServerProcess(REAL_BINARY, store_dir=store, log_name=log_name)
    return ServerProcess(command=FAKEJS_COMMAND, store_dir=store, log_name=log_name)


async def test_kill_9_right_after_the_ack_loses_nothing(target_kind: str, tmp_path) -> None:
    store = str(tmp_path)
    server = await _server(target_kind, store).start_async()
    try:
        nc = await nats.connect(server.url)
        await create_stream(nc, {"name": "K", "subjects": ["k.>"], "storage": "file"})
        js = nc.jetstream()
        acked = []
        for i in range(200):
            ack = await js.publish(f"k.{i % 7}", b"payload-%d" % i)
            acked.append(ack.seq)
        server.kill()
        await nc.close()
    finally:
        server.kill()
    server = await _server(target_kind, store).start_async()
    try:
        nc = await nats.connect(server.url)
        info = await api(nc, "$JS.API.STREAM.INFO.K")
        assert info["state"]["messages"] == 200
        assert info["state"]["last_seq"] == acked[-1] == 200
        last = await api(nc, "$JS.API.STREAM.MSG.GET.K", {"seq": 200})
        assert last["message"]["subject"] == "k.3"
        await nc.close()
    finally:
        await server.stop_async()
