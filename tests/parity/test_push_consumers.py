"""Push consumers and ordered consumers as nats-server 2.15.1 runs them.

Every expectation was read off the real 2.15.1 binary (raw sockets and nats-py 2.16);
the tests assert what a client can see, byte for byte where it can see bytes.

Facts pinned down here (R1, default account, v1 ack/flow-control subjects):

* Activation: a push consumer delivers only while there is *exact* interest in
  ``deliver_subject``: a plain ``SUB`` on that literal subject (without a
  ``deliver_group``), or a queue ``SUB`` with exactly the consumer's group (with
  one).  Wildcard subscriptions that match, a plain sub on a group consumer and
  a queue sub on a group-less consumer (or one of another group) do not
  activate it.  Once active, deliveries are ordinary publishes to
  ``deliver_subject``: every matching subscription (wildcards, plain subs,
  other queue groups) gets a copy.  ``push_bound: true`` appears in consumer
  info/list exactly while active.  Interest goes with UNSUB or with the
  connection; with a deliver group it lasts until the group's last member leaves.
* Without interest nothing at all is sent (no messages, no redeliveries, no
  heartbeats): unacked messages stay pending (num_redelivered stays 0 even past
  ack_wait) and are redelivered (delivery count 2, new consumer sequences)
  first when interest returns, then new messages follow.
* Deleting a push consumer sends nothing to ``deliver_subject``.
* Flow control: the consumer counts ``len(deliver_subject) + len(ack reply) +
  len(header block) + len(payload)`` of each delivery into pending bytes (acks do
  not reduce it).  The window starts at 2 MiB (32 MiB / 16).  Right after the
  delivery that makes pending bytes *exceed* half the window, the server sends
  ``HMSG <deliver> <sid> $JS.FC.<stream>.<consumer>.<4 base62 chars> 36 36\\r\\n
  NATS/1.0 100 FlowControl Request\\r\\n\\r\\n\\r\\n``.  Before each delivery it
  checks ``pending > window``: the delivery that crosses the window is still
  sent, then delivery stalls until any message arrives on the latest FC
  subject (an older or unknown id is ignored).  An answer subtracts the bytes
  pending when the request was sent and doubles the window (up to 32 MiB).
  A stall survives the subscriber leaving and coming back; the request is not
  sent again.
* Idle heartbeats (push): ``NATS/1.0 100 Idle Heartbeat\\r\\nNats-Last-Consumer:
  <n>\\r\\nNats-Last-Stream: <n>\\r\\n\\r\\n`` on ``deliver_subject``, no reply
  subject, every ``idle_heartbeat`` of idleness (the timer restarts after every
  delivery, so none while messages flow), only while active.  Last-Consumer is the
  last consumer sequence delivered; Last-Stream is the consumer's *scan position*
  minus one (a filtered consumer that has scanned to the end reports the
  stream's last sequence, not the last delivered one).  While a flow-control
  request is unanswered the heartbeat also carries ``Nats-Consumer-Stalled: <fc
  subject>`` (the header block then ends after it).
* rate_limit_bps: a token bucket of ``bps / 8`` bytes per second whose burst is the
  stream's max_msg_size (or max_payload); each delivery takes ``len(original
  subject) + len(ack reply) + len(headers) + len(payload)`` tokens.  A delivery
  larger than the burst is never sent (the consumer hangs on it).
* replay_policy original: the first message goes at once, each next one after the
  difference of the stored timestamps; once the consumer has caught up with the
  stream's last sequence at start, replay is off for good (later backlogs go at once).
* max_ack_pending and ack_wait work on push exactly as on pull; ``+NXT`` on a push
  delivery acks it and answers ``409 Consumer is push based``.
* inactive_threshold: a push consumer (ephemeral or durable) without interest for
  the threshold is deleted; interest returning in time cancels it.
* nats-py: ``js.subscribe`` creates ``deliver_subject=<inbox>``,
  ``filter_subject=<subject>``, ack explicit; ``queue=q`` makes durable ``q`` with
  deliver_group ``q``; a second subscribe to a bound durable is refused because of
  ``push_bound``.  ``ordered_consumer=True`` creates an ephemeral with ack none,
  max_deliver 1, ack_wait 22h, flow_control, idle_heartbeat (default 5s),
  num_replicas 1, mem_storage; on a gap (sequence mismatch or two missed
  heartbeats) it unsubscribes, subscribes to a new inbox and creates a new
  consumer with deliver_policy by_start_sequence from the last stream sequence
  + 1, leaving the old consumer to its inactive_threshold.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

import nats
import pytest

from tests.harness.env import env_fixture
from tests.harness.js import MS, SEC, api
from tests.harness.push import PushEnv, PushWire
from tests.harness.targets import Target
from tests.harness.wait import WAIT
from tests.harness.wire import Frame

BIG = 500_000  # payload that makes flow control kick in after a few messages

# --------------------------------------------------------------------------- expected bytes

TS = re.compile(rb"(\$JS\.ACK\.[^. ]+\.[^. ]+\.\d+\.\d+\.\d+\.)\d{19}(\.\d+)")


def no_ts(raw: bytes) -> bytes:
    """Replace the timestamp token of an ack reply with ``<ts>``."""
    return TS.sub(rb"\1<ts>\2", raw)


def msg(subject: str, sid: int, reply: str, payload: bytes) -> bytes:
    return b"MSG %s %d %s %d\r\n%s\r\n" % (subject.encode(), sid, reply.encode(), len(payload), payload)


def ack(dc: int, sseq: int, cseq: int, pending: int, consumer: str = "C", ts: str = "<ts>") -> str:
    return f"$JS.ACK.S.{consumer}.{dc}.{sseq}.{cseq}.{ts}.{pending}"


def hmsg(subject: str, sid: int, header: bytes, payload: bytes = b"", reply: str = "") -> bytes:
    rp = b" " + reply.encode() if reply else b""
    return b"HMSG %s %d%s %d %d\r\n%s%s\r\n" % (
        subject.encode(),
        sid,
        rp,
        len(header),
        len(header) + len(payload),
        header,
        payload,
    )


def heartbeat(subject: str, sid: int, last_consumer: int, last_stream: int, stalled: str | None = None) -> bytes:
    header = b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: %d\r\nNats-Last-Stream: %d\r\n" % (
        last_consumer,
        last_stream,
    )
    if stalled:
        header += b"Nats-Consumer-Stalled: %s\r\n" % stalled.encode()
    return hmsg(subject, sid, header + b"\r\n")


FC_HEADER = b"NATS/1.0 100 FlowControl Request\r\n\r\n"
FC_REPLY = re.compile(r"^\$JS\.FC\.S\.C\.[0-9A-Za-z]{4}$")


def layout(frames: list[Frame]) -> list[str]:
    """Messages as their subject, flow-control requests as ``FC``, heartbeats as ``HB``."""
    return ["FC" if f.is_fc else "HB" if f.is_hb else f.status or f.subject for f in frames]


def delivery_size(frame: Frame, deliver_subject: str = "dlv") -> int:
    """What a delivery adds to the consumer's flow-control pending bytes."""
    return len(deliver_subject) + len(frame.reply) + len(frame.header or b"") + len(frame.payload)


