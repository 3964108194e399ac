"""Publishing into streams: PubAcks, publish headers, limits, retention and state accounting.

Every expectation here was read off nats-server 2.15.1 (the binary, not the Go source:
where the two disagree, e.g. the order of the publish checks, the binary wins).

Facts these tests pin down (R1, non-clustered):

* A PubAck is a plain ``MSG`` (never ``HMSG``) to the publisher's reply subject:
  ``{"stream":"S","seq":N}``; a duplicate is hand-built with a space:
  ``{"stream":"S","seq":N,"duplicate": true}``; no ``domain`` key without a domain.
  Error PubAcks are Go-``json.Marshal``-ed: ``{"error":{"code":C,"err_code":E,
  "description":"D"},"stream":"S","seq":0}`` (so ``<``, ``>``, ``&`` become
  ``\\u003c``, ``\\u003e``, ``\\u0026`` -- also in the stream name, while the success
  PubAck writes the stream name unescaped).
* Order of the checks on publish (first failure answers):
  sealed (10109) -> max_msg_size (10054, header+payload) -> header > 65535 bytes (10097)
  -> Nats-Expected-Stream (10060) -> Nats-TTL present and valid but allow_msg_ttl off
  (10166) -> Nats-Expected-Last-Subject-Sequence (10071, the subject's last seq) /
  ...-Subject without the sequence (10193) -> Nats-Expected-Last-Sequence (10071, the
  stream's last seq) -> Nats-Msg-Id duplicate (duplicate PubAck) ->
  Nats-Expected-Last-Msg-Id (10070) -> Nats-Rollup not permitted / invalid (10111, code 500)
  -> [interest stream without interest: acked, nothing stored] -> invalid Nats-TTL (10165)
  -> store limits with discard new: per subject, then max_msgs, then max_bytes (10077, code 503).
* Stored size (``state.bytes``), with ``hdr`` the header block as stored (``NATS/1.0\\r\\n`` ...
  ``\\r\\n\\r\\n``, Nats-Expected-* and every other client header kept verbatim):
  memory: ``len(subject) + len(hdr) + len(payload) + 16``;
  file: ``len(subject) + len(payload) + 30`` without headers,
  ``len(subject) + len(hdr) + len(payload) + 34`` with headers.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import nats
import pytest
from nats.errors import NoRespondersError
from nats.js.errors import BadRequestError, NoStreamResponseError

from tests.harness.js import SEC, ZERO_TIME, api, connect, create_stream, normalize, publish
from tests.harness.publish import Raw, ack, add_stream, err, hdr_block, info, wrong_last_seq
from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually

# --------------------------------------------------------------------------- helpers


def dup(stream: str, seq: int) -> bytes:
    return b'{"stream":"%s","seq":%d,"duplicate": true}' % (stream.encode(), seq)


def wrong_last_msg_id(stream: str, last: str) -> bytes:
    return err(stream, 400, 10070, f"wrong last msg ID: {last}")


def stream_mismatch(stream: str) -> bytes:
    return err(stream, 400, 10060, "expected stream does not match")


def ttl_disabled(stream: str) -> bytes:
    return err(stream, 400, 10166, "per-message TTL is disabled")


def ttl_invalid(stream: str) -> bytes:
    return err(stream, 400, 10165, "invalid per-message TTL")


def too_big(stream: str) -> bytes:
    return err(stream, 400, 10054, "message size exceeds maximum allowed")


def header_too_big(stream: str) -> bytes:
    return err(stream, 400, 10097, "header size exceeds maximum allowed of 64k")


def rollup_failed(stream: str, text: str) -> bytes:
    return err(stream, 500, 10111, text)


def store_failed(stream: str, text: str) -> bytes:
    return err(stream, 503, 10077, text)


def sealed(stream: str) -> bytes:
    return err(stream, 400, 10109, "invalid operation on sealed stream")


async def state(nc: nats.NATS, name: str = "S", **request: Any) -> dict:
    return normalize((await info(nc, name, **request))["state"])


async def _state_with(nc: nats.NATS, messages: int, name: str = "S") -> dict | None:
    st = await state(nc, name)
    return st if st["messages"] == messages else None


async def _state_with_last(nc: nats.NATS, last_seq: int, name: str = "S") -> dict | None:
    st = await state(nc, name)
    return st if st["last_seq"] >= last_seq else None


async def get_msg(nc: nats.NATS, name: str, seq: int) -> dict:
    """STREAM.MSG.GET by sequence, with ``hdrs``/``data`` decoded to bytes (absent stays absent)."""
    reply = await api(nc, f"$JS.API.STREAM.MSG.GET.{name}", {"seq": seq})
    assert "error" not in reply, reply
    message = dict(reply["message"])
    for key in ("hdrs", "data"):
        if key in message:
            message[key] = base64.b64decode(message[key])
    return message


async def wait_for(predicate, timeout: float = 5.0, interval: float = 0.05, target: Target | None = None):
    """Poll ``await predicate()`` until it returns something truthy; return that value.

    With ``target``, the server's time passes meanwhile (see :meth:`Target.elapse_until`).
    """
    if target is None:
        return await eventually(predicate, timeout=timeout, interval=interval)
    value = await target.elapse_until(predicate, timeout, interval)
    assert value, "condition not reached in time"
    return value


def mem_size(subject: str, hdr: bytes, payload: bytes) -> int:
    return len(subject) + len(hdr) + len(payload) + 16


def file_size(subject: str, hdr: bytes, payload: bytes) -> int:
    if not hdr:
        return len(subject) + len(payload) + 30
    return len(subject) + len(hdr) + len(payload) + 34


# --------------------------------------------------------------------------- PubAck bytes


async def test_puback_frames_exact(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    raw = await Raw.open(target)
    assert await raw.request("s.a", b"hello") == b'MSG R.1 1 22\r\n{"stream":"S","seq":1}\r\n'
    assert await raw.request("s.b", b"", hdr_block("X: y")) == b'MSG R.1 1 22\r\n{"stream":"S","seq":2}\r\n'
    await raw.close()
    await nc.close()


async def test_duplicate_puback_frame_has_space(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    raw = await Raw.open(target)
    hdr = hdr_block("Nats-Msg-Id: one")
    assert await raw.request("s.a", b"x", hdr) == b'MSG R.1 1 22\r\n{"stream":"S","seq":1}\r\n'
    assert await raw.request("s.a", b"x", hdr) == b'MSG R.1 1 40\r\n{"stream":"S","seq":1,"duplicate": true}\r\n'
    await raw.close()
    await nc.close()


async def test_error_puback_is_plain_msg(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    raw = await Raw.open(target)
    frame = await raw.request("s.a", b"x", hdr_block("Nats-Expected-Stream: T"))
    body = stream_mismatch("S")
    assert frame == b"MSG R.1 1 %d\r\n%s\r\n" % (len(body), body)
    await raw.close()
    await nc.close()


async def test_js_context_puback(target: Target) -> None:
    nc = await connect(target)
    js = nc.jetstream()
    await add_stream(nc)
    first = await js.publish("s.a", b"one", headers={"Nats-Msg-Id": "m"})
    assert (first.stream, first.seq, first.domain, first.duplicate) == ("S", 1, None, None)
    again = await js.publish("s.a", b"one", headers={"Nats-Msg-Id": "m"})
    assert (again.stream, again.seq, again.duplicate) == ("S", 1, True)
    with pytest.raises(BadRequestError) as raised:
        await js.publish("s.a", b"x", headers={"Nats-Expected-Last-Sequence": "7"})
    assert (raised.value.code, raised.value.err_code, raised.value.description) == (
        400,
        10071,
        "wrong last sequence: 1",
    )
    with pytest.raises(NoStreamResponseError):
        await js.publish("nowhere.a", b"x")
    await nc.close()


async def test_publish_without_reply_is_stored_silently(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    raw = await Raw.open(target)
    await raw.pub("s.a", b"quiet", reply=None)
    await raw.pub("s.b", b"", hdr_block("Nats-Msg-Id: q"), reply=None)
    assert await raw.silence() == b""
    st = await wait_for(lambda: _state_with(nc, 2))
    assert st["last_seq"] == 2
    assert (await get_msg(nc, "S", 1))["data"] == b"quiet"
    # The second one was deduplicated by its id, even though nobody heard about it.
    assert await publish(nc, "s.b", b"", {"Nats-Msg-Id": "q"}) == dup("S", 2)
    await raw.close()
    await nc.close()


async def test_publish_to_subject_without_stream(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    with pytest.raises(NoRespondersError):
        await nc.request("other.a", b"x", timeout=WAIT)
    raw = await Raw.open(target)
    frame = await raw.request("other.a", b"x")
    assert frame == b"HMSG R.1 1 39 39\r\nNATS/1.0 503\r\nNats-Subject: other.a\r\n\r\n\r\n"
    await raw.close()
    # A client without headers support gets no answer at all.
    plain = await Raw.open(target, headers=False)
    await plain.pub("other.a", b"x")
    assert await plain.silence() == b""
    await plain.close()
    assert (await state(nc))["messages"] == 0
    await nc.close()


async def test_error_json_escapes_like_go(target: Target) -> None:
    """Error PubAcks are json.Marshal-ed (HTML-escaped); the success PubAck is not."""
    nc = await connect(target)
    await create_stream(nc, {"name": "A<&", "subjects": ["lt.>"], "storage": "memory", "allow_rollup_hdrs": True})
    assert await publish(nc, "lt.a", b"x", {"Nats-Msg-Id": "<a&b>"}) == b'{"stream":"A<&","seq":1}'
    assert await publish(nc, "lt.a", b"x", {"Nats-Msg-Id": "<a&b>"}) == b'{"stream":"A<&","seq":1,"duplicate": true}'
    assert await publish(nc, "lt.a", b"x", {"Nats-Expected-Last-Msg-Id": "z"}) == (
        b'{"error":{"code":400,"err_code":10070,"description":"wrong last msg ID: \\u003ca\\u0026b\\u003e"},'
        b'"stream":"A\\u003c\\u0026","seq":0}'
    )
    assert await publish(nc, "lt.a", b"x", {"Nats-Rollup": "<b&>"}) == (
        b'{"error":{"code":500,"err_code":10111,"description":"rollup value invalid: \\"\\u003cb\\u0026\\u003e\\""},'
        b'"stream":"A\\u003c\\u0026","seq":0}'
    )
    await nc.close()


# --------------------------------------------------------------------------- Nats-Msg-Id


async def test_msg_id_dedup_stores_once(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    assert await publish(nc, "s.a", b"first", {"Nats-Msg-Id": "m1"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"first", {"Nats-Msg-Id": "m1"}) == dup("S", 1)
    # Only the id counts: other payload, other subject, still a duplicate.
    assert await publish(nc, "s.zzz", b"other", {"Nats-Msg-Id": "m1"}) == dup("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m2"}) == ack("S", 2)
    assert await publish(nc, "s.a", b"x") == ack("S", 3)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m1"}) == dup("S", 1)
    st = await state(nc)
    assert (st["messages"], st["last_seq"], st["num_subjects"]) == (3, 3, 1)
    await nc.close()


async def test_msg_id_key_is_case_sensitive(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    assert await publish(nc, "s.a", b"x", {"nats-msg-id": "a"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"nats-msg-id": "a"}) == ack("S", 2)
    assert await publish(nc, "s.a", b"x", {"NATS-MSG-ID": "a"}) == ack("S", 3)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "a"}) == ack("S", 4)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "a"}) == dup("S", 4)
    # The key is stored exactly as sent.
    assert (await get_msg(nc, "S", 1))["hdrs"] == b"NATS/1.0\r\nnats-msg-id: a\r\n\r\n"
    await nc.close()


async def test_msg_id_header_parsing(target: Target) -> None:
    """Leading spaces of a value are skipped, the first occurrence of a key wins, and a key
    only counts at the start of a line and directly followed by ':'."""
    nc = await connect(target)
    await add_stream(nc)
    raw = await Raw.open(target)
    assert (
        await raw.request("s.a", b"x", b"NATS/1.0\r\nNats-Msg-Id:abc\r\n\r\n")
        == b'MSG R.1 1 22\r\n{"stream":"S","seq":1}\r\n'
    )
    assert await raw.request("s.a", b"x", b"NATS/1.0\r\nNats-Msg-Id:    abc\r\n\r\n") == (
        b'MSG R.1 1 40\r\n{"stream":"S","seq":1,"duplicate": true}\r\n'
    )
    two = b"NATS/1.0\r\nX: 1\r\nNats-Msg-Id: first\r\nNats-Msg-Id: abc\r\n\r\n"
    assert await raw.request("s.a", b"x", two) == b'MSG R.1 1 22\r\n{"stream":"S","seq":2}\r\n'
    assert await raw.request("s.a", b"x", hdr_block("Nats-Msg-Id: first")) == (
        b'MSG R.1 1 40\r\n{"stream":"S","seq":2,"duplicate": true}\r\n'
    )
    assert (
        await raw.request("s.a", b"x", hdr_block("X-Nats-Msg-Id: abc")) == b'MSG R.1 1 22\r\n{"stream":"S","seq":3}\r\n'
    )
    assert (
        await raw.request("s.a", b"x", hdr_block("Nats-Msg-Id : abc")) == b'MSG R.1 1 22\r\n{"stream":"S","seq":4}\r\n'
    )
    await raw.close()
    await nc.close()


async def test_msg_id_dedup_outlives_purge(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m1"}) == ack("S", 1)
    purged = await api(nc, "$JS.API.STREAM.PURGE.S")
    assert (purged["success"], purged["purged"]) == (True, 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m1"}) == dup("S", 1)
    assert (await state(nc))["messages"] == 0
    await nc.close()


async def test_rejected_publish_does_not_record_msg_id(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m2", "Nats-Expected-Last-Sequence": "9"}) == wrong_last_seq(
        "S", 1
    )
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m2"}) == ack("S", 2)
    await nc.close()


async def test_duplicate_window_defaults(target: Target) -> None:
    nc = await connect(target)
    plain = await add_stream(nc)
    assert plain["config"]["duplicate_window"] == 120 * SEC
    aged = await add_stream(nc, "AGED", max_age=SEC)
    assert aged["config"]["duplicate_window"] == SEC
    explicit = await add_stream(nc, "WIN", duplicate_window=SEC)
    assert explicit["config"]["duplicate_window"] == SEC
    await nc.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_duplicate_window_expiry(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, duplicate_window=SEC)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m"}) == dup("S", 1)
    await target.elapse(1.4)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m"}) == ack("S", 2)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m"}) == dup("S", 2)
    await nc.close()


# --------------------------------------------------------------------------- Nats-Expected-*


async def test_expected_stream(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Stream": "S"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Stream": "T"}) == stream_mismatch("S")
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Stream": "s"}) == stream_mismatch("S")
    assert await publish(nc, "s.a", b"x", {"nats-expected-stream": "T"}) == ack("S", 2)
    assert (await state(nc))["messages"] == 2
    await nc.close()


async def test_expected_last_sequence(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Sequence": "1"}) == wrong_last_seq("S", 0)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Sequence": "0"}) == ack("S", 1)
    assert await publish(nc, "s.b", b"x", {"Nats-Expected-Last-Sequence": "1"}) == ack("S", 2)
    assert await publish(nc, "s.b", b"x", {"Nats-Expected-Last-Sequence": "1"}) == wrong_last_seq("S", 2)
    assert await publish(nc, "s.b", b"x", {"Nats-Expected-Last-Sequence": "3"}) == wrong_last_seq("S", 2)
    # An empty value means no expectation.
    assert await publish(nc, "s.b", b"x", {"Nats-Expected-Last-Sequence": ""}) == ack("S", 3)
    await nc.close()


async def test_expected_last_sequence_invalid_values(target: Target) -> None:
    """A value that is not a plain decimal never matches (it is not ignored)."""
    nc = await connect(target)
    await add_stream(nc)
    for _ in range(3):
        await publish(nc, "s.a", b"x")
    for value in ("abc", "-1", "+3", "3.0", "0x3", "3s"):
        assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Sequence": value}) == wrong_last_seq("S", 3), value
    await nc.close()


async def test_expected_last_sequence_counts_removed_messages(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    for _ in range(3):
        await publish(nc, "s.a", b"x")
    await api(nc, "$JS.API.STREAM.PURGE.S")
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Sequence": "0"}) == wrong_last_seq("S", 3)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Sequence": "3"}) == ack("S", 4)
    await nc.close()


async def test_expected_last_msg_id(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Msg-Id": "m1"}) == wrong_last_msg_id("S", "")
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m1"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Msg-Id": "zz"}) == wrong_last_msg_id("S", "m1")
    # A duplicate does not change the last id.
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "m1"}) == dup("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Msg-Id": "m1", "Nats-Msg-Id": "m2"}) == ack("S", 2)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Msg-Id": "m2"}) == ack("S", 3)
    # Message 3 had no id: the last id is now empty.
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Msg-Id": "m2"}) == wrong_last_msg_id("S", "")
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Msg-Id": ""}) == ack("S", 4)
    await nc.close()


async def test_expected_last_subject_sequence(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    key = "Nats-Expected-Last-Subject-Sequence"
    assert await publish(nc, "s.a", b"x", {key: "0"}) == ack("S", 1)
    assert await publish(nc, "s.b", b"x", {key: "0"}) == ack("S", 2)
    assert await publish(nc, "s.a", b"x", {key: "0"}) == wrong_last_seq("S", 1)
    assert await publish(nc, "s.a", b"x", {key: "2"}) == wrong_last_seq("S", 1)
    assert await publish(nc, "s.a", b"x", {key: "1"}) == ack("S", 3)
    assert await publish(nc, "s.c", b"x", {key: "3"}) == wrong_last_seq("S", 0)
    assert await publish(nc, "s.a", b"x", {key: "abc"}) == wrong_last_seq("S", 3)
    assert await publish(nc, "s.a", b"x", {key: ""}) == ack("S", 4)
    await nc.close()


async def test_expected_last_subject_sequence_after_delete(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    key = "Nats-Expected-Last-Subject-Sequence"
    for subject in ("s.a", "s.a", "s.b"):
        await publish(nc, subject, b"x")
    assert (await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 2}))["success"] is True
    assert await publish(nc, "s.a", b"x", {key: "2"}) == wrong_last_seq("S", 1)
    await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
    assert await publish(nc, "s.a", b"x", {key: "0"}) == ack("S", 4)
    await nc.close()


async def test_expected_last_subject_sequence_subject_override(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    seq_key, subj_key = "Nats-Expected-Last-Subject-Sequence", "Nats-Expected-Last-Subject-Sequence-Subject"
    for subject in ("s.a", "s.b", "s.b"):
        await publish(nc, subject, b"x")
    assert await publish(nc, "s.c", b"x", {seq_key: "1", subj_key: "s.a"}) == ack("S", 4)
    assert await publish(nc, "s.c", b"x", {seq_key: "1", subj_key: "s.b"}) == wrong_last_seq("S", 3)
    assert await publish(nc, "s.c", b"x", {seq_key: "3", subj_key: "s.b"}) == ack("S", 5)
    # Wildcards: the last message among all matching subjects.
    assert await publish(nc, "s.x", b"x", {seq_key: "3", subj_key: "s.*"}) == wrong_last_seq("S", 5)
    assert await publish(nc, "s.x", b"x", {seq_key: "5", subj_key: "s.>"}) == ack("S", 6)
    # A subject with no messages has last sequence 0.
    assert await publish(nc, "s.a", b"x", {seq_key: "0", subj_key: "s.none"}) == ack("S", 7)
    assert await publish(nc, "s.a", b"x", {seq_key: "7", subj_key: "s.none"}) == wrong_last_seq("S", 0)
    await nc.close()


async def test_expected_last_subject_sequence_subject_alone(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    reply = await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Subject-Sequence-Subject": "s.a"})
    assert reply == err("S", 400, 10193, "missing sequence for expected last sequence per subject")
    assert (await state(nc))["messages"] == 0
    await nc.close()


async def test_publish_headers_are_stored_verbatim(target: Target) -> None:
    """Nats-Expected-* (and every other client header) stay in the stored message."""
    nc = await connect(target)
    await add_stream(nc)
    headers = {
        "Nats-Expected-Stream": "S",
        "Nats-Expected-Last-Sequence": "0",
        "Nats-Expected-Last-Subject-Sequence": "0",
        "Nats-Expected-Last-Msg-Id": "",
        "Nats-Msg-Id": "id1",
        "X": "y",
    }
    assert await publish(nc, "s.a", b"data", headers) == ack("S", 1)
    stored = await get_msg(nc, "S", 1)
    expected_hdr = hdr_block(
        "Nats-Expected-Stream: S",
        "Nats-Expected-Last-Sequence: 0",
        "Nats-Expected-Last-Subject-Sequence: 0",
        "Nats-Expected-Last-Msg-Id: ",
        "Nats-Msg-Id: id1",
        "X: y",
    )
    assert stored["hdrs"] == expected_hdr
    assert (stored["subject"], stored["seq"], stored["data"]) == ("s.a", 1, b"data")
    assert (await state(nc))["bytes"] == mem_size("s.a", expected_hdr, b"data")
    await nc.close()


async def test_status_line_and_request_info_are_stripped(target: Target) -> None:
    """A status in the header line and a Nats-Request-Info header are removed before storing;
    a header block left empty by that is dropped, while an empty block sent as such is kept."""
    nc = await connect(target)
    await add_stream(nc)
    raw = await Raw.open(target)
    cases = [
        (b"NATS/1.0\r\n\r\n", b"NATS/1.0\r\n\r\n"),
        (b"NATS/1.0 503 Foo\r\nX: y\r\n\r\n", b"NATS/1.0\r\nX: y\r\n\r\n"),
        (b"NATS/1.0 503\r\n\r\n", None),
        (b"NATS/1.0\r\nNats-Request-Info: x\r\n\r\n", None),
        (b"NATS/1.0\r\nA: 1\r\nNats-Request-Info: x\r\nB: 2\r\n\r\n", b"NATS/1.0\r\nA: 1\r\nB: 2\r\n\r\n"),
    ]
    total = 0
    for seq, (sent, kept) in enumerate(cases, start=1):
        assert await raw.request("s.a", b"hello", sent) == b'MSG R.1 1 22\r\n{"stream":"S","seq":%d}\r\n' % seq
        stored = await get_msg(nc, "S", seq)
        assert stored.get("hdrs") == kept
        total += mem_size("s.a", kept or b"", b"hello")
        assert (await state(nc))["bytes"] == total
    await raw.close()
    await nc.close()


# --------------------------------------------------------------------------- Nats-Rollup


async def test_rollup_not_permitted(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    for value in ("sub", "all", "bogus"):
        assert await publish(nc, "s.a", b"x", {"Nats-Rollup": value}) == rollup_failed("S", "rollup not permitted")
    assert (await state(nc))["last_seq"] == 0
    await nc.close()


async def test_rollup_sub_is_case_insensitive(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, allow_rollup_hdrs=True)
    for subject in ("s.a", "s.a", "s.b", "s.b", "s.c"):
        await publish(nc, subject, b"x")
    assert await publish(nc, "s.a", b"y", {"Nats-Rollup": "SuB"}) == ack("S", 6)
    st = await state(nc, subjects_filter=">")
    assert st == {
        "messages": 4,
        "bytes": 3 * mem_size("s.b", b"", b"x") + mem_size("s.a", hdr_block("Nats-Rollup: SuB"), b"y"),
        "first_seq": 3,
        "first_ts": "<ts>",
        "last_seq": 6,
        "last_ts": "<ts>",
        "num_subjects": 3,
        "subjects": {"s.a": 1, "s.b": 2, "s.c": 1},
        "consumer_count": 0,
    }
    await nc.close()


async def test_rollup_all(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, allow_rollup_hdrs=True)
    for subject in ("s.a", "s.b", "s.c"):
        await publish(nc, subject, b"x")
    assert await publish(nc, "s.b", b"", {"Nats-Rollup": "ALL"}) == ack("S", 4)
    st = await state(nc, subjects_filter=">")
    assert st == {
        "messages": 1,
        "bytes": mem_size("s.b", hdr_block("Nats-Rollup: ALL"), b""),
        "first_seq": 4,
        "first_ts": "<ts>",
        "last_seq": 4,
        "last_ts": "<ts>",
        "num_subjects": 1,
        "subjects": {"s.b": 1},
        "consumer_count": 0,
    }
    await nc.close()


async def test_rollup_invalid_and_empty_values(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, allow_rollup_hdrs=True)
    assert await publish(nc, "s.a", b"x", {"Nats-Rollup": "bogus"}) == rollup_failed(
        "S", 'rollup value invalid: \\"bogus\\"'
    )
    # The value is lower-cased before it is quoted in the error.
    assert await publish(nc, "s.a", b"x", {"Nats-Rollup": "Subject"}) == rollup_failed(
        "S", 'rollup value invalid: \\"subject\\"'
    )
    assert await publish(nc, "s.a", b"x", {"Nats-Rollup": ""}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"nats-rollup": "all"}) == ack("S", 2)
    assert (await state(nc))["messages"] == 2
    await nc.close()


async def test_rollup_needs_purge_permission(target: Target) -> None:
    nc = await connect(target)
    reply = await api(
        nc,
        "$JS.API.STREAM.CREATE.S",
        {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_rollup_hdrs": True, "deny_purge": True},
    )
    assert reply["error"] == {"code": 500, "err_code": 10052, "description": "roll-ups require the purge permission"}
    await nc.close()


# --------------------------------------------------------------------------- Nats-TTL


async def test_ttl_rejected_when_disabled(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    for value in ("5s", "never", "NEVER", "10", "1h"):
        assert await publish(nc, "s.a", b"x", {"Nats-TTL": value}) == ttl_disabled("S"), value
    # The key is case-sensitive, and an empty value means no TTL.
    assert await publish(nc, "s.a", b"x", {"nats-ttl": "5s"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": ""}) == ack("S", 2)
    await nc.close()


@pytest.mark.parametrize("allow", [False, True], ids=["ttl_off", "ttl_on"])
async def test_ttl_invalid_values(target: Target, allow: bool) -> None:
    """Invalid TTLs (under 1s, zero, negative, unparsable) answer 10165 whether or not TTLs are enabled."""
    nc = await connect(target)
    await add_stream(nc, allow_msg_ttl=allow)
    for value in ("abc", "500ms", "999ms", "0", "0s", "-1", "-5s", "1x"):
        assert await publish(nc, "s.a", b"x", {"Nats-TTL": value}) == ttl_invalid("S"), value
    assert (await state(nc))["last_seq"] == 0
    await nc.close()


async def test_ttl_valid_forms_stored_verbatim(target: Target) -> None:
    nc = await connect(target)
    created = await add_stream(nc, allow_msg_ttl=True)
    assert created["config"]["allow_msg_ttl"] is True
    values = ["5s", "1m", "10", "1", "never", "NEVER", "1.5s", "1h30m", "1000ms"]
    for seq, value in enumerate(values, start=1):
        assert await publish(nc, "s.a", b"x", {"Nats-TTL": value}) == ack("S", seq)
        assert (await get_msg(nc, "S", seq))["hdrs"] == hdr_block(f"Nats-TTL: {value}")
    await nc.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_ttl_expiry(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, allow_msg_ttl=True)
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": "1s"}) == ack("S", 1)
    assert await publish(nc, "s.b", b"x") == ack("S", 2)
    assert (await state(nc))["messages"] == 2
    st = await wait_for(lambda: _state_with(nc, 1), timeout=4, target=target)
    assert (st["first_seq"], st["last_seq"], st.get("num_deleted")) == (2, 2, None)
    await nc.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_ttl_never_outlives_max_age(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, allow_msg_ttl=True, max_age=SEC)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.b", b"x", {"Nats-TTL": "never"}) == ack("S", 2)
    st = await wait_for(lambda: _state_with(nc, 1), timeout=4, target=target)
    assert (st["first_seq"], st["last_seq"]) == (2, 2)
    await target.elapse(0.5)
    assert (await state(nc))["messages"] == 1
    await nc.close()


async def test_subject_delete_marker_config_enables_ttl_and_rollup(target: Target) -> None:
    nc = await connect(target)
    created = await add_stream(nc, max_age=60 * SEC, subject_delete_marker_ttl=5 * SEC)
    config = created["config"]
    assert (config["allow_msg_ttl"], config["allow_rollup_hdrs"], config["subject_delete_marker_ttl"]) == (
        True,
        True,
        5 * SEC,
    )
    assert config["duplicate_window"] == 60 * SEC
    too_short = await api(
        nc,
        "$JS.API.STREAM.CREATE.T",
        {"name": "T", "subjects": ["t.>"], "storage": "memory", "subject_delete_marker_ttl": SEC // 2},
    )
    assert too_short["error"] == {
        "code": 500,
        "err_code": 10052,
        "description": "subject delete marker TTL must be at least 1 second",
    }
    await nc.close()


async def test_ttl_below_marker_ttl_is_raised(target: Target) -> None:
    """With subject delete markers, a shorter Nats-TTL is replaced by the marker TTL in whole
    seconds, moved to the end of the headers; not so when max_msgs_per_subject is 1."""
    nc = await connect(target)
    await add_stream(nc, max_age=60 * SEC, subject_delete_marker_ttl=5 * SEC)
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": "1s", "A": "b"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": "10s"}) == ack("S", 2)
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": "never"}) == ack("S", 3)
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": "4"}) == ack("S", 4)
    assert (await get_msg(nc, "S", 1))["hdrs"] == b"NATS/1.0\r\nA: b\r\nNats-TTL: 5\r\n\r\n"
    assert (await get_msg(nc, "S", 2))["hdrs"] == b"NATS/1.0\r\nNats-TTL: 10s\r\n\r\n"
    assert (await get_msg(nc, "S", 3))["hdrs"] == b"NATS/1.0\r\nNats-TTL: never\r\n\r\n"
    assert (await get_msg(nc, "S", 4))["hdrs"] == b"NATS/1.0\r\nNats-TTL: 5\r\n\r\n"
    await add_stream(nc, "ONE", max_age=60 * SEC, subject_delete_marker_ttl=5 * SEC, max_msgs_per_subject=1)
    assert await publish(nc, "one.a", b"x", {"Nats-TTL": "1s"}) == ack("ONE", 1)
    assert (await get_msg(nc, "ONE", 1))["hdrs"] == b"NATS/1.0\r\nNats-TTL: 1s\r\n\r\n"
    await nc.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_subject_delete_marker_on_max_age(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_age=SEC, subject_delete_marker_ttl=90 * SEC)
    for subject in ("s.a", "s.a", "s.b"):
        await publish(nc, subject, b"payload")
    st = await wait_for(lambda: _state_with_last(nc, 5), timeout=4, target=target)
    marker_hdr = b"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1m30s\r\nNats-Rollup: sub\r\n\r\n"
    assert st == {
        "messages": 2,
        "bytes": 2 * mem_size("s.a", marker_hdr, b""),
        "first_seq": 4,
        "first_ts": "<ts>",
        "last_seq": 5,
        "last_ts": "<ts>",
        "num_subjects": 2,
        "consumer_count": 0,
    }
    markers = [await get_msg(nc, "S", 4), await get_msg(nc, "S", 5)]
    assert sorted(m["subject"] for m in markers) == ["s.a", "s.b"]
    for marker in markers:
        assert marker["hdrs"] == marker_hdr
        assert "data" not in marker
    await nc.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_subject_delete_marker_expires(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_age=SEC, subject_delete_marker_ttl=SEC)
    await publish(nc, "s.a", b"payload")
    await publish(nc, "s.b", b"keep", {"Nats-TTL": "never"})
    st = await wait_for(lambda: _state_with_last(nc, 3), timeout=4, target=target)
    marker_hdr = b"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1s\r\nNats-Rollup: sub\r\n\r\n"
    assert (await get_msg(nc, "S", 3))["hdrs"] == marker_hdr
    assert (st["messages"], st["first_seq"]) == (2, 2)
    assert st["bytes"] == mem_size("s.a", marker_hdr, b"") + mem_size("s.b", hdr_block("Nats-TTL: never"), b"keep")
    # The marker goes away after its own TTL and leaves no marker behind.
    st = await wait_for(lambda: _state_with(nc, 1), timeout=4, target=target)
    assert st == {
        "messages": 1,
        "bytes": mem_size("s.b", hdr_block("Nats-TTL: never"), b"keep"),
        "first_seq": 2,
        "first_ts": "<ts>",
        "last_seq": 3,
        "last_ts": "<ts>",
        "num_subjects": 1,
        "num_deleted": 1,
        "consumer_count": 0,
    }
    await nc.close()


# --------------------------------------------------------------------------- sizes


async def test_header_size_limit(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    raw = await Raw.open(target)

    def header_of(total: int) -> bytes:
        block = b"NATS/1.0\r\nX: " + b"v" * (total - 17) + b"\r\n\r\n"
        assert len(block) == total
        return block

    assert await raw.request("s.a", b"p", header_of(65535)) == b'MSG R.1 1 22\r\n{"stream":"S","seq":1}\r\n'
    body = header_too_big("S")
    assert await raw.request("s.a", b"p", header_of(65536)) == b"MSG R.1 1 %d\r\n%s\r\n" % (len(body), body)
    await raw.close()
    assert (await state(nc))["messages"] == 1
    await nc.close()


async def test_max_msg_size_counts_header_and_payload(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_msg_size=20)
    raw = await Raw.open(target)
    hdr = hdr_block("A: b")
    assert len(hdr) == 18
    assert await raw.request("s.a", b"x" * 20) == b'MSG R.1 1 22\r\n{"stream":"S","seq":1}\r\n'
    body = too_big("S")
    assert await raw.request("s.a", b"x" * 21) == b"MSG R.1 1 %d\r\n%s\r\n" % (len(body), body)
    assert await raw.request("s.a", b"xy", hdr) == b'MSG R.1 1 22\r\n{"stream":"S","seq":2}\r\n'
    assert await raw.request("s.a", b"xyz", hdr) == b"MSG R.1 1 %d\r\n%s\r\n" % (len(body), body)
    await raw.close()
    await nc.close()


# --------------------------------------------------------------------------- limits


async def test_max_msgs_discard_old(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_msgs=2)
    for seq in (1, 2, 3):
        assert await publish(nc, "s.a", b"x") == ack("S", seq)
    st = await state(nc)
    assert (st["messages"], st["first_seq"], st["last_seq"], st.get("num_deleted")) == (2, 2, 3, None)
    await nc.close()


async def test_max_msgs_discard_new(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_msgs=2, discard="new")
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.b", b"x") == ack("S", 2)
    assert await publish(nc, "s.c", b"x") == store_failed("S", "maximum messages exceeded")
    # A rejected message does not use up a sequence number.
    await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
    assert await publish(nc, "s.c", b"x") == ack("S", 3)
    await nc.close()


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_max_bytes_discard_new(target: Target, storage: str) -> None:
    nc = await connect(target)
    size = (mem_size if storage == "memory" else file_size)("s.a", b"", b"12345")
    await add_stream(nc, storage=storage, max_bytes=2 * size, discard="new")
    assert await publish(nc, "s.a", b"12345") == ack("S", 1)
    assert await publish(nc, "s.a", b"123456") == store_failed("S", "maximum bytes exceeded")
    assert await publish(nc, "s.a", b"12345") == ack("S", 2)
    assert await publish(nc, "s.a", b"") == store_failed("S", "maximum bytes exceeded")
    assert (await state(nc))["bytes"] == 2 * size
    await nc.close()


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_max_bytes_discard_old(target: Target, storage: str) -> None:
    nc = await connect(target)
    size = (mem_size if storage == "memory" else file_size)("s.a", b"", b"12345")
    await add_stream(nc, storage=storage, max_bytes=2 * size + size // 2)
    for seq in (1, 2, 3):
        assert await publish(nc, "s.a", b"12345") == ack("S", seq)
    st = await state(nc)
    assert (st["messages"], st["bytes"], st["first_seq"], st["last_seq"]) == (2, 2 * size, 2, 3)
    await nc.close()


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_message_larger_than_max_bytes_evicts_everything(target: Target, storage: str) -> None:
    """With discard old, a message bigger than max_bytes is acked, then evicted with the rest."""
    nc = await connect(target)
    await add_stream(nc, storage=storage, max_bytes=100)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.a", b"x" * 200) == ack("S", 2)
    assert await state(nc) == {
        "messages": 0,
        "bytes": 0,
        "first_seq": 3,
        "first_ts": ZERO_TIME,
        "last_seq": 2,
        "last_ts": "<ts>",
        "consumer_count": 0,
    }
    await nc.close()


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_max_msgs_per_subject_discard_old(target: Target, storage: str) -> None:
    nc = await connect(target)
    await add_stream(nc, storage=storage, max_msgs_per_subject=2)
    for subject in ("s.a", "s.b", "s.a", "s.a", "s.b", "s.b"):
        await publish(nc, subject, b"x")
    st = await state(nc, subjects_filter=">", deleted_details=True)
    assert st == {
        "messages": 4,
        "bytes": 4 * (mem_size if storage == "memory" else file_size)("s.a", b"", b"x"),
        "first_seq": 3,
        "first_ts": "<ts>",
        "last_seq": 6,
        "last_ts": "<ts>",
        "num_subjects": 2,
        "subjects": {"s.a": 2, "s.b": 2},
        "consumer_count": 0,
    }
    # Replacing the oldest s.b (seq 5) leaves a gap inside the stream.
    assert await publish(nc, "s.b", b"x") == ack("S", 7)
    st = await state(nc, deleted_details=True)
    assert (st["messages"], st["first_seq"], st["last_seq"], st["num_deleted"], st["deleted"]) == (4, 3, 7, 1, [5])
    await nc.close()


async def test_max_msgs_per_subject_with_discard_new_still_replaces(target: Target) -> None:
    """discard new without discard_new_per_subject: the per-subject limit drops the oldest."""
    nc = await connect(target)
    await add_stream(nc, max_msgs_per_subject=1, discard="new")
    for seq, subject in enumerate(("s.a", "s.a", "s.b"), start=1):
        assert await publish(nc, subject, b"x") == ack("S", seq)
    st = await state(nc)
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (2, 2, 3)
    await nc.close()


async def test_discard_new_per_subject(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_msgs_per_subject=1, max_msgs=1, discard="new", discard_new_per_subject=True)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    # The per-subject limit is checked before max_msgs.
    assert await publish(nc, "s.a", b"x") == store_failed("S", "maximum messages per subject exceeded")
    assert await publish(nc, "s.b", b"x") == store_failed("S", "maximum messages exceeded")
    await nc.close()


async def test_discard_new_per_subject_config_requirements(target: Target) -> None:
    nc = await connect(target)
    base = {"name": "S", "subjects": ["s.>"], "storage": "memory", "discard_new_per_subject": True}
    reply = await api(nc, "$JS.API.STREAM.CREATE.S", {**base, "max_msgs_per_subject": 1})
    assert reply["error"] == {
        "code": 500,
        "err_code": 10052,
        "description": "discard new per subject requires discard new policy to be set",
    }
    reply = await api(nc, "$JS.API.STREAM.CREATE.S", {**base, "discard": "new"})
    assert reply["error"] == {
        "code": 500,
        "err_code": 10052,
        "description": "discard new per subject requires max msgs per subject > 0",
    }
    await nc.close()


async def test_discard_new_per_subject_lets_rollup_through(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_msgs_per_subject=1, discard="new", discard_new_per_subject=True, allow_rollup_hdrs=True)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.a", b"x") == store_failed("S", "maximum messages per subject exceeded")
    assert await publish(nc, "s.a", b"x", {"Nats-Rollup": "sub"}) == ack("S", 2)
    st = await state(nc)
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (1, 2, 2)
    await nc.close()


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_discard_new_max_msgs_allows_replacing_a_full_subject(target: Target, storage: str) -> None:
    """At max_msgs with discard new, a message for a subject already at max_msgs_per_subject is
    accepted (it replaces that subject's oldest)."""
    nc = await connect(target)
    await add_stream(nc, storage=storage, max_msgs=2, max_msgs_per_subject=1, discard="new")
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.b", b"x") == ack("S", 2)
    assert await publish(nc, "s.c", b"x") == store_failed("S", "maximum messages exceeded")
    assert await publish(nc, "s.a", b"x") == ack("S", 3)
    st = await state(nc, deleted_details=True)
    assert (st["messages"], st["first_seq"], st["last_seq"], st.get("num_deleted")) == (2, 2, 3, None)
    await nc.close()


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_discard_new_max_bytes_replacement_must_fit(target: Target, storage: str) -> None:
    """At max_bytes with discard new, a message for a subject at its per-subject limit is
    accepted only if it is no bigger than the message it replaces."""
    nc = await connect(target)
    size = mem_size if storage == "memory" else file_size
    one = size("s.a", b"", b"12345")
    await add_stream(nc, storage=storage, max_bytes=2 * one + 5, max_msgs_per_subject=1, discard="new")
    assert await publish(nc, "s.a", b"12345") == ack("S", 1)
    assert await publish(nc, "s.b", b"12345") == ack("S", 2)
    assert await publish(nc, "s.a", b"12345") == ack("S", 3)
    assert await publish(nc, "s.a", b"123456") == store_failed("S", "maximum bytes exceeded")
    assert await publish(nc, "s.a", b"1234") == ack("S", 4)
    assert await publish(nc, "s.c", b"") == store_failed("S", "maximum bytes exceeded")
    st = await state(nc, deleted_details=True)
    assert st == {
        "messages": 2,
        "bytes": one + size("s.a", b"", b"1234"),
        "first_seq": 2,
        "first_ts": "<ts>",
        "last_seq": 4,
        "last_ts": "<ts>",
        "num_subjects": 2,
        "num_deleted": 1,
        "deleted": [3],
        "consumer_count": 0,
    }
    await nc.close()


@pytest.mark.slow
@pytest.mark.manual_clock
@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_max_age(target: Target, storage: str) -> None:
    nc = await connect(target)
    await add_stream(nc, storage=storage, max_age=SEC)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.b", b"x") == ack("S", 2)
    assert (await state(nc))["messages"] == 2
    st = await wait_for(lambda: _state_with(nc, 0), timeout=4, target=target)
    assert st == {
        "messages": 0,
        "bytes": 0,
        "first_seq": 3,
        "first_ts": ZERO_TIME,
        "last_seq": 2,
        "last_ts": "<ts>",
        "consumer_count": 0,
    }
    assert await publish(nc, "s.a", b"x") == ack("S", 3)
    await nc.close()


# --------------------------------------------------------------------------- order of checks

# Each case: stream config, messages published first, headers of the probe (published to
# s.a with payload "x"), and the expected answer.  Every probe violates two rules at once.
_BIG = {"Big": "x" * 300}
_ORDER_CASES = {
    "max_msg_size_before_duplicate": ({"max_msg_size": 200}, ["m1"], {**_BIG, "Nats-Msg-Id": "m1"}, too_big("S")),
    "max_msg_size_before_header_size": ({"max_msg_size": 100}, [], {"Big": "x" * 66000}, too_big("S")),
    "header_size_before_expected_stream": (
        {},
        [],
        {"Big": "x" * 66000, "Nats-Expected-Stream": "T"},
        header_too_big("S"),
    ),
    "expected_stream_before_ttl_disabled": (
        {},
        [],
        {"Nats-Expected-Stream": "T", "Nats-TTL": "5s"},
        stream_mismatch("S"),
    ),
    "ttl_disabled_before_expected_last_subject_seq": (
        {},
        [],
        {"Nats-TTL": "5s", "Nats-Expected-Last-Subject-Sequence": "9"},
        ttl_disabled("S"),
    ),
    "expected_last_subject_seq_before_expected_last_seq": (
        {},
        ["m1", "-s.b"],
        {"Nats-Expected-Last-Subject-Sequence": "9", "Nats-Expected-Last-Sequence": "9"},
        wrong_last_seq("S", 1),
    ),
    "missing_subject_seq_before_expected_last_seq": (
        {},
        ["m1"],
        {"Nats-Expected-Last-Subject-Sequence-Subject": "s.a", "Nats-Expected-Last-Sequence": "9"},
        err("S", 400, 10193, "missing sequence for expected last sequence per subject"),
    ),
    "expected_last_seq_before_duplicate": (
        {},
        ["m1"],
        {"Nats-Expected-Last-Sequence": "9", "Nats-Msg-Id": "m1"},
        wrong_last_seq("S", 1),
    ),
    "duplicate_before_expected_last_msg_id": (
        {},
        ["m1"],
        {"Nats-Msg-Id": "m1", "Nats-Expected-Last-Msg-Id": "zz"},
        dup("S", 1),
    ),
    "expected_last_msg_id_before_rollup": (
        {},
        ["m1"],
        {"Nats-Expected-Last-Msg-Id": "zz", "Nats-Rollup": "sub"},
        wrong_last_msg_id("S", "m1"),
    ),
    "rollup_not_permitted_before_invalid_ttl": (
        {},
        [],
        {"Nats-Rollup": "sub", "Nats-TTL": "bad"},
        rollup_failed("S", "rollup not permitted"),
    ),
    "rollup_invalid_before_invalid_ttl": (
        {"allow_rollup_hdrs": True, "allow_msg_ttl": True},
        [],
        {"Nats-Rollup": "bad", "Nats-TTL": "bad"},
        rollup_failed("S", 'rollup value invalid: \\"bad\\"'),
    ),
    "invalid_ttl_before_discard_new": (
        {"max_msgs": 1, "discard": "new"},
        ["m1"],
        {"Nats-TTL": "bad"},
        ttl_invalid("S"),
    ),
}


@pytest.mark.parametrize("case", list(_ORDER_CASES))
async def test_check_order(target: Target, case: str) -> None:
    config, before, headers, expected = _ORDER_CASES[case]
    nc = await connect(target)
    await add_stream(nc, **config)
    for item in before:
        # "m1": s.a with Nats-Msg-Id m1; "-s.b": a plain message on s.b.
        if item.startswith("-"):
            await publish(nc, item[1:], b"x")
        else:
            await publish(nc, "s.a", b"x", {"Nats-Msg-Id": item})
    assert await publish(nc, "s.a", b"x", headers) == expected
    assert (await state(nc))["last_seq"] == len(before)
    await nc.close()


async def test_sealed_stream(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_msg_size=200)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    config = (await info(nc))["config"]
    config["sealed"] = True
    updated = await api(nc, "$JS.API.STREAM.UPDATE.S", config)
    assert "error" not in updated, updated
    assert (updated["config"]["sealed"], updated["config"]["deny_delete"], updated["config"]["deny_purge"]) == (
        True,
        True,
        True,
    )
    assert await publish(nc, "s.a", b"x") == sealed("S")
    # Sealed is checked first of all.
    assert await publish(nc, "s.a", b"x", _BIG) == sealed("S")
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Stream": "T"}) == sealed("S")
    deleted = await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
    assert deleted == {
        "type": "io.nats.jetstream.api.v1.stream_msg_delete_response",
        "error": {"code": 400, "err_code": 10109, "description": "invalid operation on sealed stream"},
    }
    purged = await api(nc, "$JS.API.STREAM.PURGE.S")
    assert purged == {
        "type": "io.nats.jetstream.api.v1.stream_purge_response",
        "error": {"code": 400, "err_code": 10109, "description": "invalid operation on sealed stream"},
        "purged": 0,
    }
    assert (await state(nc))["messages"] == 1
    await nc.close()


async def test_deny_delete_and_deny_purge(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, deny_delete=True, deny_purge=True)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    for request in ({"seq": 1}, {"seq": 1, "no_erase": True}):
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.S", request) == {
            "type": "io.nats.jetstream.api.v1.stream_msg_delete_response",
            "error": {"code": 500, "err_code": 10057, "description": "message delete not permitted"},
        }
    for request in (None, {"filter": "s.a"}):
        assert await api(nc, "$JS.API.STREAM.PURGE.S", request) == {
            "type": "io.nats.jetstream.api.v1.stream_purge_response",
            "error": {"code": 500, "err_code": 10110, "description": "stream purge not permitted"},
            "purged": 0,
        }
    assert (await state(nc))["messages"] == 1
    await nc.close()


