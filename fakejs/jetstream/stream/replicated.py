"""A replicated stream's leader: a publish checked here, proposed to the stream's group, answered once applied.

:class:`ReplicatedStream` joins a server's :class:`~fakejs.jetstream.stream.stream.Stream`
to its member of the stream's group and to the
:class:`~fakejs.jetstream.stream.replica.StreamStateMachine` the group applies to.
:meth:`ReplicatedStream.publish` is nats-server's ``processClusteredInboundMsg``:
on the leader, the publish meets the same checks as on a standalone stream
(:meth:`~fakejs.jetstream.stream.publish_path.StreamPublisher.check_publish` and
:meth:`~fakejs.jetstream.stream.publish_path.StreamPublisher.prepare_message`); the
:class:`~fakejs.jetstream.stream.entries.StreamMessage` they decide is
proposed, and the PubAck (the same bytes a standalone stream sends) comes once
a quorum stored it and the leader applied it.  A refusal or a duplicate is
answered at once, and proposes nothing.

Publishes are taken one at a time: the next is checked once the one before
it is applied, so that every check reads the state the entries before it
made (nats-server tracks what is in flight instead, and checks against it).
A fast batch's messages are the exception: those whose checks read nothing
the messages in flight change are proposed one after another without
waiting (:class:`~fakejs.jetstream.stream.pipeline.Pipeline`), and every other
publish waits for them first (:meth:`ReplicatedStream.drain`).
:meth:`ReplicatedStream.answer` takes any publish on the stream's subjects,
the messages of atomic and fast batches too
(:mod:`fakejs.jetstream.stream.replicated_batches`);
:meth:`ReplicatedStream.answer_at_once` takes a plain one with no task when
the turn (:class:`~fakejs.jetstream.stream.turn.Turn`) is free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.replication import NotLeader, ReplicatedGroup
from fakejs.jetstream.stream.entries import StreamDelete, StreamEntry, StreamMessage, StreamPurge, encode_entry
from fakejs.jetstream.stream.fast_batch import is_fast_batch
from fakejs.jetstream.stream.publish import Checked, Outcome
from fakejs.jetstream.stream.replica import StreamStateMachine
from fakejs.jetstream.stream.replicated_batches import ReplicatedBatches, Replies
from fakejs.jetstream.stream.stream import Stream
from fakejs.jetstream.stream.turn import Turn

__all__ = ["ReplicatedStream"]


@dataclass(slots=True)
class _Proposed:
    """A publish whose entry is proposed: what its PubAck and the timeline's ``publish`` event need."""

    proposal: asyncio.Future[int]
    entry: StreamMessage
    checked: Checked
    subject: str
    hdr: bytes | None
    size: int
    recording: bool
    client: int
    client_node: str