# fakejs runs on a manual clock here: every wait below lets the server's time pass explicitly.
pytestmark = pytest.mark.manual_clock

env = env_fixture(PushEnv, PushEnv.start)


def counts(info: dict) -> dict:
    """The state numbers of a consumer info reply."""
    return {
        "delivered": (info["delivered"]["consumer_seq"], info["delivered"]["stream_seq"]),
        "ack_floor": (info["ack_floor"]["consumer_seq"], info["ack_floor"]["stream_seq"]),
        "num_ack_pending": info["num_ack_pending"],
        "num_redelivered": info["num_redelivered"],
        "num_pending": info["num_pending"],
    }


# =========================================================================== interest and activation


async def test_delivery_waits_for_an_exact_subscription(env: PushEnv) -> None:
    """Wildcard subscriptions matching deliver_subject do not activate it; once active they get copies."""
    await env.publish_many(3)
    created = await env.add_consumer(deliver_subject="d.x")
    assert "push_bound" not in created
    wire = await env.wire()
    wildcards = [await wire.sub(pattern) for pattern in ("d.*", "d.>", "*.x")]
    await wire.quiet(0.3)
    assert wire.frames == []
    info = await env.info()
    assert "push_bound" not in info
    assert counts(info) == {
        "delivered": (0, 0),
        "ack_floor": (0, 0),
        "num_ack_pending": 0,
        "num_redelivered": 0,
        "num_pending": 3,
    }

    exact = await wire.sub("d.x")
    await wire.wait_msgs(exact, 3)
    await wire.ping()
    expected = [(f"s.{i}", ack(1, i + 1, i + 1, 2 - i), b"m%d" % i) for i in range(3)]
    for sid in [exact, *wildcards]:
        assert [no_ts(f.raw) for f in wire.on(sid)] == [msg(s, sid, r, p) for s, r, p in expected]
    assert (await env.info())["push_bound"] is True


async def test_delivery_bytes_carry_the_stored_timestamp(env: PushEnv) -> None:
    """``MSG <subject> <sid> $JS.ACK.S.C.<dc>.<sseq>.<cseq>.<stored ns>.<pending> <n>``; headers make it an HMSG."""
    await env.publish("s.a", b"hello")
    await env.publish("s.b", b"x", headers={"K": "v"})
    wire = await env.wire()
    sid = await wire.sub("dlv")
    created = await env.add_consumer()
    assert created["push_bound"] is True
    frames = await wire.wait_msgs(sid, 2)
    ts1, ts2 = await env.stored_ns(1), await env.stored_ns(2)
    assert [f.raw for f in frames] == [
        msg("s.a", sid, ack(1, 1, 1, 1, ts=str(ts1)), b"hello"),
        hmsg("s.b", sid, b"NATS/1.0\r\nK: v\r\n\r\n", b"x", reply=ack(1, 2, 2, 0, ts=str(ts2))),
    ]


async def test_live_messages_follow_while_subscribed(env: PushEnv) -> None:
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await env.add_consumer()
    for i in range(3):
        await env.publish(f"s.{i}", b"p%d" % i)
        frames = await wire.wait_msgs(sid, i + 1)
        assert no_ts(frames[-1].raw) == msg(f"s.{i}", sid, ack(1, i + 1, i + 1, 0), b"p%d" % i)


async def test_unsubscribe_pauses_delivery(env: PushEnv) -> None:
    """Without interest nothing is delivered and push_bound disappears; resubscribing resumes where it stopped."""
    await env.publish_many(2)
    await env.add_consumer(deliver_subject="d.x")
    wire = await env.wire()
    witness = await wire.sub("d.*")
    sid = await wire.sub("d.x")
    await wire.wait_msgs(sid, 2)
    await wire.unsub(sid)
    await env.eventually(env.push_bound_is("C", None), "push_bound to go")
    await env.publish_many(2, start=2)
    await wire.quiet(0.3)
    assert len(wire.on(witness)) == 2
    assert counts(await env.info()) == {
        "delivered": (2, 2),
        "ack_floor": (2, 2),
        "num_ack_pending": 0,
        "num_redelivered": 0,
        "num_pending": 2,
    }

    again = await wire.sub("d.x")
    frames = await wire.wait_msgs(again, 2)
    assert [no_ts(f.raw) for f in frames] == [
        msg("s.2", again, ack(1, 3, 3, 1), b"m2"),
        msg("s.3", again, ack(1, 4, 4, 0), b"m3"),
    ]
    assert (await env.info())["push_bound"] is True


async def test_closing_the_connection_removes_interest(env: PushEnv) -> None:
    await env.add_consumer()
    wire = await env.wire()
    await wire.sub("dlv")
    await env.eventually(env.push_bound_is("C", True), "push_bound")
    await wire.close()
    await env.eventually(env.push_bound_is("C", None), "push_bound to go")
    await env.publish_many(2)
    await env.elapse(0.1)
    assert counts(await env.info())["num_pending"] == 2
    other = await env.wire()
    sid = await other.sub("dlv")
    assert len(await other.wait_msgs(sid, 2)) == 2


async def test_unacked_messages_wait_for_interest(env: PushEnv) -> None:
    """Past ack_wait without interest nothing is redelivered; on return redeliveries come first, then new messages."""
    await env.publish_many(2)
    await env.add_consumer(deliver_subject="d.x", ack_policy="explicit", ack_wait=200 * MS)
    wire = await env.wire()
    witness = await wire.sub("d.*")
    sid = await wire.sub("d.x")
    await wire.wait_msgs(sid, 2)
    await wire.unsub(sid)
    await env.eventually(env.push_bound_is("C", None), "push_bound to go")
    await env.publish("s.2", b"m2")
    await wire.quiet(0.5)
    assert len(wire.on(witness)) == 2
    assert counts(await env.info()) == {
        "delivered": (2, 2),
        "ack_floor": (0, 0),
        "num_ack_pending": 2,
        "num_redelivered": 0,
        "num_pending": 1,
    }

    again = await wire.sub("d.x")
    frames = await wire.wait_msgs(again, 3)
    assert [no_ts(f.raw) for f in frames] == [
        msg("s.0", again, ack(2, 1, 3, 1), b"m0"),
        msg("s.1", again, ack(2, 2, 4, 1), b"m1"),
        msg("s.2", again, ack(1, 3, 5, 0), b"m2"),
    ]
    assert counts(await env.info()) == {
        "delivered": (5, 3),
        "ack_floor": (0, 0),
        "num_ack_pending": 3,
        "num_redelivered": 2,
        "num_pending": 0,
    }


async def test_push_bound_in_consumer_list(env: PushEnv) -> None:
    await env.add_consumer("A", deliver_subject="da")
    await env.add_consumer("B", deliver_subject="db")
    wire = await env.wire()
    await wire.sub("db")
    await env.eventually(env.push_bound_is("B", True), "B to be bound")  # the server notes interest asynchronously
    reply = await api(env.nc, "$JS.API.CONSUMER.LIST.S")
    bound = {c["name"]: c.get("push_bound") for c in reply["consumers"]}
    assert bound == {"A": None, "B": True}