# --------------------------------------------------------------------------- retention


async def test_interest_without_consumers_stores_nothing(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, retention="interest")
    for seq in (1, 2, 3):
        assert await publish(nc, "s.a", b"hello") == ack("S", seq)
    assert await state(nc, deleted_details=True) == {
        "messages": 0,
        "bytes": 0,
        "first_seq": 4,
        "first_ts": ZERO_TIME,
        "last_seq": 3,
        "last_ts": "<ts>",
        "consumer_count": 0,
    }
    await nc.close()


async def test_interest_without_consumers_checks(target: Target) -> None:
    """Checks before the interest decision still apply; invalid TTLs and store limits do not."""
    nc = await connect(target)
    await add_stream(nc, retention="interest", max_msgs=1, discard="new")
    assert await publish(nc, "s.a", b"x", {"Nats-Rollup": "all"}) == rollup_failed("S", "rollup not permitted")
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": "5s"}) == ttl_disabled("S")
    assert await publish(nc, "s.a", b"x", {"Nats-TTL": "bad"}) == ack("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Sequence": "0"}) == wrong_last_seq("S", 1)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Sequence": "1"}) == ack("S", 2)
    # Nothing is stored, so a subject's last sequence stays 0.
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Subject-Sequence": "0"}) == ack("S", 3)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "a"}) == ack("S", 4)
    assert await publish(nc, "s.a", b"x", {"Nats-Msg-Id": "a"}) == dup("S", 4)
    assert await publish(nc, "s.a", b"x", {"Nats-Expected-Last-Msg-Id": "a"}) == ack("S", 5)
    assert await publish(nc, "s.a", b"x") == ack("S", 6)
    st = await state(nc)
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (0, 7, 6)
    await nc.close()


