"""Pull requests: ``$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`` as nats-server 2.15.1 serves them.

Every expectation was read off the real 2.15.1 binary with a raw socket; the
tests compare what arrives on the request's reply subject byte for byte.

Facts pinned down here (R1, non-clustered, default account):

* Body: trimmed of whitespace; empty -> batch 1; starting with ``{`` -> JSON
  (Go ``encoding/json``: field names case-insensitive, unknown fields ignored,
  a missing ``batch`` is 0); anything else -> ``strconv.Atoi`` or, when that
  fails (``abc``, ``[1]``), batch 1.  A batch <= 0 still delivers exactly one
  message.  No reply subject -> the request is dropped silently.
* Status replies are header-only ``HMSG <reply> <sid> <n> <n>\\r\\n<block>\\r\\n``
  where ``<block>`` is ``NATS/1.0 <code> <text>\\r\\n[headers]\\r\\n``.
  Headers ``Nats-Pending-Messages`` / ``Nats-Pending-Bytes`` are the request's
  unfulfilled batch and remaining max_bytes (0 when max_bytes was not set).
* Order of checks: [missing consumer/stream -> core ``503`` + ``Nats-Subject``]
  -> push consumer (409 Consumer is push based) -> ``Nats-Required-Api-Level``
  (412) -> JSON parse (400 Bad Request - <Go error>) -> heartbeat (400 ...
  heartbeat value too large: idle_heartbeat*2 > expires, so also when expires
  is 0) -> MaxRequestBatch -> MaxRequestExpires -> MaxRequestMaxBytes ->
  priority checks -> no_wait (404 No Messages when nothing is pending and no
  expires; 408 Requests Pending when pending < the batches already waiting)
  -> wait queue full (409 Exceeded MaxWaiting, not sent when idle_heartbeat set).
* Message size counted against max_bytes:
  ``len(subject) + len(ack reply) + len(stored header block) + len(payload)``.
  A message bigger than what is left ends the request with 409 Message Size
  Exceeds MaxBytes (the message stays for the next request); landing exactly on
  0 ends the request silently; a batch filled with budget left ends it with
  409 Batch Completed right after the last message.
* Delivery reply: ``$JS.ACK.<stream>.<consumer>.<delivery count>.<stream seq>.
  <consumer seq>.<stored timestamp ns>.<num pending after this one>``.
* Several waiting requests are served round robin: a request that still wants
  more after a message goes to the back of the queue.
* no_wait: without expires, ends with 404 No Messages once the stream is exhausted
  (nothing if the batch was filled); with expires and nothing pending it waits and
  ends with 408 Request Timeout, but after a first delivery it ends with 404 at
  the end of the stream.  Blocked by max_ack_pending it simply keeps waiting.
* ``100 Idle Heartbeat`` carries ``Nats-Last-Consumer`` / ``Nats-Last-Stream`` (the
  consumer's last delivered sequences); a request that cannot be queued because
  max_waiting is reached gets no reply at all when it asked for heartbeats.
* Consumer or stream deletion sends ``409 Consumer Deleted`` (no headers) to each
  waiting request in queue order; server shutdown sends ``409 Server Shutdown``
  with the pending headers (in no particular order) before closing connections.
"""

from __future__ import annotations

import asyncio
import re
import time

import nats
import pytest
from nats.js.errors import FetchTimeoutError

from tests.harness.env import env_fixture
from tests.harness.js import MS, api
from tests.harness.pull import (
    CONSUMER_DELETED,
    HB_TOO_LARGE,
    NO_MESSAGES,
    REQUESTS_PENDING,
    PullEnv,
    ack,
    bad_request,
    completed,
    heartbeat,
    pending,
    timeout_,
    too_big,
)
from tests.harness.targets import Target
from tests.harness.wait import WAIT, poll

# fakejs runs on a manual clock here: every wait below lets the server's time pass explicitly.
pytestmark = pytest.mark.manual_clock

env = env_fixture(PullEnv)


def size(subject: str, reply: str, payload: bytes, header: bytes = b"") -> int:
    """What a delivered message counts against a request's max_bytes."""
    return len(subject) + len(reply) + len(header) + len(payload)


# =========================================================================== request bodies


async def test_empty_body_delivers_exactly_one_message(env: PullEnv) -> None:
    wire = await env.start(messages=3)
    inbox = await wire.pull(b"")
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 2), b"m0", to=inbox)]
    assert await env.waiting() == 0
    info = await env.info()
    assert (info["num_pending"], info["num_ack_pending"]) == (2, 1)


SINGLE_MESSAGE_BODIES = [
    b" \t\r\n ",
    b"abc",
    b"[5]",
    b"1",
    b" 1 ",
    b"0",
    b"-1",
    b"{}",
    b'{"batch":0}',
    b'{"batch":-3}',
    b'{"batch":1,"idle_heartbeat":-1}',
    b'{"batch":1,"no_wait":false,"expires":0,"max_bytes":0}',
]


@pytest.mark.parametrize("body", SINGLE_MESSAGE_BODIES)
async def test_bodies_that_mean_a_single_message(env: PullEnv, body: bytes) -> None:
    """Whitespace and non-numbers mean batch 1; a batch <= 0 still delivers one message and ends."""
    wire = await env.start(messages=3)
    inbox = await wire.pull(body)
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 2), b"m0", to=inbox)]
    assert await env.waiting() == 0
    assert (await env.info())["num_pending"] == 2


@pytest.mark.parametrize(
    "body",
    [b"2", b" 2\r\n", b'{"batch":2}', b'{"batch":2,"foo":[1,{"x":null}],"bar":null}', b'{"Batch":2}', b'{"BATCH":2}'],
)
async def test_bodies_that_ask_for_two_messages(env: PullEnv, body: bytes) -> None:
    """A bare integer is the batch; JSON keys match case-insensitively; unknown keys are ignored."""
    wire = await env.start(messages=3)
    inbox = await wire.pull(body)
    await wire.wait(inbox, 2)
    assert [(f.subject, f.payload) for f in wire.on(inbox)] == [("s.0", b"m0"), ("s.1", b"m1")]
    assert await env.waiting() == 0
    assert len(wire.on(inbox)) == 2


async def test_no_wait_key_matches_case_insensitively(env: PullEnv) -> None:
    wire = await env.start(messages=0)
    inbox = await wire.pull(b'{"Batch":2,"NO_WAIT":true}')
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, NO_MESSAGES)]