async def test_queue_subscription_does_not_activate_a_consumer_without_group(env: PushEnv) -> None:
    await env.publish_many(2)
    await env.add_consumer()
    wire = await env.wire()
    queued = await wire.sub("dlv", "g")
    await wire.quiet(0.3)
    assert wire.frames == [] and await env.push_bound() is None
    plain = await wire.sub("dlv")
    await wire.wait_msgs(plain, 2)
    await wire.wait_msgs(queued, 2)  # the queue member gets its copy once delivery runs
    assert await env.push_bound() is True


async def test_deliver_group_needs_a_queue_subscription_of_that_group(env: PushEnv) -> None:
    """A plain sub or another group does not activate a deliver_group consumer; once active every sub gets its copy."""
    await env.publish_many(3)
    await env.add_consumer(deliver_group="g")
    wire = await env.wire()
    plain = await wire.sub("dlv")
    other = await wire.sub("dlv", "h")
    await wire.quiet(0.3)
    assert wire.frames == [] and await env.push_bound() is None
    member = await wire.sub("dlv", "g")
    for sid in (plain, other, member):
        frames = await wire.wait_msgs(sid, 3)
        assert [no_ts(f.raw) for f in frames] == [
            msg(f"s.{i}", sid, ack(1, i + 1, i + 1, 2 - i), b"m%d" % i) for i in range(3)
        ]
    assert await env.push_bound() is True


async def test_deliver_group_gives_each_message_to_one_member(env: PushEnv) -> None:
    await env.add_consumer(deliver_group="g")
    first, second = await env.wire(), await env.wire()
    a = await first.sub("dlv", "g")
    b = await second.sub("dlv", "g")
    await env.publish_many(40)
    deadline = time.monotonic() + WAIT
    while len(first.on(a)) + len(second.on(b)) < 40 and time.monotonic() < deadline:
        await first.pump(0.02)
        await second.pump(0.02)
    await first.quiet(0.1)
    await second.quiet(0.1)
    got_a = [f.subject for f in first.on(a)]
    got_b = [f.subject for f in second.on(b)]
    assert sorted(got_a + got_b, key=lambda s: int(s[2:])) == [f"s.{i}" for i in range(40)]
    assert got_a and got_b


async def test_deliver_group_interest_lasts_until_the_last_member_leaves(env: PushEnv) -> None:
    await env.add_consumer(deliver_group="g")
    wire = await env.wire()
    a = await wire.sub("dlv", "g")
    b = await wire.sub("dlv", "g")
    await env.eventually(env.push_bound_is("C", True), "push_bound")
    await wire.unsub(a)
    await env.publish("s.0", b"m0")
    await wire.wait_msgs(b, 1)
    assert await env.push_bound() is True
    await wire.unsub(b)
    await env.eventually(env.push_bound_is("C", None), "push_bound to go")


async def test_deleting_a_push_consumer_sends_nothing(env: PushEnv) -> None:
    """Heartbeats stop and no status goes to deliver_subject when the consumer is deleted."""
    await env.add_consumer(idle_heartbeat=100 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait(sid, 1)  # a heartbeat
    reply = await api(env.nc, "$JS.API.CONSUMER.DELETE.S.C")
    assert reply == {"type": "io.nats.jetstream.api.v1.consumer_delete_response", "success": True}
    await wire.ping()
    seen = len(wire.frames)
    await wire.quiet(0.35)
    assert wire.frames[seen:] == []


# =========================================================================== flow control

QUIET_HB = 5 * SEC  # a heartbeat interval that stays out of the way


async def stalled_after(wire: PushWire, sid: int, count: int) -> list[Frame]:
    """Wait for ``count`` deliveries, then check nothing else arrives: delivery has stalled."""
    await wire.wait_msgs(sid, count, timeout=5)
    await wire.quiet(0.3)
    return wire.on(sid)


@pytest.mark.parametrize(
    "payload, expected",
    [
        # each delivery counts 3 (dlv) + 39 (ack reply) + payload = exactly 512 KiB
        (524_246, ["s.0", "s.1", "s.2", "FC", "s.3", "s.4"]),
        # one byte more per delivery: half the window is exceeded one message earlier
        (524_247, ["s.0", "s.1", "FC", "s.2", "s.3"]),
    ],
    ids=["exactly-half", "one-byte-over"],
)
async def test_flow_control_request_position(env: PushEnv, payload: int, expected: list[str]) -> None:
    """FC goes right after the delivery that makes pending bytes exceed 1 MiB; delivery stops once they exceed 2 MiB."""
    for i in range(4):
        await env.publish(f"s.{i}", b"x" * payload)
    await env.publish("s.4", b"y" * 10)
    await env.publish("s.5", b"y" * 10)
    await env.add_consumer(flow_control=True, idle_heartbeat=QUIET_HB)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    frames = await stalled_after(wire, sid, len(expected) - 1)
    assert layout(frames) == expected
    sizes = [delivery_size(f) for f in frames if not f.is_fc]
    assert sizes[:2] == [payload + 42] * 2
    fc = next(f for f in frames if f.is_fc)
    assert FC_REPLY.match(fc.reply), fc.reply
    assert fc.raw == hmsg("dlv", sid, FC_HEADER, reply=fc.reply)
    assert fc.raw == b"HMSG dlv %d %s 36 36\r\nNATS/1.0 100 FlowControl Request\r\n\r\n\r\n" % (sid, fc.reply.encode())
    assert counts(await env.info())["num_pending"] == 6 - (len(expected) - 1)


async def test_flow_control_stalls_until_the_latest_request_is_answered(env: PushEnv) -> None:
    """An unknown FC id is ignored; an empty message to the real one resumes delivery."""
    await env.publish_many(7, b"x" * BIG)
    await env.add_consumer(flow_control=True, idle_heartbeat=QUIET_HB)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    frames = await stalled_after(wire, sid, 5)
    assert layout(frames) == ["s.0", "s.1", "s.2", "FC", "s.3", "s.4"]
    fc = frames[3].reply
    wrong = fc[:-4] + ("A" if fc[-4] != "A" else "B") + fc[-3:]
    await wire.pub(wrong)
    await wire.quiet(0.3)
    assert len(wire.on(sid)) == 6
    await wire.pub(fc)
    frames = await wire.wait_msgs(sid, 7)
    await wire.quiet(0.2)
    assert layout(wire.on(sid)) == ["s.0", "s.1", "s.2", "FC", "s.3", "s.4", "s.5", "s.6"]


@pytest.mark.slow
async def test_flow_control_window_doubles_after_an_answer(env: PushEnv) -> None:
    """After the answer the window is 4 MiB and the answered bytes are released; an older id no longer counts."""
    await env.publish_many(14, b"x" * BIG)
    await env.add_consumer(flow_control=True, idle_heartbeat=QUIET_HB)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    frames = await stalled_after(wire, sid, 5)
    first = frames[3].reply
    await wire.pub(first)
    frames = await stalled_after(wire, sid, 12)
    assert layout(frames) == [
        "s.0", "s.1", "s.2", "FC", "s.3", "s.4",
        "s.5", "s.6", "s.7", "FC", "s.8", "s.9", "s.10", "s.11",
    ]  # fmt: skip
    second = frames[9].reply
    assert FC_REPLY.match(second)
    await wire.pub(first)
    await wire.quiet(0.3)
    assert len(wire.on(sid)) == 14
    await wire.pub(second)
    await wire.wait_msgs(sid, 14)
    assert layout(wire.on(sid))[14:] == ["s.12", "s.13"]


async def test_acks_do_not_release_flow_control_bytes(env: PushEnv) -> None:
    await env.publish_many(7, b"x" * BIG)
    await env.add_consumer(ack_policy="explicit", flow_control=True, idle_heartbeat=QUIET_HB)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 5, timeout=5)
    for frame in wire.on(sid):
        if not frame.is_fc:
            await wire.pub(frame.reply)
    frames = await stalled_after(wire, sid, 5)
    assert layout(frames) == ["s.0", "s.1", "s.2", "FC", "s.3", "s.4"]
    assert counts(await env.info())["num_ack_pending"] == 0