async def test_interest_with_filtered_consumer(target: Target) -> None:
    """Messages nobody is interested in use a sequence; after the first stored message the
    skipped sequences count as deleted."""
    nc = await connect(target)
    await add_stream(nc, retention="interest")
    created = await api(
        nc,
        "$JS.API.CONSUMER.CREATE.S.C1",
        {"stream_name": "S", "config": {"durable_name": "C1", "filter_subject": "s.a", "ack_policy": "explicit"}},
    )
    assert "error" not in created, created
    for seq, subject in enumerate(("s.b", "s.a", "s.b", "s.a", "s.b"), start=1):
        assert await publish(nc, subject, b"x") == ack("S", seq)
    assert await state(nc, deleted_details=True) == {
        "messages": 2,
        "bytes": 2 * mem_size("s.a", b"", b"x"),
        "first_seq": 2,
        "first_ts": "<ts>",
        "last_seq": 5,
        "last_ts": "<ts>",
        "num_subjects": 1,
        "num_deleted": 2,
        "deleted": [3, 5],
        "consumer_count": 1,
    }
    await nc.close()


async def test_workqueue_without_consumers_keeps_messages(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, retention="workqueue", max_msgs=2, discard="new")
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    assert await publish(nc, "s.b", b"x") == ack("S", 2)
    assert await publish(nc, "s.c", b"x") == store_failed("S", "maximum messages exceeded")
    size = mem_size
    assert await state(nc) == {
        "messages": 2,
        "bytes": 2 * size("s.a", b"", b"x"),
        "first_seq": 1,
        "first_ts": "<ts>",
        "last_seq": 2,
        "last_ts": "<ts>",
        "num_subjects": 2,
        "consumer_count": 0,
    }
    await nc.close()


