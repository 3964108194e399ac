"""Where a consumer's delivery stands in its stream.

``sseq`` and ``dseq`` are the next stream and delivery sequences, ``npc``
counts the messages still to deliver (``npf`` is the stream sequence it was
last counted through, so a message is not counted twice), and a
``last_per_subject`` consumer first walks ``lss``, the last message of each
subject, before it resumes after ``lss_resume``.  The rules are
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
        self.sseq = 1
        self.dseq = 1
        self.npc = 0  # messages still to deliver
        self.npf = 0  # stream sequence npc was last counted through
        self.lss: list[int] | None = None  # last-per-subject sequences still to deliver, newest first
        self.lss_resume = 0
        self._cursor: MatchCursor | None = None  # walks a wildcard or multi-filter selection

    # -- start --------------------------------------------------------------------------

    def select_start(self, config: ConsumerConfig, store: MessageStore, filters: list[str], per_subject: int) -> None:
        """``selectStartingSeqNo``: where delivery begins for the deliver policy.

        ``per_subject`` is the stream's ``max_msgs_per_subject``.
        """
        first, last = store.first_seq, store.last_seq
        sseq = self._policy_start(config, store, filters, per_subject)
        if first == 0 and not config["opt_start_seq"]:
            sseq = 1
        elif sseq > last and not config["opt_start_seq"]:
            sseq = last + 1
        elif sseq < first:
            sseq = first
        self.sseq = sseq
        self.dseq = 1
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
            self.lss_resume = last
            if not seqs:
                return last
            self.lss = seqs[::-1]  # taken from the end: O(1) each
            return seqs[0]
        if config["opt_start_time"] is not None:
            return self._start_from_time(config["opt_start_time"].ns, store, filters)
        return last + 1  # new

    @staticmethod
    def _start_from_time(start_ns: int, store: MessageStore, filters: list[str]) -> int:
        first, last = store.first_seq, store.last_seq
        sseq = store.seq_from_time(start_ns)
        if filters:
            nseq = last
            for f in filters:
                msg = store.next_message(first, f)
                if msg is not None and msg.seq >= sseq and msg.seq < nseq:
                    nseq = msg.seq
            if sseq < nseq < last:
                sseq = nseq
        return sseq

    def restore(self, delivered: list[int], store: MessageStore, filters: list[str]) -> None:
        """Take up after the persisted ``delivered`` (consumer seq, stream seq) counters."""
        self.dseq = delivered[0] + 1
        self.sseq = delivered[1] + 1
        if self.sseq < store.first_seq:
            self.sseq = store.first_seq
        self.recount(store, filters)

    def reset(self, seq: int, store: MessageStore, filters: list[str]) -> None:
        """Deliver again from stream sequence ``seq``."""
        self.sseq, self.dseq = seq, 1
        self.lss = None
        self.recount(store, filters)

    # -- counting ------------------------------------------------------------------------

    def recount(self, store: MessageStore, filters: list[str]) -> None:
        """Count what is still to deliver from scratch."""
        self.npf = store.last_seq
        if self.lss is not None:
            self.npc = len(self.lss) + store.filtered_count(self.lss_resume + 1, filters)
        else:
            self.npc = store.filtered_count(self.sseq, filters)

    def stored(self, seq: int) -> None:
        """A new message the consumer is signaled for: one more to deliver unless counted already."""
        if seq > self.npf:
            self.npc += 1

    def removed(self, seq: int) -> None:
        """A message for this consumer left the stream: one less to deliver if it was still ahead."""
        if seq >= self.sseq:
            self.npc -= 1

    def purged(self, start: int, acked_dseq: int) -> None:
        """A purge removed everything below ``start``; the purge acked deliveries up to ``acked_dseq``."""
        if self.sseq < start:
            self.sseq = start
        if acked_dseq > self.dseq:
            self.dseq = acked_dseq

    def clamp(self, store: MessageStore) -> None:
        """``checkNumPending``: never more than the stream holds at or after ``sseq``."""
        if self.sseq > store.last_seq:
            self.npc = 0
        elif self.npc > 0:
            self.npc = min(self.npc, store.msgs, store.last_seq - self.sseq + 1)

    # -- picking new messages --------------------------------------------------------------

    def next_new(self, store: MessageStore, filters: list[str]) -> StoredMessage | None:
        """The next message never delivered before (``getNextMsg``'s second half), moving past it.

        A message returned counts as delivered (one less still to deliver);
        :meth:`put_back` undoes that when nobody takes it.
        """
        msg = self._next_last_per_subject(store) if self.lss else self._next_matching(store, filters)
        if msg is not None:
            self.npc -= 1
        return msg

    def _next_last_per_subject(self, store: MessageStore) -> StoredMessage | None:
        assert self.lss is not None
        seq = self.lss.pop()
        if not self.lss:
            self.lss = None
            self.sseq = self.lss_resume
        else:
            self.sseq = seq
        msg = store.get(seq)
        self.sseq += 1
        return msg

    def _next_matching(self, store: MessageStore, filters: list[str]) -> StoredMessage | None:
        """The first match from ``sseq``: amortised O(log n) with the position's own cursor."""
        cursor = self._cursor
        if cursor is None or not cursor.serves(store, filters):
            cursor = self._cursor = store.cursor(filters)
        msg = cursor.next(self.sseq)
        if msg is None:
            if store.last_seq >= self.sseq and not self._file_first_look(store):
                self.sseq = store.last_seq + 1
            return None
        self.sseq = msg.seq + 1
        return msg

    def _file_first_look(self, store: MessageStore) -> bool:
        """Whether a miss leaves ``sseq`` where it is: nats-server 2.15.1's file store, asked from the
        stream's first message for a filter nothing matches, answers sequence 0, so the consumer stays
        before the stream (its memory store answers the last sequence, past which the consumer moves)."""
        return store.storage == "file" and self.sseq <= store.first_seq

    def put_back(self, seq: int) -> bool:
        """Undo :meth:`next_new` for ``seq`` if it was the last message taken; whether it was."""
        if seq != self.sseq - 1:
            return False
        self.sseq -= 1
        self.npc += 1
        return True

    def take_delivery_seq(self) -> int:
        """The delivery sequence for a message going out now."""
        dseq = self.dseq
        self.dseq += 1
        return dseq
