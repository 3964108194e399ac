"""Batches meeting message schedules, TTLs with delete markers and counters, on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* In an atomic batch, schedule headers meet a single publish's rules at the
  commit: pattern 10189, target 10190, schedule TTL 10191, rollup 10192, time
  zone 10223, a lone ``Nats-Scheduler`` or a ``Nats-Schedule-Next`` other than
  ``purge`` 10212; without ``allow_msg_schedules`` a schedule (valid or not)
  or a purge is 10188.  A schedule gains ``Nats-Rollup: sub`` after its own
  headers; with ``eob`` the ``Nats-Batch-Commit: 1`` of the last message comes
  after it.  Two schedules on one subject in a batch: the second's roll-up is
  "batch rollup sub invalid" (10111).  A purge (``Nats-Schedule-Next: purge``)
  may name a schedule written earlier in the batch, not a plain message.
* Committed, a batch's schedules are live: a one-off in the past fires at once
  (its produced message keeps the ``Nats-Batch-Id``/``Nats-Batch-Sequence``
  headers of the schedule) and the schedule is purged.
* A schedule in a fast batch (``$FI``) is a single publish: it is armed and
  fires; a bad pattern is an ``err`` notice (10189) and the batch goes on.
* An atomic batch on a stream with ``allow_msg_ttl`` and
  ``subject_delete_marker_ttl``: a TTL below the marker TTL is raised to it
  (``Nats-TTL: 2`` moved to the end of the headers); each subject's last
  message leaves a delete marker when it expires, a client's
  ``Nats-Marker-Reason`` message does not.
* ``jetstream { limits { batch { max_inflight_per_stream, max_inflight_total,
  timeout } } }`` bound fast batches too: 10211 (429) past either in-flight
  limit, the total counted across streams; a commit frees a place; a batch
  idle for the timeout is gone (10208 on its next message).
"""

from __future__ import annotations

import base64
from typing import Any

import nats
import pytest

from tests.harness.atomic_batch import EMPTY, batch_hdr
from tests.harness.atomic_batch import msg as reply_msg
from tests.harness.fast_batch import error_notice, exchange, fi, flow
from tests.harness.fast_batch import msg as fi_msg
from tests.harness.js import api, connect
from tests.harness.publish import Raw, err, hdr_block
from tests.harness.targets import Settings, Target

PAST = "@at 2020-01-01T00:00:00Z"
LATER = "@at 2099-01-01T00:00:00Z"
SEC = 1_000_000_000


async def make(nc: nats.NATS, name: str = "S", **cfg: Any) -> None:
    body = {"name": name, "subjects": [name.lower() + ".>"], "storage": "memory", **cfg}
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", body)
    assert "error" not in reply, reply


async def get(nc: nats.NATS, seq: int, stream: str = "S") -> tuple[str, bytes, bytes] | None:
    reply = await api(nc, f"$JS.API.STREAM.MSG.GET.{stream}", {"seq": seq})
    if "error" in reply:
        return None
    m = reply["message"]
    return m["subject"], base64.b64decode(m.get("hdrs", "")), base64.b64decode(m.get("data", ""))


async def subjects(nc: nats.NATS, stream: str = "S") -> dict[str, int]:
    reply = await api(nc, f"$JS.API.STREAM.INFO.{stream}", {"subjects_filter": ">"})
    return dict(reply["state"].get("subjects", {}))


def committed(seq: int, bid: str, count: int, stream: str = "S") -> bytes:
    return reply_msg(b'{"stream":"%s","seq":%d,"batch":"%s","count":%d}' % (stream.encode(), seq, bid.encode(), count))


def refused(code: int, err_code: int, description: str, stream: str = "S") -> bytes:
    return reply_msg(err(stream, code, err_code, description))


