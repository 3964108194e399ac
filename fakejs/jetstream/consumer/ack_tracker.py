"""A consumer's acknowledgement state: pending acks, redeliveries, ack floors.

nats-server keeps two views of acknowledgement state: the consumer's
working state (``pending``, ``rdc``, ``rdq``, ``adflr``/``asflr``) and the
persisted consumer store (:class:`~fakejs.jetstream.storage.consumer_state.ConsumerState`:
the delivered and ack-floor counters ConsumerInfo reports).
:class:`AckTracker` keeps both with nats-server's rules, so the numbers a
client reads after any mix of acks, naks, terms and redeliveries are the
same, and runs the ack-wait timer (``checkPending``) on the server clock.
What clients send on the ack subject is read in
:mod:`fakejs.jetstream.consumer.ack_messages`.
"""

from __future__ import annotations

from collections.abc import Callable

from fakejs.core.clock import Clock, TimerHandle
from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, Struct, unmarshal
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.consumer.redelivery_queue import RedeliveryQueue
from fakejs.jetstream.consumer.view import ConsumerView
from fakejs.jetstream.storage.consumer_state import ConsumerState

ACK_WAIT_DELAY = 1_000_000  # nats-server adds 1ms to every ack deadline
NAK_DELAY_RECHECK = 0.010  # a nak with a delay re-runs checkPending this soon


def _number(token: str) -> int:
    """``parseAckReplyNum``: decimal digits, else -1."""
    if token and token.isdigit() and token.isascii():
        return int(token)
    return -1


def _as_uint64(value: int) -> int:
    """Go's uint64 cast."""
    return value & (2**64 - 1)


def ack_reply_info(subject: str) -> tuple[int, int, int]:
    """(stream seq, delivery seq, delivery count) from an ack subject; zeros when malformed."""
    tokens = subject.split(".")
    if (len(tokens) != 9 and len(tokens) < 11) or tokens[0] != "$JS" or tokens[1] != "ACK":
        return 0, 0, 0
    offset = 4 if len(tokens) >= 11 else 2
    dc = _as_uint64(_number(tokens[offset + 2]))
    sseq = _as_uint64(_number(tokens[offset + 3]))
    dseq = _as_uint64(_number(tokens[offset + 4]))
    return sseq, dseq, dc


# ``ConsumerNakOptions``: what a ``-NAK {...}`` may carry.
NAK_OPTIONS = Struct("ConsumerNakOptions", (Field("delay", "time.Duration"),))


def nak_delay(payload: bytes) -> int | None:
    """The delay a ``-NAK`` asks for (ns): JSON ``{"delay": ns}`` or a Go duration; None when absent or unreadable."""
    arg = payload[4:].strip()
    if not arg:
        return None
    try:
        if arg[:1] == b"{":
            return int(unmarshal(NAK_OPTIONS, arg).get("delay", 0))
        return gotime.parse_duration(arg.decode("utf-8", "replace"))
    except (ValueError, TypeError):
        return None