async def test_integer_batch_without_expires_waits_for_more(env: PullEnv) -> None:
    wire = await env.start(messages=2)
    inbox = await wire.pull(b"5")
    await wire.wait(inbox, 2)
    assert await env.waiting() == 1
    await env.publish("s.late", b"late")
    frames = await wire.wait(inbox, 3)
    assert [f.payload for f in frames] == [b"m0", b"m1", b"late"]
    assert frames[2].reply == ack(1, 3, 3, await env.stored_ns(3), 0)
    assert await env.waiting() == 1  # still wants two more, and never expires


@pytest.mark.parametrize(
    "body, error",
    [
        (b"{bad", "invalid character 'b' looking for beginning of object key string"),
        (b'{"batch":1', "unexpected end of JSON input"),
        (b'{"batch":1}x', "invalid character 'x' after top-level value"),
        (b'{"batch":"x"}', "json: cannot unmarshal string into Go struct field .batch of type int"),
        (b'{"batch":"1"}', "json: cannot unmarshal string into Go struct field .batch of type int"),
        (b'{"batch":true}', "json: cannot unmarshal bool into Go struct field .batch of type int"),
        (b'{"batch":[1]}', "json: cannot unmarshal array into Go struct field .batch of type int"),
        (b'{"batch":1e2}', "json: cannot unmarshal number 1e2 into Go struct field .batch of type int"),
        (
            b'{"batch":99999999999999999999}',
            "json: cannot unmarshal number 99999999999999999999 into Go struct field .batch of type int",
        ),
        (b'{"batch":1,"batch":"x"}', "json: cannot unmarshal string into Go struct field .batch of type int"),
        (b'{"expires":"1s"}', "json: cannot unmarshal string into Go struct field .expires of type time.Duration"),
        (b'{"expires":{}}', "json: cannot unmarshal object into Go struct field .expires of type time.Duration"),
        (b'{"no_wait":"yes"}', "json: cannot unmarshal string into Go struct field .no_wait of type bool"),
        (b'{"no_wait":1}', "json: cannot unmarshal number into Go struct field .no_wait of type bool"),
        (b'{"max_bytes":1.5}', "json: cannot unmarshal number 1.5 into Go struct field .max_bytes of type int"),
        (
            b'{"idle_heartbeat":true}',
            "json: cannot unmarshal bool into Go struct field .idle_heartbeat of type time.Duration",
        ),
        (b'{"group":5}', "json: cannot unmarshal number into Go struct field .group of type string"),
        (b'{"priority":"a"}', "json: cannot unmarshal string into Go struct field .priority of type int"),
    ],
)
async def test_bad_json_is_400_bad_request(env: PullEnv, body: bytes, error: str) -> None:
    wire = await env.start(messages=1)
    inbox = await wire.pull(body)
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, bad_request(error))]
    assert await env.waiting() == 0
    assert (await env.info())["num_pending"] == 1  # nothing consumed


async def test_request_without_reply_subject_is_ignored(env: PullEnv) -> None:
    wire = await env.start(messages=2)
    await wire.pull(b'{"batch":2}', reply=None)
    await wire.pull(b"{bad", reply=None)
    assert await env.waiting() == 0
    info = await env.info()
    assert (info["num_pending"], info["delivered"]["consumer_seq"]) == (2, 0)
    inbox = await wire.pull(b"1")
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 1), b"m0", to=inbox)]


# =========================================================================== 404 / 408


async def test_no_wait_with_nothing_pending_is_404(env: PullEnv) -> None:
    wire = await env.start()
    inbox = await wire.pull({"batch": 5, "no_wait": True})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [
        b"HMSG %s %d 28 28\r\nNATS/1.0 404 No Messages\r\n\r\n\r\n" % (inbox.encode(), wire.sids[inbox])
    ]
    assert await env.waiting() == 0


async def test_no_wait_delivers_what_there_is_then_404(env: PullEnv) -> None:
    wire = await env.start(messages=2)
    inbox = await wire.pull({"batch": 5, "no_wait": True})
    frames = await wire.wait(inbox, 3)
    assert [f.raw for f in frames] == [
        wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 1), b"m0", to=inbox),
        wire.msg("s.1", ack(1, 2, 2, await env.stored_ns(2), 0), b"m1", to=inbox),
        wire.hmsg(inbox, NO_MESSAGES),
    ]
    assert await env.waiting() == 0


async def test_no_wait_filled_batch_sends_no_404(env: PullEnv) -> None:
    wire = await env.start(messages=2)
    inbox = await wire.pull({"batch": 2, "no_wait": True})
    await wire.wait(inbox, 2)
    assert await env.waiting() == 0
    assert [f.status for f in wire.on(inbox)] == [None, None]


async def test_no_wait_with_expires_on_empty_stream_waits_and_times_out(env: PullEnv) -> None:
    """no_wait plus expires is not an immediate 404: the request waits and expires with a 408."""
    wire = await env.start()
    inbox = await wire.pull({"batch": 5, "no_wait": True, "expires": 500 * MS})
    assert await env.waiting() == 1
    assert wire.on(inbox) == []
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, timeout_(5))]
    assert await env.waiting() == 0


async def test_no_wait_with_expires_is_one_shot(env: PullEnv) -> None:
    """Once a no_wait+expires request got something, reaching the end of the stream ends it with 404."""
    wire = await env.start()
    inbox = await wire.pull({"batch": 5, "no_wait": True, "expires": 5000 * MS})
    assert await env.waiting() == 1
    seq = await env.publish("s.x", b"one")
    frames = await wire.wait(inbox, 2)
    assert [f.raw for f in frames] == [
        wire.msg("s.x", ack(1, seq, 1, await env.stored_ns(seq), 0), b"one", to=inbox),
        wire.hmsg(inbox, NO_MESSAGES),
    ]
    assert await env.waiting() == 0


async def test_no_wait_with_expires_and_messages_available_returns_at_once(env: PullEnv) -> None:
    wire = await env.start(messages=2)
    inbox = await wire.pull({"batch": 5, "no_wait": True, "expires": 5000 * MS})
    frames = await wire.wait(inbox, 3)
    assert [f.payload for f in frames[:2]] == [b"m0", b"m1"]
    assert frames[2].raw == wire.hmsg(inbox, NO_MESSAGES)


async def test_expires_with_partial_batch_is_408_with_pending_counts(env: PullEnv) -> None:
    wire = await env.start(messages=1)
    inbox = await wire.pull({"batch": 3, "expires": 200 * MS})
    frames = await wire.wait(inbox, 2)
    assert [f.raw for f in frames] == [
        wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 0), b"m0", to=inbox),
        b"HMSG %s %d 81 81\r\nNATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 2\r\nNats-Pending-Bytes: 0\r\n\r\n\r\n"
        % (inbox.encode(), wire.sids[inbox]),
    ]