# --------------------------------------------------------------------------- state accounting


async def test_empty_stream_state(target: Target) -> None:
    nc = await connect(target)
    created = await add_stream(nc)
    expected = {
        "messages": 0,
        "bytes": 0,
        "first_seq": 0,
        "first_ts": ZERO_TIME,
        "last_seq": 0,
        "last_ts": ZERO_TIME,
        "consumer_count": 0,
    }
    assert created["state"] == expected
    assert await state(nc, deleted_details=True, subjects_filter=">") == expected
    await nc.close()


_SIZE_CASES = [
    ("s.a", None, b""),
    ("s.a", None, b"hello"),
    ("s.abcdefghij.klmnop", None, b"x" * 100),
    ("s.a", b"NATS/1.0\r\n\r\n", b"hello"),
    ("s.a", b"NATS/1.0\r\nA: b\r\n\r\n", b""),
    ("s.b", b"NATS/1.0\r\nNats-Msg-Id: xyz\r\n\r\n", b"hi"),
    ("s.c", b"NATS/1.0\r\nNats-Expected-Stream: S\r\nK: v\r\n\r\n", b"hi"),
    ("s.d.e", b"NATS/1.0\r\nX-Long: " + b"v" * 500 + b"\r\n\r\n", b"p" * 1000),
]


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_bytes_accounting(target: Target, storage: str) -> None:
    nc = await connect(target)
    await add_stream(nc, storage=storage)
    raw = await Raw.open(target)
    size = mem_size if storage == "memory" else file_size
    total = 0
    for seq, (subject, hdr, payload) in enumerate(_SIZE_CASES, start=1):
        assert await raw.request(subject, payload, hdr) == b'MSG R.1 1 22\r\n{"stream":"S","seq":%d}\r\n' % seq
        total += size(subject, hdr or b"", payload)
        assert (await state(nc))["bytes"] == total, (subject, hdr, payload)
    await raw.close()
    await nc.close()