class AckTracker:
    """Pending acks, the redelivery queue and counts, ack floors and the ack-wait timer.

    ``pending`` maps stream sequences awaiting an ack to ``[delivery seq,
    delivery time ns]``, ``rdc`` counts redeliveries, ``rdq`` is the
    redelivery queue, ``adflr``/``asflr`` the ack floor (delivery and stream
    sequence).  ``first_stream_seq`` tells the tracker what the stream still
    holds; ``on_max_deliveries(seq, deliveries)`` announces a message that
    reached ``max_deliver``.
    """

    def __init__(
        self,
        consumer: ConsumerView,
        clock: Clock,
        first_stream_seq: Callable[[], int],
        on_max_deliveries: Callable[[int, int], None],
    ) -> None:
        self._consumer = consumer
        self._clock = clock
        self._first_stream_seq = first_stream_seq
        self._on_max_deliveries = on_max_deliveries
        config = consumer.config
        self.state = ConsumerState(config["ack_policy"], max(config["max_deliver"], 0))
        self.pending: dict[int, list[int]] = {}  # sseq -> [dseq, timestamp ns]
        self.rdc: dict[int, int] = {}  # sseq -> times redelivered
        self.rdq = RedeliveryQueue()
        self.adflr = 0  # ack floor, delivery sequence
        self.asflr = 0  # ack floor, stream sequence
        self.last_delivered_ns = 0
        self.last_ack_ns = 0
        self._timer: TimerHandle | None = None
        self._deadline: float | None = None

    # -- limits from the config ------------------------------------------------------------

    @property
    def max_deliver(self) -> int:
        return max(int(self._consumer.config["max_deliver"]), 0)

    @property
    def max_ack_pending(self) -> int:
        return max(int(self._consumer.config["max_ack_pending"]), 0)

    def ack_pending_full(self) -> bool:
        """``max_ack_pending`` deliveries await an ack: no new message may go out."""
        limit = self.max_ack_pending
        return limit > 0 and len(self.pending) >= limit

    def ack_wait_ns(self, seq: int) -> int:
        """How long a delivery of ``seq`` waits for its ack (the backoff step for its redelivery count)."""
        backoff = self._consumer.config["backoff"]
        if backoff:
            return int(backoff[min(max(self.rdc.get(seq, 0), 0), len(backoff) - 1)]) + ACK_WAIT_DELAY
        return self._default_ack_wait_ns()

    def _default_ack_wait_ns(self) -> int:
        return int(self._consumer.config["ack_wait"]) + ACK_WAIT_DELAY

    def latest_ack_deadline_ns(self) -> int | None:
        """When the last outstanding delivery stops waiting for its ack (None: nothing pending)."""
        if not self.pending:
            return None
        return max(delivered_ns + self.ack_wait_ns(seq) for seq, (_, delivered_ns) in self.pending.items())

    # -- starting points -------------------------------------------------------------------

    def start_at(self, sseq: int) -> None:
        """A new consumer whose first delivery is stream sequence ``sseq``."""
        self.adflr = 0
        self.asflr = sseq - 1
        self.state.set_starting(sseq - 1)

    def restore(self) -> None:
        """Take up the persisted state (after a restart); the ack timer checks at once."""
        state = self.state
        self.adflr, self.asflr = state.ack_floor
        self.pending = {seq: list(entry) for seq, entry in state.pending.items()}
        self.rdc = dict(state.redelivered)
        if self.pending:
            self._arm(0.0)

    def reset(self, seq: int) -> None:
        """``resetStartingSeq``: forget everything; delivery starts again at ``seq``."""
        self.pending.clear()
        self.rdc.clear()
        self.rdq.clear()
        self.adflr, self.asflr = 0, seq - 1
        self.last_delivered_ns = self.last_ack_ns = 0
        self.state.reset(seq - 1)
        self.stop()

    def stop(self) -> None:
        """No more ack-wait checks (deleted, stopped or reset)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._deadline = None

    # -- deliveries ------------------------------------------------------------------------

    def record_delivery(self, dseq: int, sseq: int, dc: int, ts: int) -> None:
        """A delivery (or a delivery given up at ``max_deliver``) enters the persisted state."""
        self.last_delivered_ns = self._clock.time_ns()
        self.state.update_delivered(dseq, sseq, dc, ts)

    def acked_on_delivery(self, dseq: int, sseq: int) -> None:
        """``ack_policy: none``: a delivery is its own ack, the floor follows it."""
        self.adflr, self.asflr = dseq, sseq

    def track(self, sseq: int, dseq: int) -> None:
        """A delivery awaits its ack; the ack timer runs for it."""
        now = self._clock.time_ns()
        entry = self.pending.get(sseq)
        if entry is not None:
            entry[1] = now
        else:
            self.pending[sseq] = [dseq, now]
        delay = self.ack_wait_ns(sseq)
        deadline = self._clock.monotonic() + delay / NS
        if self._timer is None or (self._deadline is not None and self._deadline > deadline):
            self._arm(delay / NS)

    def delivery_count(self, seq: int) -> int:
        """nats-server's ``deliveryCount``: the redelivery counter, at least 1."""
        count = self.rdc.get(seq, 0)
        return count if count >= 1 else 1

    def next_redelivery(self) -> tuple[int, int] | None:
        """(stream seq, delivery count) of the next queued redelivery (``getNextMsg``'s first half).

        Redeliveries past ``max_deliver`` are dropped from the queue here,
        announced once and counted as delivered.
        """
        while self.rdq:
            seq = self.rdq.popleft()
            dc = self.rdc.get(seq, 0) + 1 + 1
            self.rdc[seq] = dc - 1
            if self.max_deliver and dc > self.max_deliver:
                if dc == self.max_deliver + 1:
                    self._on_max_deliveries(seq, dc - 1)
                entry = self.pending.pop(seq, None)
                if entry is not None:
                    self.record_delivery(entry[0], seq, dc, entry[1])
                    self.move_ack_floor(entry[0], seq)
                continue
            return seq, dc
        return None

    def uncount(self, seq: int) -> None:
        """A redelivery of ``seq`` did not happen after all: take back its count."""
        count = self.rdc.get(seq)
        if count is not None:
            self.rdc[seq] = count - 1
            if self.rdc[seq] <= 0:
                del self.rdc[seq]

    def uncount_missing(self, seq: int) -> None:
        """A queued redelivery's message is gone from the stream: take back the count just given."""
        self.rdc[seq] -= 1

    def take_back(self, seq: int) -> None:
        """A picked redelivery found no taker: uncount it and queue it again (once)."""
        if seq not in self.rdq:
            self.uncount(seq)
            self.rdq.append(seq)

    def requeue_pending(self, seq: int) -> None:
        """A delivery nobody received is redelivered, if it still awaits its ack."""
        if seq in self.pending and seq not in self.rdq:
            self.rdq.append(seq)

    def forget(self, seq: int) -> None:
        """``seq`` left the stream without pending: drop its redelivery count."""
        if seq in self.rdc:
            del self.rdc[seq]
            self.state.update_acks(0, seq)

    # -- acks --------------------------------------------------------------------------

    def move_ack_floor(self, dseq: int, sseq: int) -> None:
        """``moveAckFloor`` on the working state."""
        consumer = self._consumer
        if not self.pending:
            self.adflr, self.asflr = consumer.dseq - 1, consumer.sseq - 1
        elif dseq == self.adflr + 1:
            self.adflr, self.asflr = dseq, sseq
            for ss in range(sseq + 1, consumer.sseq):
                entry = self.pending.get(ss)
                if entry is not None:
                    if entry[0] > 0:
                        self.adflr, self.asflr = entry[0] - 1, ss - 1
                    break

    def ack(self, sseq: int, dseq: int) -> list[int] | None:
        """``processAckMsg`` for the explicit, all and flow_control policies.

        Returns the stream sequences the ack released, or None for an ``all``
        ack at or below the floor (nothing changes).
        """
        acked: list[int] = []
        if self._consumer.config["ack_policy"] == "explicit":
            entry = self.pending.pop(sseq, None)
            if entry is not None:
                dseq = entry[0]
                self.move_ack_floor(dseq, sseq)
                acked.append(sseq)
            self.rdc.pop(sseq, None)
            self.rdq.remove(sseq)
        else:
            if dseq <= self.adflr or sseq <= self.asflr:
                return None
            self.adflr, self.asflr = dseq, sseq
            for seq in [s for s in self.pending if s <= sseq]:
                del self.pending[seq]
                self.rdc.pop(seq, None)
                self.rdq.remove(seq)
                acked.append(seq)
        self.rdc.pop(sseq, None)
        self.state.update_acks(dseq, sseq)
        self.last_ack_ns = self._clock.time_ns()
        return acked

    def can_nak(self, sseq: int, dseq: int) -> bool:
        """A nak counts only for a delivery still pending above the floor."""
        return not (dseq <= self.adflr or dseq > self._consumer.dseq or sseq not in self.pending)

    def nak(self, sseq: int, delay: int | None) -> None:
        """Redeliver ``sseq`` now, or ``delay`` ns from now."""
        if delay is None:
            if sseq not in self.rdq:
                self.rdq.append(sseq)
            return
        self.rdq.remove(sseq)
        entry = self.pending.get(sseq)
        if entry is not None:
            entry[1] = self._clock.time_ns() - self._consumer.config["ack_wait"] + delay
            if self._timer is not None:
                self._arm(NAK_DELAY_RECHECK)

    def progress(self, seq: int) -> None:
        """``+WPI``: the ack wait of ``seq`` starts over."""
        entry = self.pending.get(seq)
        if entry is not None:
            entry[1] = self._clock.time_ns()

    # -- purges ------------------------------------------------------------------------

    def purged(self, start: int, wider: bool, is_stored: Callable[[int], bool]) -> bool:
        """A stream purge removed everything below ``start``: ack what it took away.

        With ``wider`` (a purge wider than the consumer's filter) any pending
        message the stream no longer holds is acked too.  Returns whether the
        ack floor moved past what was pending.
        """
        raised = False
        if self.asflr < start:
            self.asflr = start - 1
            for seq, (dseq, _) in list(self.pending.items()):
                if seq <= self.asflr or (wider and not is_stored(seq)):
                    if dseq > self.adflr:
                        self.adflr = dseq
                        raised = True
                    del self.pending[seq]
                    self.rdc.pop(seq, None)
                    self.state.update_acks(dseq, seq)
                    self.last_ack_ns = self._clock.time_ns()
        return raised

    def settle_after_purge(self) -> None:
        """After a purge: the floors follow the position when nothing is pending; persist all of it."""
        consumer = self._consumer
        if not self.pending:
            self.rdc.clear()
            self.adflr, self.asflr = consumer.dseq - 1, consumer.sseq - 1
        self.rdq.keep(lambda seq: seq >= consumer.sseq)
        self.state.overwrite([consumer.dseq - 1, consumer.sseq - 1], [self.adflr, self.asflr], self.pending, self.rdc)

    # -- the ack-wait timer -----------------------------------------------------------------

    def _arm(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._deadline = self._clock.monotonic() + delay
        self._timer = self._clock.call_later(delay, self.check_pending)

    def check_pending(self) -> None:
        """``checkPending``: queue expired deliveries for redelivery."""
        self._timer = None
        self._deadline = None
        consumer = self._consumer
        ttl = consumer.config["ack_wait"]
        if consumer.closed or ttl == 0:
            return
        now = self._clock.time_ns()
        expired, next_due = self._expired(ttl, now)
        if expired:
            expired.sort()
            self.rdq.extend(expired)
            offset = now - self.pending[expired[0]][1]
            for seq in expired:
                entry = self.pending.get(seq)
                if entry is not None:
                    entry[1] += offset
        if self.pending:
            self._arm(max(next_due, 0) / NS)
        else:
            self.rdq.clear()
            self.adflr, self.asflr = consumer.dseq - 1, consumer.sseq - 1
        if expired:
            consumer.kick()

    def _expired(self, ttl: int, now: int) -> tuple[list[int], int]:
        """Pending deliveries whose ack wait is over at ``now``, and ns until the next one is due."""
        first = self._first_stream_seq()
        backoff = self._consumer.config["backoff"]
        next_due = int(backoff[-1]) if backoff else self._default_ack_wait_ns()
        expired: list[int] = []
        for seq in list(self.pending):
            entry = self.pending[seq]
            if seq < first or seq <= self.asflr:
                self._drop_below_floor(seq, entry[0])
                continue
            elapsed, deadline = now - entry[1], ttl
            if backoff:
                count = max(self.rdc.get(seq, 0), 0)
                following = count + 1
                if count + 1 >= len(backoff):
                    count = len(backoff) - 1
                    following = count
                deadline = backoff[count]
                next_due = min(next_due, backoff[following])
            if elapsed >= deadline:
                if seq not in self.rdq and not self._has_max_deliveries(seq):
                    expired.append(seq)
            elif deadline - elapsed < next_due:
                next_due = deadline - elapsed
        return expired, next_due

    def _drop_below_floor(self, seq: int, dseq: int) -> None:
        del self.pending[seq]
        self.rdc.pop(seq, None)
        self.rdq.remove(seq)
        self.asflr = max(self.asflr, seq)
        self.adflr = max(self.adflr, dseq)

    def _has_max_deliveries(self, seq: int) -> bool:
        limit = self.max_deliver
        if not limit:
            return False
        count = self.delivery_count(seq)
        if count < limit:
            return False
        if count == limit:
            self._on_max_deliveries(seq, count)
        entry = self.pending.pop(seq, None)
        if entry is not None:
            self.record_delivery(entry[0], seq, count + 1, entry[1])
            self.move_ack_floor(entry[0], seq)
        self.rdc[seq] = count
        if self.max_ack_pending:
            self._consumer.kick()
        return True

    # -- what ConsumerInfo reports ---------------------------------------------------------

    def delivered_info(self, dseq: int, sseq: int) -> dict[str, int | str]:
        """``delivered``: the persisted counters, or the position (``dseq``, ``sseq``) before any state."""
        state = self.state
        if state.has_state():
            delivered: dict[str, int | str] = {"consumer_seq": state.delivered[0], "stream_seq": state.delivered[1]}
        else:
            delivered = {"consumer_seq": max(dseq, 1) - 1, "stream_seq": max(sseq, 1) - 1}
        if self.last_delivered_ns:
            delivered["last_active"] = gotime.rfc3339(self.last_delivered_ns)
        return delivered

    def ack_floor_info(self) -> dict[str, int | str]:
        """``ack_floor``: the persisted floor and when the last ack came."""
        floor = self.state.ack_floor
        ack_floor: dict[str, int | str] = {"consumer_seq": floor[0], "stream_seq": floor[1]}
        if self.last_ack_ns:
            ack_floor["last_active"] = gotime.rfc3339(self.last_ack_ns)
        return ack_floor
