"""Fast-ingest batch publishing (``allow_batched``) on both targets, with raw publishes.

Every expectation was read off nats-server 2.15.1.  Facts pinned here (R1):

* A publish whose reply subject is ``<prefix>.<id>.<flow>.<ok|fail>.<seq>.<op>.$FI``
  is part of a fast batch; ops 0 start (seq 1), 1 append (seq > 1), 2 commit,
  3 commit without storing (seq > 1), 4 ping.  Every reply goes to that reply
  subject as a plain ``MSG``.  A reply of just ``.$FI`` is not a batch.
* Messages are stored as they arrive.  The start is answered
  ``{"type":"ack","seq":0,"msgs":F}`` with ``F = min(500, flow)`` (flow 0 or
  garbage means 10), or 1 when another batch of the stream is in flight; then
  ``{"type":"ack","seq":N,"msgs":F}`` each time F more are stored (F moving
  towards ``500 / batches in flight``, never above the publisher's flow).
* The batch ends with ``{"stream":"S","seq":<last stored>,"batch":"<id>","count":K}``.
  A commit stores its message; a commit-EOB ends at the previous sequence.
* A skipped sequence sends ``{"type":"gap","last_seq":<expected>,"seq":<got>}``;
  ``ok`` mode goes on, ``fail`` mode ends the batch (PubAck at the last stored
  one).  A sequence going backwards is reported the same way (the 2.15.1
  binary, unlike the Go source) and ends the batch in either mode.  A ping
  re-sends the last flow ack; a ping ahead reports the gap as
  ``last_seq = last + 1, seq = ping + 1``; a ping of an unknown batch is
  10208, even with sequence 1 (the Go source would start a batch).
* A refused message sends ``{"type":"err","seq":N,"error":{...}}`` (``ok``
  goes on; ``fail`` ends the batch); a refused first message in ``fail`` mode
  is answered with the plain error PubAck.  A duplicate ``Nats-Msg-Id`` is
  skipped silently.
* Errors (plain error PubAcks): 10205 batching off, 10206 bad pattern, 10207
  id over 64 bytes, 10208 unknown id, 10211 (429) over 1000 batches in flight
  on a stream; the size and sealed checks come first.  A batch message asking
  for a higher ``Nats-Required-Api-Level`` ends its batch with 10185 (412); a
  satisfied one has the header taken off before storing.  ``no_ack`` silences
  the start's flow ack and the error PubAcks only.  Config: 10209 with a mirror; ``allow_batched`` may be turned on
  and off on update (off drops batches in flight); API level 4.
"""

from __future__ import annotations

from typing import Any

import nats

from tests.harness.fast_batch import error_notice, exchange, fi, flow, msg
from tests.harness.js import api, connect
from tests.harness.publish import Raw, add_stream, err, hdr_block, info, wrong_last_seq
from tests.harness.targets import Target


def gap(expected: int, got: int) -> bytes:
    return b'{"type":"gap","last_seq":%d,"seq":%d}' % (expected, got)


def done(seq: int, batch: str, count: int, stream: str = "S") -> bytes:
    return b'{"stream":"%s","seq":%d,"batch":"%s","count":%d}' % (stream.encode(), seq, batch.encode(), count)


async def setup(target: Target, **cfg: Any) -> tuple[nats.NATS, Raw]:
    nc = await connect(target)
    await add_stream(nc, allow_batched=True, **cfg)
    return nc, await Raw.open(target)


async def stored(nc: nats.NATS) -> tuple[int, int]:
    state = (await info(nc))["state"]
    return state["messages"], state["last_seq"]


async def test_start_append_commit(target: Target) -> None:
    nc, raw = await setup(target)
    a1, a2, a3 = fi("A", 1, 0), fi("A", 2, 1), fi("A", 3, 2)
    got = await exchange(raw, ("s.a", a1, b"one"), ("s.b", a2, b"two"), ("s.c", a3, b"three"), frames=2)
    assert got == msg(a1, flow(0, 10)) + msg(a3, done(3, "A", 3))
    reply = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 3})
    assert reply["message"]["subject"] == "s.c"
    assert await stored(nc) == (3, 3)
    # The batch is over: its id is unknown now, a new start reuses it.
    assert await exchange(raw, ("s.a", fi("A", 4, 1)), frames=1) == msg(
        fi("A", 4, 1), err("S", 400, 10208, "batch publish ID unknown")
    )
    got = await exchange(raw, ("s.a", fi("A", 1, 2, flow=0)), frames=1)
    assert got == msg(fi("A", 1, 2, flow=0), done(4, "A", 1))  # a commit at once: no flow ack
    await raw.close()
    await nc.close()


