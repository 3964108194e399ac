"""Fast batches without a server: the reply-subject grammar and the bookkeeping on a manual clock."""

from __future__ import annotations

import pytest

from fakejs.jetstream.config.stream import ZERO, StreamConfig
from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.stream.batch_limits import FastBatchLimits
from fakejs.jetstream.stream.fast_batch import BatchRequest, FastBatches, is_fast_batch, parse_reply
from fakejs.jetstream.stream.publish import Outcome
from fakejs.testkit.clock import ManualClock


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("p.A.10.ok.1.0.$FI", BatchRequest("A", 1, 10, True, 0)),
        ("a.b.c.A.7.fail.9.1.$FI", BatchRequest("A", 9, 7, False, 1)),
        (".A.10.ok.2.4.$FI", BatchRequest("A", 2, 10, True, 4)),  # an empty prefix is still a prefix
        ("p.A.0.ok.5.2.$FI", BatchRequest("A", 5, 10, True, 2)),  # flow 0 means 10
        ("p.A.x.ok.5.3.$FI", BatchRequest("A", 5, 10, True, 3)),  # so does garbage
        ("p.A.70000.ok.5.3.$FI", BatchRequest("A", 5, 65535, True, 3)),  # a uint16 at most
        ("p.A.99999999999999999999.ok.1.0.$FI", BatchRequest("A", 1, 65535, True, 0)),  # int64 wrap, as in Go
        ("A.10.ok.1.0.$FI", None),  # no prefix
        ("p.A.10.ok.2.0.$FI", None),  # a start is sequence 1
        ("p.A.10.ok.1.1.$FI", None),  # an append is not
        ("p.A.10.ok.1.3.$FI", None),  # nor is an end of batch
        ("p.A.10.ok.0.2.$FI", None),
        ("p.A.10.ok.18446744073709551615.2.$FI", None),  # 2^64-1 would overflow
        ("p.A.10.ok.18446744073709551616.2.$FI", None),
        ("p.A.10.ok.-1.2.$FI", None),
        ("p.A.10.OK.1.0.$FI", None),
        ("p.A.10.ok.1.5.$FI", None),
        ("p.A.10.ok.1..$FI", None),
    ],
)
def test_parse_reply(reply: str, expected: BatchRequest | None) -> None:
    assert is_fast_batch(reply)
    assert parse_reply(reply) == expected


def test_not_a_fast_batch() -> None:
    assert not is_fast_batch(".$FI")
    assert not is_fast_batch("p.A.10.ok.1.0.$FIX")
    assert not is_fast_batch("")


class Harness:
    """A stream stand-in: stores every message, remembers every reply."""

    def __init__(self, limits: FastBatchLimits | None = None, clock: ManualClock | None = None) -> None:
        self.clock = clock or ManualClock()
        self.sent: list[tuple[str, bytes]] = []
        self.last_seq = 0
        self.limits = limits or FastBatchLimits()
        self.fast = FastBatches(
            self.clock,
            self.send,
            self.store,
            lambda seq: b'{"stream":"S","seq":%d}' % seq,
            self.error,
            self.limits,
        )
        self.config: StreamConfig = {**ZERO, "name": "S", "max_msg_size": -1, "allow_batched": True}  # type: ignore[typeddict-item]

    def send(self, reply: str, payload: bytes) -> None:
        self.sent.append((reply, payload))

    def store(self, subject: str, hdr: bytes | None, payload: bytes) -> Outcome:
        self.last_seq += 1
        return Outcome(b'{"stream":"S","seq":%d}' % self.last_seq, self.last_seq)

    @staticmethod
    def error(error: ApiError) -> bytes:
        return b"error %d" % error.err_code

    def publish(self, batch: str, seq: int, op: int, flow: int = 100) -> None:
        assert self.fast.take(self.config, "s", f"p.{batch}.{flow}.ok.{seq}.{op}.$FI", None, b"x")


def test_one_timer_per_batch_however_many_messages() -> None:
    h = Harness()
    h.publish("A", 1, 0)
    for seq in range(2, 5001):
        h.clock.advance(0.001)
        h.publish("A", seq, 1)
    # The timer armed by the start is still the only one; it moves itself when it fires early.
    assert h.clock.next_deadline() == 10.0
    h.clock.advance(10.0 - h.clock.monotonic())
    assert "A" in h.fast
    assert h.clock.next_deadline() == pytest.approx(14.999)
    h.clock.advance(5)
    assert "A" not in h.fast and len(h.fast) == 0
    assert h.clock.next_deadline() is None
    assert len(h.sent) == 1 + 50  # the start's ack, then one every 100 messages


def test_disabling_and_closing_drop_batches_and_timers() -> None:
    h = Harness()
    h.publish("A", 1, 0)
    h.publish("B", 1, 0)
    assert len(h.fast) == 2
    h.fast.updated(h.config)
    assert len(h.fast) == 2
    h.fast.updated({**h.config, "allow_batched": False})
    assert len(h.fast) == 0
    assert h.clock.next_deadline() is None
    h.publish("C", 1, 0)
    h.fast.close()
    assert len(h.fast) == 0 and h.clock.next_deadline() is None


def test_the_server_wide_limit_is_shared_by_the_streams() -> None:
    """Batches in flight are counted across streams; commits, expiry and closing give their places back."""
    limits = FastBatchLimits(max_inflight_total=3)
    s1 = Harness(limits)
    s2 = Harness(limits, s1.clock)
    s1.publish("A", 1, 0)
    s1.publish("B", 1, 0)
    s2.publish("C", 1, 0)
    assert limits.inflight == 3
    s2.publish("D", 1, 0)
    assert s2.sent[-1][1] == b"error 10211" and "D" not in s2.fast
    s1.publish("A", 2, 2)  # a commit
    assert limits.inflight == 2
    s2.publish("D", 1, 0)
    assert "D" in s2.fast and limits.inflight == 3
    s1.clock.advance(limits.timeout)  # B, C and D expire
    assert limits.inflight == 0
    s1.publish("E", 1, 0)
    s1.fast.close()
    assert limits.inflight == 0
