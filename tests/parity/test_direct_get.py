"""Direct Get (ADR-31): ``$JS.API.DIRECT.GET.<stream>[.<subject...>]`` as nats-server 2.15.1 serves it.

Every expectation was read off the real 2.15.1 binary with a raw socket; the
tests compare what arrives on the request's reply subject byte for byte.
Timestamps are not normalised away: each ``Nats-Time-Stamp`` is expected to be
exactly the stored message's time as ``$JS.API.STREAM.MSG.GET`` reports it
(Go ``time.RFC3339Nano`` in UTC, so trailing zeros of the fraction are cut).

Facts pinned down here (R1, default account):

* Only a stream with ``allow_direct: true`` subscribes (queue group ``_sys_``) to
  ``$JS.API.DIRECT.GET.<stream>`` and ``$JS.API.DIRECT.GET.<stream>.>``; with it
  off, or with no such stream, the requester gets the core no-responders status
  ``NATS/1.0 503\\r\\nNats-Subject: <request subject>\\r\\n\\r\\n``.  In 2.15.1
  ``max_msgs_per_subject`` does NOT switch ``allow_direct`` on (ADR-31's old
  rule); a stream update switches the responder on and off.
* Order of checks (payload form): ``Nats-Required-Api-Level`` (> 5 or not an
  integer -> ``412 Required Api Level``) -> empty payload (``408 Empty Request``)
  -> JSON (``408 Malformed Request``; Go ``encoding/json``: keys match
  case-insensitively, unknown keys are ignored, ``null`` decodes to nothing) ->
  none of seq/last_by_subj/next_by_subj/multi_last/start_time set
  (``408 Empty Request``) -> conflicts (``408 Bad Request``): seq+last_by_subj,
  seq+start_time, start_time+last_by_subj, last_by_subj+next_by_subj,
  last_by_subj+batch, last_by_subj+multi_last, next_by_subj+multi_last,
  up_to_seq+up_to_time.
* A single reply is ``[stored header block minus its final CRLF | NATS/1.0\\r\\n]``
  + ``Nats-Stream``, ``Nats-Subject``, ``Nats-Sequence``, ``Nats-Time-Stamp``;
  batch and multi_last items add ``Nats-Num-Pending`` and ``Nats-Last-Sequence``.
  Request headers are not echoed.  ``no_hdr`` sends a plain ``MSG`` (payload only).
* ``batch`` (any non-zero value) makes a batch request: items then
  ``NATS/1.0 204 EOB\\r\\nNats-Num-Pending: <n>\\r\\nNats-Last-Sequence: <last sent>``.
  Num-Pending starts at the count of matching messages from the start sequence
  and is decremented per item sent (not when ``no_hdr`` is set); Last-Sequence
  of an item is the previous item's sequence (0 for the first).  A batch steps
  over deleted messages; when its very first lookup fails it answers
  ``404 Message Not Found`` alone (no EOB).  A negative batch sends only the EOB.
  ``max_bytes`` counts ``len(subject) + len(stored headers) + len(payload)`` per
  item and stops once the running total is >= max_bytes (so at least one item);
  it is ignored without batch.
* ``multi_last``: the last message of each matching subject (distinct subjects,
  at most 1024 or ``413 Too Many Results``), at or below ``up_to_seq`` (or the
  sequence before the first message at/after ``up_to_time``), in sequence
  order; items carry pending = matches still to come; the EOB adds
  ``Nats-UpTo-Sequence``.  ``seq`` is a minimum (lower matches are skipped but
  counted); ``no_hdr`` and ``start_time`` are ignored.  No match ->
  ``404 No Results``.  On file storage an ``up_to_seq`` past the last sequence
  finds nothing (404 No Results); memory storage honours it.
* Subject-appended form: ``last_by_subj`` = everything after the stream token.
  Its payload may be empty, ``null`` or JSON with only ``max_bytes``/``no_hdr``
  (zero values count as absent); any other selector -> ``408 Bad Request``.
"""

from __future__ import annotations

import asyncio

import nats
import nats.errors
import nats.js.errors
import pytest

from tests.harness.direct import DirectEnv, Stored
from tests.harness.env import env_fixture
from tests.harness.js import api

# --------------------------------------------------------------------------- expected blocks


def status(text: str) -> bytes:
    return b"NATS/1.0 " + text.encode() + b"\r\n\r\n"


