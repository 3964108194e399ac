"""Acknowledgements, redelivery and consumer state numbers, as nats-server 2.15.1 does them.

Every expectation here was read off the real 2.15.1 binary (non-clustered, R1, file storage).
Pulls are raw ``$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`` requests; acks are messages
to the ``$JS.ACK...`` reply subject of a delivered message, sent with a reply subject
("double ack") whenever the test needs to know the server has processed them.

Facts pinned down here (see each test for the exact numbers):

* Ack subject (v1): ``$JS.ACK.<stream>.<consumer>.<deliveries>.<stream seq>.<consumer seq>.
  <message timestamp, unix ns>.<num pending after this delivery>``.  A redelivery gets a
  new consumer seq and deliveries+1; the timestamp token is the stored message's time.
* Payloads: exactly ``""``, ``+ACK`` or ``+OK`` ack; prefix ``-NAK`` naks (optional delay:
  ``{"delay": ns}`` JSON or a Go duration; an unparsable delay is a plain NAK); exactly
  ``+WPI`` is progress; prefix ``+NXT`` is ack + pull request to the ack's reply subject;
  prefix ``+TERM`` terminates (reason = the rest, whitespace-trimmed).  Anything else
  (``+ACK `` with a space, ``+ack``...) is ignored.
* Double ack: an ack with a reply subject is answered with an empty message
  (``MSG <reply> <sid> 0``), for every payload except ``+NXT`` -- also for ignored payloads,
  re-acks and naks of acked messages; not for an ack naming a stream sequence the consumer
  has not delivered yet (no answer at all).  An ``ack_policy: none`` consumer has no ack
  subscription: acks get no responders.
* Consumer info numbers come from the consumer store: ``delivered`` is the highest consumer
  and stream sequence delivered; ``ack_floor`` moves only when the lowest pending message
  is acked (then to just below the next pending message's *original* consumer sequence),
  and jumps to ``delivered`` when nothing is pending.  ``last_active`` keys appear once
  something was delivered / acked.  ``num_redelivered`` counts messages (not deliveries)
  currently unacked that were delivered more than once.
* Redelivery: ack_wait (or backoff[n-1] for the n-th delivery, last value repeating) after
  a delivery the message joins the redelivery queue (FIFO, also fed by NAKs), which is
  served before new messages and even past max_ack_pending.  max_deliver is enforced when
  the queue is served (advisory ``deliveries`` = max_deliver), except max_deliver 1, which
  is enforced at expiry; either way the message leaves ack-pending without moving the floor.
* Retention: work-queue and interest streams remove a message when the (every interested)
  consumer acks or terminates it; an interest stream with no consumers stores nothing.
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

from tests.harness.js import (
    MS,
    SEC,
    ZERO_TIME,
    Pull,
    add_stream,
    api,
    arrival,
    connected,
    is_status,
    normalize,
    publish,
    silent,
)
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT, poll

TS = "<ts>"
ADV = "io.nats.jetstream.advisory.v1."


# --------------------------------------------------------------------------- helpers


async def create_consumer(nc: Client, stream: str, name: str, **cfg: Any) -> dict:
    """Create a durable pull consumer (``ack_policy`` explicit unless given; a config without
    one means ``none``); returns the whole reply (error or not)."""
    cfg.setdefault("ack_policy", "explicit")
    cfg = {key: value for key, value in cfg.items() if value is not None}
    body = {"stream_name": stream, "config": {"durable_name": name, **cfg}}
    return await api(nc, f"$JS.API.CONSUMER.CREATE.{stream}.{name}", body)


async def make_consumer(nc: Client, stream: str = "S", name: str = "C", **cfg: Any) -> dict:
    reply = await create_consumer(nc, stream, name, **cfg)
    assert "error" not in reply, reply
    return reply


async def fill(nc: Client, count: int, subject: str = "s.{i}", stream: str = "S") -> None:
    """Publish ``count`` messages (payload ``m<i>``), i = 1..count."""
    for i in range(1, count + 1):
        await publish(nc, subject.format(i=i), b"m%d" % i)


def seqs(delivered: tuple[int, int], active: bool) -> dict:
    out: dict[str, Any] = {"consumer_seq": delivered[0], "stream_seq": delivered[1]}
    if active:
        out["last_active"] = TS
    return out


def nums(
    delivered: tuple[int, int] = (0, 0),
    floor: tuple[int, int] = (0, 0),
    *,
    ack_pending: int = 0,
    redelivered: int = 0,
    waiting: int = 0,
    pending: int = 0,
    delivered_active: bool | None = None,
    floor_active: bool | None = None,
) -> dict:
    """Expected consumer numbers.  ``last_active`` is expected on ``delivered`` / ``ack_floor``
    when their consumer sequence is above 0, unless said otherwise."""
    return {
        "delivered": seqs(delivered, delivered[0] > 0 if delivered_active is None else delivered_active),
        "ack_floor": seqs(floor, floor[0] > 0 if floor_active is None else floor_active),
        "num_ack_pending": ack_pending,
        "num_redelivered": redelivered,
        "num_waiting": waiting,
        "num_pending": pending,
    }


NUMBER_KEYS = ("delivered", "ack_floor", "num_ack_pending", "num_redelivered", "num_waiting", "num_pending")


async def numbers(nc: Client, stream: str = "S", consumer: str = "C") -> dict:
    info = await api(nc, f"$JS.API.CONSUMER.INFO.{stream}.{consumer}")
    assert "error" not in info, info
    info = normalize(info)
    return {key: info[key] for key in NUMBER_KEYS}


async def eventually_numbers(
    nc: Client, expected: dict, stream: str = "S", consumer: str = "C", timeout: float = WAIT
) -> None:
    """Numbers that depend on the server's asynchronous work (new-message signals, queued
    pull requests) must reach ``expected`` soon."""
    got = await poll(lambda: numbers(nc, stream, consumer), lambda got: got == expected, timeout=timeout)
    assert got == expected


async def stream_state(nc: Client, stream: str = "S") -> dict:
    info = await api(nc, f"$JS.API.STREAM.INFO.{stream}")
    assert "error" not in info, info
    return normalize(info["state"])


async def eventually_state(nc: Client, stream: str, expected: dict, timeout: float = WAIT) -> None:
    """Stream state after asynchronous removals (consumer deletion) settles."""
    state = await poll(lambda: stream_state(nc, stream), lambda state: state == expected, timeout=timeout)
    assert state == expected


async def fetch(
    nc: Client, n: int = 1, stream: str = "S", consumer: str = "C", expires: float = 2.0, target: Target | None = None
) -> list[Msg]:
    """One pull request for ``n`` messages; all ``n`` must arrive (with ``target``, as the server's clock moves)."""
    pull = await Pull.open(nc, stream, consumer)
    await pull.request({"batch": n, "expires": int(expires * SEC)})
    msgs = [await pull.message(expires + 1, target) for _ in range(n)]
    await pull.close()
    return msgs


async def ack(nc: Client, msg: Msg | str, payload: bytes = b"") -> bytes:
    """Send an ack payload with a reply subject; returns the server's answer (must be empty)."""
    subject = msg if isinstance(msg, str) else msg.reply
    reply = await nc.request(subject, payload, timeout=WAIT)
    assert reply.headers is None
    return reply.data


async def no_answer(nc: Client, subject: str, payload: bytes = b"") -> None:
    with pytest.raises(NatsTimeoutError):
        await nc.request(subject, payload, timeout=0.4)


@dataclass(frozen=True)
class AckMeta:
    stream: str
    consumer: str
    deliveries: int
    stream_seq: int
    consumer_seq: int
    timestamp: int
    pending: int

    @property
    def numbers(self) -> tuple[int, int, int, int]:
        """(deliveries, stream seq, consumer seq, pending)."""
        return (self.deliveries, self.stream_seq, self.consumer_seq, self.pending)


def meta(msg: Msg | str) -> AckMeta:
    subject = msg if isinstance(msg, str) else msg.reply
    tokens = subject.split(".")
    assert len(tokens) == 9 and tokens[:2] == ["$JS", "ACK"], subject
    return AckMeta(tokens[2], tokens[3], *(int(t) for t in tokens[4:]))


def forge(msg: Msg, *, stream_seq: int, consumer_seq: int) -> str:
    """The message's ack subject with other sequence numbers."""
    tokens = msg.reply.split(".")
    tokens[5], tokens[6] = str(stream_seq), str(consumer_seq)
    return ".".join(tokens)


_ADV_ID = re.compile(r'"id":"[0-9A-Za-z]{22}"')
_ADV_TS = re.compile(r'"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z"')


def advisory_text(msg: Msg) -> str:
    """The advisory JSON as sent, with its id and timestamp replaced by placeholders."""
    assert msg.headers is None
    text, n_id = _ADV_ID.subn('"id":"<id>"', msg.data.decode())
    text, n_ts = _ADV_TS.subn('"timestamp":"<ts>"', text)
    assert (n_id, n_ts) == (1, 1), msg.data
    return text


def compact(doc: dict) -> str:
    return json.dumps(doc, separators=(",", ":"))


def nak_advisory(stream: str, consumer: str, cseq: int, sseq: int, deliveries: int) -> str:
    return compact(
        {
            "type": ADV + "nak",
            "id": "<id>",
            "timestamp": "<ts>",
            "stream": stream,
            "consumer": consumer,
            "consumer_seq": cseq,
            "stream_seq": sseq,
            "deliveries": deliveries,
        }
    )


def term_advisory(stream: str, consumer: str, cseq: int, sseq: int, deliveries: int, reason: str | None = None) -> str:
    doc: dict[str, Any] = {
        "type": ADV + "terminated",
        "id": "<id>",
        "timestamp": "<ts>",
        "stream": stream,
        "consumer": consumer,
        "consumer_seq": cseq,
        "stream_seq": sseq,
        "deliveries": deliveries,
    }
    if reason is not None:
        doc["reason"] = reason
    return compact(doc)


def max_deliver_advisory(stream: str, consumer: str, sseq: int, deliveries: int) -> str:
    return compact(
        {
            "type": ADV + "max_deliver",
            "id": "<id>",
            "timestamp": "<ts>",
            "stream": stream,
            "consumer": consumer,
            "stream_seq": sseq,
            "deliveries": deliveries,
        }
    )


async def no_message(sub: Any, wait: float = 0.3) -> None:
    with pytest.raises(NatsTimeoutError):
        msg = await sub.next_msg(timeout=wait)
        print("unexpected", msg.subject, msg.data)


def unix_nanos(rfc3339: str) -> int:
    """RFC 3339 with up to 9 fractional digits (UTC) -> unix nanoseconds."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", rfc3339)
    assert match, rfc3339
    whole = datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.UTC)
    return int(whole.timestamp()) * SEC + int((match.group(2) or "0").ljust(9, "0"))


# =========================================================================== ack subject


async def test_ack_subject_encodes_delivery(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc)
        msgs = await fetch(nc, 3)
        assert [m.subject for m in msgs] == ["s.1", "s.2", "s.3"]
        assert [m.data for m in msgs] == [b"m1", b"m2", b"m3"]
        assert [meta(m).numbers for m in msgs] == [(1, 1, 1, 2), (1, 2, 2, 1), (1, 3, 3, 0)]
        assert {(meta(m).stream, meta(m).consumer) for m in msgs} == {("S", "C")}
        assert all(m.headers is None for m in msgs)
        stored = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 2})
        assert meta(msgs[1]).timestamp == unix_nanos(stored["message"]["time"])


async def test_ack_subject_pending_counts_filtered_messages_left(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for subject in ["s.a", "s.b", "s.a", "s.b", "s.a"]:
            await publish(nc, subject, b"x")
        await make_consumer(nc, filter_subject="s.a")
        msgs = await fetch(nc, 2)
        assert [meta(m).numbers for m in msgs] == [(1, 1, 1, 2), (1, 3, 2, 1)]


# =========================================================================== ack payloads


@pytest.mark.parametrize("payload", [b"", b"+ACK", b"+OK"], ids=["empty", "ACK", "OK"])
async def test_ack_payloads_that_ack(target: Target, payload: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, pending=1)
        assert await ack(nc, first, payload) == b""
        assert await numbers(nc) == nums((1, 1), (1, 1), pending=1)


@pytest.mark.parametrize(
    "payload",
    [b"+ACK ", b"+ack", b" +ACK", b"+ACK\r\n", b"+OK ", b"+ACKx", b"+WPI ", b"ACK", b"garbage", b"+NAK"],
)
async def test_near_miss_payloads_are_ignored_but_answered(target: Target, payload: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        assert await ack(nc, first, payload) == b""
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, pending=1)
        # Not a NAK either: the next pull gets the next message, not a redelivery.
        second = (await fetch(nc))[0]
        assert meta(second).numbers == (1, 2, 2, 0)


async def test_ack_payload_follows_headers(target: Target) -> None:
    """Headers on an ack message are skipped: only the payload decides."""
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        one, two = await fetch(nc, 2)
        reply = await nc.request(one.reply, b"-NAK", timeout=WAIT, headers={"X-Why": "+ACK"})
        assert reply.data == b""
        reply = await nc.request(two.reply, b"", timeout=WAIT, headers={"X-Why": "-NAK"})
        assert reply.data == b""
        assert await numbers(nc) == nums((2, 2), (0, 0), ack_pending=1, floor_active=True)
        assert meta((await fetch(nc))[0]).numbers == (2, 1, 3, 0)


async def test_consumer_without_ack_policy_is_ack_none(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        reply = await make_consumer(nc, ack_policy=None)
        assert reply["config"]["ack_policy"] == "none"
        assert "ack_wait" not in reply["config"] and "max_ack_pending" not in reply["config"]
        msg = (await fetch(nc))[0]
        with pytest.raises(NoRespondersError):
            await nc.request(msg.reply, b"", timeout=1)
        assert await numbers(nc) == nums((1, 1), (1, 1), pending=1, floor_active=False)


async def test_double_ack_reply_is_an_empty_message(target: Target) -> None:
    """Exact bytes: each ack sent with a reply subject is answered ``MSG <reply> <sid> 0``."""
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 5)
        await make_consumer(nc)
    raw = await RawClient.connect(target.host, target.port)
    try:
        await raw.read_until(b"\r\n")
        await raw.send(
            b'CONNECT {"verbose":false,"headers":true,"protocol":1}\r\n'
            b"SUB pull.inbox 1\r\nSUB ack.inbox 2\r\n"
            b"PUB $JS.API.CONSUMER.MSG.NEXT.S.C pull.inbox 1\r\n5\r\nPING\r\n"
        )
        data = await raw.read_until(b"m5\r\n")
        replies = re.findall(rb"MSG s\.\d 1 (\$JS\.ACK\.S\.C\.1\.\d\.\d\.\d+\.\d) 2\r\nm\d\r\n", data)
        assert len(replies) == 5, data
        start = len(raw.received)
        payloads = [b"+ACK", b"-NAK", b"+WPI", b"+TERM", b"whatever"]
        for reply, payload in zip(replies, payloads):
            await raw.send(b"PUB %s ack.inbox %d\r\n%s\r\n" % (reply, len(payload), payload))
        expected = b"MSG ack.inbox 2 0\r\n\r\n" * 5
        await raw.read_until(expected, timeout=WAIT)
        await raw.settle(0.2)
        assert bytes(raw.received[start:]) == expected
    finally:
        await raw.close()


async def test_nxt_has_no_double_ack_reply(target: Target) -> None:
    """With nothing left to deliver, ``+NXT`` sends nothing at all to its reply subject."""
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        inbox = await Pull.open(nc)
        await nc.publish(first.reply, b"+NXT", reply=inbox.inbox)
        await inbox.silent(0.4)
        assert await numbers(nc) == nums((1, 1), (1, 1), waiting=1)


async def test_reacking_an_acked_message_is_answered_and_changes_nothing(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc)
        msgs = await fetch(nc, 3)
        assert await ack(nc, msgs[1]) == b""
        expected = nums((3, 3), (0, 0), ack_pending=2, floor_active=True)
        assert await numbers(nc) == expected
        for payload in [b"", b"+ACK", b"-NAK", b"+TERM", b"+WPI"]:
            assert await ack(nc, msgs[1], payload) == b""
        assert await numbers(nc) == expected


async def test_ack_for_a_sequence_not_yet_delivered_is_not_answered(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 4)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        await no_answer(nc, forge(first, stream_seq=3, consumer_seq=3))
        await no_answer(nc, forge(first, stream_seq=2, consumer_seq=2), b"+TERM")
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, pending=3)
        # The stream sequence decides: a forged consumer sequence with a delivered stream seq acks it.
        assert await ack(nc, forge(first, stream_seq=1, consumer_seq=7)) == b""
        assert await numbers(nc) == nums((1, 1), (1, 1), pending=3)


# =========================================================================== ack floor (explicit)


async def test_ack_floor_waits_for_the_lowest_pending_message(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 4)
        await make_consumer(nc)
        msgs = await fetch(nc, 4)
        assert await numbers(nc) == nums((4, 4), (0, 0), ack_pending=4)
        await ack(nc, msgs[2])
        # The floor stays, but ack_floor.last_active appears with the first ack.
        assert await numbers(nc) == nums((4, 4), (0, 0), ack_pending=3, floor_active=True)
        await ack(nc, msgs[1])
        assert await numbers(nc) == nums((4, 4), (0, 0), ack_pending=2, floor_active=True)
        await ack(nc, msgs[0])
        # Acking 1 moves the floor past the acked 2 and 3, to just below pending 4.
        assert await numbers(nc) == nums((4, 4), (3, 3), ack_pending=1)
        await ack(nc, msgs[3])
        assert await numbers(nc) == nums((4, 4), (4, 4))


async def test_ack_floor_jumps_to_delivered_when_nothing_is_pending(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc)
        msgs = await fetch(nc, 3)
        await ack(nc, msgs[2])
        await ack(nc, msgs[1])
        await ack(nc, msgs[0])
        assert await numbers(nc) == nums((3, 3), (3, 3))


async def test_ack_floor_uses_the_original_consumer_sequence(target: Target) -> None:
    """The floor stops at (next pending's FIRST consumer seq - 1, its stream seq - 1)."""
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        one, two = await fetch(nc, 2)
        await ack(nc, two, b"-NAK")
        two_again = (await fetch(nc))[0]
        assert meta(two_again).numbers == (2, 2, 3, 0)
        await ack(nc, one)
        assert await numbers(nc) == nums((3, 2), (1, 1), ack_pending=1, redelivered=1)
        await publish(nc, "s.3", b"m3")
        three = (await fetch(nc))[0]
        assert meta(three).numbers == (1, 3, 4, 0)
        await ack(nc, two_again)
        # Message 2 was first delivered as consumer seq 2; message 3 (pending) as 4.
        assert await numbers(nc) == nums((4, 3), (3, 2), ack_pending=1)
        await ack(nc, three)
        assert await numbers(nc) == nums((4, 3), (4, 3))


# =========================================================================== NAK


async def test_nak_redelivers_at_once_with_next_delivery_count(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        assert await ack(nc, first, b"-NAK") == b""
        # Queued for redelivery, but nothing is counted until it is delivered again.
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1)
        again = (await fetch(nc))[0]
        assert again.subject == "s.1" and again.data == b"m1"
        assert meta(again).numbers == (2, 1, 2, 0)
        assert meta(again).timestamp == meta(first).timestamp
        assert await numbers(nc) == nums((2, 1), (0, 0), ack_pending=1, redelivered=1)
        await ack(nc, again)
        assert await numbers(nc) == nums((2, 1), (2, 1))


async def test_nak_advisory(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.>")
        msgs = await fetch(nc, 2)
        await ack(nc, msgs[1], b"-NAK")
        adv = await advisories.next_msg(timeout=WAIT)
        assert adv.subject == "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.S.C"
        assert advisory_text(adv) == nak_advisory("S", "C", 2, 2, 1)
        again = (await fetch(nc))[0]
        await ack(nc, again, b'-NAK {"delay": 100000000}')
        adv = await advisories.next_msg(timeout=WAIT)
        assert advisory_text(adv) == nak_advisory("S", "C", 3, 2, 2)


async def test_naks_are_redelivered_in_nak_order_before_new_messages(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 4)
        await make_consumer(nc)
        msgs = await fetch(nc, 3)
        await ack(nc, msgs[2], b"-NAK")
        await ack(nc, msgs[0], b"-NAK")
        again = await fetch(nc, 3)
        assert [meta(m).numbers for m in again] == [(2, 3, 4, 1), (2, 1, 5, 1), (1, 4, 6, 0)]
        assert await numbers(nc) == nums((6, 4), (0, 0), ack_pending=4, redelivered=2)


@pytest.mark.parametrize(
    "payload",
    [b'-NAK {"delay": 400000000}', b"-NAK 400ms", b"-NAK   0.4s  "],
    ids=["json-ns", "go-duration", "padded-duration"],
)
@pytest.mark.manual_clock
async def test_nak_with_delay_holds_redelivery(target: Target, payload: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        await ack(nc, first, payload)
        naked_at = target.now()
        pull = await Pull.open(nc)
        await pull.request({"batch": 2, "expires": 2 * SEC})
        # The delayed message is not in the redelivery queue: the next new message comes first.
        second = await pull.message()
        assert meta(second).numbers == (1, 2, 2, 0)
        again = await pull.message(3, target)
        assert target.now() - naked_at >= 0.35
        assert meta(again).numbers == (2, 1, 3, 0)
        assert await numbers(nc) == nums((3, 2), (0, 0), ack_pending=2, redelivered=1)


@pytest.mark.parametrize(
    "payload",
    [b"-NAK xyz", b'-NAK {"delay": "1s"}', b"-NAK {bad", b"-NAKED", b"-NAK -"],
    ids=["word", "json-string", "bad-json", "suffix", "dash"],
)
async def test_nak_with_unparsable_delay_is_a_plain_nak(target: Target, payload: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        assert await ack(nc, first, payload) == b""
        again = (await fetch(nc))[0]
        assert meta(again).numbers == (2, 1, 2, 1)


async def test_nak_of_an_acked_message_does_nothing(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.>")
        first = (await fetch(nc))[0]
        await ack(nc, first)
        assert await ack(nc, first, b"-NAK") == b""
        await no_message(advisories)
        second = (await fetch(nc))[0]
        assert meta(second).numbers == (1, 2, 2, 0)


# =========================================================================== WPI


async def test_wpi_keeps_the_message_pending(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        for _ in range(3):
            assert await ack(nc, first, b"+WPI") == b""
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, pending=1)
        # Not a NAK: the next pull gets the next message.
        assert meta((await fetch(nc))[0]).numbers == (1, 2, 2, 0)
        await ack(nc, first)
        assert await numbers(nc) == nums((2, 2), (1, 1), ack_pending=1)


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_wpi_restarts_the_ack_timer(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        await make_consumer(nc, ack_wait=600 * MS)
        pull = await Pull.open(nc)
        await pull.request({"batch": 2, "expires": 5 * SEC})
        first = await pull.message()
        started = target.now()
        while target.now() - started < 1.6:  # well past ack_wait, kept alive by progress acks
            await target.elapse(0.2)
            assert await ack(nc, first, b"+WPI") == b""
        last_wpi = target.now()
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, waiting=1)
        again = await pull.message(3, target)
        assert target.now() - last_wpi >= 0.5
        assert meta(again).numbers == (2, 1, 2, 0)


# =========================================================================== NXT


async def test_nxt_acks_and_delivers_the_next_message_to_its_reply(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        inbox = await Pull.open(nc)
        await nc.publish(first.reply, b"+NXT", reply=inbox.inbox)
        second = await inbox.message()
        assert second.subject == "s.2" and meta(second).numbers == (1, 2, 2, 1)
        await inbox.silent(0.2)  # one message, and no empty ack reply
        assert await numbers(nc) == nums((2, 2), (1, 1), ack_pending=1, pending=1)


@pytest.mark.parametrize("payload", [b"+NXT 3", b'+NXT {"batch":3}', b"+NXT   3  "], ids=["count", "json", "padded"])
async def test_nxt_with_a_batch(target: Target, payload: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 5)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        inbox = await Pull.open(nc)
        await nc.publish(first.reply, payload, reply=inbox.inbox)
        got = [await inbox.message() for _ in range(3)]
        assert [meta(m).numbers for m in got] == [(1, 2, 2, 3), (1, 3, 3, 2), (1, 4, 4, 1)]
        await inbox.silent(0.2)
        assert await numbers(nc) == nums((4, 4), (1, 1), ack_pending=3, pending=1)


async def test_nxt_batch_two_json(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 4)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        inbox = await Pull.open(nc)
        await nc.publish(first.reply, b'+NXT {"batch":2}', reply=inbox.inbox)
        got = [await inbox.message() for _ in range(2)]
        assert [m.subject for m in got] == ["s.2", "s.3"]
        # +NXT from a +NXT-delivered message chains.
        await nc.publish(got[1].reply, b"+NXT", reply=inbox.inbox)
        last = await inbox.message()
        assert meta(last).numbers == (1, 4, 4, 0)
        assert await numbers(nc) == nums((4, 4), (1, 1), ack_pending=2, floor_active=True)


async def test_nxt_no_wait_with_nothing_left_gets_404(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        inbox = await Pull.open(nc)
        await nc.publish(first.reply, b'+NXT {"no_wait": true}', reply=inbox.inbox)
        status = await inbox.next()
        assert status.headers == {"Status": "404", "Description": "No Messages"} and status.data == b""
        assert await numbers(nc) == nums((1, 1), (1, 1))


async def test_nxt_with_bad_json_still_acks(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        inbox = await Pull.open(nc)
        await nc.publish(first.reply, b"+NXT {bad", reply=inbox.inbox)
        status = await inbox.next()
        assert status.headers == {
            "Status": "400",
            "Description": "Bad Request - invalid character 'b' looking for beginning of object key string",
        }
        assert await numbers(nc) == nums((1, 1), (1, 1), pending=1)


async def test_nxt_with_non_numeric_suffix_asks_for_one(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        inbox = await Pull.open(nc)
        await nc.publish(first.reply, b"+NXTfoo", reply=inbox.inbox)
        second = await inbox.message()
        assert meta(second).numbers == (1, 2, 2, 1)
        await inbox.silent(0.2)


async def test_nxt_without_reply_only_acks(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc)
        first = (await fetch(nc))[0]
        await nc.publish(first.reply, b"+NXT")
        await nc.flush()
        await eventually_numbers(nc, nums((1, 1), (1, 1), pending=2))  # acks are processed off the reader
        assert meta((await fetch(nc))[0]).numbers == (1, 2, 2, 1)


# =========================================================================== TERM


@pytest.mark.manual_clock
async def test_term_stops_redelivery_and_counts_as_acked(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc, ack_wait=200 * MS)
        one, two = await fetch(nc, 2)
        assert await ack(nc, one, b"+TERM") == b""
        assert await numbers(nc) == nums((2, 2), (1, 1), ack_pending=1)
        await ack(nc, two)
        pull = await Pull.open(nc)
        await pull.request({"batch": 1, "expires": 600 * MS})
        status = await pull.next(2, target)
        assert status.headers["Status"] == "408"
        assert await numbers(nc) == nums((2, 2), (2, 2))


@pytest.mark.parametrize(
    "payload,reason",
    [
        (b"+TERM", None),
        (b"+TERM ", None),
        (b"+TERM bad data", "bad data"),
        (b"+TERM   spaced out \t ", "spaced out"),
        (b"+TERMINATE", "INATE"),
        (b'+TERM "quoted" <x>', '"quoted" <x>'),
    ],
    ids=["bare", "space", "reason", "trimmed", "glued", "escaping"],
)
async def test_term_advisory(target: Target, payload: bytes, reason: str | None) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>")
        msgs = await fetch(nc, 2)
        await ack(nc, msgs[1], payload)
        adv = await advisories.next_msg(timeout=WAIT)
        assert adv.subject == "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.C"
        expected = term_advisory("S", "C", 2, 2, 1, reason)
        if reason is not None:
            # Go's encoder escapes <, > and & in strings.
            expected = expected.replace("<x>", "\\u003cx\\u003e")
        assert advisory_text(adv) == expected


async def test_term_advisory_of_a_redelivery(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        await make_consumer(nc)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>")
        first = (await fetch(nc))[0]
        await ack(nc, first, b"-NAK")
        again = (await fetch(nc))[0]
        await ack(nc, again, b"+TERM done")
        adv = await advisories.next_msg(timeout=WAIT)
        assert advisory_text(adv) == term_advisory("S", "C", 2, 1, 2, "done")
        assert await numbers(nc) == nums((2, 1), (2, 1))


async def test_term_advisory_of_a_pending_message_the_stream_deleted(target: Target) -> None:
    """A delivered, unacknowledged message removed from the stream ends with nats-server's own reason."""
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>")
        await fetch(nc, 2)
        reply = await nc.request("$JS.API.STREAM.MSG.DELETE.S", json.dumps({"seq": 2}).encode(), timeout=WAIT)
        assert json.loads(reply.data).get("success") is True, reply.data
        adv = await advisories.next_msg(timeout=WAIT)
        assert advisory_text(adv) == term_advisory("S", "C", 2, 2, 1, "Unacknowledged message was deleted")


# =========================================================================== ack policies


async def test_ack_none_consumer_has_no_ack_subscription(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc, ack_policy="none")
        msgs = await fetch(nc, 2)
        # Messages still carry an ack subject...
        assert [meta(m).numbers for m in msgs] == [(1, 1, 1, 2), (1, 2, 2, 1)]
        # ...but nobody listens on it.
        for payload in [b"", b"+ACK", b"-NAK", b"+TERM"]:
            with pytest.raises(NoRespondersError):
                await nc.request(msgs[0].reply, payload, timeout=1)
        # The floor follows delivery, without an ack_floor.last_active.
        assert await numbers(nc) == nums((2, 2), (2, 2), pending=1, floor_active=False)


async def test_ack_all_acks_everything_below(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 5)
        await make_consumer(nc, ack_policy="all")
        msgs = await fetch(nc, 4)
        assert await numbers(nc) == nums((4, 4), (0, 0), ack_pending=4, pending=1)
        assert await ack(nc, msgs[2]) == b""
        assert await numbers(nc) == nums((4, 4), (3, 3), ack_pending=1, pending=1)
        # Acks at or below the floor are answered and change nothing.
        for msg in msgs[:3]:
            assert await ack(nc, msg) == b""
        assert await ack(nc, msgs[0], b"-NAK") == b""
        assert await numbers(nc) == nums((4, 4), (3, 3), ack_pending=1, pending=1)
        assert meta((await fetch(nc))[0]).numbers == (1, 5, 5, 0)


async def test_ack_all_term_also_acks_everything_below(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc, ack_policy="all")
        msgs = await fetch(nc, 3)
        await ack(nc, msgs[1], b"+TERM")
        assert await numbers(nc) == nums((3, 3), (2, 2), ack_pending=1)


async def test_ack_all_nak_redelivers_only_that_message(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc, ack_policy="all")
        msgs = await fetch(nc, 3)
        await ack(nc, msgs[1], b"-NAK")
        again = (await fetch(nc))[0]
        assert meta(again).numbers == (2, 2, 4, 0)
        assert await numbers(nc) == nums((4, 3), (0, 0), ack_pending=3, redelivered=1)
        # Acking the redelivery (consumer seq 4) acks all: the floor takes its numbers.
        await ack(nc, again)
        assert await numbers(nc) == nums((4, 3), (4, 2), ack_pending=1)
        await ack(nc, msgs[2])
        assert await numbers(nc) == nums((4, 3), (4, 2), ack_pending=1)


@pytest.mark.manual_clock
async def test_ack_all_redelivers_unacked_messages_after_ack_wait(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc, ack_policy="all", ack_wait=300 * MS)
        msgs = await fetch(nc, 3)
        await ack(nc, msgs[1])
        pull = await Pull.open(nc)
        await pull.request({"batch": 2, "expires": 2 * SEC})
        again = await pull.message(target=target)
        assert meta(again).numbers == (2, 3, 4, 0)
        assert await numbers(nc) == nums((4, 3), (2, 2), ack_pending=1, redelivered=1, waiting=1)


# =========================================================================== redelivery


@pytest.mark.manual_clock
async def test_ack_wait_expiry_redelivers_with_incremented_count(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        await make_consumer(nc, ack_wait=250 * MS)
        pull = await Pull.open(nc)
        await pull.request({"batch": 3, "expires": 3 * SEC})
        first = await pull.message()
        delivered_at = target.now()
        second = await pull.message(target=target)
        assert target.now() - delivered_at >= 0.2
        third = await pull.message(target=target)
        assert [meta(m).numbers for m in (first, second, third)] == [(1, 1, 1, 0), (2, 1, 2, 0), (3, 1, 3, 0)]
        assert {meta(m).timestamp for m in (first, second, third)} == {meta(first).timestamp}
        assert [m.data for m in (first, second, third)] == [b"m1"] * 3
        # One message redelivered twice counts once.
        assert await numbers(nc) == nums((3, 1), (0, 0), ack_pending=1, redelivered=1)
        await ack(nc, third)
        assert await numbers(nc) == nums((3, 1), (3, 1))


@pytest.mark.manual_clock
async def test_expired_message_waits_for_a_pull(target: Target) -> None:
    """Expiry only queues the message: no number moves until it is delivered again."""
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc, ack_wait=200 * MS)
        first = (await fetch(nc))[0]
        await target.elapse(0.4)
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, pending=1)
        msgs = await fetch(nc, 2)
        # The redelivery goes before the new message.
        assert [meta(m).numbers for m in msgs] == [(2, 1, 2, 1), (1, 2, 3, 0)]
        # Acking the old delivery subject still acks the message.
        assert await ack(nc, first) == b""
        assert await numbers(nc) == nums((3, 2), (2, 1), ack_pending=1)


async def test_num_redelivered_counts_unacked_redelivered_messages(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        await make_consumer(nc)
        msgs = await fetch(nc, 3)
        await ack(nc, msgs[0], b"-NAK")
        await ack(nc, msgs[1], b"-NAK")
        again = await fetch(nc, 2)
        await ack(nc, again[0], b"-NAK")
        third = (await fetch(nc))[0]
        assert meta(third).numbers == (3, 1, 6, 0)
        assert await numbers(nc) == nums((6, 3), (0, 0), ack_pending=3, redelivered=2)
        await ack(nc, again[1])
        assert await numbers(nc) == nums((6, 3), (0, 0), ack_pending=2, redelivered=1, floor_active=True)
        await ack(nc, third)
        assert await numbers(nc) == nums((6, 3), (2, 2), ack_pending=1)
        await ack(nc, msgs[2])
        assert await numbers(nc) == nums((6, 3), (6, 3))


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_backoff_schedule(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>")
        reply = await make_consumer(nc, backoff=[200 * MS, 600 * MS], max_deliver=3)
        assert reply["config"]["ack_wait"] == 200 * MS
        assert reply["config"]["backoff"] == [200 * MS, 600 * MS]
        pull = await Pull.open(nc)
        await pull.request({"batch": 4, "expires": 4 * SEC})
        first = await pull.message()
        t1 = target.now()
        second = await pull.message(target=target)
        t2 = target.now()
        third = await pull.message(target=target)
        t3 = target.now()
        adv = await arrival(target, advisories, 3)
        t4 = target.now()
        assert [meta(m).numbers for m in (first, second, third)] == [(1, 1, 1, 0), (2, 1, 2, 0), (3, 1, 3, 0)]
        assert 0.15 <= t2 - t1 <= 0.5  # backoff[0]
        assert 0.5 <= t3 - t2 <= 0.95  # backoff[1]
        assert 0.5 <= t4 - t3 <= 0.95  # the last value repeats
        assert advisory_text(adv) == max_deliver_advisory("S", "C", 1, 3)


@pytest.mark.manual_clock
async def test_max_deliver_stops_redelivery_with_advisory(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>")
        await make_consumer(nc, ack_wait=200 * MS, max_deliver=2)
        pull = await Pull.open(nc)
        await pull.request({"batch": 3, "expires": 700 * MS})
        first = await pull.message()
        second = await pull.message(target=target)
        assert [meta(m).numbers for m in (first, second)] == [(1, 1, 1, 0), (2, 1, 2, 0)]
        adv = await arrival(target, advisories, 2)
        assert adv.subject == "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.C"
        assert advisory_text(adv) == max_deliver_advisory("S", "C", 1, 2)
        status = await pull.next(2, target)
        assert status.headers["Status"] == "408" and status.headers["Nats-Pending-Messages"] == "1"
        # No longer ack pending, still counted as redelivered, and the floor does not move.
        assert await numbers(nc) == nums((2, 1), (0, 0), redelivered=1)
        await publish(nc, "s.2", b"m2")
        new = (await fetch(nc))[0]
        assert meta(new).numbers == (1, 2, 3, 0)
        await ack(nc, new)
        assert await numbers(nc) == nums((3, 2), (3, 2), redelivered=1)


@pytest.mark.manual_clock
async def test_max_deliver_expiry_without_a_waiting_pull(target: Target) -> None:
    """With max_deliver >= 2 the last delivery's expiry only queues the message; the next
    pull finds it over the limit: advisory, off the pending list, nothing delivered."""
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>")
        await make_consumer(nc, ack_wait=200 * MS, max_deliver=2)
        pull = await Pull.open(nc)
        await pull.request({"batch": 2, "expires": 1 * SEC})
        await pull.message()
        second = await pull.message(target=target)
        await silent(advisories, 0.4, target)
        assert await numbers(nc) == nums((2, 1), (0, 0), ack_pending=1, redelivered=1)
        await pull.request({"batch": 1, "expires": 300 * MS})
        adv = await arrival(target, advisories, 2)
        assert advisory_text(adv) == max_deliver_advisory("S", "C", 1, 2)
        assert (await pull.next(2, target)).headers["Status"] == "408"
        assert await numbers(nc) == nums((2, 1), (0, 0), redelivered=1)
        # Acking it now is answered and clears it from num_redelivered; the floor stays.
        assert await ack(nc, second) == b""
        assert await numbers(nc) == nums((2, 1), (0, 0), floor_active=True)


@pytest.mark.manual_clock
async def test_max_deliver_reached_by_naks_is_noticed_on_the_next_pull(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>")
        await make_consumer(nc, max_deliver=2)
        await ack(nc, (await fetch(nc))[0], b"-NAK")
        again = (await fetch(nc))[0]
        assert meta(again).numbers == (2, 1, 2, 0)
        await ack(nc, again, b"-NAK")
        await silent(advisories, 0.2, target)
        assert await numbers(nc) == nums((2, 1), (0, 0), ack_pending=1, redelivered=1)
        pull = await Pull.open(nc)
        await pull.request({"batch": 1, "expires": 300 * MS})
        adv = await arrival(target, advisories, 2)
        assert advisory_text(adv) == max_deliver_advisory("S", "C", 1, 2)
        status = await pull.next(2, target)
        assert status.headers["Status"] == "408"
        assert await numbers(nc) == nums((2, 1), (0, 0), redelivered=1)


@pytest.mark.manual_clock
async def test_max_deliver_one_reports_no_redelivered(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 1)
        advisories = await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>")
        await make_consumer(nc, ack_wait=200 * MS, max_deliver=1)
        await fetch(nc)
        adv = await arrival(target, advisories, 2)
        assert advisory_text(adv) == max_deliver_advisory("S", "C", 1, 1)
        assert await numbers(nc) == nums((1, 1), (0, 0))
        pull = await Pull.open(nc)
        await pull.request({"batch": 1, "expires": 300 * MS})
        assert (await pull.next(2, target)).headers["Status"] == "408"


# =========================================================================== max_ack_pending


@pytest.mark.manual_clock
async def test_max_ack_pending_holds_a_waiting_pull_until_acks(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 5)
        await make_consumer(nc, max_ack_pending=2)
        pull = await Pull.open(nc)
        await pull.request({"batch": 4, "expires": 3 * SEC})
        msgs = [await pull.message(), await pull.message()]
        await pull.silent(0.3, target)
        assert await numbers(nc) == nums((2, 2), (0, 0), ack_pending=2, waiting=1, pending=3)
        await ack(nc, msgs[1])
        third = await pull.message()
        assert meta(third).numbers == (1, 3, 3, 2)
        await pull.silent(0.2, target)
        await ack(nc, msgs[0])
        fourth = await pull.message()
        assert meta(fourth).numbers == (1, 4, 4, 1)
        # The request's batch of 4 is complete.
        assert await numbers(nc) == nums((4, 4), (2, 2), ack_pending=2, pending=1)


@pytest.mark.manual_clock
async def test_max_ack_pending_still_allows_redeliveries(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc, max_ack_pending=1)
        first = (await fetch(nc))[0]
        await ack(nc, first, b"-NAK")
        pull = await Pull.open(nc)
        await pull.request({"batch": 2, "expires": 2 * SEC})
        again = await pull.message()
        assert meta(again).numbers == (2, 1, 2, 1)
        await pull.silent(0.3, target)
        assert await numbers(nc) == nums((2, 1), (0, 0), ack_pending=1, redelivered=1, waiting=1, pending=1)


@pytest.mark.manual_clock
async def test_no_wait_pull_at_max_ack_pending_keeps_waiting(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 2)
        await make_consumer(nc, max_ack_pending=1)
        first = (await fetch(nc))[0]
        pull = await Pull.open(nc)
        await pull.request({"batch": 1, "no_wait": True})
        # Neither a message nor a 404: the request waits.
        await pull.silent(0.3, target)
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, waiting=1, pending=1)
        await ack(nc, first)
        second = await pull.message()
        assert meta(second).numbers == (1, 2, 2, 0)


@pytest.mark.manual_clock
async def test_max_ack_pending_with_ack_all(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 5)
        await make_consumer(nc, ack_policy="all", max_ack_pending=2)
        pull = await Pull.open(nc)
        await pull.request({"batch": 5, "expires": 3 * SEC})
        msgs = [await pull.message(), await pull.message()]
        await pull.silent(0.2, target)
        await ack(nc, msgs[1])
        more = [await pull.message(), await pull.message()]
        assert [meta(m).numbers for m in more] == [(1, 3, 3, 2), (1, 4, 4, 1)]
        await pull.silent(0.2, target)
        assert await numbers(nc) == nums((4, 4), (2, 2), ack_pending=2, waiting=1, pending=1)


# =========================================================================== consumer numbers


async def test_fresh_consumer_numbers(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 3)
        reply = await make_consumer(nc)
        assert {key: normalize(reply)[key] for key in NUMBER_KEYS} == nums(pending=3)
        assert await numbers(nc) == nums(pending=3)


@pytest.mark.manual_clock
async def test_deep_dive_walkthrough(target: Target) -> None:
    """The consumer-numbers walkthrough of the JetStream model deep dive, as 2.15.1 counts.

    The document shows an older server's "next sequence" style numbers (and an ack floor
    that never moves); 2.15.1 reports the last delivered sequences and moves the floor.
    Redelivery here is by ack_wait expiry.
    """
    async with connected(target) as nc:
        await add_stream(nc, "ORDERS", ["ORDERS.*"])
        await make_consumer(nc, "ORDERS", "DISPATCH", ack_wait=300 * MS)
        assert (await stream_state(nc, "ORDERS"))["messages"] == 0
        assert await numbers(nc, "ORDERS", "DISPATCH") == nums()

        assert await publish(nc, "ORDERS.processed", b"order 4") == b'{"stream":"ORDERS","seq":1}'
        state = await stream_state(nc, "ORDERS")
        assert (state["messages"], state["first_seq"], state["last_seq"], state["consumer_count"]) == (1, 1, 1, 1)

        # next + ack
        msg = (await fetch(nc, stream="ORDERS", consumer="DISPATCH"))[0]
        assert (msg.subject, msg.data) == ("ORDERS.processed", b"order 4")
        assert await ack(nc, msg) == b""
        assert await numbers(nc, "ORDERS", "DISPATCH") == nums((1, 1), (1, 1))

        # publish, next without ack
        await publish(nc, "ORDERS.processed", b"order 5")
        msg = (await fetch(nc, stream="ORDERS", consumer="DISPATCH"))[0]
        assert msg.data == b"order 5" and meta(msg).numbers == (1, 2, 2, 0)
        assert await numbers(nc, "ORDERS", "DISPATCH") == nums((2, 2), (1, 1), ack_pending=1)

        # next again, no ack: the same message, a new consumer sequence, one redelivered
        msg = (await fetch(nc, stream="ORDERS", consumer="DISPATCH", target=target))[0]
        assert msg.data == b"order 5" and meta(msg).numbers == (2, 2, 3, 0)
        assert await numbers(nc, "ORDERS", "DISPATCH") == nums((3, 2), (1, 1), ack_pending=1, redelivered=1)

        # next again and ack
        msg = (await fetch(nc, stream="ORDERS", consumer="DISPATCH", target=target))[0]
        assert msg.data == b"order 5" and meta(msg).numbers == (3, 2, 4, 0)
        assert await ack(nc, msg) == b""
        assert await numbers(nc, "ORDERS", "DISPATCH") == nums((4, 2), (4, 2))


async def test_numbers_after_a_mixed_script(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await fill(nc, 6)
        await make_consumer(nc)
        msgs = await fetch(nc, 5)
        await ack(nc, msgs[0])
        await ack(nc, msgs[1], b"-NAK")
        await ack(nc, msgs[2], b"+TERM")
        await ack(nc, msgs[3], b"+WPI")
        assert await numbers(nc) == nums((5, 5), (1, 1), ack_pending=3, pending=1)
        two = (await fetch(nc))[0]
        assert meta(two).numbers == (2, 2, 6, 1)
        assert await numbers(nc) == nums((6, 5), (1, 1), ack_pending=3, redelivered=1, pending=1)
        await ack(nc, two)
        # Past the acked 2 and the terminated 3, up to pending 4 (first delivered as consumer seq 4).
        assert await numbers(nc) == nums((6, 5), (3, 3), ack_pending=2, pending=1)
        await ack(nc, msgs[3])
        assert await numbers(nc) == nums((6, 5), (4, 4), ack_pending=1, pending=1)
        await ack(nc, msgs[4])
        assert await numbers(nc) == nums((6, 5), (6, 5), pending=1)
        six = (await fetch(nc))[0]
        assert meta(six).numbers == (1, 6, 7, 0)
        await ack(nc, six)
        assert await numbers(nc) == nums((7, 6), (7, 6))


async def test_num_pending_follows_publishes_and_filter(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await make_consumer(nc, filter_subject="s.a")
        assert await numbers(nc) == nums()
        for subject in ["s.a", "s.b", "s.a"]:
            await publish(nc, subject, b"x")
        await eventually_numbers(nc, nums(pending=2))
        msg = (await fetch(nc))[0]
        assert meta(msg).numbers == (1, 1, 1, 1)
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, pending=1)
        msg = (await fetch(nc))[0]
        assert meta(msg).numbers == (1, 3, 2, 0)
        assert await numbers(nc) == nums((2, 3), (0, 0), ack_pending=2)


async def test_num_waiting_counts_open_pull_requests(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await make_consumer(nc)
        pulls = [await Pull.open(nc) for _ in range(3)]
        await pulls[0].request({"batch": 1, "expires": 300 * MS})
        await pulls[1].request({"batch": 5, "expires": 5 * SEC})
        await pulls[2].request({"batch": 1})
        await eventually_numbers(nc, nums(waiting=3))
        assert (await pulls[0].next(2)).headers["Status"] == "408"
        assert await numbers(nc) == nums(waiting=2)
        await publish(nc, "s.1", b"x")
        # The first waiting request gets it and stays waiting (batch 5).
        assert meta(await pulls[1].message()).numbers == (1, 1, 1, 0)
        assert await numbers(nc) == nums((1, 1), (0, 0), ack_pending=1, waiting=2)


# =========================================================================== retention


async def test_workqueue_ack_removes_the_message(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "WQ", ["wq.>"], retention="workqueue")
        await fill(nc, 3, "wq.{i}", "WQ")
        await make_consumer(nc, "WQ", "C")
        msgs = await fetch(nc, 3, "WQ", "C")
        state = await stream_state(nc, "WQ")
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (3, 1, 3)
        await ack(nc, msgs[1])
        assert await stream_state(nc, "WQ") == {
            "messages": 2,
            "bytes": 72,
            "first_seq": 1,
            "first_ts": TS,
            "last_seq": 3,
            "last_ts": TS,
            "num_subjects": 2,
            "num_deleted": 1,
            "consumer_count": 1,
        }
        await ack(nc, msgs[0])
        await ack(nc, msgs[2])
        assert await stream_state(nc, "WQ") == {
            "messages": 0,
            "bytes": 0,
            "first_seq": 4,
            "first_ts": ZERO_TIME,
            "last_seq": 3,
            "last_ts": TS,
            "consumer_count": 1,
        }
        assert await numbers(nc, "WQ", "C") == nums((3, 3), (3, 3))


async def test_workqueue_nak_keeps_and_term_removes(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "WQ", ["wq.>"], retention="workqueue")
        await fill(nc, 2, "wq.{i}", "WQ")
        await make_consumer(nc, "WQ", "C")
        one, two = await fetch(nc, 2, "WQ", "C")
        await ack(nc, one, b"-NAK")
        await ack(nc, two, b"+WPI")
        assert (await stream_state(nc, "WQ"))["messages"] == 2
        await ack(nc, two, b"+TERM")
        state = await stream_state(nc, "WQ")
        assert (state["messages"], state["first_seq"], state["num_deleted"]) == (1, 1, 1)


@pytest.mark.parametrize(
    "config,code,description",
    [
        ({"ack_policy": "none"}, 10084, "consumer in pull mode requires explicit ack policy on workqueue stream"),
        ({"ack_policy": "all"}, 10098, "workqueue stream requires explicit ack"),
        (
            {"ack_policy": "explicit", "deliver_policy": "last"},
            10101,
            "consumer must be deliver all on workqueue stream",
        ),
    ],
    ids=["ack-none", "ack-all", "deliver-last"],
)
async def test_workqueue_consumer_requirements(target: Target, config: dict, code: int, description: str) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "WQ", ["wq.>"], retention="workqueue")
        reply = await create_consumer(nc, "WQ", "X", **config)
        assert reply == {
            "type": "io.nats.jetstream.api.v1.consumer_create_response",
            "error": {"code": 400, "err_code": code, "description": description},
        }


async def test_workqueue_consumers_must_not_overlap(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "WQ", ["wq.>"], retention="workqueue")
        await make_consumer(nc, "WQ", "ALL")
        reply = await create_consumer(nc, "WQ", "ALL2", ack_policy="explicit")
        assert reply["error"] == {
            "code": 400,
            "err_code": 10099,
            "description": "multiple non-filtered consumers not allowed on workqueue stream",
        }
        overlap = {"code": 400, "err_code": 10100, "description": "filtered consumer not unique on workqueue stream"}
        # An unfiltered consumer overlaps every filter.
        assert (await create_consumer(nc, "WQ", "F1", filter_subject="wq.1"))["error"] == overlap
        await api(nc, "$JS.API.CONSUMER.DELETE.WQ.ALL")
        await make_consumer(nc, "WQ", "F1", filter_subject="wq.1")
        await make_consumer(nc, "WQ", "F2", filter_subjects=["wq.2", "wq.3"])
        assert (await create_consumer(nc, "WQ", "F3", filter_subject="wq.*"))["error"] == overlap
        assert (await create_consumer(nc, "WQ", "F4", filter_subjects=["wq.4", "wq.3"]))["error"] == overlap
        assert (await create_consumer(nc, "WQ", "F5"))["error"]["err_code"] == 10099
        await make_consumer(nc, "WQ", "F6", filter_subject="wq.4.>")


async def test_interest_stream_without_consumers_drops_on_publish(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "IN", ["in.>"], retention="interest")
        assert await publish(nc, "in.1", b"x") == b'{"stream":"IN","seq":1}'
        assert await publish(nc, "in.2", b"x") == b'{"stream":"IN","seq":2}'
        assert await stream_state(nc, "IN") == {
            "messages": 0,
            "bytes": 0,
            "first_seq": 3,
            "first_ts": ZERO_TIME,
            "last_seq": 2,
            "last_ts": TS,
            "consumer_count": 0,
        }
        # A consumer created afterwards starts after the dropped messages.
        reply = await make_consumer(nc, "IN", "A")
        assert {key: normalize(reply)[key] for key in NUMBER_KEYS} == nums((0, 2), (0, 2))


async def test_interest_stream_keeps_until_every_consumer_acked(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "IN", ["in.>"], retention="interest")
        await make_consumer(nc, "IN", "A")
        await make_consumer(nc, "IN", "B")
        await fill(nc, 2, "in.{i}", "IN")
        a_msgs = await fetch(nc, 2, "IN", "A")
        b_msgs = await fetch(nc, 2, "IN", "B")
        await ack(nc, a_msgs[0])
        await ack(nc, a_msgs[1], b"+TERM")
        assert (await stream_state(nc, "IN"))["messages"] == 2
        await ack(nc, b_msgs[1])
        state = await stream_state(nc, "IN")
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (1, 1, 2)
        await ack(nc, b_msgs[0], b"-NAK")
        assert (await stream_state(nc, "IN"))["messages"] == 1
        await ack(nc, (await fetch(nc, 1, "IN", "B"))[0])
        state = await stream_state(nc, "IN")
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (0, 3, 2)


async def test_interest_stream_filtered_and_ack_none_consumers(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "IN", ["in.>"], retention="interest")
        await make_consumer(nc, "IN", "A")
        await make_consumer(nc, "IN", "B", filter_subject="in.b")
        await make_consumer(nc, "IN", "N", ack_policy="none")
        await publish(nc, "in.a", b"x")
        await publish(nc, "in.b", b"x")
        await publish(nc, "in.c.no", b"x")
        for msg in await fetch(nc, 3, "IN", "A"):
            await ack(nc, msg)
        assert (await stream_state(nc, "IN"))["messages"] == 3
        # An ack-none consumer lets go of a message when it delivers it (asynchronously).
        await fetch(nc, 3, "IN", "N")
        await eventually_state(
            nc,
            "IN",
            {
                "messages": 1,
                "bytes": 35,
                "first_seq": 2,
                "first_ts": TS,
                "last_seq": 3,
                "last_ts": TS,
                "num_subjects": 1,
                "num_deleted": 1,
                "consumer_count": 3,
            },
        )
        await ack(nc, (await fetch(nc, 1, "IN", "B"))[0])
        state = await stream_state(nc, "IN")
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (0, 4, 3)


async def test_interest_stream_ack_all_removes_everything_below(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "IN", ["in.>"], retention="interest")
        await make_consumer(nc, "IN", "A", ack_policy="all")
        await fill(nc, 3, "in.{i}", "IN")
        msgs = await fetch(nc, 3, "IN", "A")
        await ack(nc, msgs[1])
        state = await stream_state(nc, "IN")
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (1, 3, 3)


async def test_interest_stream_deleting_a_consumer_releases_its_interest(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "IN", ["in.>"], retention="interest")
        await make_consumer(nc, "IN", "A")
        await make_consumer(nc, "IN", "B")
        await fill(nc, 2, "in.{i}", "IN")
        msgs = await fetch(nc, 2, "IN", "A")
        await ack(nc, msgs[0])
        assert (await stream_state(nc, "IN"))["messages"] == 2
        assert (await api(nc, "$JS.API.CONSUMER.DELETE.IN.B"))["success"] is True
        await eventually_state(
            nc,
            "IN",
            {
                "messages": 1,
                "bytes": 36,
                "first_seq": 2,
                "first_ts": TS,
                "last_seq": 2,
                "last_ts": TS,
                "num_subjects": 1,
                "consumer_count": 1,
            },
        )
        await api(nc, "$JS.API.CONSUMER.DELETE.IN.A")
        await eventually_state(
            nc,
            "IN",
            {
                "messages": 0,
                "bytes": 0,
                "first_seq": 3,
                "first_ts": ZERO_TIME,
                "last_seq": 2,
                "last_ts": TS,
                "consumer_count": 0,
            },
        )


# =========================================================================== headers_only, filters, deliver policy


async def test_headers_only_delivery_bytes(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await publish(nc, "s.a", b"hello world")
        await publish(nc, "s.b", b"12345", headers={"X-A": "1"})
        await publish(nc, "s.a", b"")
        await make_consumer(nc, headers_only=True)
    raw = await RawClient.connect(target.host, target.port)
    try:
        await raw.read_until(b"\r\n")
        start = len(raw.received)
        await raw.send(
            b'CONNECT {"verbose":false,"headers":true,"protocol":1}\r\nSUB in 1\r\n'
            b"PUB $JS.API.CONSUMER.MSG.NEXT.S.C in 1\r\n3\r\nPING\r\n"
        )
        await raw.read_until(b"Nats-Msg-Size: 0\r\n\r\n\r\n", timeout=3)
        data = bytes(raw.received[start:])
        data = re.sub(rb"INFO \{.*?\} \r\n", b"", data).replace(b"PONG\r\n", b"")
        data = re.sub(rb"(\$JS\.ACK\.S\.C\.1\.\d\.\d\.)\d+(\.\d)", rb"\1<ts>\2", data)
        assert data == (
            b"HMSG s.a 1 $JS.ACK.S.C.1.1.1.<ts>.2 31 31\r\nNATS/1.0\r\nNats-Msg-Size: 11\r\n\r\n\r\n"
            b"HMSG s.b 1 $JS.ACK.S.C.1.2.2.<ts>.1 38 38\r\nNATS/1.0\r\nX-A: 1\r\nNats-Msg-Size: 5\r\n\r\n\r\n"
            b"HMSG s.a 1 $JS.ACK.S.C.1.3.3.<ts>.0 30 30\r\nNATS/1.0\r\nNats-Msg-Size: 0\r\n\r\n\r\n"
        )
    finally:
        await raw.close()


async def test_filter_subject_delivery(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for subject in ["s.a.1", "s.b", "s.a.2", "s.c", "s.a.3"]:
            await publish(nc, subject, subject.encode())
        await make_consumer(nc, filter_subject="s.a.*")
        msgs = await fetch(nc, 3)
        assert [m.subject for m in msgs] == ["s.a.1", "s.a.2", "s.a.3"]
        assert [meta(m).numbers for m in msgs] == [(1, 1, 1, 2), (1, 3, 2, 1), (1, 5, 3, 0)]
        assert await numbers(nc) == nums((3, 5), (0, 0), ack_pending=3)


async def test_filter_subjects_deliver_in_stream_order(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for subject in ["s.c", "s.a", "s.b", "s.a", "s.c", "s.b"]:
            await publish(nc, subject, b"x")
        await make_consumer(nc, filter_subjects=["s.c", "s.b"])
        assert await numbers(nc) == nums(pending=4)
        msgs = await fetch(nc, 4)
        assert [(m.subject, meta(m).stream_seq, meta(m).consumer_seq, meta(m).pending) for m in msgs] == [
            ("s.c", 1, 1, 3),
            ("s.b", 3, 2, 2),
            ("s.c", 5, 3, 1),
            ("s.b", 6, 4, 0),
        ]


@pytest.mark.manual_clock
@pytest.mark.parametrize(
    "policy,extra,first_seqs,start",
    [
        ("all", {}, [1, 2, 3, 4], 0),
        ("last", {}, [4], 3),
        ("new", {}, [], 4),
        ("by_start_sequence", {"opt_start_seq": 3}, [3, 4], 2),
        ("last_per_subject", {"filter_subject": "s.>"}, [2, 3, 4], 1),
        ("by_start_time", {}, [2, 3, 4], 1),
    ],
)
async def test_deliver_policy_first_message_and_numbers(
    target: Target, policy: str, extra: dict, first_seqs: list[int], start: int
) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for subject in ["s.a", "s.a", "s.b", "s.c"]:
            await publish(nc, subject, b"x")
            await target.elapse(0.001)  # each message gets its own time stamp
        if policy == "by_start_time":
            stored = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 2})
            extra = {"opt_start_time": stored["message"]["time"]}
        reply = await make_consumer(nc, deliver_policy=policy, **extra)
        # Before any delivery both delivered and the floor sit just below the start.
        expected = nums((0, start), (0, start), pending=len(first_seqs))
        assert {key: normalize(reply)[key] for key in NUMBER_KEYS} == expected
        pull = await Pull.open(nc)
        await pull.request({"batch": 4, "expires": 400 * MS})
        got = []
        while len(got) < 4:
            msg = await pull.next(2, target)
            if is_status(msg):
                assert msg.headers["Status"] == "408"
                break
            got.append(meta(msg).stream_seq)
        assert got == first_seqs
        await publish(nc, "s.d", b"x")
        # Everything after the start keeps coming.
        assert meta((await fetch(nc))[0]).stream_seq == 5