async def test_expires_with_nothing_delivered_reports_whole_batch(env: PullEnv) -> None:
    wire = await env.start()
    inbox = await wire.pull({"batch": 7, "expires": 150 * MS})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, timeout_(7))]


async def test_expires_without_batch_reports_zero_pending(env: PullEnv) -> None:
    """JSON without ``batch`` has batch 0; its 408 says so."""
    wire = await env.start()
    inbox = await wire.pull({"expires": 150 * MS})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, timeout_(0))]


async def test_expires_in_the_past_is_408_even_with_messages(env: PullEnv) -> None:
    wire = await env.start(messages=2)
    inbox = await wire.pull({"batch": 1, "expires": -5})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, timeout_(1))]
    assert (await env.info())["num_pending"] == 2


async def test_408_pending_bytes_with_max_bytes(env: PullEnv) -> None:
    wire = await env.start(messages=3)
    acks = [ack(1, i, i, await env.stored_ns(i), 3 - i) for i in (1, 2, 3)]
    used = sum(size(f"s.{i - 1}", acks[i - 1], b"m%d" % (i - 1)) for i in (1, 2, 3))
    inbox = await wire.pull({"batch": 5, "max_bytes": 1000, "expires": 200 * MS})
    frames = await wire.wait(inbox, 4)
    assert [f.raw for f in frames[:3]] == [wire.msg(f"s.{i}", acks[i], b"m%d" % i, to=inbox) for i in range(3)]
    assert frames[3].raw == wire.hmsg(inbox, timeout_(2, 1000 - used))


async def test_requests_pending_when_waiting_requests_claim_the_messages(env: PullEnv) -> None:
    """With max_ack_pending reached, a waiting request holds the pending messages: no_wait gets 408 Requests Pending."""
    wire = await env.start(consumer={"max_ack_pending": 1}, messages=3)
    first = await wire.pull(b"1")
    await wire.wait(first)
    holder = await wire.pull({"batch": 5, "expires": 5000 * MS})
    assert await env.waiting() == 1
    plain = await wire.pull({"batch": 1, "no_wait": True})
    with_expires = await wire.pull({"batch": 1, "no_wait": True, "expires": 1000 * MS})
    await wire.wait(plain)
    await wire.wait(with_expires)
    assert wire.raw(plain) == [
        b"HMSG %s %d 33 33\r\nNATS/1.0 408 Requests Pending\r\n\r\n\r\n" % (plain.encode(), wire.sids[plain])
    ]
    assert wire.raw(with_expires) == [wire.hmsg(with_expires, REQUESTS_PENDING)]
    assert wire.on(holder) == []
    assert await env.waiting() == 1


async def test_no_wait_blocked_by_max_ack_pending_keeps_waiting(env: PullEnv) -> None:
    """Blocked by max_ack_pending (and nobody else waiting), a no_wait request neither 404s nor leaves."""
    wire = await env.start(consumer={"max_ack_pending": 1}, messages=3)
    first = await wire.pull(b"1")
    (delivered,) = await wire.wait(first)
    inbox = await wire.pull({"batch": 2, "no_wait": True})
    assert await env.waiting() == 1
    assert wire.on(inbox) == []
    await wire.send(b"PUB %s 0\r\n\r\n" % delivered.reply.encode())  # ack the first message
    frames = await wire.wait(inbox)
    assert frames[0].raw == wire.msg("s.1", ack(1, 2, 2, await env.stored_ns(2), 1), b"m1", to=inbox)
    assert await env.waiting() == 1  # blocked again, still no 404
    assert len(wire.on(inbox)) == 1


# =========================================================================== max_bytes


async def test_message_bigger_than_max_bytes_is_409_and_stays_available(env: PullEnv) -> None:
    wire = await env.start(messages=1)
    inbox = await wire.pull({"batch": 2, "max_bytes": 10})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [
        b"HMSG %s %d 96 96\r\nNATS/1.0 409 Message Size Exceeds MaxBytes\r\nNats-Pending-Messages: 2\r\nNats-Pending-Bytes: 10\r\n\r\n\r\n"
        % (inbox.encode(), wire.sids[inbox])
    ]
    assert await env.waiting() == 0
    again = await wire.pull(b"")
    await wire.wait(again)
    assert wire.raw(again) == [wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 0), b"m0", to=again)]


async def test_max_bytes_too_small_for_a_later_message(env: PullEnv) -> None:
    """The request waits; the 409 is sent when a message that does not fit arrives."""
    wire = await env.start()
    inbox = await wire.pull({"batch": 3, "max_bytes": 100, "expires": 5000 * MS})
    assert await env.waiting() == 1
    await env.publish("s.big", b"y" * 100)
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, too_big(3, 100))]
    assert await env.waiting() == 0


async def test_max_bytes_size_formula(env: PullEnv) -> None:
    """subject + ack reply + header block + payload, checked at the exact boundaries."""
    wire = await env.start(make_consumer=False)
    await env.publish("s.plain", b"hello")
    await env.publish("s.hdr", b"world!", headers={"Key": "Value"})
    await env.publish("s.third", b"x" * 20)
    await env.add_consumer("C")
    header = b"NATS/1.0\r\nKey: Value\r\n\r\n"
    ts = [await env.stored_ns(seq) for seq in (1, 2, 3)]
    size1 = size("s.plain", ack(1, 1, 1, ts[0], 2), b"hello")
    size2 = size("s.hdr", ack(1, 2, 2, ts[1], 1), b"world!", header)

    # One byte short for the second message: first delivered, then 409 with what is left.
    short = await wire.pull({"batch": 5, "max_bytes": size1 + size2 - 1, "expires": 5000 * MS})
    frames = await wire.wait(short, 2)
    assert [f.raw for f in frames] == [
        wire.msg("s.plain", ack(1, 1, 1, ts[0], 2), b"hello", to=short),
        wire.hmsg(short, too_big(4, size2 - 1)),
    ]
    assert await env.waiting() == 0

    # Exactly enough for message 2 (now at consumer seq 2): delivered, the request ends silently.
    exact = await wire.pull({"batch": 5, "max_bytes": size2, "expires": 5000 * MS})
    frames = await wire.wait(exact)
    assert frames[0].raw == wire.hmsg("s.hdr", header, b"world!", reply=ack(1, 2, 2, ts[1], 1), to=exact)
    assert await env.waiting() == 0
    assert len(wire.on(exact)) == 1
    assert (await env.info())["num_pending"] == 1


