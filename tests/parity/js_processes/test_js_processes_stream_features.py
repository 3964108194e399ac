"""Republish, subject delete markers and message schedules of R3 streams across three server processes.

Three nodes ``n1``..``n3`` (``ProcessCluster(kind * 3, jetstream=True)``), the
same nats-py client code against nats-server and fakejs processes.  Facts
pinned (nats-server 2.15.1): what a client sees is what a single server
shows, made once by the stream's leader and stored at the same sequence on
every replica.

- ``republish``: a subscriber to the destination, on any node, gets each
  stored message once, its headers (if any) followed by ``Nats-Stream``,
  ``Nats-Subject``, ``Nats-Sequence``, ``Nats-Time-Stamp`` and
  ``Nats-Last-Sequence`` (the subject's sequence before it, 0 for its first);
- ``subject_delete_marker_ttl`` (1 s) with ``max_age`` (1 s), the leader
  stepping down once the messages are stored: of a subject's two messages
  the older goes, the newer is replaced by a marker (headers
  ``Nats-Marker-Reason: MaxAge``, ``Nats-TTL: 1s``, ``Nats-Rollup: sub``, no
  payload); a message whose own ``Nats-TTL`` runs out leaves one too (the
  two markers at sequences 4 and 5, in either order); the
  markers go when their TTL runs out, leaving the stream empty after
  sequence 5;
- ``allow_msg_schedules``: a ``@at`` schedule fires once, after a leader
  step-down between its publish and its time: its message is stored once at
  sequence 2 (``Nats-Scheduler``, ``Nats-Schedule-Next: purge``), the
  schedule purged, and the next publish gets sequence 3.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.gocompat import gotime
from tests.harness.js_processes import leader, quietly, replicated_cluster
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SECOND = 1_000_000_000
MARKER = [("Nats-Marker-Reason", "MaxAge"), ("Nats-TTL", "1s"), ("Nats-Rollup", "sub")]


async def api(client: Client, subject: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``$JS.API`` request's reply, asked again while the cluster elects (no reply, or no leader yet)."""
    payload = json.dumps(body).encode() if body is not None else b""

    async def ask() -> object:
        reply = await quietly(client.request(subject, payload, timeout=3))
        return reply if isinstance(reply, Exception) else json.loads(reply.data)  # type: ignore[attr-defined]

    def answered(reply: object) -> bool:
        return isinstance(reply, dict) and reply.get("error", {}).get("code") not in (503,)

    found = await eventually(ask, answered, what=f"an answer to {subject}", timeout=30)
    return found  # type: ignore[return-value]


async def create_r3(client: Client, config: dict[str, Any]) -> dict[str, Any]:
    """Create an R3 stream, then wait until it is led with both replicas current; its info."""
    name = config["name"]
    await eventually(  # asked again while the meta group does not know every server yet (10005 on nats-server)
        lambda: api(client, f"$JS.API.STREAM.CREATE.{name}", {"num_replicas": 3, **config}),
        lambda reply: "error" not in reply,
        what=f"{name} created",
        timeout=30,
    )
    info = await eventually(
        lambda: api(client, f"$JS.API.STREAM.INFO.{name}"),
        lambda reply: "cluster" in reply and replicated_cluster(reply["cluster"]),
        what="a led R3 stream",
        timeout=30,
    )
    return info


async def record(client: Client, stream: str) -> list[Msg]:
    """Every message the stream stores from now on, as a push consumer delivers it."""
    delivered: list[Msg] = []

    async def keep(msg: Msg) -> None:
        delivered.append(msg)

    inbox = client.new_inbox()
    await client.subscribe(inbox, cb=keep)
    config = {"deliver_subject": inbox, "ack_policy": "none", "deliver_policy": "all"}
    reply = await api(client, f"$JS.API.CONSUMER.CREATE.{stream}", {"stream_name": stream, "config": config})
    assert "error" not in reply, reply
    return delivered


def republished(messages: list[Msg]) -> list[Msg]:
    """What a subscriber to ``out.>`` got from the stream (not the test's own probes and barriers)."""
    return [msg for msg in messages if msg.subject not in ("out.probe", "out.barrier")]


def view(msg: Msg) -> tuple[str, list[tuple[str, str]], bytes]:
    return msg.subject, list((msg.headers or {}).items()), msg.data


async def state_of(client: Client, stream: str, done: Any, what: str) -> dict[str, Any]:
    info = await eventually(
        lambda: api(client, f"$JS.API.STREAM.INFO.{stream}"),
        lambda reply: "state" in reply and done(reply["state"]),
        what=what,
        timeout=30,
    )
    return info["state"]  # type: ignore[no-any-return]


