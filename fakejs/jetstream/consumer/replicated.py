"""A replicated consumer: its leader delivers and proposes what it did; every replica applies it to its state.

:class:`ReplicatedConsumer` joins one server's replica of a consumer to its
member of the consumer's group and to the
:class:`~fakejs.jetstream.consumer.replica.ConsumerStateMachine` the group
applies to.  Every replica keeps a :class:`~fakejs.jetstream.consumer.consumer.Consumer`
registered with its stream (the stream asks it about interest), and they all
share the replica's stored state (:class:`~fakejs.jetstream.storage.consumer_state.ConsumerState`).

Only the group's leader runs its consumer: it subscribes to pulls and acks and
delivers, as a standalone consumer does, with one difference: each change to
the stored state (a delivery, an ack, the first position, a reset) is also
proposed to the group, and applied on every replica's committed state, the
leader's included, once committed (nats-server's ``updateDelivered``/``updateAcks``
with a Raft node); what it proposes in one pass of the loop (a fetch's deliveries,
the acks that came in together) goes to the group as one append of consecutive
entries, as nats-server's consumer forwards its queued proposals.  The leader's consumer runs on a copy of the committed
state that takes each change at once (``ConsumerState.copy_ahead``), as
nats-server's leader keeps its in-memory state: its infos show a delivery or
an ack as soon as it happened; a new leader starts from the committed state.  An ack or a term with a reply (``AckSync``) is answered
once its entry is applied on the leader, as nats-server answers from
``processReplicatedAck``.  Each pull request that starts or stops waiting is
proposed too (``addPendingRequest``, ``removePendingRequest``): a member that
becomes leader tells the requests its predecessor left waiting that
leadership changed (409), since that one may be gone.

A member that becomes leader takes up from the replicated state
(``readStoredState``): the next delivery follows the last one delivered, the
pending deliveries and redelivery counts are restored, and the ack-wait timer
checks them at once, so what was delivered and not acknowledged is
redelivered once its ack wait is over, its delivery count going on.  A
member that stops leading forgets its waiting pulls without a word (the new
leader answers them, as nats-server's ``setLeader(false)`` resets its wait
queue), stops delivering, and keeps a fresh consumer for the next time it leads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fakejs.jetstream import status
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.consumer.consumer import Consumer
from fakejs.jetstream.consumer.entries import (
    ConsumerAck,
    ConsumerDelivered,
    ConsumerEntry,
    ConsumerReset,
    ConsumerSkip,
    PendingRequestAdded,
    PendingRequestRemoved,
    encode_entry,
)
from fakejs.jetstream.consumer.replica import ConsumerStateMachine
from fakejs.jetstream.replication import ReplicatedGroup
from fakejs.jetstream.storage.consumer_state import ConsumerState

__all__ = ["ReplicatedConsumer", "entry_of", "replica_state"]


def replica_state(config: ConsumerConfig) -> ConsumerState:
    """A new replica's stored state for a consumer of ``config`` (changed only by the group's entries)."""
    state = ConsumerState(config["ack_policy"], max(int(config["max_deliver"]), 0))
    state.replicated = True
    return state


def entry_of(record: list[object]) -> ConsumerEntry:
    """The entry a stored-state change (as :class:`ConsumerState` hands it to its proposer) is replicated as."""
    kind, *values = record
    numbers = [int(value) for value in values if isinstance(value, int)]
    if kind == "d" and len(numbers) == 4:
        return ConsumerDelivered(*numbers)
    if kind == "a" and len(numbers) == 2:
        return ConsumerAck(*numbers)
    if kind == "start" and len(numbers) == 1:
        return ConsumerSkip(numbers[0] + 1)
    if kind == "reset" and len(numbers) == 1:
        return ConsumerReset(numbers[0] + 1)
    raise ValueError(f"not a replicated change: {record!r}")


class ReplicatedConsumer:
    """One server's replica of a consumer, with its group member; its leader delivers (see the module docstring).

    ``make_consumer`` builds this server's consumer object (not started); it is
    called again each time the member stops leading.
    """

    def __init__(
        self, make_consumer: Callable[[], Consumer], machine: ConsumerStateMachine, group: ReplicatedGroup
    ) -> None:
        self.machine = machine
        self.group = group
        self.leading = False
        self._make_consumer = make_consumer
        self._acks_in_flight: dict[int, asyncio.Future[int]] = {}
        self.consumer = self._new_consumer()
        machine.observers.append(self)
        if group.is_leader:
            self._lead()

    @property
    def is_leader(self) -> bool:
        return self.group.is_leader

    @property
    def state(self) -> ConsumerState:
        return self.machine.state

    def stop(self) -> None:
        """Stop this replica (its server going down): the group member and the consumer."""
        self.group.stop()
        self.machine.state.proposer = None
        self.consumer.pulls.queue.on_waiting = None
        self.consumer.stop()
        self.consumer.stream.unregister_consumer(self.consumer)

    # -- what the state machine tells (ConsumerObserver) -------------------------------------------

    def entry_applied(self, entry: ConsumerEntry, released: list[int]) -> None:
        pass  # acks are answered from their proposals' futures

    def restored(self) -> None:
        pass

    def leader_changed(self, leader: str | None, term: int) -> None:
        leads = leader == self.group.peer and not self.group.stopped
        if leads and not self.leading:
            self._lead()
        elif self.leading and not leads:
            self._follow()

    # -- leading -----------------------------------------------------------------------------------

    def _new_consumer(self) -> Consumer:
        consumer = self._make_consumer()
        consumer.acks.state = self.machine.state
        consumer.stream.register_consumer(consumer)
        return consumer

    def _lead(self) -> None:
        """``setLeader(true)``: take up from the replicated state, then serve."""
        self.leading = True
        consumer = self.consumer
        left_waiting, self.machine.pending_requests = list(self.machine.pending_requests), {}
        for reply in left_waiting:  # ``checkPendingRequests``
            consumer.js.reply(reply, b"", status.leadership_change())
        state = consumer.acks.state = self.machine.state.copy_ahead(self._propose)
        consumer.pulls.queue.on_waiting = self._waiting
        if state.has_state():
            consumer.restore()
        else:
            consumer.select_start()
        consumer.ack_messages.answer_ack = self._answer_ack
        consumer.start()

    def _follow(self) -> None:
        """``setLeader(false)``: delivery stops, acks in flight go unanswered, the waiting pulls are forgotten
        here (the new leader tells them "409 Leadership Change", from the replicated state)."""
        self.leading = False
        self.machine.state.proposer = None
        self._acks_in_flight.clear()
        old = self.consumer
        old.pulls.queue.on_waiting = None
        old.pulls.queue.clear()
        old.stop()
        old.stream.unregister_consumer(old)
        self.consumer = self._new_consumer()

    def _waiting(self, reply: str, waiting: bool) -> None:
        entry = PendingRequestAdded(reply) if waiting else PendingRequestRemoved(reply)
        self.group.propose_soon(encode_entry(entry)).add_done_callback(_settled)

    def _propose(self, record: list[object]) -> None:
        entry = entry_of(record)
        future = self.group.propose_soon(encode_entry(entry))
        future.add_done_callback(_settled)
        if isinstance(entry, ConsumerAck):
            self._acks_in_flight[entry.sseq] = future
            future.add_done_callback(lambda _: self._ack_settled(entry.sseq, future))

    def _ack_settled(self, seq: int, future: asyncio.Future[int]) -> None:
        if self._acks_in_flight.get(seq) is future:
            del self._acks_in_flight[seq]

    def _answer_ack(self, seq: int, reply: str) -> None:
        """Answer an ack's reply once its entry is applied here (at once when it proposed nothing)."""
        future = self._acks_in_flight.get(seq)
        consumer = self.consumer
        if future is None:
            consumer.js.reply(reply, b"")
            return

        def answer(done: asyncio.Future[int]) -> None:
            if not done.cancelled() and done.exception() is None and not consumer.closed:
                consumer.js.reply(reply, b"")

        future.add_done_callback(answer)


def _settled(future: asyncio.Future[int]) -> None:
    """A proposal that failed (leadership lost, the member stopped) is dropped, as nats-server drops them."""
    if not future.cancelled():
        future.exception()