async def test_a_committed_schedule_fires(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_atomic=True, allow_msg_schedules=True)
    raw = await Raw.open(target)
    one_off = batch_hdr("A", 1, f"Nats-Schedule: {PAST}", "Nats-Schedule-Target: s.tgt", "Foo: bar")
    assert await raw.request("s.sched", b"p", one_off) == EMPTY
    assert await raw.request("s.x", b"p", batch_hdr("A", 2, commit="1")) == committed(2, "A", 2)
    fired = hdr_block(
        "Nats-Batch-Id: A",
        "Nats-Batch-Sequence: 1",
        "Foo: bar",
        "Nats-Scheduler: s.sched",
        "Nats-Schedule-Next: purge",
    )
    assert await target.elapse_until(lambda: get(nc, 3), 5) == ("s.tgt", fired, b"p")
    assert await target.elapse_until(lambda: _gone(nc, 1), 5)
    assert await subjects(nc) == {"s.x": 1, "s.tgt": 1}
    await raw.close()
    await nc.close()


async def _gone(nc: nats.NATS, seq: int) -> bool:
    return await get(nc, seq) is None


async def test_stored_schedule_headers(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_atomic=True, allow_msg_schedules=True)
    raw = await Raw.open(target)
    schedule = (f"Nats-Schedule: {LATER}", "Nats-Schedule-Target: s.tgt")
    assert await raw.request("s.a", b"p", batch_hdr("A", 1, *schedule, commit="1")) == committed(1, "A", 1)
    assert await get(nc, 1) == (
        "s.a",
        hdr_block("Nats-Batch-Id: A", "Nats-Batch-Sequence: 1", *schedule, "Nats-Batch-Commit: 1", "Nats-Rollup: sub"),
        b"p",
    )
    assert await raw.request("s.b", b"p", batch_hdr("B", 1, *schedule)) == EMPTY
    assert await raw.request("s.c", b"p", batch_hdr("B", 2, *schedule)) == EMPTY
    assert await raw.request("s.x", b"", batch_hdr("B", 3, commit="eob")) == committed(3, "B", 2)
    assert await get(nc, 3) == (
        "s.c",
        hdr_block("Nats-Batch-Id: B", "Nats-Batch-Sequence: 2", *schedule, "Nats-Rollup: sub", "Nats-Batch-Commit: 1"),
        b"p",
    )
    # A purge of a stored schedule, in a batch: the schedule's subject goes.
    purge = batch_hdr("C", 1, "Nats-Schedule-Next: purge", "Nats-Scheduler: s.b", commit="1")
    assert await raw.request("s.p", b"", purge) == committed(4, "C", 1)
    assert await subjects(nc) == {"s.a": 1, "s.c": 1, "s.p": 1}
    await raw.close()
    await nc.close()


async def test_schedule_refusals_in_a_batch(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_atomic=True, allow_msg_schedules=True, allow_msg_ttl=True)
    raw = await Raw.open(target)
    target_ok = "Nats-Schedule-Target: s.t"
    cases = [
        (("Nats-Schedule: bogus", target_ok), (400, 10189, "message schedules pattern is invalid")),
        ((f"Nats-Schedule: {LATER}",), (400, 10190, "message schedules target is invalid")),
        (
            (f"Nats-Schedule: {LATER}", target_ok, "Nats-Schedule-TTL: x"),
            (400, 10191, "message schedules invalid per-message TTL"),
        ),
        ((f"Nats-Schedule: {LATER}", target_ok, "Nats-Rollup: all"), (400, 10192, "message schedules invalid rollup")),
        (
            (f"Nats-Schedule: {LATER}", target_ok, "Nats-Schedule-Time-Zone: Mars/X"),
            (400, 10223, "message schedules time zone is invalid"),
        ),
        (
            ("Nats-Schedule: @every 1s", target_ok, "Nats-Schedule-Time-Zone: UTC"),
            (400, 10189, "message schedules pattern is invalid"),
        ),
        (("Nats-Scheduler: s.y",), (400, 10212, "message schedules invalid scheduler")),
    ]
    for n, (extra, refusal) in enumerate(cases):
        assert await raw.request("s.q", b"p", batch_hdr(f"R{n}", 1, *extra, commit="1")) == refused(*refusal), extra
    # Two schedules on one subject: the second one's roll-up.
    schedule = (f"Nats-Schedule: {LATER}", target_ok)
    assert await raw.request("s.d", b"p", batch_hdr("C", 1, *schedule)) == EMPTY
    assert await raw.request("s.d", b"p", batch_hdr("C", 2, *schedule, commit="1")) == refused(
        500, 10111, "batch rollup sub invalid"
    )
    # A purge may name a schedule of the same batch, not a plain message.
    assert await raw.request("s.e", b"p", batch_hdr("D", 1, *schedule)) == EMPTY
    purge_e = batch_hdr("D", 2, "Nats-Schedule-Next: purge", "Nats-Scheduler: s.e", commit="1")
    assert await raw.request("s.f", b"p", purge_e) == committed(2, "D", 2)
    assert await raw.request("s.g", b"p", batch_hdr("E", 1)) == EMPTY
    purge_g = batch_hdr("E", 2, "Nats-Schedule-Next: purge", "Nats-Scheduler: s.g", commit="1")
    assert await raw.request("s.f", b"p", purge_g) == refused(400, 10212, "message schedules invalid scheduler")
    assert await subjects(nc) == {"s.f": 1}
    await raw.close()
    await nc.close()