EMPTY_REQUEST = status("408 Empty Request")
MALFORMED = status("408 Malformed Request")
BAD_REQUEST = status("408 Bad Request")
NOT_FOUND = status("404 Message Not Found")
NO_RESULTS = status("404 No Results")
TOO_MANY = status("413 Too Many Results")
API_LEVEL = status("412 Required Api Level")


def no_responders(subject: str) -> bytes:
    return b"NATS/1.0 503\r\nNats-Subject: " + subject.encode() + b"\r\n\r\n"


def eob(pending: int, last: int, upto: int | None = None) -> bytes:
    block = b"NATS/1.0 204 EOB\r\nNats-Num-Pending: %d\r\nNats-Last-Sequence: %d\r\n" % (pending, last)
    if upto is not None:
        block += b"Nats-UpTo-Sequence: %d\r\n" % upto
    return block + b"\r\n"


env = env_fixture(DirectEnv)


SIX = [("s.0", b"m0"), ("s.1", b"m1"), ("s.2", b"m2"), ("s.0", b"m3"), ("s.1", b"m4"), ("s.2", b"m5")]


# =========================================================================== the responder


async def test_allow_direct_is_off_by_default_even_for_kv_like_streams(env: DirectEnv) -> None:
    """max_msgs_per_subject no longer turns allow_direct on; without it nobody answers (503)."""
    await env.start(allow_direct=False)
    reply = await api(env.nc, "$JS.API.STREAM.CREATE.K", {"name": "K", "subjects": ["k.>"], "max_msgs_per_subject": 5})
    assert reply["config"]["allow_direct"] is False
    assert reply["config"]["mirror_direct"] is False
    await env.publish("s.1", b"x")
    for subject in ["$JS.API.DIRECT.GET.S", "$JS.API.DIRECT.GET.S.s.1", "$JS.API.DIRECT.GET.K"]:
        inbox, frames = await env.wire.direct(subject, b'{"seq":1}' if subject.count(".") == 4 else b"")
        assert frames == [env.wire.hmsg(inbox, no_responders(subject))]


async def test_missing_stream_is_no_responders(env: DirectEnv) -> None:
    await env.start()
    inbox, frames = await env.wire.direct("$JS.API.DIRECT.GET.NOPE", b'{"seq":1}')
    assert frames == [env.wire.hmsg(inbox, no_responders("$JS.API.DIRECT.GET.NOPE"))]
    inbox, frames = await env.wire.direct("$JS.API.DIRECT.GET.NOPE.s.1")
    assert frames == [env.wire.hmsg(inbox, no_responders("$JS.API.DIRECT.GET.NOPE.s.1"))]


async def test_stream_update_switches_the_responder_on_and_off(env: DirectEnv) -> None:
    await env.start(allow_direct=False)
    await env.publish("s.1", b"x")
    inbox, frames = await env.get({"seq": 1})
    assert frames == [env.wire.hmsg(inbox, no_responders("$JS.API.DIRECT.GET.S"))]

    config = {"name": "S", "subjects": ["s.>"], "storage": "file", "allow_direct": True}
    reply = await api(env.nc, "$JS.API.STREAM.UPDATE.S", config)
    assert reply["config"]["allow_direct"] is True, reply
    inbox, frames = await env.get({"seq": 1})
    assert frames == [await env.item(inbox, 1)]
    inbox, frames = await env.get(suffix="s.1")
    assert frames == [await env.item(inbox, 1)]

    reply = await api(env.nc, "$JS.API.STREAM.UPDATE.S", dict(config, allow_direct=False))
    assert reply["config"]["allow_direct"] is False, reply
    inbox, frames = await env.get({"seq": 1})
    assert frames == [env.wire.hmsg(inbox, no_responders("$JS.API.DIRECT.GET.S"))]


async def test_stream_delete_removes_the_responder(env: DirectEnv) -> None:
    await env.start()
    await env.publish("s.1", b"x")
    reply = await api(env.nc, "$JS.API.STREAM.DELETE.S")
    assert reply.get("success") is True, reply
    inbox, frames = await env.get({"seq": 1})
    assert frames == [env.wire.hmsg(inbox, no_responders("$JS.API.DIRECT.GET.S"))]


async def test_nats_py_direct_get_without_responder_raises_no_responders(env: DirectEnv) -> None:
    await env.start(allow_direct=False)
    await env.publish("s.1", b"x")
    js = env.nc.jetstream()
    with pytest.raises(nats.errors.NoRespondersError):
        await js.get_msg("S", seq=1, direct=True)
    with pytest.raises(nats.errors.NoRespondersError):
        await js.get_last_msg("S", "s.1", direct=True)