async def test_bytes_examples(target: Target) -> None:
    """Literal numbers behind the formulas (memory 16 bytes, file 30/34 bytes of overhead)."""
    nc = await connect(target)
    await add_stream(nc, "M", storage="memory")
    await add_stream(nc, "F", storage="file")
    for name, no_hdr, with_hdr in (("M", 24, 52), ("F", 38, 70)):
        await publish(nc, f"{name.lower()}.a", b"hello")
        assert (await state(nc, name))["bytes"] == no_hdr
        await publish(nc, f"{name.lower()}.a", b"hello", {"Nats-Msg-Id": "1"})  # 28-byte header block
        assert (await state(nc, name))["bytes"] == no_hdr + with_hdr
    await nc.close()


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_state_after_deletes_and_purge(target: Target, storage: str) -> None:
    nc = await connect(target)
    await add_stream(nc, storage=storage)
    size = (mem_size if storage == "memory" else file_size)("s.a", b"", b"12345")
    for subject in ("s.a", "s.b", "s.a", "s.c", "s.a", "s.b"):
        await publish(nc, subject, b"12345")
    assert (await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 2}))["success"] is True
    assert (await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 4, "no_erase": True}))["success"] is True
    missing = await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 4})
    assert missing["error"] == {"code": 400, "err_code": 10043, "description": "sequence 4 not found"}
    assert await state(nc) == {
        "messages": 4,
        "bytes": 4 * size,
        "first_seq": 1,
        "first_ts": "<ts>",
        "last_seq": 6,
        "last_ts": "<ts>",
        "num_subjects": 2,
        "num_deleted": 2,
        "consumer_count": 0,
    }
    detailed = await state(nc, deleted_details=True, subjects_filter=">")
    assert (detailed["deleted"], detailed["subjects"]) == ([2, 4], {"s.a": 3, "s.b": 1})
    assert (await state(nc, subjects_filter="s.a"))["subjects"] == {"s.a": 3}
    # Deleting the first message moves first_seq past it.
    await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
    st = await state(nc, deleted_details=True)
    assert (st["messages"], st["first_seq"], st["num_deleted"], st["deleted"]) == (3, 3, 1, [4])
    purged = await api(nc, "$JS.API.STREAM.PURGE.S")
    assert (purged["success"], purged["purged"]) == (True, 3)
    assert await state(nc, deleted_details=True) == {
        "messages": 0,
        "bytes": 0,
        "first_seq": 7,
        "first_ts": ZERO_TIME,
        "last_seq": 6,
        "last_ts": "<ts>",
        "consumer_count": 0,
    }
    assert await publish(nc, "s.a", b"12345") == ack("S", 7)
    assert await state(nc) == {
        "messages": 1,
        "bytes": size,
        "first_seq": 7,
        "first_ts": "<ts>",
        "last_seq": 7,
        "last_ts": "<ts>",
        "num_subjects": 1,
        "consumer_count": 0,
    }
    await nc.close()