async def test_schedules_disabled_in_a_batch(target: Target) -> None:
    nc = await connect(target)
    await make(nc, "N", allow_atomic=True)
    raw = await Raw.open(target)
    disabled = (400, 10188, "message schedules is disabled", "N")
    invalid = (400, 10212, "message schedules invalid scheduler", "N")
    cases = [
        (("Nats-Schedule: bogus",), disabled),
        ((f"Nats-Schedule: {LATER}", "Nats-Schedule-Target: n.t"), disabled),
        (("Nats-Scheduler: n.y",), invalid),
        (("Nats-Schedule-Next: purge", "Nats-Scheduler: n.x"), disabled),
        (("Nats-Schedule-Next: x",), invalid),
    ]
    for n, (extra, refusal) in enumerate(cases):
        assert await raw.request("n.q", b"p", batch_hdr(f"N{n}", 1, *extra, commit="1")) == refused(*refusal), extra
    await raw.close()
    await nc.close()


async def test_schedule_in_a_fast_batch(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_batched=True, allow_msg_schedules=True)
    raw = await Raw.open(target)
    schedule = hdr_block(f"Nats-Schedule: {PAST}", "Nats-Schedule-Target: s.tgt")
    bad = hdr_block("Nats-Schedule: bogus", "Nats-Schedule-Target: s.t")
    a1, a3, a4 = fi("A", 1, 0), fi("A", 3, 1), fi("A", 4, 2)
    got = await exchange(
        raw, ("s.sched", a1, b"p", schedule), ("s.x", fi("A", 2, 1)), ("s.q", a3, b"p", bad), ("s.y", a4)
    )
    assert got == (
        fi_msg(a1, flow(0, 10))
        + fi_msg(a3, error_notice(3, 400, 10189, "message schedules pattern is invalid"))
        + fi_msg(a4, b'{"stream":"S","seq":3,"batch":"A","count":4}')
    )
    fired = hdr_block("Nats-Scheduler: s.sched", "Nats-Schedule-Next: purge")
    assert await target.elapse_until(lambda: get(nc, 4), 5) == ("s.tgt", fired, b"p")
    assert await target.elapse_until(lambda: _gone(nc, 1), 5)
    await raw.close()
    await nc.close()


