"""Atomic and fast batches into an R3 stream across three server processes, on both targets.

Three nodes ``n1``..``n3`` started from flags (see
:mod:`tests.parity.js_processes.test_js_processes`), the same nats-py client code
against nats-server and fakejs processes.  Facts pinned (nats-server
2.15.1, an R3 stream with ``allow_atomic`` and ``allow_batched``):

- an atomic batch's staged messages are answered with an empty payload,
  its commit with ``{"stream":..,"seq":..,"batch":..,"count":..}`` (``eob``:
  the end marker not stored nor counted); every replica holds the batch,
  its ``Nats-Batch-*`` headers kept (``eob``: the last stored message gets
  ``Nats-Batch-Commit: 1``), read through ``STREAM.MSG.GET`` from each node
  in turn made the leader;
- the refusals of a single server: a gap (10176, and the batch is gone), a
  message id twice (10201), a failing ``Nats-Expected-Last-Sequence``
  (10071) store nothing; a stream without ``allow_atomic`` 10174, without
  ``allow_batched`` 10205; a batch staged on a leader that steps down is
  gone: its commit on the next leader is 10176;
- a fast batch: the start's flow ack ``{"type":"ack","seq":0,"msgs":F}``, a
  flow ack each ``F`` messages stored, the final PubAck on the commit's
  reply; a gap in ``fail`` mode (sent once the flow ack said the messages
  before it are stored) is reported and ends the batch at the last stored
  message; an unknown batch id is 10208; the other replicas still track a
  batch a gap ended (no commit was stored), and the next leader carries it
  on: a flow ack ``{"type":"ack","seq":<last stored>,"msgs":<flow>}`` on its
  last stored reply, then its commit is stored and acknowledged.
"""

from __future__ import annotations

import base64
import json

import pytest
from nats.aio.client import Client
from nats.aio.subscription import Subscription

from tests.harness.js_processes import (
    STREAM_STEPDOWN,
    STREAM_STEPDOWN_TYPE,
    ask,
    quietly,
    replicated_cluster,
    stream_leader,
)
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NODES = ("n1", "n2", "n3")


async def create_batched(client: Client, name: str, **settings: object) -> None:
    """An R3 stream on ``<name>.>`` (asked again while the meta group cannot place it yet), once led and current."""
    body = {"name": name, "subjects": [f"{name}.>"], "num_replicas": 3, **settings}

    async def create() -> object:
        return await quietly(ask(client, f"$JS.API.STREAM.CREATE.{name}", body))

    await eventually(create, lambda reply: isinstance(reply, dict) and "error" not in reply, timeout=30)
    await eventually(
        lambda: quietly(ask(client, f"$JS.API.STREAM.INFO.{name}")),
        lambda reply: isinstance(reply, dict) and replicated_cluster(reply.get("cluster") or {}),
        what="a led R3 stream",
        timeout=30,
    )


