"""A replicated stream's mirror and sources: run on its leader, each message they receive proposed to the group.

nats-server's ``processInboundMirrorMsg`` and ``processInboundSourceMsg`` on a
clustered stream: only the stream's leader runs the consumers on the origins,
and what they deliver is proposed to the stream's group and stored by every
replica once applied.  :class:`FeedProposals` is that path for one leader:

- a **mirror**'s message becomes a
  :class:`~fakejs.jetstream.stream.entries.StreamMessage` at the origin's
  sequence and time, proposed at once, in the order the messages arrive (the
  group keeps that order; those of one turn of the loop together, through the
  stream's :class:`~fakejs.jetstream.stream.pipeline.Pipeline`); a hole in the origin's sequences is carried by the
  next message (the replicas skip to its sequence), or by a
  :class:`~fakejs.jetstream.stream.entries.StreamSkip` when the consumer starts
  past the mirror's last sequence.  A replica skips a message at a sequence it
  holds already, so what a new leader asks again of the origin is stored once.
- a **source**'s message goes through the stream's publish checks (the
  duplicate window, limits) as a client's publish does, in turn with them
  (:class:`~fakejs.jetstream.stream.replicated.ReplicatedStream`), and keeps
  its ``Nats-Stream-Source`` header: a new leader reads where each source
  stands back from its store, as a restarted single server does.  It is
  proposed without waiting for the one before it to be stored, decided at the
  sequence after those in flight (:class:`~fakejs.jetstream.stream.pipeline.Pipeline`,
  as a fast batch's messages), unless its checks read what they will change.

A proposal that fails while this server still leads (refused, or a check
refusing a sourced message) starts the mirror and sources over from the
store (``restart``), once the sourced messages in flight are stored,
dropping what was queued behind it: nothing is stored twice or skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fakejs.core.log import get_logger
from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.stream import publish
from fakejs.jetstream.stream.entries import StreamMessage, StreamSkip, encode_entry
from fakejs.jetstream.stream.feed import FedStream
from fakejs.jetstream.stream.links import Links
from fakejs.jetstream.stream.publish import Outcome
from fakejs.jetstream.stream.replicated import ReplicatedStream

__all__ = ["FeedProposals", "LeaderLinks"]


class FeedProposals:
    """What one leader's mirror and sources propose (see the module docstring)."""

    def __init__(self, replicated: ReplicatedStream, restart: Callable[[], None]) -> None:
        self.replicated = replicated
        self.stream = replicated.stream
        self.restart = restart
        self.last_seq = self.stream.store.last_seq  # the mirror's last sequence proposed
        self.epoch = 0  # raised when starting over: what was queued before is dropped
        self.tasks: set[asyncio.Task[None]] = set()
        self.restarting: asyncio.Task[None] | None = None  # starting over once what is in flight is stored

    def reset(self) -> None:
        """Leading from now on: the mirror goes on from the store, nothing queued is kept."""
        self.epoch += 1
        self.last_seq = self.stream.store.last_seq
        for task in self.tasks:
            task.cancel()

    # -- a mirror ----------------------------------------------------------------------------------

    def skip_mirrored(self, next_seq: int) -> None:
        if next_seq - 1 > self.last_seq:
            self.last_seq = next_seq - 1
            self._propose(encode_entry(StreamSkip(next_seq)), next_seq - 1)

    def store_mirrored(self, subject: str, hdr: bytes | None, payload: bytes, seq: int, ts: int) -> bool:
        """Propose the origin's message ``seq``; False when ``seq`` does not follow the last one proposed."""
        stream = self.stream
        if seq - 1 != self.last_seq and (self.last_seq or stream.store.msgs):
            return False
        self.last_seq = seq
        ts = ts or stream.clock.time_ns()
        if stream.config["retention"] == "interest" and not stream.has_interest(subject):
            entry = StreamMessage(seq, ts, subject, None, b"", skipped=True)
        else:
            ttl = publish.message_ttl(stream.config, hdr)[0] if hdr and stream.config["allow_msg_ttl"] else 0
            entry = StreamMessage(seq, ts, subject, hdr, payload, ttl)
        self._propose(encode_entry(entry), seq)
        return True

    def _propose(self, data: bytes, seq: int) -> None:
        """Propose the mirror's entry (with the others of this turn of the loop, in as few appends as fit)."""
        epoch = self.epoch
        self.replicated.pipeline.add(data, [], seq, "", lambda: self._failed(epoch))

    # -- a source ----------------------------------------------------------------------------------

    def store_sourced(self, subject: str, hdr: bytes | None, payload: bytes) -> bool:
        """Queue a sourced message behind the stream's publishes; taken as stored (a refusal starts over)."""
        task = asyncio.get_running_loop().create_task(self._source(self.epoch, subject, hdr, payload))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return True

    async def _source(self, epoch: int, subject: str, hdr: bytes | None, payload: bytes) -> None:
        replicated = self.replicated
        stream = self.stream
        pipeline = replicated.pipeline
        async with replicated.turn:
            if not pipeline.takes(stream.config, hdr):
                await replicated.drain()
            if epoch != self.epoch or not replicated.is_leader:
                return
            try:
                checked = stream.publisher.check_publish(subject, hdr, payload, sourced=True)
                if isinstance(checked, Outcome):
                    return  # a duplicate: nothing stored
                seq = pipeline.next_seq(stream.store.last_seq)  # after the messages in flight
                entry = stream.publisher.prepare_message(
                    checked.subject, checked.hdr, checked.payload, checked.msg_id, checked.rollup, True, next_seq=seq
                )
            except ApiError as error:
                get_logger().debug("stream %s: a sourced message refused (%s)", stream.name, error)
                self._failed(epoch)
                return
            pipeline.add(encode_entry(entry), [], seq, entry.msg_id, lambda: self._failed(epoch))

    # -- starting over ------------------------------------------------------------------------------

    def _failed(self, epoch: int) -> None:
        if epoch != self.epoch:
            return
        self.epoch += 1
        sourcing = self.stream.config["mirror"] is None
        if sourcing and len(self.replicated.pipeline):
            # What is in flight is stored first: the store says where each source goes on from.
            self.restarting = asyncio.get_running_loop().create_task(self._restart_drained())
            return
        # Later, out of the delivery or the proposal under way: the mirror or source it came from closes.
        asyncio.get_running_loop().call_soon(self._restart)

    async def _restart_drained(self) -> None:
        async with self.replicated.turn:
            await self.replicated.drain()
        self._restart()

    def _restart(self) -> None:
        if self.replicated.is_leader:
            self.reset()
            self.restart()


class LeaderLinks(Links):
    """A replicated stream's mirror or sources: run while its replica leads, stopped otherwise."""

    def __init__(self, stream: FedStream, leading: Callable[[], bool]) -> None:
        super().__init__(stream)
        self.leading = leading

    def sync(self) -> None:
        if self.leading():
            super().sync()
        else:
            self.close()