async def test_max_bytes_one_byte_spare_keeps_request_open(env: PullEnv) -> None:
    wire = await env.start(messages=1)
    need = size("s.0", ack(1, 1, 1, await env.stored_ns(1), 0), b"m0")
    inbox = await wire.pull({"batch": 5, "max_bytes": need + 1, "expires": 300 * MS})
    frames = await wire.wait(inbox, 2)
    assert [f.raw for f in frames] == [
        wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 0), b"m0", to=inbox),
        wire.hmsg(inbox, timeout_(4, 1)),
    ]


async def test_batch_completed_with_budget_left(env: PullEnv) -> None:
    wire = await env.start(messages=3)
    acks = [ack(1, i, i, await env.stored_ns(i), 3 - i) for i in (1, 2)]
    used = size("s.0", acks[0], b"m0") + size("s.1", acks[1], b"m1")
    inbox = await wire.pull({"batch": 2, "max_bytes": 1000})
    frames = await wire.wait(inbox, 3)
    assert [f.raw for f in frames] == [
        wire.msg("s.0", acks[0], b"m0", to=inbox),
        wire.msg("s.1", acks[1], b"m1", to=inbox),
        b"HMSG %s %d %d %d\r\nNATS/1.0 409 Batch Completed\r\nNats-Pending-Messages: 0\r\nNats-Pending-Bytes: %d\r\n\r\n\r\n"
        % (inbox.encode(), wire.sids[inbox], 80 + len(str(1000 - used)), 80 + len(str(1000 - used)), 1000 - used),
    ]
    assert await env.waiting() == 0
    assert (await env.info())["num_pending"] == 1


async def test_batch_completed_is_sent_right_after_the_last_message(env: PullEnv) -> None:
    """Not at expiry: the 409 follows the message that fills the batch."""
    wire = await env.start()
    inbox = await wire.pull({"batch": 2, "max_bytes": 1000, "expires": 30_000 * MS})
    assert await env.waiting() == 1
    await env.publish("s.a", b"1")
    await wire.wait(inbox)
    assert await env.waiting() == 1
    await env.publish("s.b", b"2")
    frames = await wire.wait(inbox, 3)
    used = sum(size(f.subject, f.reply, f.payload) for f in frames[:2])
    assert frames[2].raw == wire.hmsg(inbox, completed(0, 1000 - used))
    assert await env.waiting() == 0


async def test_max_bytes_without_batch_completes_with_minus_one(env: PullEnv) -> None:
    """JSON without batch means batch 0: one message, then Batch Completed with Nats-Pending-Messages: -1."""
    wire = await env.start(messages=2)
    reply = ack(1, 1, 1, await env.stored_ns(1), 1)
    inbox = await wire.pull({"max_bytes": 100})
    frames = await wire.wait(inbox, 2)
    assert [f.raw for f in frames] == [
        wire.msg("s.0", reply, b"m0", to=inbox),
        wire.hmsg(inbox, completed(-1, 100 - size("s.0", reply, b"m0"))),
    ]


# =========================================================================== consumer limits


async def test_exceeded_max_waiting(env: PullEnv) -> None:
    wire = await env.start(consumer={"max_waiting": 2})
    await wire.pull({"batch": 1, "expires": 5000 * MS})
    await wire.pull({"batch": 1})
    third = await wire.pull({"batch": 1, "expires": 5000 * MS})
    await wire.wait(third)
    assert wire.raw(third) == [
        b"HMSG %s %d 36 36\r\nNATS/1.0 409 Exceeded MaxWaiting\r\n\r\n\r\n" % (third.encode(), wire.sids[third])
    ]
    assert await env.waiting() == 2


async def test_exceeded_max_waiting_is_silent_with_idle_heartbeat(env: PullEnv) -> None:
    wire = await env.start(consumer={"max_waiting": 1})
    await wire.pull({"batch": 1, "expires": 5000 * MS})
    silent = await wire.pull({"batch": 1, "expires": 400 * MS, "idle_heartbeat": 100 * MS})
    assert await env.waiting() == 1
    await wire.quiet(0.5)  # past its would-be heartbeats and expiry: never enqueued
    assert wire.on(silent) == []


async def test_no_wait_on_full_queue_is_404_not_409(env: PullEnv) -> None:
    wire = await env.start(consumer={"max_waiting": 1})
    await wire.pull({"batch": 1, "expires": 5000 * MS})
    inbox = await wire.pull({"batch": 1, "no_wait": True})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, NO_MESSAGES)]


async def test_exceeded_max_request_batch(env: PullEnv) -> None:
    wire = await env.start(consumer={"max_batch": 2}, messages=3)
    over_int = await wire.pull(b"3")
    over_json = await wire.pull({"batch": 3, "no_wait": True})
    await wire.wait(over_int)
    await wire.wait(over_json)
    expected = b"NATS/1.0 409 Exceeded MaxRequestBatch of 2\r\n\r\n"
    assert wire.raw(over_int) == [wire.hmsg(over_int, expected)]
    assert wire.raw(over_json) == [wire.hmsg(over_json, expected)]
    ok = await wire.pull(b"2")
    frames = await wire.wait(ok, 2)
    assert [f.payload for f in frames] == [b"m0", b"m1"]


@pytest.mark.parametrize(
    "max_expires, text",
    [
        (1000 * MS, "1s"),
        (1500 * MS, "1.5s"),
        (250 * MS, "250ms"),
        (90_000 * MS, "1m30s"),
        (3_600_000 * MS, "1h0m0s"),
        (1_000_001, "1.000001ms"),
    ],
)
async def test_exceeded_max_request_expires(env: PullEnv, max_expires: int, text: str) -> None:
    wire = await env.start(consumer={"max_expires": max_expires})
    inbox = await wire.pull({"batch": 1, "expires": max_expires + 1000 * MS})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, f"NATS/1.0 409 Exceeded MaxRequestExpires of {text}\r\n\r\n".encode())]
    assert await env.waiting() == 0


async def test_max_request_expires_allows_equal_and_unset_expires(env: PullEnv) -> None:
    wire = await env.start(consumer={"max_expires": 1000 * MS})
    equal = await wire.pull({"batch": 1, "expires": 1000 * MS})
    unset = await wire.pull({"batch": 1})
    bare = await wire.pull(b"1")
    assert await env.waiting() == 3
    assert wire.on(equal) == wire.on(unset) == wire.on(bare) == []