async def test_ttls_and_delete_markers_in_a_batch(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_atomic=True, allow_msg_ttl=True, subject_delete_marker_ttl=2 * SEC)
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"p", batch_hdr("A", 1, "Nats-TTL: 1s")) == EMPTY
    assert await raw.request("s.b", b"p", batch_hdr("A", 2, "Nats-TTL: 5s")) == EMPTY
    last = batch_hdr("A", 3, "Nats-TTL: 1s", "Nats-Rollup: sub", commit="1")
    assert await raw.request("s.c", b"p", last) == committed(3, "A", 3)
    marked = batch_hdr("B", 1, "Nats-TTL: 1s", "Nats-Marker-Reason: MaxAge", commit="1")
    assert await raw.request("s.d", b"p", marked) == committed(4, "B", 1)
    assert await get(nc, 1) == ("s.a", hdr_block("Nats-Batch-Id: A", "Nats-Batch-Sequence: 1", "Nats-TTL: 2"), b"p")
    assert await get(nc, 2) == ("s.b", hdr_block("Nats-Batch-Id: A", "Nats-Batch-Sequence: 2", "Nats-TTL: 5s"), b"p")
    assert await get(nc, 3) == (
        "s.c",
        hdr_block(
            "Nats-Batch-Id: A", "Nats-Batch-Sequence: 3", "Nats-Rollup: sub", "Nats-Batch-Commit: 1", "Nats-TTL: 2"
        ),
        b"p",
    )
    marker = hdr_block("Nats-Marker-Reason: MaxAge", "Nats-TTL: 2s", "Nats-Rollup: sub")

    async def markers_left_and_plain_message_gone() -> bool:
        # The markers (seq 5, 6) and the removal of s.d come due together: on nats-server
        # in either order, so both are awaited before the state is read.
        return await get(nc, 6) is not None and "s.d" not in await subjects(nc)

    assert await target.elapse_until(markers_left_and_plain_message_gone, 6)
    assert await get(nc, 5) == ("s.a", marker, b"")
    assert await get(nc, 6) == ("s.c", marker, b"")
    assert await subjects(nc) == {"s.a": 1, "s.b": 1, "s.c": 1}
    await raw.close()
    await nc.close()


LOWERED = 'limits { batch { timeout: "1s", max_inflight_per_stream: 2, max_inflight_total: 3 } }'


@pytest.mark.manual_clock
async def test_fast_batch_limits_from_the_config(make_target: Any) -> None:
    """``jetstream { limits { batch } }`` bounds fast batches too: per stream, across streams, the timeout."""
    target = await make_target(Settings(jetstream_block=LOWERED))
    nc = await connect(target)
    await make(nc, allow_batched=True)
    await make(nc, "T", allow_batched=True)
    raw = await Raw.open(target)
    too_many = err("S", 429, 10211, "batch publish too many inflight")
    a1, b1, c1 = fi("A", 1, 0), fi("B", 1, 0), fi("C", 1, 0)
    got = await exchange(raw, ("s.a", a1), ("s.a", b1), ("s.a", c1))
    # B, second on the stream, starts at one message per ack: its first is acked at once.
    assert got == fi_msg(a1, flow(0, 10)) + fi_msg(b1, flow(0, 1)) + fi_msg(b1, flow(1, 2)) + fi_msg(c1, too_many)
    d1, e1 = fi("D", 1, 0), fi("E", 1, 0)
    got = await exchange(raw, ("t.a", d1), ("t.a", e1))
    assert got == fi_msg(d1, flow(0, 10)) + fi_msg(e1, err("T", 429, 10211, "batch publish too many inflight"))
    a2 = fi("A", 2, 2)
    assert await exchange(raw, ("s.a", a2)) == fi_msg(a2, b'{"stream":"S","seq":3,"batch":"A","count":2}')
    assert await exchange(raw, ("t.a", e1)) == fi_msg(e1, flow(0, 1)) + fi_msg(e1, flow(1, 2))
    # Nothing published to a batch for the timeout: it is gone.
    await target.elapse(1.5)
    b2 = fi("B", 2, 1)
    unknown = err("S", 400, 10208, "batch publish ID unknown")
    assert await target.elapse_until(lambda: _answer(raw, b2, unknown), 5)
    await raw.close()
    await nc.close()


async def _answer(raw: Raw, reply: str, expected: bytes) -> bool:
    return await exchange(raw, ("s.a", reply)) == fi_msg(reply, expected)