async def test_commit_eob_and_ping(target: Target) -> None:
    nc, raw = await setup(target)
    b1, b2, ping, eob = fi("B", 1, 0, "fail"), fi("B", 2, 1, "fail"), fi("B", 2, 4, "fail"), fi("B", 3, 3, "fail")
    got = await exchange(raw, ("s.a", b1), ("s.a", b2), ("s.a", ping), ("s.a", eob, b"not stored"), frames=3)
    assert got == msg(b1, flow(0, 10)) + msg(ping, flow(0, 10)) + msg(eob, done(2, "B", 2))
    assert await stored(nc) == (2, 2)
    # A ping ahead of what arrived: the gap, then (ok mode) the flow ack, the batch goes on.
    c1, ping, c4 = fi("C", 1, 0), fi("C", 3, 4), fi("C", 5, 1)
    got = await exchange(raw, ("s.a", c1), ("s.a", ping), ("s.a", c4), ("s.a", fi("C", 6, 3)), frames=5)
    assert got == (msg(c1, flow(0, 10)) + msg(ping, gap(2, 4)) + msg(ping, flow(0, 10)) + msg(c4, gap(4, 5))) + msg(
        fi("C", 6, 3), done(4, "C", 5)
    )
    # In fail mode the ping's gap ends the batch.
    d1, ping = fi("D", 1, 0, "fail"), fi("D", 4, 4, "fail")
    got = await exchange(raw, ("s.a", d1), ("s.a", ping), frames=3)
    assert got == msg(d1, flow(0, 10)) + msg(ping, gap(2, 5)) + msg(ping, done(5, "D", 1))
    await raw.close()
    await nc.close()


async def test_gaps_ok_and_fail(target: Target) -> None:
    nc, raw = await setup(target)
    got = await exchange(raw, ("s.a", fi("A", 1, 0)), ("s.a", fi("A", 3, 1)), ("s.a", fi("A", 4, 2)), frames=3)
    assert got == msg(fi("A", 1, 0), flow(0, 10)) + msg(fi("A", 3, 1), gap(2, 3)) + msg(fi("A", 4, 2), done(3, "A", 4))
    got = await exchange(raw, ("s.a", fi("F", 1, 0, "fail")), ("s.a", fi("F", 3, 1, "fail")), frames=3)
    assert got == msg(fi("F", 1, 0, "fail"), flow(0, 10)) + msg(fi("F", 3, 1, "fail"), gap(2, 3)) + msg(
        fi("F", 3, 1, "fail"), done(4, "F", 1)
    )
    # A sequence going backwards is a gap too, and ends the batch even in ok mode.
    got = await exchange(raw, ("s.a", fi("G", 1, 0)), ("s.a", fi("G", 2, 1)), ("s.a", fi("G", 2, 1)), frames=3)
    assert got == msg(fi("G", 1, 0), flow(0, 10)) + msg(fi("G", 2, 1), gap(3, 2)) + msg(fi("G", 2, 1), done(6, "G", 2))
    assert await stored(nc) == (6, 6)
    await raw.close()
    await nc.close()


async def test_flow_control_acks(target: Target) -> None:
    nc, raw = await setup(target)
    replies = [fi("F", 1, 0, flow=2)] + [fi("F", seq, 1, flow=2) for seq in range(2, 8)] + [fi("F", 8, 2, flow=2)]
    got = await exchange(raw, *(("s.a", reply) for reply in replies), frames=5)
    expected = msg(replies[0], flow(0, 2))
    for seq in (2, 4, 6):
        expected += msg(replies[seq - 1], flow(seq, 2))
    assert got == expected + msg(replies[7], done(8, "F", 8))
    # Flow is capped at 500 and defaults to 10 when zero or garbage.
    cases: tuple[tuple[str, int | str, int], ...] = (("H", 1000, 500), ("I", 0, 10), ("J", "x", 10), ("K", 99999, 500))
    for seq, (batch, asked, granted) in enumerate(cases, start=9):
        start, end = fi(batch, 1, 0, flow=asked), fi(batch, 2, 3, flow=asked)
        got = await exchange(raw, ("s.a", start), ("s.a", end), frames=2)
        assert got == msg(start, flow(0, granted)) + msg(end, done(seq, batch, 1)), batch
    await raw.close()
    await nc.close()