def batch_headers(batch: str, seq: int, commit: str = "", **extra: str) -> dict[str, str]:
    headers = {"Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(seq), **extra}
    if commit:
        headers["Nats-Batch-Commit"] = commit
    return headers


async def publish(client: Client, subject: str, payload: bytes, headers: dict[str, str]) -> bytes:
    reply = await client.request(subject, payload, timeout=10.0, headers=headers)
    return reply.data


def refused(stream: str, code: int, err_code: int, description: str) -> bytes:
    error = {"error": {"code": code, "err_code": err_code, "description": description}, "stream": stream, "seq": 0}
    return json.dumps(error, separators=(",", ":")).encode()


def header_block(*lines: str) -> str:
    return base64.b64encode(("NATS/1.0\r\n" + "".join(f"{line}\r\n" for line in lines) + "\r\n").encode()).decode()


async def stored(client: Client, stream: str, last: int) -> list[tuple[str, str, str]]:
    """Every message up to ``last`` as the stream's leader serves it: subject, data and headers (base64)."""
    found = []
    for seq in range(1, last + 1):
        reply = await ask(client, f"$JS.API.STREAM.MSG.GET.{stream}", {"seq": seq})
        message = reply["message"]
        found.append((message["subject"], message.get("data", ""), message.get("hdrs", "")))
    return found


async def messages(client: Client, stream: str) -> int:
    return int((await ask(client, f"$JS.API.STREAM.INFO.{stream}"))["state"]["messages"])


async def test_an_atomic_batch_is_stored_on_every_replica(client: Client) -> None:
    await create_batched(client, "ATOM", allow_atomic=True)
    assert await publish(client, "ATOM.a", b"one", batch_headers("B1", 1)) == b""
    assert await publish(client, "ATOM.b", b"two", batch_headers("B1", 2)) == b""
    assert await messages(client, "ATOM") == 0  # nothing stored before the commit
    commit = await publish(client, "ATOM.c", b"three", batch_headers("B1", 3, commit="1"))
    assert commit == b'{"stream":"ATOM","seq":3,"batch":"B1","count":3}'
    assert await publish(client, "ATOM.d", b"four", batch_headers("B2", 1)) == b""
    end = await publish(client, "ATOM.e", b"not stored", batch_headers("B2", 2, commit="eob"))
    assert end == b'{"stream":"ATOM","seq":4,"batch":"B2","count":1}'
    expected = [
        ("ATOM.a", "b25l", header_block("Nats-Batch-Id: B1", "Nats-Batch-Sequence: 1")),
        ("ATOM.b", "dHdv", header_block("Nats-Batch-Id: B1", "Nats-Batch-Sequence: 2")),
        ("ATOM.c", "dGhyZWU=", header_block("Nats-Batch-Id: B1", "Nats-Batch-Sequence: 3", "Nats-Batch-Commit: 1")),
        ("ATOM.d", "Zm91cg==", header_block("Nats-Batch-Id: B2", "Nats-Batch-Sequence: 1", "Nats-Batch-Commit: 1")),
    ]
    leader = await stream_leader(client, "ATOM")
    assert await stored(client, "ATOM", 4) == expected
    for other in [node for node in NODES if node != leader]:  # each replica leads once, and serves the batches
        answer = await ask(client, STREAM_STEPDOWN + "ATOM", {"placement": {"preferred": other}})
        assert answer == {"type": STREAM_STEPDOWN_TYPE, "success": True}
        assert await stream_leader(client, "ATOM", other_than=leader) == other
        assert await stored(client, "ATOM", 4) == expected
        leader = other
    assert await messages(client, "ATOM") == 4


async def test_atomic_batch_refusals(client: Client) -> None:
    await create_batched(client, "REF", allow_atomic=True)
    incomplete = refused("REF", 400, 10176, "atomic publish batch is incomplete")
    assert await publish(client, "REF.a", b"", batch_headers("G", 1)) == b""
    assert await publish(client, "REF.a", b"", batch_headers("G", 3)) == incomplete  # a gap
    assert await publish(client, "REF.a", b"", batch_headers("G", 2, commit="1")) == incomplete  # the batch is gone
    assert await publish(client, "REF.a", b"", batch_headers("D", 1, **{"Nats-Msg-Id": "m"})) == b""
    duplicate = await publish(client, "REF.a", b"", batch_headers("D", 2, commit="1", **{"Nats-Msg-Id": "m"}))
    assert duplicate == refused("REF", 400, 10201, "atomic publish batch contains duplicate message id")
    expecting = batch_headers("E", 1, commit="1", **{"Nats-Expected-Last-Sequence": "7"})
    assert await publish(client, "REF.a", b"", expecting) == refused("REF", 400, 10071, "wrong last sequence: 0")
    assert await messages(client, "REF") == 0
    # A batch staged on the leader goes with its leadership.
    leader = await stream_leader(client, "REF")
    assert await publish(client, "REF.a", b"", batch_headers("L", 1)) == b""
    assert await ask(client, STREAM_STEPDOWN + "REF") == {"type": STREAM_STEPDOWN_TYPE, "success": True}
    await stream_leader(client, "REF", other_than=leader)
    assert await publish(client, "REF.a", b"", batch_headers("L", 2, commit="1")) == incomplete
    assert await messages(client, "REF") == 0
    await create_batched(client, "OFF")
    disabled = await publish(client, "OFF.a", b"", batch_headers("X", 1, commit="1"))
    assert disabled == refused("OFF", 400, 10174, "atomic publish is disabled")
    plain = await client.request("OFF.a", b"", timeout=10.0)  # without a batch id: a plain publish
    assert plain.data == b'{"stream":"OFF","seq":1}'


def fi(batch: str, seq: int, op: int, gap: str = "ok", flow: int = 10) -> str:
    """A fast batch's reply subject under the ``R.`` prefix the test listens on."""
    return f"R.{batch}.{flow}.{gap}.{seq}.{op}.$FI"


async def answers(subscription: Subscription, count: int) -> list[tuple[str, bytes]]:
    """The next ``count`` replies: subject and payload."""
    taken = []
    for _ in range(count):
        reply = await subscription.next_msg(timeout=10.0)
        taken.append((reply.subject, reply.data))
    return taken


def flow(seq: int, every: int) -> bytes:
    return b'{"type":"ack","seq":%d,"msgs":%d}' % (seq, every)


async def test_fast_batches_with_their_flow_acks(client: Client) -> None:
    await create_batched(client, "FAST", allow_batched=True)
    replies = await client.subscribe("R.>")
    sent = [fi("F", 1, 0, flow=2)] + [fi("F", seq, 1, flow=2) for seq in range(2, 8)] + [fi("F", 8, 2, flow=2)]
    for seq, reply in enumerate(sent, start=1):
        await client.publish("FAST.f", b"f%d" % seq, reply=reply)
    expected = [(sent[0], flow(0, 2))] + [(sent[seq - 1], flow(seq, 2)) for seq in (2, 4, 6)]
    assert await answers(replies, 5) == [*expected, (sent[7], b'{"stream":"FAST","seq":8,"batch":"F","count":8}')]
    # In fail mode a gap ends the batch at the last message stored (the flow ack says it is).
    first, gap = fi("Q", 1, 0, "fail", flow=1), fi("Q", 3, 1, "fail", flow=1)
    await client.publish("FAST.q", b"q1", reply=first)
    assert await answers(replies, 2) == [(first, flow(0, 1)), (first, flow(1, 1))]
    await client.publish("FAST.q", b"q3", reply=gap)
    assert await answers(replies, 2) == [
        (gap, b'{"type":"gap","last_seq":2,"seq":3}'),
        (gap, b'{"stream":"FAST","seq":9,"batch":"Q","count":1}'),
    ]
    unknown = fi("Z", 4, 1)
    await client.publish("FAST.z", b"", reply=unknown)
    assert await answers(replies, 1) == [(unknown, refused("FAST", 400, 10208, "batch publish ID unknown"))]
    # The other replicas still track the batch the gap ended (no commit was stored): the next leader carries it
    # on, telling its publisher with a flow ack on the last reply stored.
    leader = await stream_leader(client, "FAST")
    assert await ask(client, STREAM_STEPDOWN + "FAST") == {"type": STREAM_STEPDOWN_TYPE, "success": True}
    await stream_leader(client, "FAST", other_than=leader)
    assert await answers(replies, 1) == [(first, flow(1, 1))]
    commit = fi("Q", 2, 2, "fail", flow=1)
    await client.publish("FAST.q", b"q2", reply=commit)
    assert await answers(replies, 1) == [(commit, b'{"stream":"FAST","seq":10,"batch":"Q","count":2}')]
    held = await stored(client, "FAST", 10)
    assert [(subject, base64.b64decode(data)) for subject, data, _ in held] == [
        *(("FAST.f", b"f%d" % seq) for seq in range(1, 9)),
        ("FAST.q", b"q1"),
        ("FAST.q", b"q2"),
    ]
    await create_batched(client, "SLOW")
    off = fi("O", 1, 0)
    await client.publish("SLOW.a", b"", reply=off)
    assert await answers(replies, 1) == [(off, refused("SLOW", 400, 10205, "batch publish is disabled"))]