class ReplicatedStream:
    """One server's replica of a stream, with its group member; its leader takes publishes (see the module
    docstring)."""

    def __init__(self, stream: Stream, machine: StreamStateMachine, group: ReplicatedGroup) -> None:
        self.stream = stream
        self.machine = machine
        self.group = group
        self.turn = Turn()
        self.batches = ReplicatedBatches(stream, group)
        self.pipeline = self.batches.pipeline  # the messages proposed and not yet answered
        machine.on_fast = self.batches.applied

    @property
    def is_leader(self) -> bool:
        return self.group.is_leader

    async def answer(
        self, subject: str, reply: str, hdr: bytes | None, payload: bytes, client: int = 0, client_node: str = ""
    ) -> Replies:
        """A publish on the stream's subjects, a batch's message or not: the replies to send (raises as
        :meth:`publish` does; ``client`` and ``client_node`` as there)."""
        fast = is_fast_batch(reply)
        batch_id = "" if fast else self.batches.atomic_id(hdr)
        if not fast and not batch_id:
            ack = await self.publish(subject, hdr, payload, client, client_node)
            return [(reply, ack)] if reply and not self.stream.config["no_ack"] else []
        self._lead()
        subject = self.stream.input_subject(subject)
        async with self.turn:
            if not fast or not self.pipeline.takes(self.stream.config, hdr or None):
                await self.drain()
            self._lead()
            if fast:
                self.batches.take_fast(subject, reply, hdr or None, payload)
                return []  # its replies go out as the messages are applied (the batches' pipeline)
            return await self.batches.take_atomic(batch_id, subject, reply, hdr or b"", payload)

    def answer_at_once(
        self,
        subject: str,
        reply: str,
        hdr: bytes | None,
        payload: bytes,
        send: Callable[[Replies], None],
        client: int = 0,
        client_node: str = "",
    ) -> bool:
        """:meth:`answer` with no task, for a publish that is no atomic batch's when the turn is free (see
        :meth:`publish_at_once`; ``False``, nothing done, otherwise): ``send`` gets the replies (a fast batch's
        go out through the pipeline)."""
        if is_fast_batch(reply):
            return self._take_fast_at_once(subject, reply, hdr, payload)
        if self.batches.atomic_id(hdr):
            return False

        def answered(ack: bytes | None) -> None:
            if ack is not None and reply and not self.stream.config["no_ack"]:
                send([(reply, ack)])

        return self.publish_at_once(subject, hdr, payload, answered, client, client_node)

    async def drain(self) -> None:
        """Wait (holding the turn) until the messages in flight (a fast batch's, a source's) are applied: what is
        decided next reads the stream they leave."""
        if len(self.pipeline):
            await self.pipeline.drain()

    def _take_fast_at_once(self, subject: str, reply: str, hdr: bytes | None, payload: bytes) -> bool:
        """A fast batch's message taken with no task when the turn is free and it need not wait for those in
        flight (``False``, nothing done, otherwise)."""
        if not self.pipeline.takes(self.stream.config, hdr or None) or not self.turn.take_now():
            return False
        try:
            self._lead()
            self.batches.take_fast(self.stream.input_subject(subject), reply, hdr or None, payload)
        finally:
            self.turn.release()
        return True

    async def publish(
        self, subject: str, hdr: bytes | None, payload: bytes, client: int = 0, client_node: str = ""
    ) -> bytes:
        """Store a published message through the group; its PubAck payload (an error's, when refused).

        ``client`` (its id on its server, 0 when another server's) and ``client_node`` (that other server) are
        what the timeline's ``publish`` event names.

        Raises :class:`~fakejs.jetstream.replication.NotLeader` on a member that
        does not lead, and the group's other
        :class:`~fakejs.jetstream.replication.ProposalFailed` when the entry was
        not committed as proposed (the publisher hears nothing: nats-server's
        publisher times out and retries, its ``Nats-Msg-Id`` making that safe).
        """
        self._lead()
        return await self.store(self.stream.input_subject(subject), hdr or None, payload, False, client, client_node)

    async def store(
        self,
        subject: str,
        hdr: bytes | None,
        payload: bytes,
        sourced: bool = False,
        client: int = 0,
        client_node: str = "",
    ) -> bytes:
        """What :meth:`publish` does once the input transform is applied: also the leader's own messages (a
        delete marker, a schedule's message: ``sourced`` as the single server's, not on the timeline), whose
        PubAck nobody hears."""
        async with self.turn:
            await self.drain()
            self._lead()
            proposed = self._propose_message(subject, hdr, payload, sourced, client, client_node)
            if isinstance(proposed, bytes):
                return proposed
            await proposed.proposal
            return self._acknowledge(proposed)

    def publish_at_once(
        self,
        subject: str,
        hdr: bytes | None,
        payload: bytes,
        answered: Callable[[bytes | None], None],
        client: int = 0,
        client_node: str = "",
    ) -> bool:
        """:meth:`publish` with no task, when the turn is free (``False``, nothing done, when it is not).

        ``answered`` gets the PubAck (``None`` when the entry was not stored: the publisher hears nothing) once
        the group applied the entry: within this call when that happens before ``propose`` returns (an
        in-process cluster's exchange delivers at once), else when the proposal settles; the turn is held
        until then.  Raises :class:`~fakejs.jetstream.replication.NotLeader` on a member that does not lead.
        """
        if len(self.pipeline) or not self.turn.take_now():  # what is in flight is applied first
            return False
        try:
            self._lead()
            proposed = self._propose_message(
                self.stream.input_subject(subject), hdr or None, payload, False, client, client_node
            )
        except BaseException:
            self.turn.release()
            raise
        if isinstance(proposed, bytes):
            self.turn.release()
            answered(proposed)
        elif proposed.proposal.done():
            self._settle(proposed, answered)
        else:
            proposed.proposal.add_done_callback(lambda _: self._settle(proposed, answered))
        return True

    def _settle(self, proposed: _Proposed, answered: Callable[[bytes | None], None]) -> None:
        """The proposal of :meth:`publish_at_once` settled: release the turn, answer."""
        try:
            stored = not proposed.proposal.cancelled() and proposed.proposal.exception() is None
            ack = self._acknowledge(proposed) if stored else None
        finally:
            self.turn.release()
        answered(ack)

    def _propose_message(
        self, subject: str, hdr: bytes | None, payload: bytes, sourced: bool, client: int, client_node: str
    ) -> bytes | _Proposed:
        """Check a publish (the turn held) and propose its entry; the answer at once (a duplicate's, a
        refusal's) when it proposes nothing."""
        publisher = self.stream.publisher
        recording = bool(self.stream.timeline) and not sourced
        try:
            checked = publisher.check_publish(subject, hdr, payload, sourced)
            if isinstance(checked, Outcome):
                if recording:
                    publisher.record_publish(client, subject, hdr, len(payload), checked, None, client_node)
                return checked.ack  # a duplicate
            entry = publisher.prepare_message(
                checked.subject, checked.hdr, checked.payload, checked.msg_id, checked.rollup, sourced
            )
        except ApiError as error:
            if recording:
                publisher.record_publish(client, subject, hdr, len(payload), None, error, client_node)
            return publisher.error_ack(error)
        proposal = self.group.propose(encode_entry(entry))
        return _Proposed(proposal, entry, checked, subject, hdr, len(payload), recording, client, client_node)

    def _acknowledge(self, proposed: _Proposed) -> bytes:
        """The PubAck of a message its group applied (and its ``publish`` event on the timeline)."""
        publisher = self.stream.publisher
        ack = publisher.acknowledge(proposed.entry.seq, proposed.checked.total)
        if proposed.recording:
            stored = Outcome(ack, proposed.entry.seq)
            publisher.record_publish(
                proposed.client, proposed.subject, proposed.hdr, proposed.size, stored, None, proposed.client_node
            )
        return ack

    async def purge(self, filter_subject: str = "", seq: int = 0, keep: int = 0) -> None:
        """Purge on every replica (the API's refusals, sealed and ``deny_purge``, are the caller's)."""
        await self._propose(StreamPurge(filter_subject, seq, keep))

    async def delete_message(self, seq: int) -> None:
        """Remove one message on every replica (the caller checked that it exists)."""
        await self._propose(StreamDelete(seq))

    async def _propose(self, entry: StreamEntry) -> None:
        self._lead()
        async with self.turn:
            await self.drain()
            self._lead()
            await self.group.propose(encode_entry(entry))

    def _lead(self) -> None:
        if not self.group.is_leader:
            raise NotLeader(self.group.leader)
