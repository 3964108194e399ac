"""A consumer's acknowledgement state: pending acks, redeliveries, ack floors.

nats-server keeps two views of acknowledgement state: the consumer's
working state (``pending``, ``rdc``, ``rdq``, ``adflr``/``asflr``: here
``pending``, ``redelivery_counts``, ``redelivery_queue``,
``ack_floor_consumer``/``ack_floor_stream``) and the persisted consumer store
(:class:`~fakejs.jetstream.storage.consumer_state.ConsumerState`:
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
from fakejs.core.recorder import NO_RECORDER, Recorder
from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, Struct, unmarshal
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.consumer.redelivery_queue import RedeliveryQueue
from fakejs.jetstream.consumer.view import ConsumerName, ConsumerView
from fakejs.jetstream.storage.consumer_state import ConsumerState

ACK_WAIT_DELAY = 1_000_000  # nats-server adds 1ms to every ack deadline
NAK_DELAY_RECHECK = 0.010  # a nak with a delay re-runs checkPending this soon


def _number(token: str) -> int:
    """``parseAckReplyNum``: decimal digits, else -1."""
    if token and token.isdigit() and token.isascii():
        return int(token)
    return -1


_UINT64 = 2**64 - 1


def _as_uint64(value: int) -> int:
    """Go's uint64 cast."""
    return value & _UINT64