async def test_exceeded_max_request_max_bytes(env: PullEnv) -> None:
    wire = await env.start(consumer={"max_bytes": 100}, messages=1)
    over = await wire.pull({"batch": 1, "max_bytes": 101})
    await wire.wait(over)
    assert wire.raw(over) == [
        b"HMSG %s %d 51 51\r\nNATS/1.0 409 Exceeded MaxRequestMaxBytes of 100\r\n\r\n\r\n"
        % (over.encode(), wire.sids[over])
    ]
    equal = await wire.pull({"batch": 1, "max_bytes": 100})
    frames = await wire.wait(equal)
    assert frames[0].payload == b"m0"


@pytest.mark.parametrize(
    "consumer, body, expected",
    [
        # heartbeat check is part of parsing: before every limit
        (
            {"max_batch": 1, "max_expires": 100 * MS},
            {"batch": 5, "expires": 1000 * MS, "idle_heartbeat": 900 * MS},
            HB_TOO_LARGE,
        ),
        # batch, then expires, then max_bytes
        (
            {"max_batch": 1, "max_expires": 100 * MS, "max_bytes": 10},
            {"batch": 5, "expires": 1000 * MS, "max_bytes": 50},
            b"NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n",
        ),
        (
            {"max_expires": 100 * MS, "max_bytes": 10},
            {"batch": 5, "expires": 1000 * MS, "max_bytes": 50},
            b"NATS/1.0 409 Exceeded MaxRequestExpires of 100ms\r\n\r\n",
        ),
        # limits before no_wait's 404
        (
            {"max_bytes": 10},
            {"batch": 1, "max_bytes": 50, "no_wait": True},
            b"NATS/1.0 409 Exceeded MaxRequestMaxBytes of 10\r\n\r\n",
        ),
        ({"max_batch": 1}, {"batch": 2, "no_wait": True}, b"NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n"),
        # limits before priority checks, priority checks before no_wait
        ({"max_batch": 1}, {"batch": 2, "min_pending": 1}, b"NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n"),
        ({}, {"batch": 1, "min_pending": 1, "no_wait": True}, bad_request("Not a Overflow Priority consumer")),
    ],
)
async def test_validation_order(env: PullEnv, consumer: dict, body: dict, expected: bytes) -> None:
    wire = await env.start(consumer=consumer)
    inbox = await wire.pull(body)
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, expected)]


async def test_limits_are_checked_before_max_waiting(env: PullEnv) -> None:
    wire = await env.start(consumer={"max_waiting": 1, "max_batch": 1})
    await wire.pull({"batch": 1, "expires": 5000 * MS})
    inbox = await wire.pull({"batch": 2})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, b"NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n")]


# =========================================================================== heartbeats


@pytest.mark.parametrize(
    "body",
    [
        {"batch": 1, "idle_heartbeat": 100 * MS},
        {"batch": 1, "idle_heartbeat": 100 * MS + 1, "expires": 200 * MS},
        {"batch": 1, "idle_heartbeat": 1, "expires": 1},
        {"batch": 1, "idle_heartbeat": 2000 * MS, "expires": 3000 * MS},
    ],
)
async def test_heartbeat_more_than_half_of_expires_is_400(env: PullEnv, body: dict) -> None:
    wire = await env.start(messages=1)
    inbox = await wire.pull(body)
    await wire.wait(inbox)
    assert wire.raw(inbox) == [b"HMSG %s %d 56 56\r\n%s\r\n" % (inbox.encode(), wire.sids[inbox], HB_TOO_LARGE)]
    assert (await env.info())["num_pending"] == 1


async def test_idle_heartbeats_while_waiting_then_408(env: PullEnv) -> None:
    wire = await env.start()
    started = env.target.now()
    inbox = await wire.pull({"batch": 3, "expires": 500 * MS, "idle_heartbeat": 100 * MS})
    final = await wire.wait_status(inbox)
    elapsed = env.target.now() - started
    frames = wire.on(inbox)
    beats = frames[:-1]
    assert frames[-1] is final and final.raw == wire.hmsg(inbox, timeout_(3))
    assert 1 <= len(beats) <= 4, [f.raw for f in frames]
    assert all(
        f.raw
        == b"HMSG %s %d 75 75\r\nNATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 0\r\n\r\n\r\n"
        % (inbox.encode(), wire.sids[inbox])
        for f in beats
    )
    assert elapsed >= 0.45


async def test_idle_heartbeat_exactly_half_of_expires_is_accepted(env: PullEnv) -> None:
    wire = await env.start()
    inbox = await wire.pull({"expires": 200 * MS, "idle_heartbeat": 100 * MS})
    final = await wire.wait_status(inbox)
    assert final.raw == wire.hmsg(inbox, timeout_(0))
    assert all(f.raw == wire.hmsg(inbox, heartbeat(0, 0)) for f in wire.on(inbox)[:-1])


async def test_idle_heartbeat_reports_last_delivered_sequences(env: PullEnv) -> None:
    wire = await env.start(messages=3)
    first = await wire.pull(b"2")
    await wire.wait(first, 2)
    inbox = await wire.pull({"batch": 3, "expires": 400 * MS, "idle_heartbeat": 100 * MS})
    final = await wire.wait_status(inbox)
    frames = wire.on(inbox)
    assert frames[0].raw == wire.msg("s.2", ack(1, 3, 3, await env.stored_ns(3), 0), b"m2", to=inbox)
    assert final.raw == wire.hmsg(inbox, timeout_(2))
    beats = frames[1:-1]
    assert beats and all(f.raw == wire.hmsg(inbox, heartbeat(3, 3)) for f in beats)


# =========================================================================== other statuses


async def test_consumer_delete_releases_every_waiting_request(env: PullEnv) -> None:
    wire = await env.start()
    a = await wire.pull({"batch": 3, "expires": 5000 * MS})
    b = await wire.pull({"batch": 3})
    c = await wire.pull({"batch": 3, "max_bytes": 500})
    assert await env.waiting() == 3
    reply = await api(env.nc, "$JS.API.CONSUMER.DELETE.S.C")
    assert reply == {"type": "io.nats.jetstream.api.v1.consumer_delete_response", "success": True}
    for inbox in (a, b, c):
        await wire.wait(inbox)
        assert wire.raw(inbox) == [
            b"HMSG %s %d 33 33\r\nNATS/1.0 409 Consumer Deleted\r\n\r\n\r\n" % (inbox.encode(), wire.sids[inbox])
        ]
    # in queue order
    assert [f.sid for f in wire.frames if f.status][-3:] == [wire.sids[a], wire.sids[b], wire.sids[c]]


