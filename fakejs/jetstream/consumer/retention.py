"""A replicated interest or work-queue stream: acknowledged messages removed on every replica.

nats-server's consumers apply their replicated acks on every server
(``processReplicatedAck``) and tell their stream (``ackMsg``); the stream
then asks every consumer it has whether the message is still needed, each
from its own replica's stored state on a server that does not lead it
(``needAck``).  Only the stream's leader acts on the answer: it proposes the
message's removal to the stream's group (``streamMsgDelete``), so that every
replica removes it at the same place in the stream's log; the others leave
it to the leader.

:class:`AckRetention` is that for one server's replica of a stream
(:class:`~fakejs.jetstream.stream.replicated.ReplicatedStream`): it watches
the consumer replicas of the stream on the same server
(:meth:`AckRetention.watch`) and, where this server leads the stream,
proposes the removal of each message an ack released and no consumer needs
any more.  A consumer that does not acknowledge (``ack_policy: none``)
releases a message by delivering it.  Acks applied while the stream had no
leader here are not lost: a server that becomes the stream's leader looks
over every message the same way (nats-server's ``checkInterestState``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any

from fakejs.jetstream.consumer.entries import ConsumerAck, ConsumerDelivered, ConsumerEntry
from fakejs.jetstream.consumer.replica import ConsumerStateMachine, needs_ack
from fakejs.jetstream.replication import ProposalFailed
from fakejs.jetstream.stream.replicated import ReplicatedStream

__all__ = ["AckRetention"]


class AckRetention:
    """One server's replica of a replicated stream, dropping what its consumers' replicated acks released."""

    def __init__(self, stream: ReplicatedStream) -> None:
        self.stream = stream
        self.consumers: dict[str, tuple[ConsumerStateMachine, list[str]]] = {}
        self.removing: set[int] = set()  # removals proposed and not yet applied
        self._tasks: set[asyncio.Task[None]] = set()
        stream.machine.leader_observers.append(self._stream_leader_changed)

    def watch(self, name: str, machine: ConsumerStateMachine, filters: Sequence[str]) -> None:
        """``machine`` is this server's replica of the stream's consumer ``name`` (filtering on ``filters``); the
        same replica watched again (an update) only changes its filters."""
        known = self.consumers.get(name)
        self.consumers[name] = (machine, list(filters))
        if known is None or known[0] is not machine:
            machine.observers.append(_Watcher(self, machine))

    def forget(self, name: str) -> None:
        """The consumer ``name`` is gone from this server: the stream no longer asks it what it needs, and an
        interest stream's leader removes what nobody needs now, all of it once no consumer is left
        (nats-server's ``cleanupNoInterestMessages``)."""
        if self.consumers.pop(name, None) is None:
            return
        if self.stream.stream.config["retention"] != "interest" or not self.stream.is_leader:
            return
        if self.consumers:
            self.sweep()
        else:
            self._spawn(self._purge())

    def sweep(self) -> None:
        """The stream's leader: remove every message no consumer needs (none while it has no consumer)."""
        if self.consumers:
            self.released([msg.seq for msg in self.stream.stream.store])

    def released(self, sequences: Sequence[int]) -> None:
        """A consumer acknowledged ``sequences`` (``ackMsg``): the stream's leader removes what nobody needs."""
        retention = self.stream.stream.config["retention"]
        if retention == "limits" or not self.stream.is_leader:
            return
        store = self.stream.stream.store
        for seq in sequences:
            msg = store.get(seq)
            if msg is None or seq in self.removing:
                continue
            if any(needs_ack(machine.state, filters, seq, msg.subject) for machine, filters in self.consumers.values()):
                continue
            self.removing.add(seq)
            self._spawn(self._remove(seq))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _stream_leader_changed(self, leader: str | None, term: int) -> None:
        if self.stream.is_leader:
            self.sweep()

    async def _purge(self) -> None:
        try:
            await self.stream.purge()
        except ProposalFailed:
            pass  # leadership moved, or the stream is going

    async def _remove(self, seq: int) -> None:
        try:
            await self.stream.delete_message(seq)
        except ProposalFailed:
            pass  # leadership moved: the next leader decides again on the next ack
        finally:
            self.removing.discard(seq)


class _Watcher:
    """Tells the retention what one consumer replica's applied entries released."""

    def __init__(self, retention: AckRetention, machine: ConsumerStateMachine) -> None:
        self._retention = retention
        self._machine = machine

    def entry_applied(self, entry: ConsumerEntry, released: list[int]) -> None:
        if isinstance(entry, ConsumerAck):
            self._retention.released(released)
        elif isinstance(entry, ConsumerDelivered) and self._machine.state.ack_policy == "none":
            self._retention.released([entry.sseq])

    def restored(self) -> None:
        pass

    def leader_changed(self, leader: str | None, term: int) -> None:
        pass