async def test_nats_py_direct_get_reads_headers(env: DirectEnv) -> None:
    await env.start()
    await env.publish("s.1", b"one", b"NATS/1.0\r\nFoo: bar\r\n\r\n")
    await env.publish("s.2", b"two")
    js = env.nc.jetstream()
    msg = await js.get_msg("S", seq=1, direct=True)
    assert (msg.subject, msg.seq, msg.data) == ("s.1", 1, b"one")
    assert msg.headers == {
        "Foo": "bar",
        "Nats-Stream": "S",
        "Nats-Subject": "s.1",
        "Nats-Sequence": "1",
        "Nats-Time-Stamp": await env.ts(1),
    }
    last = await js.get_last_msg("S", "s.2", direct=True)
    assert (last.subject, last.seq, last.data) == ("s.2", 2, b"two")
    with pytest.raises(nats.js.errors.NotFoundError):
        await js.get_msg("S", seq=9, direct=True)


# =========================================================================== single gets


async def test_get_by_sequence_exact_bytes(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:2])
    inbox, frames = await env.get(b'{"seq":2}')
    ts = (await env.ts(2)).encode()
    assert frames == [
        b"HMSG %s %d %d %d\r\nNATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.1\r\nNats-Sequence: 2\r\n"
        b"Nats-Time-Stamp: %s\r\n\r\nm1\r\n" % (inbox.encode(), env.wire.sids[inbox], 84 + len(ts), 86 + len(ts), ts)
    ]


async def test_stored_headers_come_first_verbatim(env: DirectEnv) -> None:
    """The stored block is kept byte for byte (repeats, case, even a Nats-Stream of its own)."""
    await env.start()
    stored = b"NATS/1.0\r\nNats-Stream: X\r\nA: 1\r\nA: 2\r\nlower: v\r\n\r\n"
    await env.publish("s.1", b"p", stored)
    await env.publish("s.2", b"q", b"NATS/1.0\r\nNats-Msg-Id: id1\r\n\r\n")
    inbox, frames = await env.get({"seq": 1})
    assert frames == [
        env.wire.hmsg(
            inbox,
            b"NATS/1.0\r\nNats-Stream: X\r\nA: 1\r\nA: 2\r\nlower: v\r\nNats-Stream: S\r\nNats-Subject: s.1\r\n"
            b"Nats-Sequence: 1\r\nNats-Time-Stamp: " + (await env.ts(1)).encode() + b"\r\n\r\n",
            b"p",
        )
    ]
    inbox, frames = await env.get({"last_by_subj": "s.2"})
    assert frames == [await env.item(inbox, 2)]
    assert b"Nats-Msg-Id: id1\r\nNats-Stream: S\r\n" in frames[0]


async def test_empty_header_block_and_empty_payload(env: DirectEnv) -> None:
    """A stored ``NATS/1.0\\r\\n\\r\\n`` block reads back like no headers at all."""
    await env.start()
    await env.publish("s.1", b"", b"NATS/1.0\r\n\r\n")
    await env.publish("s.2", b"")
    for seq in (1, 2):
        inbox, frames = await env.get({"seq": seq})
        assert frames == [
            env.wire.hmsg(
                inbox,
                b"NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.%d\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %s\r\n\r\n"
                % (seq, seq, (await env.ts(seq)).encode()),
            )
        ]


async def test_request_headers_are_not_echoed(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:1])
    inbox, frames = await env.get({"seq": 1}, header=b"NATS/1.0\r\nFoo: x\r\nNats-Expected-Stream: nope\r\n\r\n")
    assert frames == [await env.item(inbox, 1)]


async def test_missing_and_deleted_sequences_are_not_found(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    await env.delete(2)
    for body in ({"seq": 2}, {"seq": 4}, {"seq": 99}):
        inbox, frames = await env.get(body)
        assert frames == [env.wire.hmsg(inbox, NOT_FOUND)]
    inbox, frames = await env.get({"seq": 3})
    assert frames == [await env.item(inbox, 3)]


async def test_last_by_subject(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"last_by_subj": "s.1"})
    assert frames == [await env.item(inbox, 5)]
    inbox, frames = await env.get({"last_by_subj": "s.*"})  # wildcards: last of any match
    assert frames == [await env.item(inbox, 6)]
    inbox, frames = await env.get({"last_by_subj": "s.9"})
    assert frames == [env.wire.hmsg(inbox, NOT_FOUND)]
    inbox, frames = await env.get({"last_by_subj": "s.1", "up_to_seq": 2, "max_bytes": 1})  # both ignored here
    assert frames == [await env.item(inbox, 5)]