async def test_stream_delete_releases_waiting_requests(env: PullEnv) -> None:
    wire = await env.start()
    a = await wire.pull({"batch": 3, "expires": 5000 * MS})
    b = await wire.pull({"batch": 1, "max_bytes": 500})
    assert await env.waiting() == 2
    reply = await api(env.nc, "$JS.API.STREAM.DELETE.S")
    assert reply == {"type": "io.nats.jetstream.api.v1.stream_delete_response", "success": True}
    for inbox in (a, b):
        await wire.wait(inbox)
        assert wire.raw(inbox) == [wire.hmsg(inbox, CONSUMER_DELETED)]


async def test_pull_on_push_consumer(env: PullEnv) -> None:
    wire = await env.start(make_consumer=False, messages=1)
    await env.add_consumer("P", deliver_subject="dlv.p")
    plain = await wire.pull(b"", consumer="P")
    bad_json = await wire.pull(b"{bad", consumer="P")
    api_level = await wire.pull(b"", consumer="P", headers=b"NATS/1.0\r\nNats-Required-Api-Level: 99\r\n\r\n")
    for inbox in (plain, bad_json, api_level):
        await wire.wait(inbox)
        assert wire.raw(inbox) == [
            b"HMSG %s %d 39 39\r\nNATS/1.0 409 Consumer is push based\r\n\r\n\r\n" % (inbox.encode(), wire.sids[inbox])
        ]


@pytest.mark.parametrize("level", [b"6", b"99", b"abc", b"-"])
async def test_required_api_level_too_high_is_412(env: PullEnv, level: bytes) -> None:
    wire = await env.start(messages=1)
    headers = b"NATS/1.0\r\nNats-Required-Api-Level: " + level + b"\r\n\r\n"
    inbox = await wire.pull(b"{bad", headers=headers)  # checked before the body is parsed
    await wire.wait(inbox)
    assert wire.raw(inbox) == [
        b"HMSG %s %d 35 35\r\nNATS/1.0 412 Required Api Level\r\n\r\n\r\n" % (inbox.encode(), wire.sids[inbox])
    ]
    assert await env.waiting() == 0
    assert (await env.info())["num_pending"] == 1


@pytest.mark.parametrize("level", [b"5", b"0", b""])
async def test_required_api_level_met_is_served(env: PullEnv, level: bytes) -> None:
    wire = await env.start(messages=1)
    headers = b"NATS/1.0\r\nNats-Required-Api-Level: " + level + b"\r\nOther: x\r\n\r\n"
    inbox = await wire.pull(b"1", headers=headers)
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 0), b"m0", to=inbox)]


@pytest.mark.parametrize("subject_tail", ["S.NOPE", "NOPE.C"])
async def test_missing_consumer_or_stream_is_no_responders(env: PullEnv, subject_tail: str) -> None:
    wire = await env.start()
    stream, consumer = subject_tail.split(".")
    plain = await wire.pull(b"1", stream=stream, consumer=consumer)
    with_headers = await wire.pull(b"1", stream=stream, consumer=consumer, headers=b"NATS/1.0\r\nX: y\r\n\r\n")
    subject = f"$JS.API.CONSUMER.MSG.NEXT.{subject_tail}"
    for inbox in (plain, with_headers):
        await wire.wait(inbox)
        header = f"NATS/1.0 503\r\nNats-Subject: {subject}\r\n\r\n".encode()
        assert wire.raw(inbox) == [
            b"HMSG %s %d %d %d\r\n%s\r\n" % (inbox.encode(), wire.sids[inbox], len(header), len(header), header)
        ]


async def test_missing_consumer_without_no_responders_is_silent(env: PullEnv) -> None:
    await env.start()
    wire = await env.open_wire(no_responders=False)
    inbox = await wire.pull(b"1", consumer="NOPE")
    await wire.ping()  # no-responders is decided while the PUB is processed
    assert wire.on(inbox) == []


async def test_server_shutdown_releases_waiting_requests(env: PullEnv, target: Target) -> None:
    wire = await env.start()
    a = await wire.pull({"batch": 3, "max_bytes": 5000})
    b = await wire.pull({"batch": 4, "expires": 30_000 * MS})
    c = await wire.pull(b"1")
    assert await env.waiting() == 3
    await env.nc.close()
    await target.stop()
    await wire.until(lambda: wire.closed, "the connection to close")
    got = {f.sid: f.raw for f in wire.frames if (f.status or "").startswith("409")}  # in no particular order
    assert got == {
        wire.sids[a]: wire.hmsg(a, pending("409 Server Shutdown", 3, 5000)),
        wire.sids[b]: wire.hmsg(b, pending("409 Server Shutdown", 4, 0)),
        wire.sids[c]: wire.hmsg(c, pending("409 Server Shutdown", 1, 0)),
    }


# =========================================================================== priority fields on this path


@pytest.mark.parametrize(
    "body, text",
    [
        ({"batch": 1, "min_pending": 1}, "Not a Overflow Priority consumer"),
        ({"batch": 1, "min_ack_pending": 1}, "Not a Overflow Priority consumer"),
        ({"batch": 1, "id": "x"}, "Not a Pinned Client Priority consumer"),
        ({"batch": 1, "priority": 10}, "Priority must be between 0 and 9"),
        ({"batch": 1, "priority": -1}, "Priority must be between 0 and 9"),
        ({"batch": 1, "min_pending": 1, "id": "x", "priority": 10}, "Not a Overflow Priority consumer"),
    ],
)
async def test_priority_fields_on_a_plain_consumer(env: PullEnv, body: dict, text: str) -> None:
    wire = await env.start(messages=1)
    inbox = await wire.pull(body)
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, bad_request(text))]


async def test_group_on_a_plain_consumer_is_ignored(env: PullEnv) -> None:
    wire = await env.start(messages=1)
    inbox = await wire.pull({"batch": 1, "group": "anything"})
    frames = await wire.wait(inbox)
    assert frames[0].payload == b"m0"


async def test_overflow_consumer_needs_a_group_in_json_requests(env: PullEnv) -> None:
    wire = await env.start(consumer={"priority_policy": "overflow", "priority_groups": ["A"]}, messages=3)
    missing = await wire.pull({"batch": 1})
    unknown = await wire.pull({"batch": 1, "group": "B"})
    await wire.wait(missing)
    await wire.wait(unknown)
    assert wire.raw(missing) == [wire.hmsg(missing, bad_request("Priority Group missing"))]
    assert wire.raw(unknown) == [wire.hmsg(unknown, bad_request("Invalid Priority Group"))]
    # Non-JSON bodies carry no priority group at all and are served.
    empty = await wire.pull(b"")
    bare = await wire.pull(b"1")
    grouped = await wire.pull({"batch": 1, "group": "A"})
    for inbox, payload in ((empty, b"m0"), (bare, b"m1"), (grouped, b"m2")):
        frames = await wire.wait(inbox)
        assert frames[0].payload == payload


