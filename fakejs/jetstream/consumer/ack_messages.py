"""What clients send on a consumer's ack subject, and what each message does.

Ack payloads (on ``$JS.ACK.<stream>.<consumer>.<delivery_count>.<stream_sequence>.<consumer_sequence>.<ts>.<pending>``):
empty, ``+ACK`` or ``+OK`` ack; ``-NAK`` [JSON ``{"delay":ns}`` or a Go
duration] redelivers; ``+WPI`` restarts the ack timer; ``+NXT`` acks and
requests more; ``+TERM`` [reason] stops redelivery.  An ack with a reply
subject gets an empty message back, except for ``+NXT``.  The
:class:`~fakejs.jetstream.consumer.ack_tracker.AckTracker` applies them;
this module answers, lets work-queue and interest streams drop what was
acked, and raises the advisories.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fakejs.core.read_deferrals import ReadDeferrals
from fakejs.jetstream.consumer.ack_tracker import AckTracker, ack_reply_info, nak_delay
from fakejs.jetstream.consumer.view import ConsumerView, Reply
from fakejs.jetstream.consumer.waiting_acks import WaitingAck, WaitingAcks

if TYPE_CHECKING:
    from fakejs.jetstream.stream.stream import Stream


class AckMessages:
    """Reads the consumer's ack subject and applies each message to the ack tracker.

    ``release(seq)`` lets a work-queue or interest stream drop a message this
    consumer is done with; ``pull(reply, payload)`` serves ``+NXT``'s request; ``on_activity`` tells
    the inactivity countdown an ack came; ``on_nak(stream_sequence, consumer_sequence, delivery_count)`` and
    ``on_terminated(stream_sequence, consumer_sequence, delivery_count, reason)`` raise the advisories, and
    ``on_ack_sample(stream_sequence, consumer_sequence, delivery_count, delivered_ns)`` the ack metric of an
    explicit ``+ACK`` or ``+NXT`` of a pending message (sampled there; only called when the consumer has a
    ``sample_freq``).

    ``answer_ack(stream_sequence, reply)`` answers an ack or a term that asked
    for a reply (``AckSync``, a double ack): at once by default; a replicated
    consumer's leader sets it to answer once a quorum stored the ack.

    A pull consumer's plain acks (explicit policy, its state not replicated) that a client read brings wait
    for that read's end in :attr:`waiting` (``deferrals``, the server's; ``pull_subject``, this consumer's
    ``MSG.NEXT``), as nats-server's consumer applies them on its own goroutine: a pull in the same read is
    served first when what it gets cannot depend on them (:meth:`before_pull`).
    """

    def __init__(
        self,
        consumer: ConsumerView,
        acks: AckTracker,
        stream: Stream,
        reply: Reply,
        release: Callable[[int], None],
        pull: Callable[[str, bytes], None],
        on_activity: Callable[[], None],
        on_nak: Callable[[int, int, int], None],
        on_terminated: Callable[[int, int, int, str], None],
        on_ack_sample: Callable[[int, int, int, int], None],
        deferrals: ReadDeferrals,
        pull_subject: str,
    ) -> None:
        self._consumer = consumer
        self._acks = acks
        self._stream = stream
        self._reply = reply
        self._release = release
        self._pull = pull
        self._on_activity = on_activity
        self._on_nak = on_nak
        self._on_terminated = on_terminated
        self._on_ack_sample = on_ack_sample
        self._recorder = stream.timeline  # the server's timeline (see fakejs.core.recorder)
        self._recording = bool(self._recorder)  # a recorder's truth never changes: one test, not one per ack
        self.answer_ack: Callable[[int, str], None] = self._answer_now
        self._deferrals = deferrals
        self.waiting = WaitingAcks(deferrals, pull_subject, self._apply_waiting)

    def _answer_now(self, stream_sequence: int, reply: str) -> None:
        self._reply(reply, b"")

    def receive(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        """One message on the ack subject (the consumer's internal subscription hands it here):
        apply it, answer it, then let the consumer deliver."""
        consumer = self._consumer
        if consumer.closed:
            return
        plain = not payload or payload in (b"+ACK", b"+OK")
        if plain and self._deferrals.reading:
            config = consumer.config
            if config["ack_policy"] == "explicit" and not config["deliver_subject"] and not self._acks.state.replicated:
                if self._recording:  # the timeline has it as it came
                    self._record(payload, *ack_reply_info(subject))
                self.waiting.hold(subject, reply)
                return
        if self.waiting.acks:  # the acks before this message are applied before it
            self.waiting.apply_now()
        self._on_activity()
        stream_sequence, consumer_sequence, delivery_count = ack_reply_info(subject)
        if self._recording:
            self._record(payload, stream_sequence, consumer_sequence, delivery_count)
        skip_reply = stream_sequence == 0
        acking = False  # an ack or a term: its reply may wait for the ack to be stored
        if plain:
            acking = True
            if not self.ack(stream_sequence, consumer_sequence, reply, sampled_delivery_count=delivery_count):
                skip_reply = True
        elif payload.startswith(b"+NXT"):
            self.ack(stream_sequence, consumer_sequence, "", sampled_delivery_count=delivery_count)
            self._pull(reply, payload[4:])
            skip_reply = True
        elif payload.startswith(b"-NAK"):
            self.nak(stream_sequence, consumer_sequence, delivery_count, payload)
        elif payload == b"+WPI":
            self._acks.progress(stream_sequence)
        elif payload.startswith(b"+TERM"):
            acking = True
            reason = payload[5:].strip().decode("utf-8", "replace")
            if not self.terminate(stream_sequence, consumer_sequence, delivery_count, reason, reply):
                skip_reply = True
        if reply and not skip_reply:
            if acking:
                self.answer_ack(stream_sequence, reply)
            else:
                self._reply(reply, b"")
        self._consumer.kick()

    def _apply_waiting(self, acks: list[WaitingAck]) -> None:
        """Plain acks that waited for their read's end, applied in order (as :meth:`receive` would have)."""
        if self._consumer.closed:
            return
        self._on_activity()
        for subject, reply in acks:
            stream_sequence, consumer_sequence, delivery_count = ack_reply_info(subject)
            applied = self.ack(stream_sequence, consumer_sequence, reply, sampled_delivery_count=delivery_count)
            if reply and applied and stream_sequence != 0:
                self.answer_ack(stream_sequence, reply)
        self._consumer.kick()

    def before_pull(self, batch: int) -> None:
        """A pull of ``batch`` messages is about to be served: the acks still waiting are applied first unless
        what it gets cannot depend on them (no redelivery queued, no priority groups, room under
        ``max_ack_pending`` for the whole batch)."""
        if not self.waiting.acks:
            return
        config = self._consumer.config
        limit = config["max_ack_pending"]
        acks = self._acks
        prioritized = config["priority_groups"] or config["priority_policy"] != "none"
        if acks.redelivery_queue.queued or prioritized or (limit > 0 and len(acks.pending) + batch > limit):
            self.waiting.apply_now()

    def _record(self, payload: bytes, stream_sequence: int, consumer_sequence: int, delivery_count: int) -> None:
        """The timeline's ``ack``, ``nak``, ``term`` or ``progress`` event of one message on the ack subject."""
        name = self._acks.name
        if not payload or payload in (b"+ACK", b"+OK") or payload.startswith(b"+NXT"):  # one per message: by position
            values = (name.stream, name.consumer, stream_sequence, consumer_sequence, delivery_count)
            self._recorder.record_values("ack", values)
            return
        names = {"stream": name.stream, "consumer": name.consumer}
        seqs = {"stream_seq": stream_sequence, "consumer_seq": consumer_sequence, "delivery_count": delivery_count}
        if payload.startswith(b"-NAK"):
            self._recorder.record("nak", **names, **seqs, delay=nak_delay(payload))
        elif payload == b"+WPI":
            self._recorder.record("progress", **names, **seqs)
        elif payload.startswith(b"+TERM"):
            self._recorder.record("term", **names, **seqs, reason=payload[5:].strip().decode("utf-8", "replace"))

    def ack(
        self, stream_sequence: int, consumer_sequence: int, reply: str, sampled_delivery_count: int | None = None
    ) -> bool:
        """``processAckMsg``; returns whether the ack was applied "in place" (the caller answers).

        ``sampled_delivery_count``: the delivery count of an ack that may be sampled for the ack metric.
        """
        if stream_sequence >= self._consumer.next_stream_sequence:
            return False
        in_place = bool(self._stream.config["retention"] != "limits")
        if self._consumer.config["ack_policy"] == "none":
            return in_place
        pending = self._acks.pending.get(stream_sequence)
        if (
            sampled_delivery_count is not None
            and pending is not None
            and self._consumer.config["ack_policy"] == "explicit"
            and self._consumer.config.get("sample_freq")  # unsampled (the usual case): no call on every ack
        ):
            self._on_ack_sample(stream_sequence, consumer_sequence, sampled_delivery_count, pending[1])
        acked = self._acks.ack(stream_sequence, consumer_sequence)
        if acked is None:
            return True  # an ack at or below the floor of an ack-all consumer
        if reply and not in_place:
            self.answer_ack(stream_sequence, reply)
        if in_place:
            for seq in acked:
                self._release(seq)
        return in_place

    def nak(self, stream_sequence: int, consumer_sequence: int, delivery_count: int, payload: bytes) -> None:
        """``processNak``: redeliver now or after the delay the payload asks for."""
        if not self._acks.can_nak(stream_sequence, consumer_sequence):
            return
        self._on_nak(stream_sequence, consumer_sequence, delivery_count)
        self._acks.nak(stream_sequence, nak_delay(payload))

    def terminate(
        self, stream_sequence: int, consumer_sequence: int, delivery_count: int, reason: str, reply: str
    ) -> bool:
        """``processTerm``: an ack that stops redelivery, with an advisory."""
        in_place = self.ack(stream_sequence, consumer_sequence, reply)
        self._on_terminated(stream_sequence, consumer_sequence, delivery_count, reason)
        return in_place