async def test_last_by_subject_after_deletes_and_purge(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    await env.delete(5)
    inbox, frames = await env.get({"last_by_subj": "s.1"})
    assert frames == [await env.item(inbox, 2)]
    await env.delete(2)
    inbox, frames = await env.get({"last_by_subj": "s.1"})
    assert frames == [env.wire.hmsg(inbox, NOT_FOUND)]
    reply = await api(env.nc, "$JS.API.STREAM.PURGE.S")
    assert reply["purged"] == 4, reply
    inbox, frames = await env.get(suffix="s.0")
    assert frames == [env.wire.hmsg(inbox, NOT_FOUND)]


async def test_next_by_subject(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    cases = [
        ({"next_by_subj": "s.1"}, 2),  # no seq: the first match
        ({"next_by_subj": "s.1", "seq": 2}, 2),  # at or after seq
        ({"next_by_subj": "s.1", "seq": 3}, 5),
        ({"next_by_subj": "s.*", "seq": 3}, 3),
        ({"next_by_subj": ">", "seq": 6}, 6),
    ]
    for body, seq in cases:
        inbox, frames = await env.get(body)
        assert frames == [await env.item(inbox, seq)], body
    for body in ({"next_by_subj": "s.1", "seq": 6}, {"next_by_subj": "s.9"}):
        inbox, frames = await env.get(body)
        assert frames == [env.wire.hmsg(inbox, NOT_FOUND)], body


async def test_start_time(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    cases = [
        ({"start_time": "2000-01-01T00:00:00Z"}, 1),
        ({"start_time": await env.ts(3)}, 3),  # the first message at or after the time
        ({"start_time": await env.ts(3), "next_by_subj": "s.1"}, 5),
        ({"start_time": "2000-01-01T01:00:00+01:00", "next_by_subj": "s.2"}, 3),
    ]
    for body, seq in cases:
        inbox, frames = await env.get(body)
        assert frames == [await env.item(inbox, seq)], body
    inbox, frames = await env.get({"start_time": "2100-01-01T00:00:00Z"})
    assert frames == [env.wire.hmsg(inbox, NOT_FOUND)]


async def test_max_bytes_does_not_apply_to_single_gets(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:2])
    inbox, frames = await env.get({"seq": 1, "max_bytes": 1})
    assert frames == [await env.item(inbox, 1)]


async def test_no_hdr_sends_a_plain_msg(env: DirectEnv) -> None:
    await env.start()
    await env.publish("s.1", b"withhdr", b"NATS/1.0\r\nFoo: bar\r\n\r\n")
    await env.publish("s.2", b"")
    inbox, frames = await env.get({"seq": 1, "no_hdr": True})
    assert frames == [env.wire.msg(inbox, b"withhdr")]
    inbox, frames = await env.get({"last_by_subj": "s.2", "no_hdr": True})
    assert frames == [env.wire.msg(inbox, b"")]


# =========================================================================== batches


async def test_batch_by_sequence(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"seq": 2, "batch": 3})
    assert frames == await env.batch(inbox, [2, 3, 4], [4, 3, 2]) + [env.wire.hmsg(inbox, eob(2, 4))]


async def test_batch_larger_than_the_rest(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    inbox, frames = await env.get({"seq": 2, "batch": 10})
    assert frames == await env.batch(inbox, [2, 3], [1, 0]) + [env.wire.hmsg(inbox, eob(0, 3))]


async def test_batch_of_one_still_ends_with_eob(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    inbox, frames = await env.get({"seq": 1, "batch": 1})
    assert frames == await env.batch(inbox, [1], [2]) + [env.wire.hmsg(inbox, eob(2, 1))]


async def test_batch_zero_is_a_single_get_and_negative_sends_only_eob(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    inbox, frames = await env.get({"seq": 1, "batch": 0})
    assert frames == [await env.item(inbox, 1)]
    inbox, frames = await env.get({"seq": 2, "batch": -1})
    assert frames == [env.wire.hmsg(inbox, eob(2, 0))]


async def test_batch_steps_over_deleted_messages(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    await env.delete(2)
    await env.delete(4)
    inbox, frames = await env.get({"seq": 2, "batch": 2})
    assert frames == await env.batch(inbox, [3, 5], [2, 1]) + [env.wire.hmsg(inbox, eob(1, 5))]


async def test_batch_whose_first_lookup_fails_is_not_found_without_eob(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    for body in (
        {"seq": 4, "batch": 3},
        {"next_by_subj": "s.9", "batch": 2},
        {"start_time": "2100-01-01T00:00:00Z", "batch": 2},
    ):
        inbox, frames = await env.get(body)
        assert frames == [env.wire.hmsg(inbox, NOT_FOUND)], body


async def test_batch_with_next_by_subject_counts_matches_only(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"seq": 2, "batch": 10, "next_by_subj": "s.1"})
    assert frames == await env.batch(inbox, [2, 5], [1, 0]) + [env.wire.hmsg(inbox, eob(0, 5))]
    inbox, frames = await env.get({"next_by_subj": "s.*", "batch": 2})
    assert frames == await env.batch(inbox, [1, 2], [5, 4]) + [env.wire.hmsg(inbox, eob(4, 2))]


async def test_batch_from_start_time(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"start_time": await env.ts(4), "batch": 2})
    assert frames == await env.batch(inbox, [4, 5], [2, 1]) + [env.wire.hmsg(inbox, eob(1, 5))]


async def test_batch_after_purge_starts_at_the_first_sequence(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    await api(env.nc, "$JS.API.STREAM.PURGE.S")
    seq = await env.publish("s.3", b"z")
    assert seq == 4
    inbox, frames = await env.get({"seq": 1, "batch": 3})
    assert frames == await env.batch(inbox, [4], [0]) + [env.wire.hmsg(inbox, eob(0, 4))]
    inbox, frames = await env.get({"seq": 1})
    assert frames == [env.wire.hmsg(inbox, NOT_FOUND)]


@pytest.mark.parametrize("max_bytes, count", [(1, 1), (5, 1), (6, 2), (10, 2), (11, 3)])
async def test_batch_max_bytes(env: DirectEnv, max_bytes: int, count: int) -> None:
    """Each item counts subject + payload (here 3 + 2): the batch stops once the total reaches max_bytes."""
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"seq": 1, "batch": 5, "max_bytes": max_bytes})
    seqs = list(range(1, count + 1))
    assert frames == await env.batch(inbox, seqs, [6 - s for s in seqs]) + [env.wire.hmsg(inbox, eob(6 - count, count))]


async def test_batch_max_bytes_counts_stored_headers(env: DirectEnv) -> None:
    await env.start()
    await env.publish("s.1", b"", b"NATS/1.0\r\n\r\n")  # 3 + 12 + 0 = 15
    await env.publish("s.1", b"p", b"NATS/1.0\r\nA: 1\r\n\r\n")  # 3 + 18 + 1 = 22
    await env.publish("s.1", b"q")
    inbox, frames = await env.get({"seq": 1, "batch": 3, "max_bytes": 16})
    assert frames == await env.batch(inbox, [1, 2], [2, 1]) + [env.wire.hmsg(inbox, eob(1, 2))]
    inbox, frames = await env.get({"seq": 1, "batch": 3, "max_bytes": 15})
    assert frames == await env.batch(inbox, [1], [2]) + [env.wire.hmsg(inbox, eob(2, 1))]


async def test_batch_items_keep_stored_headers_first(env: DirectEnv) -> None:
    await env.start()
    await env.publish("s.1", b"p", b"NATS/1.0\r\nA: 1\r\nA: 2\r\n\r\n")
    await env.publish("s.2", b"q")
    inbox, frames = await env.get({"seq": 1, "batch": 2})
    assert frames[0] == env.wire.hmsg(
        inbox,
        b"NATS/1.0\r\nA: 1\r\nA: 2\r\nNats-Stream: S\r\nNats-Subject: s.1\r\nNats-Sequence: 1\r\nNats-Time-Stamp: "
        + (await env.ts(1)).encode()
        + b"\r\nNats-Num-Pending: 1\r\nNats-Last-Sequence: 0\r\n\r\n",
        b"p",
    )
    assert frames == await env.batch(inbox, [1, 2], [1, 0]) + [env.wire.hmsg(inbox, eob(0, 2))]


async def test_batch_with_no_hdr_does_not_count_down_pending(env: DirectEnv) -> None:
    """Items are plain MSGs; the pending count is only decremented for items with headers."""
    await env.start()
    await env.fill(*SIX)
    await env.delete(2)
    inbox, frames = await env.get({"seq": 1, "batch": 3, "no_hdr": True})
    assert frames == [
        env.wire.msg(inbox, b"m0"),
        env.wire.msg(inbox, b"m2"),
        env.wire.msg(inbox, b"m3"),
        env.wire.hmsg(inbox, eob(5, 4)),
    ]


# =========================================================================== multi_last


async def test_multi_last_with_wildcard(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:5])  # last of s.2 is 3, of s.0 is 4, of s.1 is 5
    inbox, frames = await env.get({"multi_last": ["s.*"]})
    assert frames == await env.batch(inbox, [3, 4, 5], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 5, 5))]


