"""Where a consumer's delivery stands in its stream.

``next_stream_sequence`` and ``next_consumer_sequence`` are the next stream
and consumer (delivery) sequences, ``num_pending`` counts the messages still
to deliver (``num_pending_floor`` is the stream sequence it was last counted
through, so a message is not counted twice), and a ``last_per_subject``
consumer first walks ``last_per_subject_seqs``, the last message of each
subject, before it resumes after ``last_per_subject_resume``.  The rules are
nats-server's ``selectStartingSeqNo``, ``getNextMsg`` (new messages) and
``streamNumPending``; the message store is passed in, so a position can be
exercised on a bare :class:`~fakejs.jetstream.storage.store.MessageStore`.
"""

from __future__ import annotations

from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.storage.store import MatchCursor, MessageStore, StoredMessage


def reset_start(config: ConsumerConfig, seq: int, ack_floor: int, store: MessageStore) -> int:
    """``resetStartingSeq``'s checks: where a reset to ``seq`` starts (0: after ``ack_floor``).

    Only ``all``, ``by_start_sequence`` and ``by_start_time`` consumers may
    reset to a given sequence, and never below their start.
    """
    policy = config["deliver_policy"]
    if seq == 0:
        seq = ack_floor + 1
    elif policy == "all":
        pass
    elif policy == "by_start_sequence":
        if seq < config["opt_start_seq"]:
            raise api_error("JSConsumerInvalidResetErr", err="below start seq")
    elif policy == "by_start_time":
        start_time = config["opt_start_time"]
        assert start_time is not None  # validated when the consumer was created
        if seq < store.seq_from_time(start_time.ns):
            raise api_error("JSConsumerInvalidResetErr", err="below start time")
    else:
        raise api_error("JSConsumerInvalidResetErr", err="not allowed")
    return max(seq, 1)


