"""Atomic batch publish (``allow_atomic``) on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* Messages carry ``Nats-Batch-Id`` and ``Nats-Batch-Sequence`` (1, 2, ...);
  each staged message gets an empty reply (``MSG R.1 1 0``); the commit
  (``Nats-Batch-Commit: 1``, stored; or ``eob``, not stored and not counted)
  answers ``{"stream":"S","seq":<last>,"batch":"<id>","count":<stored>}``.
  Nothing is stored before the commit.
* Refusals: stream without ``allow_atomic`` 10174; id longer than 64 chars
  10179; no sequence 10175; a gap or a batch not started at 1 (or ``eob`` as
  the first message) 10176; a commit value other than ``1``/``eob`` 10200;
  ``Nats-Expected-Last-Msg-Id`` in a batch 10177; a message id twice in the
  batch, or already stored, 10201.
* At the commit every message is checked against the stream as it will be
  after the earlier messages: a failing expectation refuses the whole batch,
  nothing is stored.  An expected last sequence is only allowed on the first
  message (10164 on a later one when it would otherwise match).
* More commit-time refusals: ``Nats-Rollup: sub`` on a subject the batch already
  wrote, or ``all`` after the first message (10111, code 500, "batch rollup sub/all
  invalid"); expected stream (10060); TTL on a stream without TTLs (10166).
  ``Nats-Required-Api-Level`` above the server's: 412/10185 (advisory ``unsupported``).
  A non-numeric sequence is a missing one (10175).  A 64-character id is fine.
* Staging checks come first: ``max_msg_size`` (10054).  ``no_ack`` streams answer nothing.
* Message ids of a committed batch enter the duplicate window.  Turning
  ``allow_atomic`` off drops the batches in flight.
* Stored messages keep their ``Nats-Batch-*`` headers; with ``eob`` the last stored
  one gets ``Nats-Batch-Commit: 1`` appended.  A counter stream's commit PubAck has
  ``batch``/``count`` instead of ``val``.
* An empty ``Nats-Batch-Id`` is a plain publish.
* ``allow_atomic`` may be turned on and off by an update; it is refused with a mirror.
* ``jetstream { limits { batch { max_msgs, max_inflight_per_stream, timeout } } }``
  lower the limits; a batch without a message for the timeout is dropped with
  the advisory (reason ``timeout``), a later message of it is incomplete.
* A refused batch with a gap is abandoned with an advisory on
  ``$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.<stream>`` (reason ``incomplete``).
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import nats
import pytest

from tests.harness.atomic_batch import EMPTY, batch_hdr, msg
from tests.harness.js import api, connect
from tests.harness.publish import Raw, err, hdr_block
from tests.harness.targets import Settings, Target


async def make(nc: nats.NATS, name: str = "S", **cfg: Any) -> dict:
    body = {"name": name, "subjects": [name.lower() + ".>"], "storage": "memory", "allow_atomic": True, **cfg}
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", body)
    assert "error" not in reply, reply
    return reply


async def msgs(nc: nats.NATS, name: str = "S") -> int:
    info = await api(nc, f"$JS.API.STREAM.INFO.{name}", {})
    return int(info["state"]["messages"])


async def test_commit_with_1_and_eob(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"one", batch_hdr("B1", 1)) == EMPTY
    assert await raw.request("s.b", b"two", batch_hdr("B1", 2)) == EMPTY
    assert await msgs(nc) == 0  # nothing stored before the commit
    assert await raw.request("s.c", b"three", batch_hdr("B1", 3, commit="1")) == msg(
        b'{"stream":"S","seq":3,"batch":"B1","count":3}'
    )
    assert await raw.request("s.a", b"x", batch_hdr("B2", 1)) == EMPTY
    assert await raw.request("s.b", b"y", batch_hdr("B2", 2)) == EMPTY
    assert await raw.request("s.z", b"", batch_hdr("B2", 3, commit="eob")) == msg(
        b'{"stream":"S","seq":5,"batch":"B2","count":2}'
    )
    assert await msgs(nc) == 5
    got = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 5})
    assert got["message"]["subject"] == "s.b"
    # The batch headers are stored; an eob commit marks the last stored message as the commit.
    assert base64.b64decode(got["message"]["hdrs"]) == batch_hdr("B2", 2, commit="1")
    got = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 3})
    assert base64.b64decode(got["message"]["hdrs"]) == batch_hdr("B1", 3, commit="1")
    await raw.close()
    await nc.close()


async def test_refusals(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    await make(nc, "P", allow_atomic=False)
    raw = await Raw.open(target)
    assert await raw.request("p.a", b"", batch_hdr("B", 1)) == msg(err("P", 400, 10174, "atomic publish is disabled"))
    long_id = "x" * 65
    assert await raw.request("s.a", b"", batch_hdr(long_id, 1)) == msg(
        err("S", 400, 10179, "atomic publish batch ID is invalid")
    )
    assert await raw.request("s.a", b"", hdr_block("Nats-Batch-Id: B")) == msg(
        err("S", 400, 10175, "atomic publish sequence is missing")
    )
    incomplete = msg(err("S", 400, 10176, "atomic publish batch is incomplete"))
    assert await raw.request("s.a", b"", batch_hdr("B", 2)) == incomplete
    assert await raw.request("s.a", b"", batch_hdr("B", 1, commit="eob")) == incomplete
    assert await raw.request("s.a", b"", batch_hdr("G", 1)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("G", 3)) == incomplete  # a gap
    assert await raw.request("s.a", b"", batch_hdr("G", 2)) == incomplete  # the batch is gone
    assert await raw.request("s.a", b"", batch_hdr("C", 1, commit="yes")) == msg(
        err("S", 400, 10200, "atomic publish batch commit is invalid")
    )
    assert await raw.request("s.a", b"", batch_hdr("U", 1, "Nats-Expected-Last-Msg-Id: x", commit="1")) == msg(
        err("S", 400, 10177, "atomic publish unsupported header used: Nats-Expected-Last-Msg-Id")
    )
    dup = msg(err("S", 400, 10201, "atomic publish batch contains duplicate message id"))
    assert await raw.request("s.a", b"", batch_hdr("D", 1, "Nats-Msg-Id: m1")) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("D", 2, "Nats-Msg-Id: m1", commit="1")) == dup
    assert await raw.request("s.a", b"", hdr_block("Nats-Msg-Id: m2")) == msg(b'{"stream":"S","seq":1}')
    assert await raw.request("s.a", b"", batch_hdr("E", 1, "Nats-Msg-Id: m2", commit="1")) == dup
    assert await msgs(nc) == 1
    await raw.close()
    await nc.close()


async def test_size_and_inflight_limits(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    raw = await Raw.open(target)
    # An unknown batch whose sequence is already over the limit (1000 messages): too large.
    assert await raw.request("s.a", b"", batch_hdr("T", 1001)) == msg(
        err("S", 400, 10199, "atomic publish batch is too large: 1000")
    )
    # The eob marker does not count.
    assert await raw.request("s.a", b"", batch_hdr("T", 1001, commit="eob")) == msg(
        err("S", 400, 10176, "atomic publish batch is incomplete")
    )
    for n in range(50):
        assert await raw.request("s.a", b"", batch_hdr(f"I{n}", 1)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("I50", 1)) == msg(
        err("S", 429, 10210, "atomic publish too many inflight")
    )
    # Committing one makes room for another.
    assert await raw.request("s.a", b"", batch_hdr("I0", 2, commit="1")) == msg(
        b'{"stream":"S","seq":2,"batch":"I0","count":2}'
    )
    assert await raw.request("s.a", b"", batch_hdr("I50", 1)) == EMPTY
    await raw.close()
    await nc.close()


async def test_counters_in_a_batch(target: Target) -> None:
    nc = await connect(target)
    await make(nc, "C", allow_msg_counter=True)
    raw = await Raw.open(target)
    assert await raw.request("c.a", b"", hdr_block("Nats-Incr: 5")) == msg(b'{"stream":"C","seq":1,"val":"5"}')
    assert await raw.request("c.a", b"", batch_hdr("K", 1, "Nats-Incr: 2")) == EMPTY
    assert await raw.request("c.a", b"", batch_hdr("K", 2, "Nats-Incr: 3", commit="1")) == msg(
        b'{"stream":"C","seq":3,"batch":"K","count":2}'
    )
    got = await api(nc, "$JS.API.STREAM.MSG.GET.C", {"seq": 3})
    assert base64.b64decode(got["message"]["data"]) == b'{"val":"10"}'
    await raw.close()
    await nc.close()


async def test_a_failing_expectation_stores_nothing(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"first") == msg(b'{"stream":"S","seq":1}')
    # Expected last sequences see the stream plus the batch so far.
    assert await raw.request("s.a", b"", batch_hdr("A", 1, "Nats-Expected-Last-Sequence: 1")) == EMPTY
    assert await raw.request("s.b", b"", batch_hdr("A", 2, "Nats-Expected-Last-Subject-Sequence: 0")) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("A", 3, "Nats-Expected-Last-Subject-Sequence: 1", commit="1")) == (
        msg(err("S", 400, 10164, "wrong last sequence"))
    )
    assert await raw.request("s.c", b"", batch_hdr("B", 1)) == EMPTY
    assert await raw.request("s.c", b"", batch_hdr("B", 2, "Nats-Expected-Last-Sequence: 5", commit="1")) == (
        msg(err("S", 400, 10071, "wrong last sequence: 2"))
    )
    assert await raw.request("s.c", b"", batch_hdr("C", 1)) == EMPTY
    assert await raw.request("s.c", b"", batch_hdr("C", 2, "Nats-Expected-Last-Sequence: 2", commit="1")) == (
        msg(err("S", 400, 10164, "wrong last sequence"))
    )
    assert await msgs(nc) == 1
    # The same checks passing: all stored.
    assert await raw.request("s.a", b"", batch_hdr("D", 1, "Nats-Expected-Last-Sequence: 1")) == EMPTY
    assert await raw.request("s.b", b"", batch_hdr("D", 2, "Nats-Expected-Last-Subject-Sequence: 0", commit="1")) == (
        msg(b'{"stream":"S","seq":3,"batch":"D","count":2}')
    )
    await raw.close()
    await nc.close()


async def test_discard_new_limits_count_the_batch(target: Target) -> None:
    nc = await connect(target)
    await make(nc, max_msgs=3, discard="new")
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"") == msg(b'{"stream":"S","seq":1}')
    for seq in (1, 2):
        assert await raw.request("s.a", b"", batch_hdr("L", seq)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("L", 3, commit="1")) == msg(
        err("S", 503, 10077, "maximum messages exceeded")
    )
    assert await msgs(nc) == 1
    await raw.close()
    await nc.close()


async def test_empty_id_is_a_plain_publish(target: Target) -> None:
    nc = await connect(target)
    await make(nc, "P", allow_atomic=False)
    raw = await Raw.open(target)
    assert await raw.request("p.a", b"", hdr_block("Nats-Batch-Id: ", "Nats-Batch-Sequence: 5")) == msg(
        b'{"stream":"P","seq":1}'
    )
    await raw.close()
    await nc.close()


async def test_config_update_and_mirror(target: Target) -> None:
    nc = await connect(target)
    await make(nc, "P", allow_atomic=False)
    body = {"name": "P", "subjects": ["p.>"], "storage": "memory", "allow_atomic": True}
    reply = await api(nc, "$JS.API.STREAM.UPDATE.P", body)
    assert reply["config"]["allow_atomic"] is True
    assert reply["config"]["metadata"]["_nats.req.level"] == "2"
    body["allow_atomic"] = False
    reply = await api(nc, "$JS.API.STREAM.UPDATE.P", body)
    assert "allow_atomic" not in reply["config"]
    await nc.close()


async def test_abandoned_advisory(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    adv: asyncio.Queue[bytes] = asyncio.Queue()

    async def on_adv(m: Any) -> None:
        await adv.put(m.data)

    await nc.subscribe("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.S", cb=on_adv)
    await nc.flush()
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"", batch_hdr("G", 1)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("G", 3)) == msg(
        err("S", 400, 10176, "atomic publish batch is incomplete")
    )
    body = json.loads(await asyncio.wait_for(adv.get(), 5))
    assert body["type"] == "io.nats.jetstream.advisory.v1.stream_batch_abandoned"
    assert (body["stream"], body["batch"], body["reason"]) == ("S", "G", "incomplete")
    assert list(body) == ["type", "id", "timestamp", "stream", "batch", "reason"]
    await raw.close()
    await nc.close()


async def test_nats_py_reads_the_commit_ack(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    js = nc.jetstream()
    first = await nc.request("s.a", b"1", headers={"Nats-Batch-Id": "N", "Nats-Batch-Sequence": "1"})
    assert first.data == b""
    ack = await js.publish(
        "s.b", b"2", headers={"Nats-Batch-Id": "N", "Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"}
    )
    assert (ack.stream, ack.seq, ack.batch_id, ack.batch_size) == ("S", 2, "N", 2)
    await nc.close()


LOWERED = 'limits { batch { timeout: "1s", max_msgs: 3, max_inflight_per_stream: 2 } }'


@pytest.mark.manual_clock
async def test_lowered_limits_and_the_timeout(make_target: Any) -> None:
    target = await make_target(Settings(jetstream_block=LOWERED))
    nc = await connect(target)
    await make(nc)
    adv: list[dict] = []

    async def on_adv(m: Any) -> None:
        adv.append(json.loads(m.data))

    await nc.subscribe("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.S", cb=on_adv)
    await nc.flush()
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"", batch_hdr("T", 4)) == msg(
        err("S", 400, 10199, "atomic publish batch is too large: 3")
    )
    assert await raw.request("s.a", b"", batch_hdr("A", 1)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("B", 1)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("C", 1)) == msg(
        err("S", 429, 10210, "atomic publish too many inflight")
    )
    for seq in (2, 3):
        assert await raw.request("s.a", b"", batch_hdr("A", seq)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("A", 4, commit="1")) == msg(
        err("S", 400, 10199, "atomic publish batch is too large: 3")
    )
    assert await target.elapse_until(lambda: len(adv) >= 2, 5)
    assert [(a["batch"], a["reason"]) for a in adv] == [("A", "large"), ("B", "timeout")]
    assert await raw.request("s.a", b"", batch_hdr("B", 2, commit="1")) == msg(
        err("S", 400, 10176, "atomic publish batch is incomplete")
    )
    await raw.close()
    await nc.close()


async def test_more_refusals_at_the_commit(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_rollup_hdrs=True)
    raw = await Raw.open(target)
    # Nats-Expected-Last-Msg-Id is refused at the commit, not while staging.
    assert await raw.request("s.a", b"", batch_hdr("U", 1, "Nats-Expected-Last-Msg-Id: x")) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("U", 2, commit="1")) == msg(
        err("S", 400, 10177, "atomic publish unsupported header used: Nats-Expected-Last-Msg-Id")
    )
    assert await raw.request("s.a", b"", batch_hdr("R", 1)) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("R", 2, "Nats-Rollup: sub", commit="1")) == msg(
        err("S", 500, 10111, "batch rollup sub invalid")
    )
    assert await raw.request("s.a", b"", batch_hdr("R", 1)) == EMPTY
    assert await raw.request("s.b", b"", batch_hdr("R", 2, "Nats-Rollup: all", commit="1")) == msg(
        err("S", 500, 10111, "batch rollup all invalid")
    )
    assert await raw.request("s.a", b"", batch_hdr("X", 1, "Nats-Expected-Stream: other", commit="1")) == msg(
        err("S", 400, 10060, "expected stream does not match")
    )
    assert await raw.request("s.a", b"", batch_hdr("T", 1, "Nats-TTL: 5s", commit="1")) == msg(
        err("S", 400, 10166, "per-message TTL is disabled")
    )
    assert await raw.request("s.a", b"", batch_hdr("V", 1, "Nats-Required-Api-Level: 99")) == msg(
        err("S", 412, 10185, "JetStream minimum api level required")
    )
    assert await raw.request("s.a", b"", batch_hdr("Q", "abc")) == msg(
        err("S", 400, 10175, "atomic publish sequence is missing")
    )
    assert await raw.request("s.a", b"", batch_hdr("y" * 64, 1, commit="1")) == msg(
        b'{"stream":"S","seq":1,"batch":"%s","count":1}' % (b"y" * 64)
    )
    # A rollup on the first message of the batch is fine.
    assert await raw.request("s.a", b"", batch_hdr("O", 1, "Nats-Rollup: all")) == EMPTY
    assert await raw.request("s.b", b"", batch_hdr("O", 2, commit="1")) == msg(
        b'{"stream":"S","seq":3,"batch":"O","count":2}'
    )
    assert await msgs(nc) == 2
    await raw.close()
    await nc.close()


async def test_ids_of_a_committed_batch_are_remembered(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"", batch_hdr("B", 1, "Nats-Msg-Id: a")) == EMPTY
    assert await raw.request("s.a", b"", batch_hdr("B", 2, "Nats-Msg-Id: b", commit="1")) == msg(
        b'{"stream":"S","seq":2,"batch":"B","count":2}'
    )
    assert await raw.request("s.a", b"", hdr_block("Nats-Msg-Id: a")) == msg(
        b'{"stream":"S","seq":1,"duplicate": true}'
    )
    await raw.close()
    await nc.close()


async def test_turning_atomic_off_drops_the_batches(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"", batch_hdr("B", 1)) == EMPTY
    body = {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_atomic": False}
    assert "error" not in await api(nc, "$JS.API.STREAM.UPDATE.S", body)
    assert await raw.request("s.a", b"", batch_hdr("B", 2)) == msg(err("S", 400, 10174, "atomic publish is disabled"))
    body["allow_atomic"] = True
    assert "error" not in await api(nc, "$JS.API.STREAM.UPDATE.S", body)
    assert await raw.request("s.a", b"", batch_hdr("B", 2, commit="1")) == msg(
        err("S", 400, 10176, "atomic publish batch is incomplete")
    )
    await raw.close()
    await nc.close()


async def test_staging_checks_and_no_ack(target: Target) -> None:
    nc = await connect(target)
    await make(nc, max_msg_size=10)
    await make(nc, "N", no_ack=True)
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"x" * 80, batch_hdr("B", 1)) == msg(
        err("S", 400, 10054, "message size exceeds maximum allowed")
    )
    await raw.pub("n.a", b"", batch_hdr("B", 1))
    await raw.pub("n.a", b"", batch_hdr("B", 2, commit="1"))
    assert await raw.silence() == b""
    assert await msgs(nc, "N") == 2
    await raw.close()
    await nc.close()


async def test_interest_per_subject_limit_transform_and_republish(target: Target) -> None:
    """An interest stream without consumers uses the sequences; discard-new-per-subject counts the batch;
    the input transform applies, and republished copies go out before the commit's PubAck."""
    nc = await connect(target)
    await make(nc, "I", retention="interest", subjects=["i.>"])
    await make(nc, "D", subjects=["d.>"], discard="new", max_msgs_per_subject=1, discard_new_per_subject=True)
    transform = {"src": "t.*", "dest": "u.{{wildcard(1)}}"}
    await make(nc, "T", subjects=["t.*"], subject_transform=transform, republish={"src": ">", "dest": "rp.>"})
    raw = await Raw.open(target)
    await raw.send(b"SUB rp.> 2\r\n")
    await raw.ping()
    assert await raw.request("i.a", b"", batch_hdr("B", 1)) == EMPTY
    assert await raw.request("i.a", b"", batch_hdr("B", 2, commit="1")) == msg(
        b'{"stream":"I","seq":2,"batch":"B","count":2}'
    )
    assert await raw.request("d.a", b"", batch_hdr("B", 1)) == EMPTY
    assert await raw.request("d.a", b"", batch_hdr("B", 2, commit="1")) == msg(
        err("D", 503, 10077, "maximum messages per subject exceeded")
    )
    assert await raw.request("t.a", b"", batch_hdr("B", 1, "Nats-Expected-Last-Subject-Sequence: 0")) == EMPTY
    await raw.pub("t.a", b"", batch_hdr("B", 2, commit="1"))
    frames = [await raw.frame() for _ in range(3)]
    assert [f.split(b"\r\n", 1)[0].rsplit(b" ", 2)[0] for f in frames] == [
        b"HMSG rp.u.a 2",
        b"HMSG rp.u.a 2",
        b"MSG R.1",
    ]
    assert b"Nats-Batch-Sequence: 2\r\nNats-Batch-Commit: 1\r\nNats-Stream: T\r\nNats-Subject: u.a\r\n" in frames[1]
    assert frames[2] == msg(b'{"stream":"T","seq":2,"batch":"B","count":2}')
    info = await api(nc, "$JS.API.STREAM.INFO.I", {})
    assert (info["state"]["messages"], info["state"]["last_seq"]) == (0, 2)
    await raw.close()
    await nc.close()