async def test_multi_last_subjects_are_distinct_and_in_sequence_order(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"multi_last": ["s.1", "s.0", "s.1", "s.>"]})
    assert frames == await env.batch(inbox, [4, 5, 6], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 6, 6))]
    inbox, frames = await env.get({"multi_last": ["s.1", "nomatch.*"]})
    assert frames == await env.batch(inbox, [5], [0]) + [env.wire.hmsg(inbox, eob(0, 5, 6))]


async def test_multi_last_keeps_stored_headers(env: DirectEnv) -> None:
    await env.start()
    await env.publish("s.1", b"p", b"NATS/1.0\r\nFoo: bar\r\n\r\n")
    await env.publish("s.2", b"q")
    inbox, frames = await env.get({"multi_last": ["s.>"]})
    assert frames == await env.batch(inbox, [1, 2], [1, 0]) + [env.wire.hmsg(inbox, eob(0, 2, 2))]
    assert frames[0].startswith(b"HMSG %s %d " % (inbox.encode(), env.wire.sids[inbox]))
    assert b"\r\nNATS/1.0\r\nFoo: bar\r\nNats-Stream: S\r\n" in frames[0]


async def test_multi_last_no_match(env: DirectEnv) -> None:
    await env.start()
    inbox, frames = await env.get({"multi_last": ["s.*"]})  # empty stream
    assert frames == [env.wire.hmsg(inbox, NO_RESULTS)]
    await env.fill(*SIX[:2])
    inbox, frames = await env.get({"multi_last": ["s.9", "t.>"]})
    assert frames == [env.wire.hmsg(inbox, NO_RESULTS)]