async def test_pinned_client_pin_header_and_mismatch(env: PullEnv) -> None:
    wire = await env.start(
        consumer={"priority_policy": "pinned_client", "priority_groups": ["A"], "priority_timeout": 60_000 * MS},
        messages=2,
    )
    first = await wire.pull({"batch": 1, "group": "A"})
    (frame,) = await wire.wait(first)
    match = re.fullmatch(rb"NATS/1.0\r\nNats-Pin-Id: ([A-Za-z0-9]{22})\r\n\r\n", frame.header or b"")
    assert match, frame.raw
    assert frame.raw == wire.hmsg("s.0", frame.header, b"m0", reply=ack(1, 1, 1, await env.stored_ns(1), 1), to=first)
    wrong = await wire.pull({"batch": 1, "group": "A", "id": "bogus"})
    await wire.wait(wrong)
    assert wire.raw(wrong) == [wire.hmsg(wrong, b"NATS/1.0 423 Nats-Pin-Id mismatch\r\n\r\n")]
    right = await wire.pull({"batch": 1, "group": "A", "id": match.group(1).decode()})
    (frame,) = await wire.wait(right)
    assert frame.payload == b"m1" and frame.header == match.group(0)


async def test_pinned_client_stale_pin_id_when_nobody_is_pinned(env: PullEnv) -> None:
    wire = await env.start(
        consumer={"priority_policy": "pinned_client", "priority_groups": ["A"], "priority_timeout": 60_000 * MS}
    )
    inbox = await wire.pull({"batch": 1, "group": "A", "id": "bogus", "expires": 5000 * MS})
    assert await env.waiting() == 1
    await env.publish("s.x", b"x")
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, pending("423 Nats-Wrong-Pin-Id", 1, 0))]


# =========================================================================== delivered messages


async def test_delivered_message_framing_and_ack_subject(env: PullEnv) -> None:
    wire = await env.start()
    seq = await env.publish("s.some.subject", b"payload bytes")
    inbox = await wire.pull(b"")
    (frame,) = await wire.wait(inbox)
    ts = await env.stored_ns(seq)
    assert frame.raw == b"MSG s.some.subject %d $JS.ACK.S.C.1.1.1.%d.0 13\r\npayload bytes\r\n" % (wire.sids[inbox], ts)
    tokens = frame.reply.split(".")
    assert tokens[:4] == ["$JS", "ACK", "S", "C"] and len(tokens) == 9


async def test_ack_pending_token_counts_down(env: PullEnv) -> None:
    wire = await env.start(messages=4)
    inbox = await wire.pull(b"3")
    frames = await wire.wait(inbox, 3)
    assert [f.reply for f in frames] == [ack(1, i, i, await env.stored_ns(i), 4 - i) for i in (1, 2, 3)]


async def test_ack_tokens_with_filter_subject(env: PullEnv) -> None:
    wire = await env.start(make_consumer=False)
    for subject in ("s.a", "s.b", "s.a", "s.b", "s.a"):
        await env.publish(subject, subject.encode())
    await env.add_consumer("F", filter_subject="s.a")
    inbox = await wire.pull(b"2", consumer="F")
    frames = await wire.wait(inbox, 2)
    assert [f.reply for f in frames] == [
        ack(1, 1, 1, await env.stored_ns(1), 2, consumer="F"),
        ack(1, 3, 2, await env.stored_ns(3), 1, consumer="F"),
    ]


async def test_redelivery_after_nak_bumps_delivery_count(env: PullEnv) -> None:
    wire = await env.start(messages=2)
    first = await wire.pull(b"")
    (frame,) = await wire.wait(first)
    confirm = await wire.inbox()
    await wire.send(b"PUB %s %s 4\r\n-NAK\r\n" % (frame.reply.encode(), confirm.encode()))
    assert (await wire.wait(confirm))[0].raw == b"MSG %s %d 0\r\n\r\n" % (confirm.encode(), wire.sids[confirm])
    again = await wire.pull(b"")
    (frame2,) = await wire.wait(again)
    ts = await env.stored_ns(1)
    assert frame.reply == ack(1, 1, 1, ts, 1)
    assert frame2.raw == wire.msg("s.0", ack(2, 1, 2, ts, 1), b"m0", to=again)


async def test_headers_are_delivered_verbatim(env: PullEnv) -> None:
    wire = await env.start(make_consumer=False)
    header = b"NATS/1.0\r\nX:  spaced \r\nx: lower\r\nNats-Msg-Id: abc\r\n\r\n"
    puback = await wire.inbox()
    await wire.send(b"HPUB s.h %s %d %d\r\n%spay\r\n" % (puback.encode(), len(header), len(header) + 3, header))
    assert (await wire.wait(puback))[0].payload == b'{"stream":"S","seq":1}'
    await env.publish("s.empty", b"", headers={"K": "v"})
    await env.add_consumer("C")
    inbox = await wire.pull(b"2")
    frames = await wire.wait(inbox, 2)
    assert frames[0].raw == wire.hmsg("s.h", header, b"pay", reply=ack(1, 1, 1, await env.stored_ns(1), 1), to=inbox)
    assert frames[1].raw == wire.hmsg(
        "s.empty", b"NATS/1.0\r\nK: v\r\n\r\n", b"", reply=ack(1, 2, 2, await env.stored_ns(2), 0), to=inbox
    )


async def test_waiting_requests_are_served_round_robin(env: PullEnv) -> None:
    """A request still wanting more after a message moves to the back of the queue."""
    wire = await env.start()
    a = await wire.pull({"batch": 3, "expires": 5000 * MS})
    b = await wire.pull({"batch": 3, "expires": 5000 * MS})
    c = await wire.pull({"batch": 1, "expires": 5000 * MS})
    assert await env.waiting() == 3
    for i in range(6):
        await env.publish("s.x", b"%d" % i)
    await wire.until(lambda: sum(1 for f in wire.frames if f.subject == "s.x") == 6, "6 messages")
    order = [f.sid for f in wire.frames if f.subject == "s.x"]
    assert order == [wire.sids[x] for x in (a, b, c, a, b, a)]
    assert [f.payload for f in wire.frames if f.subject == "s.x"] == [b"0", b"1", b"2", b"3", b"4", b"5"]
    assert await env.waiting() == 1  # b still wants one