async def test_small_messages_need_no_flow_control(env: PushEnv) -> None:
    await env.publish_many(50, b"z" * 1000)
    await env.add_consumer(flow_control=True, idle_heartbeat=QUIET_HB)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 50)
    await wire.quiet(0.2)
    assert layout(wire.on(sid)) == [f"s.{i}" for i in range(50)]


async def test_headers_only_push_delivery_counts_only_headers(env: PushEnv) -> None:
    """headers_only on push: ``NATS/1.0\\r\\n[stored headers]Nats-Msg-Size: <n>``; big payloads then never trigger FC."""
    await env.publish("s.0", b"x" * BIG)
    await env.publish("s.1", b"x" * BIG, headers={"A": "1"})
    await env.publish_many(6, b"x" * BIG, start=2)
    await env.add_consumer(headers_only=True, flow_control=True, idle_heartbeat=QUIET_HB)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    frames = await wire.wait_msgs(sid, 8)
    await wire.quiet(0.2)
    assert layout(wire.on(sid)) == [f"s.{i}" for i in range(8)]
    assert [no_ts(f.raw) for f in frames[:2]] == [
        hmsg("s.0", sid, b"NATS/1.0\r\nNats-Msg-Size: 500000\r\n\r\n", reply=ack(1, 1, 1, 7)),
        hmsg("s.1", sid, b"NATS/1.0\r\nA: 1\r\nNats-Msg-Size: 500000\r\n\r\n", reply=ack(1, 2, 2, 6)),
    ]


async def test_heartbeat_while_stalled_names_the_flow_control_subject(env: PushEnv) -> None:
    await env.publish_many(6, b"x" * BIG)
    await env.add_consumer(flow_control=True, idle_heartbeat=100 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait(sid, 1, timeout=5, what=lambda f: f.is_hb)
    frames = wire.on(sid)
    assert layout(frames) == ["s.0", "s.1", "s.2", "FC", "s.3", "s.4", "HB"]
    fc = frames[3].reply
    assert frames[-1].raw == heartbeat("dlv", sid, 5, 5, stalled=fc)
    assert frames[-1].raw == (
        b"HMSG dlv %d 115 115\r\nNATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\nNats-Last-Stream: 5\r\n"
        b"Nats-Consumer-Stalled: %s\r\n\r\n\r\n" % (sid, fc.encode())
    )
    await wire.pub(fc)
    seen = len(wire.on(sid))
    await wire.until(lambda: any(f.is_hb for f in wire.on(sid)[seen:]), "a heartbeat after the answer")
    after = wire.on(sid)[seen:]
    assert layout(after)[:2] == ["s.5", "HB"]
    assert after[1].raw == heartbeat("dlv", sid, 6, 6)


async def test_stall_survives_resubscription(env: PushEnv) -> None:
    """The request is not sent again to a new subscriber; its heartbeats still say stalled."""
    await env.publish_many(6, b"x" * BIG)
    await env.add_consumer(flow_control=True, idle_heartbeat=100 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 5, timeout=5)
    fc = next(f for f in wire.on(sid) if f.is_fc).reply
    await wire.unsub(sid)
    again = await wire.sub("dlv")
    await wire.wait(again, 2)
    assert [f.raw for f in wire.on(again)[:2]] == [heartbeat("dlv", again, 5, 5, stalled=fc)] * 2
    await wire.pub(fc)
    await wire.wait_msgs(again, 1)
    assert [f.subject for f in wire.on(again) if not f.is_hb] == ["s.5"]


async def test_ack_policy_flow_control_requests_at_max_ack_pending(env: PushEnv) -> None:
    """ack_policy flow_control: FC follows the delivery that fills max_ack_pending; an answer carrying
    Nats-Last-Consumer / Nats-Last-Stream acks up to those sequences and lets delivery go on."""
    await env.publish_many(5)
    await env.add_consumer(ack_policy="flow_control", max_ack_pending=2)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    frames = await stalled_after(wire, sid, 2)
    assert layout(frames) == ["s.0", "s.1", "FC"]
    assert [no_ts(f.raw) for f in frames[:2]] == [
        msg("s.0", sid, ack(1, 1, 1, 4), b"m0"),
        msg("s.1", sid, ack(1, 2, 2, 3), b"m1"),
    ]
    assert frames[2].raw == hmsg("dlv", sid, FC_HEADER, reply=frames[2].reply)
    header = b"NATS/1.0\r\nNats-Last-Consumer: 2\r\nNats-Last-Stream: 2\r\n\r\n"
    await wire.send(b"HPUB %s %d %d\r\n%s\r\n" % (frames[2].reply.encode(), len(header), len(header), header))
    frames = await stalled_after(wire, sid, 4)
    assert layout(frames) == ["s.0", "s.1", "FC", "s.2", "s.3", "FC"]
    assert frames[5].reply != frames[2].reply and FC_REPLY.match(frames[5].reply)
    assert counts(await env.info()) == {
        "delivered": (4, 4),
        "ack_floor": (2, 2),
        "num_ack_pending": 2,
        "num_redelivered": 0,
        "num_pending": 1,
    }


@pytest.mark.slow
async def test_ack_policy_flow_control_requests_at_the_end_of_the_stream(env: PushEnv) -> None:
    """With acks outstanding, the (1s) idle heartbeat is followed by an FC request."""
    await env.publish_many(2)
    await env.add_consumer(ack_policy="flow_control", max_ack_pending=10)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 2)
    await wire.wait(sid, 4, timeout=WAIT)
    frames = wire.on(sid)
    assert layout(frames) == ["s.0", "s.1", "HB", "FC"]
    assert frames[2].raw == heartbeat("dlv", sid, 2, 2)
    assert FC_REPLY.match(frames[3].reply)


# =========================================================================== idle heartbeats