def ack_reply_info(subject: str) -> tuple[int, int, int]:
    """(stream seq, delivery seq, delivery count) from an ack subject; zeros when malformed."""
    tokens = subject.split(".")
    if (len(tokens) != 9 and len(tokens) < 11) or tokens[0] != "$JS" or tokens[1] != "ACK":
        return 0, 0, 0
    offset = 4 if len(tokens) >= 11 else 2
    count, stream, consumer = tokens[offset + 2 : offset + 5]
    # An ASCII subject (every ack a client sends back) has ASCII tokens: no joining them to ask.
    if subject.isascii() and count.isdigit() and stream.isdigit() and consumer.isdigit():
        return int(stream) & _UINT64, int(consumer) & _UINT64, int(count) & _UINT64  # the common case, in one go
    delivery_count = _as_uint64(_number(tokens[offset + 2]))
    stream_sequence = _as_uint64(_number(tokens[offset + 3]))
    consumer_sequence = _as_uint64(_number(tokens[offset + 4]))
    return stream_sequence, consumer_sequence, delivery_count


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

    ``pending`` maps stream sequences awaiting an ack to ``[consumer
    sequence, delivery time ns]``, ``redelivery_counts`` counts redeliveries,
    ``redelivery_queue`` is the redelivery queue,
    ``ack_floor_consumer``/``ack_floor_stream`` the ack floor (consumer and
    stream sequence).  ``first_stream_seq`` tells the tracker what the stream still
    holds; ``on_max_deliveries(seq, deliveries)`` announces a message that
    reached ``max_deliver``.
    """

    def __init__(
        self,
        consumer: ConsumerView,
        clock: Clock,
        first_stream_seq: Callable[[], int],
        on_max_deliveries: Callable[[int, int], None],
        recorder: Recorder = NO_RECORDER,
        name: ConsumerName | None = None,
    ) -> None:
        self._consumer = consumer
        # The timeline's redeliveries (see fakejs.core.recorder), and the naks whose delay is running.
        self._recorder = recorder
        self.name = name if name is not None else ConsumerName("", "")  # which consumer it keeps (its events name it)
        self._nak_delayed: set[int] = set()
        self._clock = clock
        self._first_stream_seq = first_stream_seq
        self._on_max_deliveries = on_max_deliveries
        config = consumer.config
        self.state = ConsumerState(config["ack_policy"], max(config["max_deliver"], 0))
        self.pending: dict[int, list[int]] = {}  # stream sequence -> [consumer sequence, timestamp ns]
        self.redelivery_counts: dict[int, int] = {}  # ``rdc`` in nats-server: stream sequence -> times redelivered
        self.redelivery_queue = RedeliveryQueue()  # ``rdq``
        self.ack_floor_consumer = 0  # ``adflr``: the ack floor's consumer (delivery) sequence
        self.ack_floor_stream = 0  # ``asflr``: the ack floor's stream sequence
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
        limit = int(self._consumer.config["max_ack_pending"])  # max_ack_pending, without the call
        return limit > 0 and len(self.pending) >= limit

    def ack_wait_ns(self, seq: int) -> int:
        """How long a delivery of ``seq`` waits for its ack (the backoff step for its redelivery count)."""
        backoff = self._consumer.config["backoff"]
        if backoff:
            return int(backoff[min(max(self.redelivery_counts.get(seq, 0), 0), len(backoff) - 1)]) + ACK_WAIT_DELAY
        return self._default_ack_wait_ns()

    def _default_ack_wait_ns(self) -> int:
        return int(self._consumer.config["ack_wait"]) + ACK_WAIT_DELAY

    def latest_ack_deadline_ns(self) -> int | None:
        """When the last outstanding delivery stops waiting for its ack (None: nothing pending)."""
        if not self.pending:
            return None
        return max(delivered_ns + self.ack_wait_ns(seq) for seq, (_, delivered_ns) in self.pending.items())

    # -- starting points -------------------------------------------------------------------

    def start_at(self, stream_sequence: int) -> None:
        """A new consumer whose first delivery is stream sequence ``stream_sequence``."""
        self.ack_floor_consumer = 0
        self.ack_floor_stream = stream_sequence - 1
        self.state.set_starting(stream_sequence - 1)

    def restore(self) -> None:
        """Take up the persisted state (after a restart); the ack timer checks at once."""
        state = self.state
        self.ack_floor_consumer, self.ack_floor_stream = state.ack_floor
        self.pending = {seq: list(entry) for seq, entry in state.pending.items()}
        self.redelivery_counts = dict(state.redelivered)
        if self.pending:
            self._arm(0.0)

    def reset(self, seq: int) -> None:
        """``resetStartingSeq``: forget everything; delivery starts again at ``seq``."""
        self.pending.clear()
        self.redelivery_counts.clear()
        self.redelivery_queue.clear()
        self.ack_floor_consumer, self.ack_floor_stream = 0, seq - 1
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

    def record_delivery(self, consumer_sequence: int, stream_sequence: int, delivery_count: int, ts: int) -> None:
        """A delivery (or a delivery given up at ``max_deliver``) enters the persisted state."""
        self.last_delivered_ns = self._clock.time_ns()
        self.state.update_delivered(consumer_sequence, stream_sequence, delivery_count, ts)

    def acked_on_delivery(self, consumer_sequence: int, stream_sequence: int) -> None:
        """``ack_policy: none``: a delivery is its own ack, the floor follows it."""
        self.ack_floor_consumer, self.ack_floor_stream = consumer_sequence, stream_sequence

    def delivered_acked(self, consumer_sequence: int, stream_sequence: int, delivery_count: int) -> None:
        """``ack_policy: none``: a delivery went out now, its own ack (:meth:`record_delivery` then
        :meth:`acked_on_delivery`, one clock read)."""
        now = self.last_delivered_ns = self._clock.time_ns()
        self.state.update_delivered(consumer_sequence, stream_sequence, delivery_count, now)
        self.ack_floor_consumer, self.ack_floor_stream = consumer_sequence, stream_sequence

    def delivered(self, consumer_sequence: int, stream_sequence: int, delivery_count: int) -> None:
        """A delivery that awaits its ack went out now: :meth:`record_delivery` then :meth:`track`, one clock read."""
        now = self.last_delivered_ns = self._clock.time_ns()
        self.state.update_delivered(consumer_sequence, stream_sequence, delivery_count, now)
        self._track(stream_sequence, consumer_sequence, now)

    def track(self, stream_sequence: int, consumer_sequence: int) -> None:
        """A delivery awaits its ack; the ack timer runs for it."""
        self._track(stream_sequence, consumer_sequence, self._clock.time_ns())

    def _track(self, stream_sequence: int, consumer_sequence: int, now: int) -> None:
        entry = self.pending.get(stream_sequence)
        if entry is not None:
            entry[1] = now
        else:
            self.pending[stream_sequence] = [consumer_sequence, now]
        config = self._consumer.config
        # ack_wait_ns(), without its two calls when there is no backoff
        delay = self.ack_wait_ns(stream_sequence) if config["backoff"] else int(config["ack_wait"]) + ACK_WAIT_DELAY
        deadline = self._clock.monotonic() + delay / NS
        if self._timer is None or (self._deadline is not None and self._deadline > deadline):
            self._arm(delay / NS)

    def delivery_count(self, seq: int) -> int:
        """nats-server's ``deliveryCount``: the redelivery counter, at least 1."""
        count = self.redelivery_counts.get(seq, 0)
        return count if count >= 1 else 1

    def next_redelivery(self) -> tuple[int, int] | None:
        """(stream seq, delivery count) of the next queued redelivery (``getNextMsg``'s first half).

        Redeliveries past ``max_deliver`` are dropped from the queue here,
        announced once and counted as delivered.
        """
        while self.redelivery_queue.queued:
            seq = self.redelivery_queue.popleft()
            delivery_count = self.redelivery_counts.get(seq, 0) + 1 + 1
            self.redelivery_counts[seq] = delivery_count - 1
            if self.max_deliver and delivery_count > self.max_deliver:
                if delivery_count == self.max_deliver + 1:
                    self._on_max_deliveries(seq, delivery_count - 1)
                entry = self.pending.pop(seq, None)
                if entry is not None:
                    self.record_delivery(entry[0], seq, delivery_count, entry[1])
                    self.move_ack_floor(entry[0], seq)
                continue
            return seq, delivery_count
        return None

    def uncount(self, seq: int) -> None:
        """A redelivery of ``seq`` did not happen after all: take back its count."""
        count = self.redelivery_counts.get(seq)
        if count is not None:
            self.redelivery_counts[seq] = count - 1
            if self.redelivery_counts[seq] <= 0:
                del self.redelivery_counts[seq]

    def uncount_missing(self, seq: int) -> None:
        """A queued redelivery's message is gone from the stream: take back the count just given."""
        self.redelivery_counts[seq] -= 1

    def take_back(self, seq: int) -> None:
        """A picked redelivery found no taker: uncount it and queue it again (once)."""
        if seq not in self.redelivery_queue:
            self.uncount(seq)
            self.redelivery_queue.append(seq)

    def requeue_pending(self, seq: int) -> None:
        """A delivery nobody received is redelivered, if it still awaits its ack."""
        if seq in self.pending and seq not in self.redelivery_queue:
            self.redelivery_queue.append(seq)

    def forget(self, seq: int) -> None:
        """``seq`` left the stream without pending: drop its redelivery count."""
        if seq in self.redelivery_counts:
            del self.redelivery_counts[seq]
            self.state.update_acks(0, seq)

    # -- acks --------------------------------------------------------------------------

    def move_ack_floor(self, consumer_sequence: int, stream_sequence: int) -> None:
        """``moveAckFloor`` on the working state."""
        consumer = self._consumer
        if not self.pending:
            self.ack_floor_consumer, self.ack_floor_stream = (
                consumer.next_consumer_sequence - 1,
                consumer.next_stream_sequence - 1,
            )
        elif consumer_sequence == self.ack_floor_consumer + 1:
            self.ack_floor_consumer, self.ack_floor_stream = consumer_sequence, stream_sequence
            for ss in range(stream_sequence + 1, consumer.next_stream_sequence):
                entry = self.pending.get(ss)
                if entry is not None:
                    if entry[0] > 0:
                        self.ack_floor_consumer, self.ack_floor_stream = entry[0] - 1, ss - 1
                    break

    def ack(self, stream_sequence: int, consumer_sequence: int) -> list[int] | None:
        """``processAckMsg`` for the explicit, all and flow_control policies.

        Returns the stream sequences the ack released, or None for an ``all``
        ack at or below the floor (nothing changes).
        """
        acked: list[int] = []
        if self._consumer.config["ack_policy"] == "explicit":
            entry = self.pending.pop(stream_sequence, None)
            if entry is not None:
                consumer_sequence = entry[0]
                self.move_ack_floor(consumer_sequence, stream_sequence)
                acked.append(stream_sequence)
            self.redelivery_counts.pop(stream_sequence, None)
            if self.redelivery_queue.queued:  # most acks find it empty: no call
                self.redelivery_queue.remove(stream_sequence)
        else:
            if consumer_sequence <= self.ack_floor_consumer or stream_sequence <= self.ack_floor_stream:
                return None
            self.ack_floor_consumer, self.ack_floor_stream = consumer_sequence, stream_sequence
            for seq in [s for s in self.pending if s <= stream_sequence]:
                del self.pending[seq]
                self.redelivery_counts.pop(seq, None)
                self.redelivery_queue.remove(seq)
                acked.append(seq)
        self.redelivery_counts.pop(stream_sequence, None)
        self.state.update_acks(consumer_sequence, stream_sequence)
        self.last_ack_ns = self._clock.time_ns()
        if self._nak_delayed:
            self._nak_delayed.difference_update(acked)
        return acked

    def can_nak(self, stream_sequence: int, consumer_sequence: int) -> bool:
        """A nak counts only for a delivery still pending above the floor."""
        return not (
            consumer_sequence <= self.ack_floor_consumer
            or consumer_sequence > self._consumer.next_consumer_sequence
            or stream_sequence not in self.pending
        )

    def nak(self, stream_sequence: int, delay: int | None) -> None:
        """Redeliver ``stream_sequence`` now, or ``delay`` ns from now."""
        if delay is None:
            if stream_sequence not in self.redelivery_queue:
                self.redelivery_queue.append(stream_sequence)
                if self._recorder:
                    self._record_redelivery(stream_sequence, "nak")
            return
        if self._recorder:
            self._nak_delayed.add(stream_sequence)
        self.redelivery_queue.remove(stream_sequence)
        entry = self.pending.get(stream_sequence)
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
        if self.ack_floor_stream < start:
            self.ack_floor_stream = start - 1
            for seq, (consumer_sequence, _) in list(self.pending.items()):
                if seq <= self.ack_floor_stream or (wider and not is_stored(seq)):
                    if consumer_sequence > self.ack_floor_consumer:
                        self.ack_floor_consumer = consumer_sequence
                        raised = True
                    del self.pending[seq]
                    self.redelivery_counts.pop(seq, None)
                    self.state.update_acks(consumer_sequence, seq)
                    self.last_ack_ns = self._clock.time_ns()
        return raised

    def settle_after_purge(self) -> None:
        """After a purge: the floors follow the position when nothing is pending; persist all of it."""
        consumer = self._consumer
        if not self.pending:
            self.redelivery_counts.clear()
            self.ack_floor_consumer, self.ack_floor_stream = (
                consumer.next_consumer_sequence - 1,
                consumer.next_stream_sequence - 1,
            )
        self.redelivery_queue.keep(lambda seq: seq >= consumer.next_stream_sequence)
        self.state.overwrite(
            [consumer.next_consumer_sequence - 1, consumer.next_stream_sequence - 1],
            [self.ack_floor_consumer, self.ack_floor_stream],
            self.pending,
            self.redelivery_counts,
        )

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
            self.redelivery_queue.extend(expired)
            offset = now - self.pending[expired[0]][1]
            for seq in expired:
                entry = self.pending.get(seq)
                if entry is not None:
                    entry[1] += offset
            if self._recorder:
                self._record_expired(expired, consumer.config["backoff"])
        if self.pending:
            self._arm(max(next_due, 0) / NS)
        else:
            self.redelivery_queue.clear()
            self.ack_floor_consumer, self.ack_floor_stream = (
                consumer.next_consumer_sequence - 1,
                consumer.next_stream_sequence - 1,
            )
        if expired:
            consumer.kick()

    def _record_expired(self, expired: list[int], backoff: list[int]) -> None:
        for seq in expired:
            if seq in self._nak_delayed:
                self._nak_delayed.discard(seq)
                self._record_redelivery(seq, "nak")
            else:
                self._record_redelivery(seq, "backoff" if backoff else "ack_wait")

    def _record_redelivery(self, seq: int, cause: str) -> None:
        name = self.name
        self._recorder.record("redeliver", stream=name.stream, consumer=name.consumer, stream_seq=seq, cause=cause)

    def _expired(self, ttl: int, now: int) -> tuple[list[int], int]:
        """Pending deliveries whose ack wait is over at ``now``, and ns until the next one is due."""
        first = self._first_stream_seq()
        backoff = self._consumer.config["backoff"]
        next_due = int(backoff[-1]) if backoff else self._default_ack_wait_ns()
        expired: list[int] = []
        for seq in list(self.pending):
            entry = self.pending[seq]
            if seq < first or seq <= self.ack_floor_stream:
                self._drop_below_floor(seq, entry[0])
                continue
            elapsed, deadline = now - entry[1], ttl
            if backoff:
                count = max(self.redelivery_counts.get(seq, 0), 0)
                following = count + 1
                if count + 1 >= len(backoff):
                    count = len(backoff) - 1
                    following = count
                deadline = backoff[count]
                next_due = min(next_due, backoff[following])
            if elapsed >= deadline:
                if seq not in self.redelivery_queue and not self._has_max_deliveries(seq):
                    expired.append(seq)
            elif deadline - elapsed < next_due:
                next_due = deadline - elapsed
        return expired, next_due

    def _drop_below_floor(self, seq: int, consumer_sequence: int) -> None:
        del self.pending[seq]
        self.redelivery_counts.pop(seq, None)
        self.redelivery_queue.remove(seq)
        self.ack_floor_stream = max(self.ack_floor_stream, seq)
        self.ack_floor_consumer = max(self.ack_floor_consumer, consumer_sequence)

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
        self.redelivery_counts[seq] = count
        if self.max_ack_pending:
            self._consumer.kick()
        return True

    # -- what ConsumerInfo reports ---------------------------------------------------------

    def delivered_info(self, next_consumer_sequence: int, next_stream_sequence: int) -> dict[str, int | str]:
        """``delivered``: the persisted counters, or before any state the position's next sequences less one."""
        state = self.state
        if state.has_state():
            delivered: dict[str, int | str] = {"consumer_seq": state.delivered[0], "stream_seq": state.delivered[1]}
        else:
            delivered = {
                "consumer_seq": max(next_consumer_sequence, 1) - 1,
                "stream_seq": max(next_stream_sequence, 1) - 1,
            }
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