async def test_second_batch_starts_slow_and_ramps_up(target: Target) -> None:
    nc, raw = await setup(target)
    a1 = fi("A", 1, 0, flow=100)
    replies = [fi("B", 1, 0, flow=100)] + [fi("B", seq, 1, flow=100) for seq in range(2, 12)]
    got = await exchange(raw, ("s.a", a1), *(("s.a", reply) for reply in replies), frames=5)
    # Two batches in flight: B starts at 1 and doubles towards 500 / 2 = 250 (capped by its flow of 100).
    expected = msg(a1, flow(0, 100)) + msg(replies[0], flow(0, 1))
    expected += msg(replies[0], flow(1, 2)) + msg(replies[2], flow(3, 4)) + msg(replies[6], flow(7, 8))
    assert got == expected
    await raw.close()
    await nc.close()


async def test_refused_messages(target: Target) -> None:
    nc, raw = await setup(target)
    wrong = hdr_block("Nats-Expected-Last-Sequence: 99")
    notice = error_notice(2, 400, 10071, "wrong last sequence: 1")
    # ok mode: reported, the batch goes on.
    got = await exchange(
        raw, ("s.a", fi("A", 1, 0)), ("s.a", fi("A", 2, 1), b"x", wrong), ("s.a", fi("A", 3, 2)), frames=3
    )
    assert got == msg(fi("A", 1, 0), flow(0, 10)) + msg(fi("A", 2, 1), notice) + msg(fi("A", 3, 2), done(2, "A", 3))
    # fail mode: reported, and the batch ends at the last stored message.
    b1, b2 = fi("B", 1, 0, "fail"), fi("B", 2, 1, "fail")
    got = await exchange(raw, ("s.a", b1), ("s.a", b2, b"x", wrong), frames=3)
    notice = error_notice(2, 400, 10071, "wrong last sequence: 3")
    assert got == msg(b1, flow(0, 10)) + msg(b2, notice) + msg(b2, done(3, "B", 1))
    # fail mode, first message: the plain error PubAck (after the flow ack).
    c1 = fi("C", 1, 0, "fail")
    assert await exchange(raw, ("s.a", c1, b"x", wrong), frames=2) == msg(c1, flow(0, 10)) + msg(
        c1, wrong_last_seq("S", 3)
    )
    assert await exchange(raw, ("s.a", fi("C", 2, 1, "fail")), frames=1) == msg(
        fi("C", 2, 1, "fail"), err("S", 400, 10208, "batch publish ID unknown")
    )
    # A duplicate message id is skipped without a word; the PubAck counts it.
    dup = hdr_block("Nats-Msg-Id: m1")
    d1, d2, d3 = fi("D", 1, 0), fi("D", 2, 1), fi("D", 3, 2)
    got = await exchange(raw, ("s.a", d1, b"x", dup), ("s.a", d2, b"x", dup), ("s.a", d3, b"x", dup), frames=2)
    assert got == msg(d1, flow(0, 10)) + msg(d3, done(4, "D", 3))
    assert await stored(nc) == (4, 4)
    await raw.close()
    await nc.close()