class DeliveryPosition:
    """The delivery cursor: the next sequences and what is still to deliver."""

    def __init__(self) -> None:
        self.next_stream_sequence = 1  # ``sseq`` in nats-server
        self.next_consumer_sequence = 1  # ``dseq`` in nats-server: the consumer sequence of the next delivery
        self.num_pending = 0  # ``npc``: messages still to deliver
        self.num_pending_floor = 0  # ``npf``: the stream sequence num_pending was last counted through
        # ``lss.seqs``: the last-per-subject sequences still to deliver, newest first; ``lss.resume`` after them.
        self.last_per_subject_seqs: list[int] | None = None
        self.last_per_subject_resume = 0
        self._cursor: MatchCursor | None = None  # walks a wildcard or multi-filter selection

    # -- start --------------------------------------------------------------------------

    def select_start(self, config: ConsumerConfig, store: MessageStore, filters: list[str], per_subject: int) -> None:
        """``selectStartingSeqNo``: where delivery begins for the deliver policy.

        ``per_subject`` is the stream's ``max_msgs_per_subject``.
        """
        first, last = store.first_seq, store.last_seq
        stream_sequence = self._policy_start(config, store, filters, per_subject)
        if first == 0 and not config["opt_start_seq"]:
            stream_sequence = 1
        elif stream_sequence > last and not config["opt_start_seq"]:
            stream_sequence = last + 1
        elif stream_sequence < first:
            stream_sequence = first
        self.next_stream_sequence = stream_sequence
        self.next_consumer_sequence = 1
        self.recount(store, filters)

    def _policy_start(self, config: ConsumerConfig, store: MessageStore, filters: list[str], per_subject: int) -> int:
        first, last = store.first_seq, store.last_seq
        policy = config["deliver_policy"]
        if config["opt_start_seq"]:
            return int(config["opt_start_seq"])
        if policy == "all":
            return first
        if policy == "last":
            if not filters:
                return last
            found = [msg.seq for msg in map(store.last_message, filters) if msg is not None]
            return max(found, default=0)
        if policy == "last_per_subject":
            if per_subject == 1:
                return first
            seqs = [m.seq for m in store.last_for_subjects(filters)]
            self.last_per_subject_resume = last
            if not seqs:
                return last
            self.last_per_subject_seqs = seqs[::-1]  # taken from the end: O(1) each
            return seqs[0]
        if config["opt_start_time"] is not None:
            return self._start_from_time(config["opt_start_time"].ns, store, filters)
        return last + 1  # new

    @staticmethod
    def _start_from_time(start_ns: int, store: MessageStore, filters: list[str]) -> int:
        first, last = store.first_seq, store.last_seq
        stream_sequence = store.seq_from_time(start_ns)
        if filters:
            nseq = last
            for f in filters:
                msg = store.next_message(first, f)
                if msg is not None and msg.seq >= stream_sequence and msg.seq < nseq:
                    nseq = msg.seq
            if stream_sequence < nseq < last:
                stream_sequence = nseq
        return stream_sequence

    def restore(self, delivered: list[int], store: MessageStore, filters: list[str]) -> None:
        """Take up after the persisted ``delivered`` (consumer seq, stream seq) counters."""
        self.next_consumer_sequence = delivered[0] + 1
        self.next_stream_sequence = delivered[1] + 1
        if self.next_stream_sequence < store.first_seq:
            self.next_stream_sequence = store.first_seq
        self.recount(store, filters)

    def reset(self, seq: int, store: MessageStore, filters: list[str]) -> None:
        """Deliver again from stream sequence ``seq``."""
        self.next_stream_sequence, self.next_consumer_sequence = seq, 1
        self.last_per_subject_seqs = None
        self.recount(store, filters)

    # -- counting ------------------------------------------------------------------------

    def recount(self, store: MessageStore, filters: list[str]) -> None:
        """Count what is still to deliver from scratch."""
        self.num_pending_floor = store.last_seq
        if self.last_per_subject_seqs is not None:
            self.num_pending = len(self.last_per_subject_seqs) + store.filtered_count(
                self.last_per_subject_resume + 1, filters
            )
        else:
            self.num_pending = store.filtered_count(self.next_stream_sequence, filters)

    def stored(self, seq: int) -> None:
        """A new message the consumer is signaled for: one more to deliver unless counted already."""
        if seq > self.num_pending_floor:
            self.num_pending += 1

    def removed(self, seq: int) -> None:
        """A message for this consumer left the stream: one less to deliver if it was still ahead."""
        if seq >= self.next_stream_sequence:
            self.num_pending -= 1

    def purged(self, start: int, acked_dseq: int) -> None:
        """A purge removed everything below ``start``; the purge acked deliveries up to ``acked_dseq``."""
        if self.next_stream_sequence < start:
            self.next_stream_sequence = start
        if acked_dseq > self.next_consumer_sequence:
            self.next_consumer_sequence = acked_dseq

    def clamp(self, store: MessageStore) -> None:
        """``checkNumPending``: never more than the stream holds at or after ``next_stream_sequence``."""
        if self.next_stream_sequence > store.last_seq:
            self.num_pending = 0
        elif self.num_pending > 0:
            self.num_pending = min(self.num_pending, store.msgs, store.last_seq - self.next_stream_sequence + 1)

    # -- picking new messages --------------------------------------------------------------

    def next_new(self, store: MessageStore, filters: list[str]) -> StoredMessage | None:
        """The next message never delivered before (``getNextMsg``'s second half), moving past it.

        A message returned counts as delivered (one less still to deliver);
        :meth:`put_back` undoes that when nobody takes it.
        """
        if self.last_per_subject_seqs:
            msg = self._next_last_per_subject(store)
        else:
            # the first match from next_stream_sequence: amortised O(log n) with the position's own cursor
            cursor = self._cursor
            if cursor is None or not cursor.serves(store, filters):
                cursor = self._cursor = store.cursor(filters)
            msg = cursor.next(self.next_stream_sequence)
            if msg is None:
                self._missed(store)
                return None
            self.next_stream_sequence = msg.seq + 1
        if msg is not None:
            self.num_pending -= 1
        return msg

    def _next_last_per_subject(self, store: MessageStore) -> StoredMessage | None:
        assert self.last_per_subject_seqs is not None
        seq = self.last_per_subject_seqs.pop()
        if not self.last_per_subject_seqs:
            self.last_per_subject_seqs = None
            self.next_stream_sequence = self.last_per_subject_resume
        else:
            self.next_stream_sequence = seq
        msg = store.get(seq)
        self.next_stream_sequence += 1
        return msg

    def _missed(self, store: MessageStore) -> None:
        """Nothing matches from ``next_stream_sequence``: move past the stream's end (see :meth:`_file_first_look`)."""
        if store.last_seq >= self.next_stream_sequence and not self._file_first_look(store):
            self.next_stream_sequence = store.last_seq + 1

    def _file_first_look(self, store: MessageStore) -> bool:
        """Whether a miss leaves ``next_stream_sequence`` where it is: nats-server 2.15.1's file store, asked from the
        stream's first message for a filter nothing matches, answers sequence 0, so the consumer stays
        before the stream (its memory store answers the last sequence, past which the consumer moves)."""
        return store.storage == "file" and self.next_stream_sequence <= store.first_seq

    def put_back(self, seq: int) -> bool:
        """Undo :meth:`next_new` for ``seq`` if it was the last message taken; whether it was."""
        if seq != self.next_stream_sequence - 1:
            return False
        self.next_stream_sequence -= 1
        self.num_pending += 1
        return True

    def take_delivery_seq(self) -> int:
        """The delivery sequence for a message going out now."""
        consumer_sequence = self.next_consumer_sequence
        self.next_consumer_sequence += 1
        return consumer_sequence
