"""The push half of a consumer: flow control, idle heartbeats and delivery pacing.

Push delivery follows nats-server's rules, which clients such as nats-py's
``js.subscribe`` and ordered consumers depend on:

* **Flow control** (``flow_control: true``): every delivery adds
  ``len(deliver subject) + len(ack reply) + len(headers) + len(payload)`` to
  the pending bytes.  The delivery that takes them past half the window is
  followed by ``100 FlowControl Request`` with a reply on
  ``$JS.FC.<stream>.<consumer>.<4 chars>``; delivery stops while the bytes
  exceed the window.  An answer on the latest request subtracts what was
  pending when it went out and doubles the window (2 MiB up to 32 MiB).
  With ``ack_policy: flow_control`` the answer's ``Nats-Last-Consumer`` /
  ``Nats-Last-Stream`` headers also ack up to those sequences.
* **Idle heartbeats**: ``100 Idle Heartbeat`` once per ``idle_heartbeat`` of
  idleness while someone listens (paused consumers included), naming the
  unanswered flow-control subject in ``Nats-Consumer-Stalled``.
* **Pacing**: ``replay_policy: original`` waits the gap between stored
  timestamps until the consumer passes what the stream held at start;
  ``rate_limit_bps`` is a token bucket of ``bps / 8`` bytes per second whose
  burst is the stream's ``max_msg_size`` (or the server's ``max_payload``).
  A delivery larger than the burst can never be sent, as in nats-server.

While a delivery waits for its moment the delivery loop is blocked, as
nats-server's is: nothing else goes out and no heartbeat is sent.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

from fakejs.gocompat import ids
from fakejs.jetstream import status
from fakejs.protocol import headers as hdrs

if TYPE_CHECKING:
    from fakejs.core.clock import TimerHandle
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.storage.store import StoredMessage

NS = 1_000_000_000
FLOW_CONTROL_MAX_PENDING = 32 * 1024 * 1024
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


class HeldDelivery(NamedTuple):
    """A delivery picked by the loop, waiting for its replay gap or rate-limit tokens."""

    stage: str  # waiting for: "replay", "rate"; or "sending" (due), "dropped" (a fault swallows it)
    target: str
    ack_reply: str
    msg: StoredMessage
    hdr: bytes | None
    data: bytes
    dc: int
    size: int
    wr_n: int
    wr_b: int


class PushHandling:
    """Mixed into :class:`~fakejs.jetstream.consumer.consumer.Consumer`."""

    def init_push(self: Consumer) -> None:
        cfg = self.config
        self.pblimit = FLOW_CONTROL_MAX_PENDING if cfg["flow_control"] else 0
        self.maxpb = self.pblimit // 16
        self.pbytes = 0
        self.fcid = ""
        self.fcsz = 0
        self.replay = cfg["replay_policy"] != "instant"
        self.replay_last_seq = 0
        self.last_ts = 0  # stored time of the last message the loop handled
        self.held: HeldDelivery | None = None
        self._held_timer: TimerHandle | None = None
        self._heartbeat_timer: TimerHandle | None = None
        self.rate_limiter: TokenBucket | None = None
        self.configure_rate_limit()

    def configure_rate_limit(self: Consumer) -> None:
        bps = self.config["rate_limit_bps"]
        if not bps:
            self.rate_limiter = None
            return
        burst = self.stream.config["max_msg_size"]
        if burst <= 0:
            burst = self.js.broker.options.max_payload
        self.rate_limiter = TokenBucket(bps // 8, burst)

    def start_push(self: Consumer) -> None:
        """Flow-control replies, the replay horizon and the heartbeat timer."""
        if self.config["flow_control"]:
            subject = f"$JS.FC.{self.stream.name}.{self.name}.*"
            self.subscriptions.append(self.js.router.subscribe_internal(subject, self._on_flow_control))
        if self.replay:
            self.replay_last_seq = self.stream.store.last_seq
        self._arm_heartbeat()

    def stop_push(self: Consumer) -> None:
        for timer in (self._held_timer, self._heartbeat_timer):
            if timer is not None:
                timer.cancel()
        self._held_timer = self._heartbeat_timer = None
        self.held = None

    # -- flow control ---------------------------------------------------------------

    @property
    def flow_stalled(self: Consumer) -> bool:
        return self.maxpb > 0 and self.pbytes > self.maxpb

    def count_push_bytes(self: Consumer, target: str, ack_reply: str, hdr: bytes | None, data: bytes) -> None:
        if self.maxpb > 0:
            self.pbytes += len(target) + len(ack_reply) + (len(hdr) if hdr else 0) + len(data)

    def after_push_delivery(self: Consumer, size: int) -> None:
        """``needFlowControl`` after a delivery went out."""
        if self.maxpb == 0 or not self.is_push:
            return
        if not self.fcid:
            wanted = self.pbytes > self.maxpb // 2
            if not wanted and self.config["ack_policy"] == "flow_control":
                wanted = self.max_ack_pending > 0 and len(self.pending) >= self.max_ack_pending
            if wanted:
                self.send_flow_control()
        elif self.pbytes - self.fcsz >= self.maxpb:
            self.fcsz += size

    def send_flow_control(self: Consumer) -> None:
        if not self.is_push:
            return
        token = ids.token(self.js.broker.random, ids.BASE62, 4)
        self.fcid = f"$JS.FC.{self.stream.name}.{self.name}.{token}"
        self.fcsz = self.pbytes
        self.js.router.publish(self.config["deliver_subject"], self.fcid, status.flow_control_request(), b"", None)

    def _on_flow_control(
        self: Consumer, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any
    ) -> None:
        if self.closed or subject != self.fcid:
            return  # only the latest request counts
        if self.maxpb < self.pblimit:
            self.maxpb = min(self.maxpb * 2, self.pblimit)
        self.pbytes = max(self.pbytes - self.fcsz, 0)
        self.fcid, self.fcsz = "", 0
        if self.config["ack_policy"] == "flow_control" and hdr:
            last_dseq = _int64(hdrs.get(hdr, "Nats-Last-Consumer"))
            last_sseq = _int64(hdrs.get(hdr, "Nats-Last-Stream"))
            if last_sseq > 0:
                self._ack(last_sseq, max(last_dseq, 0), 1, "")
        self.kick()

    # -- idle heartbeats ---------------------------------------------------------------

    def _arm_heartbeat(self: Consumer) -> None:
        """(Re)start the idle countdown; every delivery calls this."""
        if self._heartbeat_timer is not None:
            self._heartbeat_timer.cancel()
            self._heartbeat_timer = None
        interval = self.config["idle_heartbeat"]
        if interval > 0 and self.is_push and not self.closed:
            self._heartbeat_timer = self.clock.call_later(interval / NS, self._heartbeat_due)

    def _heartbeat_due(self: Consumer) -> None:
        self._heartbeat_timer = None
        if self.closed or self.held is not None:
            return  # a blocked loop sends nothing; the delivery restarts the countdown
        faults = self.js.broker.faults
        if self.active and not (
            faults and faults.fire("consumer.heartbeat", stream=self.stream.name, consumer=self.name)
        ):
            subject = self.config["deliver_subject"]
            self.js.reply(subject, b"", status.idle_heartbeat(self.dseq - 1, self.sseq - 1, self.fcid))
            if self.config["ack_policy"] == "flow_control" and self.pending and not self.fcid:
                self.send_flow_control()
        self._arm_heartbeat()

    # -- pacing ------------------------------------------------------------------------

    def pace(self: Consumer, delivery: HeldDelivery) -> bool:
        """Wait for a replay gap or rate-limit tokens; True when the delivery was held."""
        now = self.clock.monotonic()
        if delivery.stage == "replay":
            if self.replay and self.last_ts > 0:
                gap = (delivery.msg.ts - self.last_ts) / NS
                if gap > REPLAY_MIN_DELAY:
                    self._hold(delivery, gap)
                    return True
            self.last_ts = delivery.msg.ts
            delivery = delivery._replace(stage="rate")
        if self.rate_limiter is not None and delivery.stage == "rate":
            wait = self.rate_limiter.reserve(now, delivery.size)
            if wait > 0:
                self._hold(delivery._replace(stage="sending"), wait)
                return True
        return False

    def _hold(self: Consumer, delivery: HeldDelivery, delay: float) -> None:
        self.held = delivery
        if math.isfinite(delay):
            self._held_timer = self.clock.call_later(delay, self._release)

    def _release(self: Consumer) -> None:
        self._held_timer = None
        delivery, self.held = self.held, None
        if delivery is None or self.closed:
            return
        if delivery.stage == "replay":
            self.last_ts = delivery.msg.ts
            delivery = delivery._replace(stage="rate")
        if delivery.stage == "rate" and self.pace(delivery):
            return
        self.send_delivery(delivery)
        self.kick()

    def replay_caught_up(self: Consumer) -> None:
        """Replay ends for good once the consumer passes what the stream held at start."""
        if self.replay and self.sseq > self.replay_last_seq:
            self.replay = False


def _int64(value: bytes | None) -> int:
    if value and value.isdigit() and value.isascii():
        return int(value)
    return -1