async def test_multi_last_up_to_sequence(env: DirectEnv) -> None:
    """A point-in-time read: the last of each subject at or below up_to_seq."""
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_seq": 4})
    assert frames == await env.batch(inbox, [2, 3, 4], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 4, 4))]
    await env.delete(2)
    inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_seq": 2})
    assert frames == await env.batch(inbox, [1], [0]) + [env.wire.hmsg(inbox, eob(0, 1, 2))]
    inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_seq": 6})
    assert frames == await env.batch(inbox, [4, 5, 6], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 6, 6))]


@pytest.mark.parametrize("storage", ["file", "memory"])
async def test_multi_last_up_to_sequence_past_the_end(env: DirectEnv, storage: str) -> None:
    """File storage finds nothing past its last sequence; memory storage reads everything."""
    await env.start(storage=storage)
    await env.fill(*SIX[:3])
    inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_seq": 100})
    if storage == "file":
        assert frames == [env.wire.hmsg(inbox, NO_RESULTS)]
    else:
        assert frames == await env.batch(inbox, [1, 2, 3], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 3, 100))]


async def test_multi_last_up_to_time(env: DirectEnv) -> None:
    """up_to_time picks the sequence before the first message at or after it."""
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_time": await env.ts(4)})
    assert frames == await env.batch(inbox, [1, 2, 3], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 3, 3))]
    inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_time": "2100-01-01T00:00:00Z"})
    assert frames == await env.batch(inbox, [4, 5, 6], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 6, 6))]
    for when in ("2000-01-01T00:00:00Z", await env.ts(1)):
        inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_time": when})
        assert frames == [env.wire.hmsg(inbox, NO_RESULTS)], when


async def test_multi_last_seq_is_a_minimum(env: DirectEnv) -> None:
    """Matches below seq are skipped but still counted out of the pending numbers."""
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"multi_last": ["s.*"], "seq": 5})
    assert frames == await env.batch(inbox, [5, 6], [1, 0]) + [env.wire.hmsg(inbox, eob(0, 6, 6))]
    inbox, frames = await env.get({"multi_last": ["s.*"], "seq": 7})
    assert frames == [env.wire.hmsg(inbox, eob(0, 0, 6))]


async def test_multi_last_batch_and_max_bytes(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX)
    inbox, frames = await env.get({"multi_last": ["s.*"], "batch": 2})
    assert frames == await env.batch(inbox, [4, 5], [2, 1]) + [env.wire.hmsg(inbox, eob(1, 5, 6))]
    inbox, frames = await env.get({"multi_last": ["s.*"], "max_bytes": 1})
    assert frames == await env.batch(inbox, [4], [2]) + [env.wire.hmsg(inbox, eob(2, 4, 6))]


