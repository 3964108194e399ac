"""A replicated stream leader's proposals in flight: decided one after another, answered in that order once applied.

nats-server's leader proposes a message without waiting for the one before
it to be stored: it decides the next at the sequence after those in flight
(``clseq``).  :class:`Pipeline` does the same for what the leader may decide
without reading the state the messages in flight will make (a fast batch's
plain messages): each is decided at :meth:`Pipeline.next_seq`, proposed
without waiting (with the group's ``propose_soon``: those decided in one turn
of the loop together, in as few Raft appends as fit, as nats-server's leader
sends what its proposal queue holds), and queued with the replies it brought (flow acks, gaps, errors, the
final PubAck).  Those replies go out in the order the messages were decided,
each once its message (and every one before it) is applied on the leader,
so an answer still never counts a message a quorum has not stored.  A
message that proposed nothing (a ping, a gap, a refusal) has its replies
sent once those before it are out.

What must read the stream as the messages in flight leave it (a publish with
``Nats-Expected-*`` headers, a counter, a discard-new limit, any other
proposal) first waits for those decided before it (:meth:`Pipeline.drain`).
A mirror's messages, at the origin's sequences, go through it too, to be
proposed together.

A proposal that fails (the leadership moved meanwhile) answers nothing, nor
does any message decided after it in the same leadership while it waits here: their publishers
time out as they do when a plain publish is lost, and ``failed`` is called
once (the leader lets its batches go).  A change of leadership starts a new
one (:meth:`Pipeline.new_leadership`): what is still in flight from the last
settles as it was, and the next sequence is read from the store again.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.stream import publish

__all__ = ["Pipeline", "Replies"]

Replies = list[tuple[str, bytes]]  # (subject, payload) to send once what they answer is stored


ProposeSoon = Callable[[bytes], "asyncio.Future[int]"]  # the group's ``propose_soon``


@dataclass(slots=True)
class _Slot:
    """One decided message: its proposal (``None``: it proposed nothing), its replies."""

    proposed: asyncio.Future[int] | None
    replies: Replies
    msg_id: str
    leadership: int
    on_failed: Callable[[], None] | None  # told when its proposal fails

    @property
    def waiting(self) -> bool:
        """Whether its replies wait for its entry to be applied."""
        return self.proposed is not None and not self.proposed.done()


class Pipeline:
    """The proposals one stream's leader has in flight, with their replies (see the module docstring)."""

    def __init__(
        self, propose_soon: ProposeSoon, send: Callable[[str, bytes], None], failed: Callable[[], None]
    ) -> None:
        """``propose_soon`` proposes an entry to the stream's group with the others of the loop's turn; ``send``
        publishes a reply; ``failed`` is called when a proposal of the current leadership fails."""
        self._propose_soon = propose_soon
        self._send = send
        self._failed = failed
        self._slots: deque[_Slot] = deque()
        self._msg_ids: Counter[str] = Counter()  # the Nats-Msg-Id of the messages in flight
        self._last_proposed: asyncio.Future[int] | None = None
        self._leadership = 0
        self._broken = -1  # the leadership whose proposal failed: what it decided after is dropped
        self.last_seq = 0  # the last sequence decided in this leadership (0: none yet)

    def __len__(self) -> int:
        """The messages decided whose replies are not out yet."""
        return len(self._slots)

    def next_seq(self, stored_last: int) -> int:
        """The sequence of the next message decided, after ``stored_last`` (the store's) and those in flight."""
        return max(stored_last, self.last_seq) + 1

    def takes(self, config: StreamConfig, hdr: bytes | None) -> bool:
        """Whether a message may be decided while others are in flight: nothing it is checked against changes
        with what they store (their sequences aside), else it waits for them (:meth:`drain`)."""
        if not self._slots:
            return True
        if config["allow_msg_counter"]:
            return False
        if config["discard"] == "new" and (
            config["max_msgs"] > 0 or config["max_bytes"] > 0 or config["max_msgs_per_subject"] > 0
        ):
            return False
        if not hdr:
            return True
        lowered = hdr.lower()
        if b"nats-expected-" in lowered or b"nats-schedule" in lowered:
            return False
        msg_id = publish.msg_id(hdr)
        return not msg_id or msg_id not in self._msg_ids

    def add(
        self,
        data: bytes | None,
        replies: Replies,
        seq: int = 0,
        msg_id: str = "",
        on_failed: Callable[[], None] | None = None,
    ) -> None:
        """A decided message: its entry (of the message at ``seq``), or ``None``, and the replies it brought
        (``on_failed``: told if its proposal fails).  The entries decided in one turn of the loop are appended
        together (the group's ``propose_soon``)."""
        if data is None and not self._slots:
            for subject, payload in replies:
                self._send(subject, payload)
            return
        proposed = None
        if data is not None:
            self.last_seq = max(self.last_seq, seq)
            proposed = self._last_proposed = self._propose_soon(data)
        slot = _Slot(proposed, replies, msg_id, self._leadership, on_failed)
        self._slots.append(slot)
        if msg_id:
            self._msg_ids[msg_id] += 1
        if proposed is not None:
            proposed.add_done_callback(self._settled)

    def new_leadership(self) -> None:
        """The leadership changed: what follows is decided against the store, what is in flight settles as it was."""
        self._leadership += 1
        self.last_seq = 0

    async def drain(self) -> None:
        """Wait until every message decided so far is applied and answered (or dropped)."""
        last = self._last_proposed
        if last is not None:
            await asyncio.wait({last})  # its replies (and those before) go out just before

    def _settled(self, _: asyncio.Future[int]) -> None:
        slots = self._slots
        while slots and not slots[0].waiting:
            slot = slots.popleft()
            if slot.msg_id:
                self._forget(slot.msg_id)
            if slot.proposed is not None and (slot.proposed.cancelled() or slot.proposed.exception() is not None):
                self._break(slot.leadership)
                if slot.on_failed is not None:
                    slot.on_failed()
            if slot.leadership == self._broken:
                continue
            for subject, payload in slot.replies:
                self._send(subject, payload)
        if not slots:
            self._last_proposed = None
            self._broken = -1

    def _forget(self, msg_id: str) -> None:
        left = self._msg_ids[msg_id] - 1
        if left:
            self._msg_ids[msg_id] = left
        else:
            del self._msg_ids[msg_id]

    def _break(self, leadership: int) -> None:
        if leadership == self._broken:
            return
        self._broken = leadership
        if leadership == self._leadership:
            self._failed()