async def test_errors(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    await add_stream(nc, "B", allow_batched=True)
    raw = await Raw.open(target)
    disabled = err("S", 400, 10205, "batch publish is disabled")
    assert await exchange(raw, ("s.a", fi("A", 1, 0)), ("s.a", "R.1.$FI"), frames=2) == msg(
        fi("A", 1, 0), disabled
    ) + msg("R.1.$FI", disabled)
    invalid = err("B", 400, 10206, "batch publish pattern is invalid")
    for reply in (
        fi("X", 2, 0),  # a start is sequence 1
        fi("X", 1, 1),  # an append is not
        fi("X", 1, 3),  # nor is the end of a batch
        fi("X", 1, 5),  # no such op
        fi("X", 0, 2),
        fi("X", 1, 0, "maybe"),
        "R.X.10.ok.1.x.$FI",
        "R.1.$FI",
        "R.10.ok.1.0.$FI",  # no prefix
    ):
        assert await exchange(raw, ("b.a", reply), frames=1) == msg(reply, invalid), reply
    long_id = fi("x" * 65, 1, 0)
    assert await exchange(raw, ("b.a", long_id), frames=1) == msg(
        long_id, err("B", 400, 10207, "batch publish ID is invalid")
    )
    ok_id = fi("y" * 64, 1, 0)
    assert await exchange(raw, ("b.a", ok_id), frames=1) == msg(ok_id, flow(0, 10))
    unknown = fi("Z", 2, 1)
    assert await exchange(raw, ("b.a", unknown), frames=1) == msg(
        unknown, err("B", 400, 10208, "batch publish ID unknown")
    )
    # Not a batch: the PubAck goes to ".$FI" (nobody listens), the message is stored.
    assert await exchange(raw, ("s.a", ".$FI")) == b""
    assert (await info(nc))["state"]["messages"] == 1
    await raw.close()
    await nc.close()


async def test_too_many_inflight(target: Target) -> None:
    nc, raw = await setup(target)
    starts = [fi(f"b{i}", 1, 0) for i in range(1000)]
    # The first batch's flow ack, then two for each later one (it starts at 1 and doubles once stored).
    await exchange(raw, *(("s.a", reply) for reply in starts), frames=1 + 2 * 999, quiet=0.3)
    over = fi("over", 1, 0)
    assert await exchange(raw, ("s.a", over), frames=1) == msg(
        over, err("S", 429, 10211, "batch publish too many inflight")
    )
    await raw.close()
    await nc.close()


async def test_large_batch(target: Target) -> None:
    nc, raw = await setup(target)
    count = 5000
    replies = [fi("L", 1, 0, flow=100)] + [fi("L", seq, 1, flow=100) for seq in range(2, count)]
    replies.append(fi("L", count, 2, flow=100))
    await raw.send(b"".join(f"PUB s.{seq % 7} {reply} 3\r\nabc\r\n".encode() for seq, reply in enumerate(replies)))
    last = msg(replies[-1], done(count, "L", count))
    await raw.until(lambda: bool(raw.frames) and raw.frames[-1].raw == last, "the PubAck", timeout=20)
    expected = [msg(replies[0], flow(0, 100))] + [
        msg(replies[seq - 1], flow(seq, 100)) for seq in range(100, count, 100)
    ]
    assert [frame.raw for frame in raw.frames] == [*expected, last]
    assert await stored(nc) == (count, count)
    await raw.close()
    await nc.close()


async def test_config(target: Target) -> None:
    nc = await connect(target)
    created = await add_stream(nc, allow_batched=True)
    assert created["config"]["allow_batched"] is True
    assert created["config"]["metadata"]["_nats.req.level"] == "4"
    mirror = await api(nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "mirror": {"name": "S"}, "allow_batched": True})
    assert mirror["error"] == {
        "code": 400,
        "err_code": 10209,
        "description": "stream mirrors can not also use batch publishing",
    }
    raw = await Raw.open(target)
    assert await exchange(raw, ("s.a", fi("A", 1, 0)), frames=1) == msg(fi("A", 1, 0), flow(0, 10))
    base = {"name": "S", "subjects": ["s.>"], "storage": "memory"}
    off = await api(nc, "$JS.API.STREAM.UPDATE.S", base)
    assert "allow_batched" not in off["config"], off
    assert off["config"]["metadata"]["_nats.req.level"] == "0"
    on = await api(nc, "$JS.API.STREAM.UPDATE.S", {**base, "allow_batched": True})
    assert on["config"]["allow_batched"] is True
    # Turning batching off dropped the batch in flight.
    unknown = fi("A", 2, 1)
    assert await exchange(raw, ("s.a", unknown), frames=1) == msg(
        unknown, err("S", 400, 10208, "batch publish ID unknown")
    )
    await raw.close()
    await nc.close()


async def test_no_ack_stream(target: Target) -> None:
    nc, raw = await setup(target, no_ack=True)
    # No flow ack for the start and no error PubAcks; flow acks, gaps and the final PubAck still come.
    a1, a2, a4, a5 = fi("A", 1, 0, flow=2), fi("A", 2, 1, flow=2), fi("A", 4, 1, flow=2), fi("A", 5, 2, flow=2)
    got = await exchange(raw, ("s.a", a1), ("s.a", a2), ("s.a", a4), ("s.a", a5), ("s.a", fi("Z", 3, 1)), frames=4)
    assert got == msg(a2, flow(2, 2)) + msg(a4, gap(3, 4)) + msg(a4, flow(4, 2)) + msg(a5, done(4, "A", 5))
    await raw.close()
    await nc.close()