async def test_multi_last_ignores_no_hdr_and_start_time(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    for body in (
        {"multi_last": ["s.*"]},
        {"multi_last": ["s.*"], "no_hdr": True},
        {"multi_last": ["s.*"], "start_time": "2100-01-01T00:00:00Z"},
    ):
        inbox, frames = await env.get(body)
        assert frames == await env.batch(inbox, [1, 2, 3], [2, 1, 0]) + [env.wire.hmsg(inbox, eob(0, 3, 3))], body


@pytest.mark.parametrize("storage", ["file", "memory"])
async def test_multi_last_limit_is_1024_subjects(env: DirectEnv, storage: str) -> None:
    await env.start(storage=storage)
    js = env.nc.jetstream()
    acks = [await js.publish_async(f"s.{i}", b"") for i in range(1025)]
    await asyncio.gather(*acks)
    env.messages.update({i + 1: Stored(f"s.{i}", b"", b"") for i in range(1025)})

    inbox, frames = await env.get({"multi_last": ["s.*"], "batch": 1})
    assert frames == [env.wire.hmsg(inbox, TOO_MANY)]
    inbox, frames = await env.get({"multi_last": [f"s.{i}" for i in range(1025)], "batch": 1})
    assert frames == [env.wire.hmsg(inbox, TOO_MANY)]
    # 1024 distinct subjects are fine, however they are spelled.
    inbox, frames = await env.get({"multi_last": ["s.*"], "up_to_seq": 1024, "batch": 1})
    assert frames == await env.batch(inbox, [1], [1023]) + [env.wire.hmsg(inbox, eob(1023, 1, 1024))]
    inbox, frames = await env.get({"multi_last": [f"s.{i}" for i in range(1024)] + ["s.0"], "batch": 1})
    assert frames == await env.batch(inbox, [1], [1023]) + [env.wire.hmsg(inbox, eob(1023, 1, 1025))]


# =========================================================================== request validation


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{}",
        b"null",
        b'{"batch":3}',
        b'{"max_bytes":3}',
        b'{"no_hdr":true}',
        b'{"up_to_seq":3}',
        b'{"up_to_time":"2100-01-01T00:00:00Z"}',
        b'{"seq":0,"last_by_subj":"","multi_last":[]}',
    ],
)
async def test_empty_request(env: DirectEnv, body: bytes) -> None:
    await env.start()
    await env.fill(*SIX[:2])
    inbox, frames = await env.get(body)
    assert frames == [env.wire.hmsg(inbox, EMPTY_REQUEST)]


@pytest.mark.parametrize(
    "body",
    [
        b" ",
        b"xx",
        b"[]",
        b'{"seq":1',
        b'{"seq":1}x',
        b'{"seq":"1"}',
        b'{"seq":-1}',
        b'{"seq":1.5}',
        b'{"batch":"x","seq":1}',
        b'{"start_time":"bad"}',
        b'{"start_time":"2020-01-01"}',
        b'{"multi_last":"s.*"}',
        b'{"no_hdr":1,"seq":1}',
    ],
)
async def test_malformed_request(env: DirectEnv, body: bytes) -> None:
    await env.start()
    await env.fill(*SIX[:2])
    inbox, frames = await env.get(body)
    assert frames == [env.wire.hmsg(inbox, MALFORMED)]


@pytest.mark.parametrize(
    "body",
    [
        {"seq": 1, "last_by_subj": "s.1"},
        {"seq": 1, "start_time": "2000-01-01T00:00:00Z"},
        {"start_time": "2000-01-01T00:00:00Z", "last_by_subj": "s.1"},
        {"last_by_subj": "s.1", "next_by_subj": "s.1"},
        {"last_by_subj": "s.1", "batch": 1},
        {"last_by_subj": "s.1", "multi_last": ["s.1"]},
        {"next_by_subj": "s.1", "multi_last": ["s.1"]},
        {"multi_last": ["s.*"], "up_to_seq": 3, "up_to_time": "2100-01-01T00:00:00Z"},
        {"seq": 1, "up_to_seq": 1, "up_to_time": "2100-01-01T00:00:00Z"},
    ],
)
async def test_conflicting_fields_are_a_bad_request(env: DirectEnv, body: dict) -> None:
    await env.start()
    await env.fill(*SIX[:2])
    inbox, frames = await env.get(body)
    assert frames == [env.wire.hmsg(inbox, BAD_REQUEST)]