async def test_state_timestamps_follow_messages(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    await publish(nc, "s.a", b"1")
    await asyncio.sleep(0.01)
    await publish(nc, "s.a", b"2")
    raw = (await info(nc))["state"]
    first, second = await get_msg(nc, "S", 1), await get_msg(nc, "S", 2)
    assert (raw["first_ts"], raw["last_ts"]) == (first["time"], second["time"])
    assert raw["first_ts"] != raw["last_ts"]
    await nc.close()


async def test_state_consumer_count(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc)
    for name, policy in (("C1", "explicit"), ("C2", "none")):
        created = await api(
            nc,
            f"$JS.API.CONSUMER.CREATE.S.{name}",
            {"stream_name": "S", "config": {"durable_name": name, "ack_policy": policy}},
        )
        assert "error" not in created, created
    await publish(nc, "s.a", b"x")
    st = await state(nc)
    assert (st["messages"], st["consumer_count"]) == (1, 2)
    await nc.close()


async def test_rejected_publishes_leave_state_untouched(target: Target) -> None:
    nc = await connect(target)
    await add_stream(nc, max_msg_size=50)
    assert await publish(nc, "s.a", b"x") == ack("S", 1)
    before = await state(nc)
    rejected = [
        {"Nats-Expected-Stream": "T"},
        {"Nats-Expected-Last-Sequence": "5"},
        {"Nats-TTL": "5s"},
        {"Nats-Rollup": "all"},
        {"Big": "x" * 100},
    ]
    for headers in rejected:
        assert b'"error"' in await publish(nc, "s.a", b"x", headers)
    assert await state(nc) == before
    assert await publish(nc, "s.a", b"x") == ack("S", 2)
    await nc.close()