async def test_single_message_requests_are_fifo(env: PullEnv) -> None:
    wire = await env.start()
    first = await wire.pull(b"1")
    second = await wire.pull(b"1")
    assert await env.waiting() == 2
    await env.publish("s.x", b"one")
    await env.publish("s.x", b"two")
    assert [f.payload for f in await wire.wait(first)] == [b"one"]
    assert [f.payload for f in await wire.wait(second)] == [b"two"]


async def test_request_satisfied_across_several_publishes(env: PullEnv) -> None:
    wire = await env.start()
    inbox = await wire.pull({"batch": 3, "expires": 30_000 * MS})
    for n in range(3):
        seq = await env.publish(f"s.{n}", b"p%d" % n)
        frames = await wire.wait(inbox, n + 1)
        assert frames[n].raw == wire.msg(
            f"s.{n}", ack(1, seq, n + 1, await env.stored_ns(seq), 0), b"p%d" % n, to=inbox
        )
        assert await env.waiting() == (1 if n < 2 else 0)
    assert len(wire.on(inbox)) == 3


async def test_unsubscribed_reply_loses_its_request(env: PullEnv) -> None:
    wire = await env.start()
    gone = await wire.pull({"batch": 3, "expires": 30_000 * MS})
    kept = await wire.pull({"batch": 3})
    assert await env.waiting() == 2
    await wire.unsub(gone)
    await wire.ping()
    assert (await env.info())["num_waiting"] == 1  # CONSUMER.INFO drops requests without interest
    await env.publish("s.x", b"1")
    frames = await wire.wait(kept)
    assert frames[0].raw == wire.msg("s.x", ack(1, 1, 1, await env.stored_ns(1), 0), b"1", to=kept)


async def test_unsubscribed_reply_is_skipped_on_delivery(env: PullEnv) -> None:
    """Without an INFO in between, the message is still given to the next request with interest."""
    wire = await env.start()
    gone = await wire.pull({"batch": 3, "expires": 30_000 * MS})
    kept = await wire.pull({"batch": 3})
    await wire.barrier()
    await wire.unsub(gone)
    await wire.ping()
    await env.publish("s.x", b"1")
    frames = await wire.wait(kept)
    assert frames[0].payload == b"1"
    assert await env.waiting() == 1


async def test_closed_connection_loses_its_requests(env: PullEnv) -> None:
    wire = await env.start()
    other = await env.open_wire()
    await other.pull({"batch": 5, "expires": 30_000 * MS})
    await other.barrier()
    kept = await wire.pull({"batch": 5})
    assert await env.waiting() == 2
    await other.close()
    info = await poll(env.info, lambda info: info["num_waiting"] == 1, timeout=WAIT, interval=0.01)
    assert info["num_waiting"] == 1, "closed connection's request still counted"
    await env.publish("s.x", b"1")
    frames = await wire.wait(kept)
    assert frames[0].raw == wire.msg("s.x", ack(1, 1, 1, await env.stored_ns(1), 0), b"1", to=kept)


# =========================================================================== CONSUMER.INFO counters


async def test_num_waiting_and_num_pending_follow_requests(env: PullEnv) -> None:
    wire = await env.start(messages=3)
    info = await env.info()
    assert (info["num_waiting"], info["num_pending"], info["num_ack_pending"]) == (0, 3, 0)
    taker = await wire.pull(b"2")
    await wire.wait(taker, 2)
    info = await env.info()
    assert (info["num_waiting"], info["num_pending"], info["num_ack_pending"]) == (0, 1, 2)
    rest = await wire.pull({"batch": 2, "expires": 700 * MS})
    await wire.wait(rest)
    short = await wire.pull({"batch": 1, "expires": 400 * MS})
    forever = await wire.pull({"batch": 1})
    await wire.barrier()
    info = await env.info()
    assert (info["num_waiting"], info["num_pending"], info["num_ack_pending"]) == (3, 0, 3)
    await wire.wait_status(short)
    await wire.wait_status(rest)
    info = await env.info()
    assert (info["num_waiting"], info["num_pending"]) == (1, 0)
    assert wire.on(forever) == []


# =========================================================================== nats-py


@pytest.mark.manual_clock(False)  # nats-py times its fetch on the real clock
async def test_nats_py_fetch(target: Target) -> None:
    nc = await nats.connect(target.url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        for i in range(3):
            await js.publish(f"s.{i}", b"m%d" % i)
        psub = await js.pull_subscribe("s.>", durable="D", stream="S")
        msgs = await psub.fetch(2, timeout=WAIT)
        assert [(m.subject, m.data) for m in msgs] == [("s.0", b"m0"), ("s.1", b"m1")]
        assert [(m.metadata.sequence.stream, m.metadata.sequence.consumer, m.metadata.num_pending) for m in msgs] == [
            (1, 1, 2),
            (2, 2, 1),
        ]
        for m in msgs:
            await m.ack_sync()
        started = time.monotonic()
        msgs = await psub.fetch(5, timeout=WAIT)  # fewer available: returned on the 404, not at the timeout
        assert [m.data for m in msgs] == [b"m2"]
        assert time.monotonic() - started < WAIT / 2
        await msgs[0].ack_sync()
        with pytest.raises(asyncio.TimeoutError):  # nats TimeoutError or fetch's own deadline
            await psub.fetch(1, timeout=0.3)
        # A fresh inbox: the 408 ending that pull may still be on its way to the first one, where
        # nats-py would take it for the answer to the next fetch's no_wait request.
        psub = await js.pull_subscribe("s.>", durable="D", stream="S")
        with pytest.raises(asyncio.TimeoutError):
            await psub.fetch(3, timeout=0.3)
        info = await js.consumer_info("S", "D")
        assert (info.num_pending, info.num_ack_pending, info.delivered.consumer_seq) == (0, 0, 3)
    finally:
        await nc.close()


@pytest.mark.manual_clock(False)  # nats-py watches heartbeats on the real clock
async def test_nats_py_fetch_with_heartbeat(target: Target) -> None:
    nc = await nats.connect(target.url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        psub = await js.pull_subscribe("s.>", durable="D", stream="S")

        async def later() -> None:
            await asyncio.sleep(0.25)
            await js.publish("s.late", b"late")

        task = asyncio.create_task(later())
        msgs = await psub.fetch(1, timeout=WAIT, heartbeat=0.1)
        await task
        assert [(m.subject, m.data) for m in msgs] == [("s.late", b"late")]
        await js.publish("s.a", b"a")
        msgs = await psub.fetch(3, timeout=1, heartbeat=0.2)
        assert [m.data for m in msgs] == [b"a"]
        with pytest.raises(FetchTimeoutError):  # heartbeats arrived, then nothing
            await psub.fetch(1, timeout=0.5, heartbeat=0.1)
    finally:
        await nc.close()