async def test_an_r3_stream_republishes_each_message_once(clients: list[Client]) -> None:
    await create_r3(clients[0], {"name": "RP", "subjects": ["RP.>"], "republish": {"src": "RP.>", "dest": "out.>"}})
    heard: list[list[Msg]] = [[], [], []]
    for index, client in enumerate(clients):

        async def keep(msg: Msg, index: int = index) -> None:
            heard[index].append(msg)

        await client.subscribe("out.>", cb=keep)
        await client.flush()

    async def probe() -> list[set[bytes]]:
        for index, client in enumerate(clients):
            await client.publish("out.probe", b"%d" % index)
            await client.flush()
        return [{msg.data for msg in messages if msg.subject == "out.probe"} for messages in heard]

    await eventually(probe, lambda seen: all(len(got) == 3 for got in seen), what="every subscriber known everywhere")
    sent = [("RP.a", {}, b"m1"), ("RP.b", {}, b"m2"), ("RP.a", {"X-Own": "yes"}, b"m3")]
    for number, (subject, headers, data) in enumerate(sent):
        ack = await clients[number].jetstream(timeout=10.0).publish(subject, data, headers=headers or None)
        assert ack.seq == number + 1
    await eventually(
        lambda: asyncio.sleep(0, [len(republished(messages)) for messages in heard]),
        lambda counts: counts == [3, 3, 3],
        what="three republished messages on every node",
    )
    # Every replica has applied them; a core message from each node then comes after anything it republished.
    await eventually(
        lambda: api(clients[1], "$JS.API.STREAM.INFO.RP"),
        lambda reply: replicated_cluster(reply.get("cluster", {})) and reply["state"]["messages"] == 3,
        what="current replicas",
    )
    for client in clients:
        await client.publish("out.barrier", b"")
        await client.flush()
    await eventually(
        lambda: asyncio.sleep(0, [sum(msg.subject == "out.barrier" for msg in messages) for messages in heard]),
        lambda counts: counts == [3, 3, 3],
        what="the barriers",
    )
    for messages in heard:
        copies = republished(messages)
        assert [(msg.subject, msg.data) for msg in copies] == [("out.a", b"m1"), ("out.b", b"m2"), ("out.a", b"m3")]
        stamps = set()
        for seq, (msg, (subject, headers, _)) in enumerate(zip(copies, sent, strict=True), start=1):
            got = dict(msg.headers or {})
            stamp = got.pop("Nats-Time-Stamp")
            assert gotime.parse_rfc3339(stamp) > 0 and stamp.endswith("Z")
            stamps.add(stamp)
            assert list(got.items()) == [
                *headers.items(),
                ("Nats-Stream", "RP"),
                ("Nats-Subject", subject),
                ("Nats-Sequence", str(seq)),
                ("Nats-Last-Sequence", "1" if seq == 3 else "0"),
            ]
        assert len(stamps) == 3


async def test_an_r3_stream_leaves_delete_markers_across_a_leader_step_down(clients: list[Client]) -> None:
    config = {"name": "SD", "subjects": ["SD.>"], "max_age": SECOND, "subject_delete_marker_ttl": SECOND}
    info = await create_r3(clients[0], config)
    assert (info["config"]["allow_msg_ttl"], info["config"]["allow_rollup_hdrs"]) == (True, True)
    delivered = await record(clients[2], "SD")
    js = clients[1].jetstream(timeout=10.0)
    await js.publish("SD.a", b"1")
    await js.publish("SD.a", b"2")
    await js.publish("SD.b", b"3", headers={"Nats-TTL": "1s"})
    stepped = await api(clients[2], "$JS.API.STREAM.LEADER.STEPDOWN.SD")
    assert stepped.get("success") is True, stepped
    await eventually(lambda: asyncio.sleep(0, len(delivered)), lambda count: count >= 5, what="two markers", timeout=30)
    state = await state_of(
        clients[0], "SD", lambda state: state["messages"] == 0, "the markers gone when their TTL ran out"
    )
    assert (state["first_seq"], state["last_seq"]) == (6, 5)
    assert [view(msg) for msg in delivered[:3]] == [
        ("SD.a", [], b"1"),
        ("SD.a", [], b"2"),
        ("SD.b", [("Nats-TTL", "1s")], b"3"),
    ]
    # nats-server writes the two markers in either order
    assert sorted(view(msg) for msg in delivered[3:]) == [("SD.a", MARKER, b""), ("SD.b", MARKER, b"")]
    assert [msg.metadata.sequence.stream for msg in delivered] == [1, 2, 3, 4, 5]


async def test_an_r3_stream_s_schedule_fires_once_across_a_leader_step_down(clients: list[Client]) -> None:
    await create_r3(clients[0], {"name": "SC", "subjects": ["SC.>"], "allow_msg_schedules": True})
    delivered = await record(clients[1], "SC")
    before = await leader(clients[0], "SC")
    at = gotime.rfc3339(time.time_ns() + 2 * SECOND)
    headers = {"Nats-Schedule": f"@at {at}", "Nats-Schedule-Target": "SC.out"}
    ack = await clients[0].jetstream(timeout=10.0).publish("SC.later", b"payload", headers=headers)
    assert ack.seq == 1
    stepped = await api(clients[2], "$JS.API.STREAM.LEADER.STEPDOWN.SC")
    assert stepped.get("success") is True, stepped
    await eventually(
        lambda: api(clients[2], "$JS.API.STREAM.INFO.SC"),
        lambda reply: replicated_cluster(reply.get("cluster", {})) and reply["cluster"]["leader"] != before,
        what="another leader",
        timeout=30,
    )
    state = await state_of(
        clients[2], "SC", lambda state: state["last_seq"] >= 2 and state["messages"] == 1, "the schedule fired"
    )
    assert (state["first_seq"], state["last_seq"]) == (2, 2)
    after = await clients[1].jetstream(timeout=10.0).publish("SC.next", b"next")
    assert after.seq == 3  # nothing else was stored
    await eventually(lambda: asyncio.sleep(0, len(delivered)), lambda count: count == 3, what="three deliveries")
    assert [view(msg) for msg in delivered] == [
        ("SC.later", [*headers.items(), ("Nats-Rollup", "sub")], b"payload"),
        ("SC.out", [("Nats-Scheduler", "SC.later"), ("Nats-Schedule-Next", "purge")], b"payload"),
        ("SC.next", [], b"next"),
    ]
