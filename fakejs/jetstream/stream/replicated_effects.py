"""A replicated stream's own messages: delete markers and fired schedules, decided by its leader and proposed.

nats-server's clustered stream leaves what a store does on its own to the
leader (the store's ``pmsgcb`` and ``rmcb`` callbacks do nothing on a
follower), and the leader proposes it as any other entry, so that every
replica stores the same messages at the same sequences:

- with ``subject_delete_marker_ttl``, a message that expires (by ``max_age``
  or its ``Nats-TTL``) is removed on every replica by a
  :class:`~fakejs.jetstream.stream.entries.StreamDelete` the leader proposes,
  or, the last of its subject, replaced by a delete marker the leader
  proposes (its ``Nats-Rollup: sub`` removes the expired message).  A
  replica that met the expiry waits :data:`~fakejs.jetstream.stream.stream.MARKER_RETRY`
  for it to be applied before it tries again (nats-server's two seconds), so
  a new leader takes over what the old one left.  Without delete markers,
  each replica removes its expired messages itself, as nats-server's do.
- a due schedule's message is proposed by the leader, through the stream's
  publish checks as the single server stores it; a follower only marks the
  schedule in flight, until the message is applied or the leadership moves
  (:meth:`~fakejs.jetstream.stream.schedules.MessageSchedules.clear_inflight`).

The republish is the leader's too, when it applies a message (see
:class:`~fakejs.jetstream.service.replicated_streams.LedStream`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Coroutine
from typing import Any

from fakejs.core.clock import ErrorSink
from fakejs.core.log import get_logger
from fakejs.jetstream.replication import ProposalFailed
from fakejs.jetstream.stream import publish
from fakejs.jetstream.stream.replicated import ReplicatedStream
from fakejs.jetstream.stream.schedules import Produced
from fakejs.jetstream.stream.stream import MARKER_RETRY

__all__ = ["LeaderEffects"]


class LeaderEffects:
    """The delete markers, expiries and schedules one replica's leader proposes (see the module docstring); what
    fails otherwise than by a change of leader goes to ``record_error`` (the server's)."""

    def __init__(self, replicated: ReplicatedStream, record_error: ErrorSink | None = None) -> None:
        self.replicated = replicated
        self._record_error = record_error
        self.stream = replicated.stream
        self.tasks: set[asyncio.Task[Any]] = set()
        self._deleting: dict[int, str] = {}  # sequence -> subject, its removal proposed

    def expire(self) -> None:
        """The expiry timer fired on a stream with delete markers: the leader proposes what is due."""
        stream = self.stream
        if stream.closed:
            return
        store, expiry = stream.store, stream.expiry
        now = stream.clock.time_ns()
        leading = self.replicated.is_leader
        self._deleting = {seq: subject for seq, subject in self._deleting.items() if store.get(seq) is not None}
        removing = Counter(self._deleting.values())  # a subject's messages whose removal is on its way
        for seq in expiry.due(now):
            msg = store.get(seq)
            if msg is None:
                continue
            expiry.hold(seq, now + MARKER_RETRY)  # applied by then, or tried again
            if not leading:
                continue
            subject = msg.subject
            if store.count_for(subject) - removing[subject] == 1 and not publish.is_marker(msg.hdr):
                marker = publish.delete_marker(stream.config["subject_delete_marker_ttl"])
                self._spawn(self.replicated.store(subject, marker, b""))
            else:
                self._deleting[seq] = subject
                removing[subject] += 1
                self._spawn(self.replicated.delete_message(seq))
        expiry.rearm()

    def produce(self, out: Produced) -> None:
        """A due schedule's message: stored through the group by the leader (a follower leaves it in flight)."""
        if self.replicated.is_leader:
            self._spawn(self.replicated.store(out.subject, out.hdr, out.payload, sourced=True))

    def stop(self) -> None:
        for task in self.tasks:
            task.cancel()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if task.cancelled():
            return
        failure = task.exception()
        if isinstance(failure, ProposalFailed):  # leadership moved: the new leader takes over
            get_logger().debug("stream %s: a leader's own entry not stored (%s)", self.stream.name, failure)
        elif failure is not None:  # a fakejs bug: recorded on the server (its tests fail), else logged
            if self._record_error is not None:
                self._record_error(f"stream {self.stream.name}: a leader's own entry", failure)
            else:
                get_logger().error("stream %s: a leader's own entry failed", self.stream.name, exc_info=failure)
