"""Delivery pacing: ``replay_policy: original``, ``rate_limit_bps`` and held deliveries.

``replay_policy: original`` waits the gap between stored timestamps until
the consumer passes what the stream held when it started; ``rate_limit_bps``
is a token bucket of ``bps / 8`` bytes per second whose burst is the
stream's ``max_msg_size`` (or the server's ``max_payload``).  A delivery
larger than the burst can never be sent, as in nats-server.  A ``delay``
fault holds a delivery the same way.

While a delivery waits for its moment the delivery loop is blocked, as
nats-server's is: nothing else goes out and no push heartbeat is sent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from fakejs.core.clock import Clock, TimerHandle
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.consumer.view import ConsumerView
from fakejs.jetstream.storage.store import StoredMessage

REPLAY_MIN_DELAY = 0.001  # gaps up to a millisecond are not waited for


class TokenBucket:
    """``golang.org/x/time/rate``'s limiter as the consumer uses it (``ReserveN``)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.last: float | None = None

    def reserve(self, now: float, n: int) -> float:
        """Take ``n`` tokens; returns how long to wait (``inf``: never possible)."""
        if n > self.burst:
            return math.inf
        if self.last is not None:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now
        self.tokens -= n
        return -self.tokens / self.rate if self.tokens < 0 else 0.0


def rate_limiter(config: ConsumerConfig, stream_config: StreamConfig, max_payload: int) -> TokenBucket | None:
    """The token bucket for ``rate_limit_bps`` (None: no limit); its burst is the largest message allowed."""
    bps = config["rate_limit_bps"]
    if not bps:
        return None
    burst = stream_config["max_msg_size"]
    if burst <= 0:
        burst = max_payload
    return TokenBucket(bps // 8, burst)


class HeldDelivery(NamedTuple):
    """A delivery picked by the loop, possibly waiting for its replay gap or rate-limit tokens."""

    stage: str  # waiting for: "replay", "rate"; or "sending" (due), "dropped" (a fault swallows it)
    target: str
    ack_reply: str
    msg: StoredMessage
    hdr: bytes | None
    data: bytes
    delivery_count: int  # ``dc`` in nats-server
    size: int
    batch_left: int  # what the pull request still wanted after this delivery, 0 for push (``wr.n``)
    bytes_left: int  # ``wr.b``


class Pacer:
    """Holds a delivery until its replay gap has passed and the rate limit allows it.

    ``send`` sends a delivery whose moment has come; the consumer's loop is
    then kicked to carry on.
    """

    def __init__(
        self,
        consumer: ConsumerView,
        clock: Clock,
        send: Callable[[HeldDelivery], None],
        rate_limiter: TokenBucket | None,
    ) -> None:
        self._consumer = consumer
        self._clock = clock
        self._send = send
        self.rate_limiter = rate_limiter
        self.replay = consumer.config["replay_policy"] != "instant"
        self.replay_last_seq = 0
        self.last_ts = 0  # stored time of the last message the loop handled
        self.held: HeldDelivery | None = None
        self._timer: TimerHandle | None = None

    @property
    def holding(self) -> bool:
        """A delivery waits: the delivery loop (and push heartbeats) wait with it."""
        return self.held is not None

    def start(self, last_seq: int) -> None:
        """Replay in original time runs until the consumer passes ``last_seq`` (the stream's last now)."""
        if self.replay:
            self.replay_last_seq = last_seq

    def caught_up(self, next_seq: int) -> None:
        """Replay ends for good once the consumer passes what the stream held at start."""
        if self.replay and next_seq > self.replay_last_seq:
            self.replay = False

    def pace(self, delivery: HeldDelivery) -> bool:
        """Wait for a replay gap or rate-limit tokens; True when the delivery was held."""
        if delivery.stage == "replay":
            if self.replay and self.last_ts > 0:
                gap = (delivery.msg.ts - self.last_ts) / NS
                if gap > REPLAY_MIN_DELAY:
                    self.hold(delivery, gap)
                    return True
            self.last_ts = delivery.msg.ts
            if self.rate_limiter is None:
                return False  # no rate limit: skip building the "rate" stage of the delivery
            delivery = delivery._replace(stage="rate")
        if self.rate_limiter is not None and delivery.stage == "rate":
            wait = self.rate_limiter.reserve(self._clock.monotonic(), delivery.size)
            if wait > 0:
                self.hold(delivery._replace(stage="sending"), wait)
                return True
        return False

    def hold(self, delivery: HeldDelivery, delay: float) -> None:
        """Keep ``delivery`` back for ``delay`` seconds (forever when infinite)."""
        self.held = delivery
        if math.isfinite(delay):
            self._timer = self._clock.call_later(delay, self._release)

    def _release(self) -> None:
        self._timer = None
        delivery, self.held = self.held, None
        if delivery is None or self._consumer.closed:
            return
        if delivery.stage == "replay":
            self.last_ts = delivery.msg.ts
            delivery = delivery._replace(stage="rate")
        if delivery.stage == "rate" and self.pace(delivery):
            return
        self._send(delivery)
        self._consumer.kick()

    def stop(self) -> None:
        """Drop a held delivery (the consumer is gone)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self.held = None