async def test_idle_heartbeat_bytes(env: PushEnv) -> None:
    """No reply subject; Last-Consumer/Last-Stream are the last delivered sequences (0 before any)."""
    await env.add_consumer(idle_heartbeat=100 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    frames = await wire.wait(sid, 1)
    assert frames[0].raw == heartbeat("dlv", sid, 0, 0)
    assert frames[0].raw == (
        b"HMSG dlv %d 75 75\r\nNATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 0\r\n\r\n\r\n"
        % sid
    )
    await env.publish_many(2)
    await wire.wait_msgs(sid, 2)
    seen = len(wire.on(sid))
    await wire.until(lambda: any(f.is_hb for f in wire.on(sid)[seen:]), "a heartbeat after the messages")
    after = [f for f in wire.on(sid)[seen:] if f.is_hb]
    assert after[0].raw == heartbeat("dlv", sid, 2, 2)


async def test_heartbeats_repeat_at_the_interval(env: PushEnv) -> None:
    await env.add_consumer(idle_heartbeat=100 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait(sid, 1)
    start = env.target.now()
    await wire.wait(sid, 5)
    elapsed = env.target.now() - start
    assert 0.3 <= elapsed <= 1.2, elapsed  # four 100 ms intervals, not the default 1 s (room for a busy machine)
    assert {f.raw for f in wire.on(sid)} == {heartbeat("dlv", sid, 0, 0)}


async def test_heartbeat_last_stream_is_the_scan_position(env: PushEnv) -> None:
    """A filtered consumer that scanned to the end reports the stream's last sequence, not its last delivery."""
    for subject in ["s.a", "s.b", "s.a", "s.b", "s.b"]:
        await env.publish(subject, b"v")
    await env.add_consumer(filter_subject="s.a", idle_heartbeat=100 * MS)
    await env.add_consumer("E", deliver_subject="dlv.e", filter_subject="s.none", idle_heartbeat=100 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    empty = await wire.sub("dlv.e")
    await wire.wait(sid, 3)
    await wire.wait(empty, 1)
    assert layout(wire.on(sid))[:3] == ["s.a", "s.a", "HB"]
    assert wire.on(sid)[2].raw == heartbeat("dlv", sid, 2, 5)
    assert wire.on(empty)[0].raw == heartbeat("dlv.e", empty, 0, 5)
    info = await env.info()
    assert info["delivered"]["consumer_seq"] == 2 and info["delivered"]["stream_seq"] == 3


async def test_no_heartbeats_without_interest(env: PushEnv) -> None:
    await env.add_consumer(deliver_subject="d.x", idle_heartbeat=100 * MS)
    wire = await env.wire()
    witness = await wire.sub("d.*")
    await wire.quiet(0.35)
    assert wire.frames == []
    exact = await wire.sub("d.x")
    await wire.wait(exact, 1)
    await wire.wait(witness, 1)
    assert wire.on(witness)[0].raw == heartbeat("d.x", witness, 0, 0)
    await wire.unsub(exact)
    await wire.quiet(0.05)
    seen = len(wire.frames)
    await wire.quiet(0.35)
    assert wire.frames[seen:] == []


async def test_paused_push_consumer_only_heartbeats(env: PushEnv) -> None:
    """A paused push consumer sends heartbeats but no messages; resuming delivers the backlog."""
    await env.publish_many(2)
    created = await env.add_consumer(idle_heartbeat=100 * MS, pause_until="2099-01-01T00:00:00Z")
    assert created["paused"] is True
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait(sid, 2)
    assert {f.raw for f in wire.on(sid)} == {heartbeat("dlv", sid, 0, 0)}
    reply = await api(env.nc, "$JS.API.CONSUMER.PAUSE.S.C", {})
    assert reply == {
        "type": "io.nats.jetstream.api.v1.consumer_pause_response",
        "paused": False,
        "pause_until": "0001-01-01T00:00:00Z",
    }
    frames = await wire.wait_msgs(sid, 2)
    assert [no_ts(f.raw) for f in frames] == [
        msg("s.0", sid, ack(1, 1, 1, 1), b"m0"),
        msg("s.1", sid, ack(1, 2, 2, 0), b"m1"),
    ]


@pytest.mark.slow
async def test_heartbeats_only_when_idle(env: PushEnv) -> None:
    """The heartbeat timer restarts with every delivery: none while messages keep coming."""
    await env.add_consumer(idle_heartbeat=300 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    for i in range(10):
        await env.publish(f"s.{i}", b"m")
        await wire.quiet(0.06)
    await wire.wait_msgs(sid, 10)
    last = env.target.now()
    await wire.until(lambda: wire.on(sid)[-1].is_hb, "a heartbeat", timeout=1.5)
    waited = env.target.now() - last
    assert layout(wire.on(sid)) == [f"s.{i}" for i in range(10)] + ["HB"]
    assert 0.15 <= waited <= 1.2, waited  # room for a busy machine above the 300 ms
    assert wire.on(sid)[-1].raw == heartbeat("dlv", sid, 10, 10)


# =========================================================================== rate limit and replay


@pytest.mark.slow
async def test_rate_limit_paces_deliveries_after_the_burst(make_target) -> None:
    """bps/8 bytes per second after a burst of max_msg_size bytes; a delivery counts subject + reply + payload."""
    target = await make_target()
    environment = await PushEnv(target).start(max_msg_size=1000)
    try:
        await environment.publish_many(10, b"p" * 157)  # 3 + 39 + 157 = 199 bytes a delivery
        await environment.add_consumer(rate_limit_bps=16_000)  # 2000 bytes/s: one delivery every ~100 ms
        wire = await environment.wire()
        await wire.sub("dlv")
        start = target.now()
        stamps: list[float] = []
        for count in range(1, 11):
            await wire.until(lambda count=count: len(wire.frames) >= count, f"delivery {count}", timeout=3)
            stamps += [target.now() - start] * (len(wire.frames) - len(stamps))
        assert len(stamps) == 10
        paced = [t - stamps[0] for t in stamps]
        assert paced[4] < 0.05, paced  # five fit the 1000-byte burst
        assert 0.06 <= paced[5] <= 0.2, paced
        assert 0.4 <= paced[9] <= 0.8, paced
    finally:
        await environment.close()


async def test_rate_limit_never_sends_a_delivery_larger_than_the_burst(make_target) -> None:
    target = await make_target()
    environment = await PushEnv(target).start(max_msg_size=100)
    try:
        await environment.publish("s.0", b"q" * 90)  # 3 + 39 + 90 > 100
        await environment.publish("s.1", b"q")
        await environment.add_consumer(rate_limit_bps=8_000_000)
        wire = await environment.wire()
        await wire.sub("dlv")
        await wire.quiet(0.4)
        assert wire.frames == []
        assert (await environment.info())["delivered"]["consumer_seq"] == 0
    finally:
        await environment.close()


@pytest.mark.slow
async def test_replay_original_keeps_the_original_spacing(env: PushEnv) -> None:
    """The first message goes at once, each next one after the gap between the stored timestamps."""
    for i in range(3):
        await env.publish(f"s.{i}", b"m%d" % i)
        await env.elapse(0.25)
    stored = [await env.stored_ns(seq) / SEC for seq in (1, 2, 3)]
    await env.add_consumer(replay_policy="original")
    wire = await env.wire()
    await wire.sub("dlv")
    start = env.target.now()
    stamps: list[float] = []
    for count in (1, 2, 3):
        await wire.until(lambda count=count: len(wire.frames) >= count, f"delivery {count}", timeout=3)
        stamps += [env.target.now() - start] * (len(wire.frames) - len(stamps))
    assert len(stamps) == 3 and stamps[0] < 0.15, stamps
    for i in (1, 2):
        gap = stored[i] - stored[i - 1]
        assert gap - 0.03 <= stamps[i] - stamps[i - 1] <= gap + 0.12, (stamps, stored)


@pytest.mark.slow
async def test_replay_original_ends_once_caught_up(env: PushEnv) -> None:
    """After the backlog present at start is replayed, new messages and later backlogs go at once."""
    await env.publish("s.0", b"a")
    await env.elapse(0.2)
    await env.publish("s.1", b"b")
    await env.add_consumer(replay_policy="original")
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 2)
    start = env.target.now()
    await env.publish("s.2", b"c")
    await wire.wait_msgs(sid, 3)
    assert env.target.now() - start < 0.15
    await wire.unsub(sid)
    await env.publish("s.3", b"d")
    await env.elapse(0.3)
    await env.publish("s.4", b"e")
    again = await wire.sub("dlv")
    start = env.target.now()
    await wire.wait_msgs(again, 2)
    assert env.target.now() - start < 0.15


# =========================================================================== acks on push


async def test_max_ack_pending_holds_push_delivery(env: PushEnv) -> None:
    await env.publish_many(4)
    await env.add_consumer(ack_policy="explicit", max_ack_pending=2)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 2)
    await wire.quiet(0.25)
    assert layout(wire.on(sid)) == ["s.0", "s.1"]
    await wire.pub(wire.on(sid)[0].reply)
    await wire.wait_msgs(sid, 3)
    await wire.quiet(0.1)
    assert [no_ts(f.raw) for f in wire.on(sid)] == [
        msg("s.0", sid, ack(1, 1, 1, 3), b"m0"),
        msg("s.1", sid, ack(1, 2, 2, 2), b"m1"),
        msg("s.2", sid, ack(1, 3, 3, 1), b"m2"),
    ]
    assert counts(await env.info()) == {
        "delivered": (3, 3),
        "ack_floor": (1, 1),
        "num_ack_pending": 2,
        "num_redelivered": 0,
        "num_pending": 1,
    }


async def test_ack_wait_redelivers_on_push(env: PushEnv) -> None:
    await env.publish_many(2)
    await env.add_consumer(ack_policy="explicit", ack_wait=250 * MS)
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 2)
    await wire.pub(wire.on(sid)[0].reply)
    start = env.target.now()
    frames = await wire.wait_msgs(sid, 3)
    assert env.target.now() - start >= 0.1
    assert no_ts(frames[2].raw) == msg("s.1", sid, ack(2, 2, 3, 0), b"m1")
    await wire.quiet(0.1)
    assert len(wire.on(sid)) == 3
    assert counts(await env.info()) == {
        "delivered": (3, 2),
        "ack_floor": (1, 1),
        "num_ack_pending": 1,
        "num_redelivered": 1,
        "num_pending": 0,
    }


async def test_nxt_ack_on_a_push_delivery(env: PushEnv) -> None:
    """``+NXT`` acks the message and answers ``409 Consumer is push based`` on its reply subject."""
    await env.publish_many(2)
    await env.add_consumer(ack_policy="explicit")
    wire = await env.wire()
    sid = await wire.sub("dlv")
    await wire.wait_msgs(sid, 2)
    inbox = await wire.sub("_INBOX.nxt")
    await wire.pub(wire.on(sid)[0].reply, b"+NXT", reply="_INBOX.nxt")
    frames = await wire.wait(inbox, 1)
    assert frames[0].raw == hmsg("_INBOX.nxt", inbox, b"NATS/1.0 409 Consumer is push based\r\n\r\n")
    assert counts(await env.info())["ack_floor"] == (1, 1)


# =========================================================================== inactive threshold


async def test_push_consumer_without_interest_is_deleted_after_its_threshold(env: PushEnv) -> None:
    # A threshold far above what creating and looking up takes on a busy machine (the real server's clock runs).
    await env.ephemeral("E", deliver_subject="de", inactive_threshold=2000 * MS)
    await env.add_consumer("D", deliver_subject="dd", inactive_threshold=2000 * MS)
    await env.elapse(0.15)
    assert await env.exists("E") and await env.exists("D")
    await env.elapse(2.85)
    assert not await env.exists("E")
    assert not await env.exists("D")


@pytest.mark.slow
async def test_push_consumer_with_interest_is_kept_past_its_threshold(env: PushEnv) -> None:
    wire = await env.wire()
    sid = await wire.sub("de")
    await env.ephemeral("E", deliver_subject="de", inactive_threshold=300 * MS)
    await env.elapse(0.6)
    assert await env.exists("E")
    await wire.unsub(sid)
    await env.elapse(0.15)
    assert await env.exists("E")
    await env.elapse(0.45)
    assert not await env.exists("E")


async def test_interest_returning_in_time_cancels_the_deletion(env: PushEnv) -> None:
    await env.ephemeral("E", deliver_subject="de", inactive_threshold=400 * MS)
    await env.elapse(0.15)
    wire = await env.wire()
    await wire.sub("de")
    await env.elapse(0.5)
    assert await env.exists("E")
    assert await env.push_bound("E") is True


# =========================================================================== nats-py push subscriptions


def stable_config(config: dict) -> dict:
    """A consumer config without the values that differ between runs (inbox names, server metadata)."""
    out = {k: v for k, v in config.items() if k not in ("metadata", "deliver_subject")}
    assert config["deliver_subject"].startswith("_INBOX."), config
    return out


async def consumers(env: PushEnv) -> list[dict]:
    reply = await api(env.nc, "$JS.API.CONSUMER.LIST.S")
    assert "error" not in reply, reply
    return reply["consumers"]


class Collector:
    def __init__(self) -> None:
        self.msgs: list = []
        self.event = asyncio.Event()
        self.want = 0

    async def cb(self, m) -> None:
        self.msgs.append(m)
        if len(self.msgs) >= self.want:
            self.event.set()

    async def wait(self, count: int, timeout: float = WAIT, target: Target | None = None) -> list:
        """The messages once ``count`` have come (with ``target``, as the server's clock moves)."""
        self.want = count
        if target is not None:
            await target.elapse_until(lambda: len(self.msgs) >= count, timeout)
        if len(self.msgs) < count:
            self.event.clear()
            await asyncio.wait_for(self.event.wait(), timeout)
        return self.msgs

    @property
    def data(self) -> list[bytes]:
        return [m.data for m in self.msgs]


async def test_js_subscribe_ephemeral(env: PushEnv) -> None:
    """nats-py creates an ephemeral push consumer on a new inbox and acks each message after the callback."""
    await env.publish_many(3)
    js = env.nc.jetstream()
    got = Collector()
    await js.subscribe("s.>", cb=got.cb)
    assert (await got.wait(3)) and got.data == [b"m0", b"m1", b"m2"]
    [info] = await consumers(env)
    assert stable_config(info["config"]) == {
        "deliver_policy": "all",
        "ack_policy": "explicit",
        "ack_wait": 30 * SEC,
        "max_deliver": -1,
        "filter_subject": "s.>",
        "replay_policy": "instant",
        "max_ack_pending": 1000,
        "inactive_threshold": 5 * SEC,
        "num_replicas": 0,
    }
    assert info["push_bound"] is True
    await env.eventually(lambda: _ack_floor_is(env, info["name"], (3, 3)), "the auto acks")


async def _ack_floor_is(env: PushEnv, name: str, floor: tuple[int, int]) -> bool:
    return counts(await env.info(name))["ack_floor"] == floor


async def test_js_subscribe_durable_refused_while_bound(env: PushEnv) -> None:
    """The client refuses a second subscriber because the server reports push_bound; it may bind once that is gone."""
    js = env.nc.jetstream()
    first = await js.subscribe("s.>", durable="D", cb=Collector().cb)
    await env.eventually(env.push_bound_is("D", True), "push_bound once the subscription's interest is known")
    with pytest.raises(nats.js.errors.Error, match="consumer is already bound to a subscription"):
        await js.subscribe("s.>", durable="D", cb=Collector().cb)
    await first.unsubscribe()
    await env.eventually(env.push_bound_is("D", None), "push_bound to go")
    got = Collector()
    await js.subscribe("s.>", durable="D", cb=got.cb)
    await env.publish("s.x", b"late")
    assert (await got.wait(1)) and got.data == [b"late"]
    info = await env.info("D")
    assert stable_config(info["config"])["durable_name"] == "D"


async def test_js_subscribe_queue_group(env: PushEnv) -> None:
    """``queue="q"``: durable ``q`` with deliver_group ``q``; each message reaches one member."""
    js = env.nc.jetstream()
    other = await env.client()
    a, b = Collector(), Collector()
    await js.subscribe("s.>", queue="q", cb=a.cb)
    await other.jetstream().subscribe("s.>", queue="q", cb=b.cb)
    await env.publish_many(30)
    deadline = time.monotonic() + WAIT
    while len(a.msgs) + len(b.msgs) < 30 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert sorted(a.data + b.data, key=lambda d: int(d[1:])) == [b"m%d" % i for i in range(30)]
    assert a.msgs and b.msgs
    [info] = await consumers(env)
    config = stable_config(info["config"])
    assert (config["name"], config["durable_name"], config["deliver_group"]) == ("q", "q", "q")
    assert info["push_bound"] is True
    with pytest.raises(
        nats.js.errors.Error, match="cannot create a subscription for a consumer with a deliver group q"
    ):
        await js.subscribe("s.>", durable="q", cb=Collector().cb)


async def test_js_subscribe_manual_ack(env: PushEnv) -> None:
    await env.publish_many(2)
    js = env.nc.jetstream()
    sub = await js.subscribe("s.>", durable="M", manual_ack=True)
    first = await sub.next_msg(timeout=WAIT)
    second = await sub.next_msg(timeout=WAIT)
    assert (first.data, second.data) == (b"m0", b"m1")
    assert (first.metadata.sequence.stream, first.metadata.sequence.consumer, first.metadata.num_pending) == (1, 1, 1)
    await first.ack_sync(timeout=WAIT)
    await second.nak()
    again = await sub.next_msg(timeout=WAIT)
    assert (again.data, again.metadata.num_delivered, again.metadata.sequence.consumer) == (b"m1", 2, 3)
    await again.ack_sync(timeout=WAIT)
    assert counts(await env.info("M")) == {
        "delivered": (3, 2),
        "ack_floor": (3, 2),
        "num_ack_pending": 0,
        "num_redelivered": 0,
        "num_pending": 0,
    }


async def test_js_subscribe_hides_heartbeats_from_the_callback(env: PushEnv) -> None:
    """Heartbeats reach the deliver subject (a second exact subscriber sees them) but not the callback."""
    js = env.nc.jetstream()
    got = Collector()
    await js.subscribe("s.>", durable="H", cb=got.cb, idle_heartbeat=0.1)
    deliver = (await env.info("H"))["config"]["deliver_subject"]
    wire = await env.wire()
    sid = await wire.sub(deliver)
    await wire.wait(sid, 2)
    assert wire.on(sid)[0].raw == heartbeat(deliver, sid, 0, 0)
    assert got.msgs == []
    await env.publish("s.1", b"one")
    assert (await got.wait(1)) and got.data == [b"one"]


async def test_js_subscribe_flow_control(env: PushEnv) -> None:
    """A flow-controlled push subscription gets everything: the client answers the server's FC requests."""
    await env.publish_many(9, b"x" * BIG)
    js = env.nc.jetstream()
    got = Collector()
    await js.subscribe("s.>", durable="F", cb=got.cb, flow_control=True, idle_heartbeat=0.2)
    await got.wait(9, timeout=8)
    assert [m.subject for m in got.msgs] == [f"s.{i}" for i in range(9)]
    info = await env.info("F")
    assert (info["config"]["flow_control"], info["config"]["idle_heartbeat"]) == (True, 200 * MS)


async def test_js_subscribe_answers_a_stalled_heartbeat(env: PushEnv) -> None:
    """A subscriber binding to a stalled consumer resumes it by answering the subject in Nats-Consumer-Stalled."""
    await env.publish_many(7, b"x" * BIG)
    await env.add_consumer(
        "F", deliver_subject="dlv.f", ack_policy="explicit", flow_control=True, idle_heartbeat=100 * MS
    )
    wire = await env.wire()
    sid = await wire.sub("dlv.f")
    await wire.wait(sid, 1, timeout=5, what=lambda f: f.is_hb)
    assert layout(wire.on(sid)) == ["s.0", "s.1", "s.2", "FC", "s.3", "s.4", "HB"]
    await wire.close()
    await env.eventually(env.push_bound_is("F", None), "push_bound to go")
    got = Collector()
    await env.nc.jetstream().subscribe("s.>", durable="F", cb=got.cb)
    await got.wait(2, timeout=5, target=env.target)
    # the five delivered before come back only after ack_wait (30s)
    assert [m.subject for m in got.msgs] == ["s.5", "s.6"]


async def test_js_subscribe_inactive_threshold(env: PushEnv) -> None:
    js = env.nc.jetstream()
    sub = await js.subscribe("s.>", cb=Collector().cb, inactive_threshold=0.2)
    [info] = await consumers(env)
    assert info["config"]["inactive_threshold"] == 200 * MS
    await env.elapse(0.3)
    assert await env.exists(info["name"])
    await sub.unsubscribe()
    await env.elapse(0.45)
    assert not await env.exists(info["name"])


# =========================================================================== ordered consumers

ORDERED = {
    "deliver_policy": "all",
    "ack_policy": "none",
    "ack_wait": 22 * 3600 * SEC,
    "max_deliver": 1,
    "filter_subject": "s.>",
    "replay_policy": "instant",
    "flow_control": True,
    "idle_heartbeat": 5 * SEC,
    "inactive_threshold": 5 * SEC,
    "num_replicas": 1,
    "mem_storage": True,
}


async def test_ordered_consumer_config(env: PushEnv) -> None:
    await env.publish_many(3)
    got = Collector()
    await env.nc.jetstream().subscribe("s.>", cb=got.cb, ordered_consumer=True)
    assert (await got.wait(3)) and got.data == [b"m0", b"m1", b"m2"]
    [info] = await consumers(env)
    assert stable_config(info["config"]) == ORDERED
    assert "durable_name" not in info["config"]
    assert info["push_bound"] is True
    assert counts(info) == {
        "delivered": (3, 3),
        "ack_floor": (3, 3),
        "num_ack_pending": 0,
        "num_redelivered": 0,
        "num_pending": 0,
    }


async def test_ordered_consumer_recreated_after_its_consumer_is_deleted(env: PushEnv) -> None:
    """Heartbeats stop with the consumer; two missed ones make the client start over from the next stream sequence."""
    await env.publish_many(3)
    got = Collector()
    await env.nc.jetstream().subscribe("s.>", cb=got.cb, ordered_consumer=True, idle_heartbeat=0.1)
    await got.wait(3)
    [old] = await consumers(env)
    reply = await api(env.nc, f"$JS.API.CONSUMER.DELETE.S.{old['name']}")
    assert reply.get("success") is True
    await env.publish("s.3", b"m3")
    await got.wait(4, timeout=3)
    assert got.data == [b"m0", b"m1", b"m2", b"m3"]
    [new] = await consumers(env)
    assert new["name"] != old["name"]
    assert stable_config(new["config"]) == {
        **ORDERED,
        "deliver_policy": "by_start_sequence",
        "opt_start_seq": 4,
        "idle_heartbeat": 100 * MS,
    }
    assert new["config"]["deliver_subject"] != old["config"]["deliver_subject"]
    assert new["push_bound"] is True
    assert counts(new)["delivered"] == (1, 4)


async def test_ordered_consumer_resets_on_a_sequence_gap(env: PushEnv) -> None:
    """A heartbeat naming another last consumer sequence makes the client move to a new consumer.

    (Clients may not publish with ``$JS.ACK.`` reply subjects, so the gap is a stray heartbeat.)
    The old consumer is not deleted: it loses interest and stays until its inactive_threshold.
    """
    await env.publish_many(3)
    got = Collector()
    await env.nc.jetstream().subscribe("s.>", cb=got.cb, ordered_consumer=True)
    await got.wait(3)
    [old] = await consumers(env)
    wire = await env.wire()
    header = b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 9\r\nNats-Last-Stream: 9\r\n\r\n"
    deliver = old["config"]["deliver_subject"].encode()
    await wire.send(b"HPUB %s %d %d\r\n%s\r\n" % (deliver, len(header), len(header), header))
    await wire.ping()
    await env.eventually(lambda: _count_is(env, 2), "a second consumer")
    await env.publish("s.3", b"m3")
    await got.wait(4)
    assert got.data == [b"m0", b"m1", b"m2", b"m3"]
    listed = {c["name"]: c for c in await consumers(env)}
    assert old["name"] in listed
    await env.eventually(env.push_bound_is(old["name"], None), "the old consumer to lose interest")
    [new] = [c for name, c in listed.items() if name != old["name"]]
    assert stable_config(new["config"]) == {**ORDERED, "deliver_policy": "by_start_sequence", "opt_start_seq": 4}
    assert (await env.info(new["name"]))["push_bound"] is True


async def _count_is(env: PushEnv, n: int) -> bool:
    return len(await consumers(env)) == n


async def test_ordered_consumer_flow_control(env: PushEnv) -> None:
    await env.publish_many(9, b"x" * BIG)
    got = Collector()
    await env.nc.jetstream().subscribe("s.>", cb=got.cb, ordered_consumer=True)
    await got.wait(9, timeout=8)
    assert [m.subject for m in got.msgs] == [f"s.{i}" for i in range(9)]
    [info] = await consumers(env)
    assert counts(info)["delivered"] == (9, 9)


# =========================================================================== reply before deliveries

# nats-server writes an API reply from its internal send loop while the new consumer's own
# goroutine starts delivering, so on the real server the order is a race -- one the reply
# wins most of the time (36-40 of 40 creates measured on 2.15.1, 2,000 messages, raw client).
# fakejs always gives the order clients count on: the reply first.  Both targets must send
# the reply and every delivery; only fakejs is held to the order.


async def _create_on_wire(wire: PushWire, subject: str, config: dict) -> int:
    """Send a consumer create/update request on ``wire``; the sid its reply arrives on."""
    inbox = await wire.sub("_INBOX.create")
    body = json.dumps({"stream_name": "S", "config": config}).encode()
    await wire.send(b"PUB %s _INBOX.create %d\r\n%s\r\n" % (subject.encode(), len(body), body))
    return inbox


def _check_reply_first(env: PushEnv, wire: PushWire, inbox: int, deliveries: int, count: int) -> dict:
    sids = [f.sid for f in wire.frames]
    assert sorted(sids) == sorted([inbox] + [deliveries] * count)
    if env.target.is_fake:
        assert sids == [inbox] + [deliveries] * count
    (reply,) = wire.on(inbox)
    return dict(json.loads(reply.payload))


async def test_create_reply_comes_before_the_first_deliveries(env: PushEnv) -> None:
    """Clients match the CREATE reply to their request: it is written before anything the consumer sends."""
    await env.publish_many(3)
    wire = await env.wire()
    deliveries = await wire.sub("dlv")
    config = {"durable_name": "C", "deliver_subject": "dlv", "ack_policy": "none"}
    inbox = await _create_on_wire(wire, "$JS.API.CONSUMER.CREATE.S.C", config)
    await wire.wait(deliveries, 3)
    await wire.wait(inbox, 1)
    assert _check_reply_first(env, wire, inbox, deliveries, 3)["name"] == "C"


async def test_update_reply_comes_before_the_deliveries_it_starts(env: PushEnv) -> None:
    """An update that gives a push consumer interest replies before the deliveries that follow."""
    await env.publish_many(2)
    config = {"durable_name": "C", "deliver_subject": "nobody", "ack_policy": "none"}
    reply = await api(env.nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": config})
    assert "error" not in reply, reply
    wire = await env.wire()
    deliveries = await wire.sub("dlv")
    update = {**config, "deliver_subject": "dlv"}
    inbox = await _create_on_wire(wire, "$JS.API.CONSUMER.CREATE.S.C", update)
    await wire.wait(deliveries, 2)
    await wire.wait(inbox, 1)
    assert _check_reply_first(env, wire, inbox, deliveries, 2)["config"]["deliver_subject"] == "dlv"