async def test_first_message_duplicate_and_limits(target: Target) -> None:
    nc, raw = await setup(target, max_msg_size=64)
    dup = hdr_block("Nats-Msg-Id: m1")
    assert await exchange(raw, ("s.a", "R.plain", b"x", dup), frames=1) == msg("R.plain", b'{"stream":"S","seq":1}')
    # A commit at once of a duplicate in fail mode: the duplicate PubAck, with batch and count.
    once = fi("D", 1, 2, "fail")
    assert await exchange(raw, ("s.a", once, b"x", dup), frames=1) == msg(
        once, b'{"stream":"S","seq":1,"duplicate": true,"batch":"D","count":1}'
    )
    # In ok mode it counts as stored: the PubAck names the batch's last stored message (none: 0).
    once = fi("E", 1, 2)
    assert await exchange(raw, ("s.a", once, b"x", dup), frames=1) == msg(once, done(0, "E", 1))
    big = fi("B", 1, 0)
    too_big = err("S", 400, 10054, "message size exceeds maximum allowed")
    assert await exchange(raw, ("s.a", big, b"x" * 65), frames=1) == msg(big, too_big)
    # A ping never starts a batch, not even with sequence 1.
    ping = fi("P", 1, 4)
    assert await exchange(raw, ("s.a", ping), frames=1) == msg(ping, err("S", 400, 10208, "batch publish ID unknown"))
    await raw.close()
    await nc.close()


async def test_sealed_and_interest(target: Target) -> None:
    nc, raw = await setup(target, retention="interest")
    # Interest retention without consumers: acked, nothing kept, sequences still used.
    a1, a2 = fi("A", 1, 0), fi("A", 2, 2)
    assert await exchange(raw, ("s.a", a1), ("s.a", a2), frames=2) == msg(a1, flow(0, 10)) + msg(a2, done(2, "A", 2))
    assert await stored(nc) == (0, 2)
    cfg = {"name": "S", "subjects": ["s.>"], "storage": "memory", "retention": "interest", "allow_batched": True}
    assert "error" not in await api(nc, "$JS.API.STREAM.UPDATE.S", {**cfg, "sealed": True})
    start = fi("B", 1, 0)
    assert await exchange(raw, ("s.a", start), frames=1) == msg(
        start, err("S", 400, 10109, "invalid operation on sealed stream")
    )
    await raw.close()
    await nc.close()


async def test_flow_slows_down_when_batches_join(target: Target) -> None:
    nc, raw = await setup(target)
    a = [fi("A", 1, 0, flow=500)] + [fi("A", seq, 1, flow=500) for seq in range(2, 501)]
    b1, c1 = fi("B", 1, 0, flow=500), fi("C", 1, 0, flow=500)
    got = await exchange(raw, ("s.a", a[0]), ("s.a", b1), ("s.a", c1), *(("s.a", reply) for reply in a[1:]), frames=6)
    # Three in flight: A's flow halves towards 500 / 3 = 166 (250 this time); B and C start at 1
    # and double once their first message is stored.
    starts = msg(a[0], flow(0, 500)) + msg(b1, flow(0, 1)) + msg(b1, flow(1, 2)) + msg(c1, flow(0, 1))
    assert got == starts + msg(c1, flow(1, 2)) + msg(a[499], flow(500, 250))
    # A ping behind the batch's last sequence just repeats the last flow ack.
    ping = fi("A", 7, 4, flow=500)
    assert await exchange(raw, ("s.a", ping), frames=1) == msg(ping, flow(500, 250))
    await raw.close()
    await nc.close()


async def test_counter_stream(target: Target) -> None:
    nc, raw = await setup(target, allow_msg_counter=True)
    incr = hdr_block("Nats-Incr: 5")
    a1, a2 = fi("A", 1, 0), fi("A", 2, 2)
    got = await exchange(raw, ("s.a", a1, b"", incr), ("s.a", a2, b"", incr), frames=2)
    assert got == msg(a1, flow(0, 10)) + msg(a2, done(2, "A", 2))  # no "val" in a batch's PubAck
    reply = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"last_by_subj": "s.a"})
    assert reply["message"]["data"] == "eyJ2YWwiOiIxMCJ9"  # {"val":"10"}
    await raw.close()
    await nc.close()


async def test_required_api_level(target: Target) -> None:
    nc, raw = await setup(target)
    a1, a2, a3 = fi("A", 1, 0), fi("A", 2, 1), fi("A", 3, 1)
    low, high = hdr_block("Nats-Required-Api-Level: 1"), hdr_block("Nats-Required-Api-Level: 99")
    got = await exchange(raw, ("s.a", a1, b"x", low), ("s.a", a2, b"x", high), ("s.a", a3), frames=3)
    level = err("S", 412, 10185, "JetStream minimum api level required")
    assert got == msg(a1, flow(0, 10)) + msg(a2, level) + msg(a3, err("S", 400, 10208, "batch publish ID unknown"))
    # The header is taken off the stored message.
    reply = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 1})
    assert "hdrs" not in reply["message"], reply
    assert await stored(nc) == (1, 1)
    await raw.close()
    await nc.close()