async def test_field_names_are_case_insensitive_and_unknown_fields_ignored(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:3])
    for body in (b'{"Seq":3}', b'{"SEQ":3,"foo":[1,{"x":null}]}', b'{"Last_By_Subj":"s.2"}', b'{"seq":1,"seq":3}'):
        inbox, frames = await env.get(body)
        assert frames == [await env.item(inbox, 3)], body


@pytest.mark.parametrize(
    "level, allowed", [("6", False), ("99", False), ("abc", False), ("5", True), ("0", True), ("-1", True)]
)
async def test_required_api_level(env: DirectEnv, level: str, allowed: bool) -> None:
    """Checked before anything else, on both forms; a level above 5 or not an integer is refused."""
    await env.start()
    await env.fill(*SIX[:1])
    header = b"NATS/1.0\r\nNats-Required-Api-Level: " + level.encode() + b"\r\n\r\n"
    inbox, frames = await env.get({"seq": 1}, header=header)
    assert frames == ([await env.item(inbox, 1)] if allowed else [env.wire.hmsg(inbox, API_LEVEL)])
    inbox, frames = await env.get(b"", header=header)
    assert frames == [env.wire.hmsg(inbox, EMPTY_REQUEST if allowed else API_LEVEL)]
    inbox, frames = await env.get(b"xx", suffix="s.0", header=header)
    assert frames == [env.wire.hmsg(inbox, MALFORMED if allowed else API_LEVEL)]


async def test_empty_required_api_level_is_ignored(env: DirectEnv) -> None:
    await env.start()
    await env.fill(*SIX[:1])
    inbox, frames = await env.get({"seq": 1}, header=b"NATS/1.0\r\nNats-Required-Api-Level: \r\n\r\n")
    assert frames == [await env.item(inbox, 1)]


# =========================================================================== subject-appended form


async def test_subject_form_gets_the_last_message(env: DirectEnv) -> None:
    await env.start()
    await env.fill(("s.a.b", b"x"), ("s.a.c", b"y"), ("s.a.b", b"z"))
    inbox, frames = await env.get(suffix="s.a.b")
    assert frames == [await env.item(inbox, 3)]
    inbox, frames = await env.get(suffix="s.a.c")
    assert frames == [await env.item(inbox, 2)]
    for suffix in ("s.a", "s.a.x", "s"):
        inbox, frames = await env.get(suffix=suffix)
        assert frames == [env.wire.hmsg(inbox, NOT_FOUND)], suffix


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{}",
        b"null",
        b'{"max_bytes":1}',
        b'{"seq":0}',
        b'{"batch":0}',
        b'{"foo":1}',
        b'{"multi_last":[]}',
        b'{"no_hdr":false}',
    ],
)
async def test_subject_form_bodies_that_are_allowed(env: DirectEnv, body: bytes) -> None:
    await env.start()
    await env.fill(*SIX[:5])
    inbox, frames = await env.get(body, suffix="s.1")
    assert frames == [await env.item(inbox, 5)]


async def test_subject_form_no_hdr(env: DirectEnv) -> None:
    await env.start()
    await env.publish("s.1", b"v", b"NATS/1.0\r\nFoo: bar\r\n\r\n")
    inbox, frames = await env.get({"no_hdr": True}, suffix="s.1")
    assert frames == [env.wire.msg(inbox, b"v")]


@pytest.mark.parametrize(
    "body",
    [
        {"seq": 1},
        {"batch": 1},
        {"last_by_subj": "s.1"},
        {"next_by_subj": "s.1"},
        {"multi_last": ["s.>"]},
        {"start_time": "2000-01-01T00:00:00Z"},
        {"up_to_seq": 1},
        {"up_to_time": "2000-01-01T00:00:00Z"},
    ],
)
async def test_subject_form_rejects_selectors_in_the_body(env: DirectEnv, body: dict) -> None:
    await env.start()
    await env.fill(*SIX[:2])
    inbox, frames = await env.get(body, suffix="s.1")
    assert frames == [env.wire.hmsg(inbox, BAD_REQUEST)]


@pytest.mark.parametrize("body", [b" ", b"xx", b'{"seq":"x"}', b"[]"])
async def test_subject_form_malformed_body(env: DirectEnv, body: bytes) -> None:
    await env.start()
    await env.fill(*SIX[:2])
    inbox, frames = await env.get(body, suffix="s.1")
    assert frames == [env.wire.hmsg(inbox, MALFORMED)]
