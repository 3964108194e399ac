"""Work put off while one client's read is applied: until the read ends, or until something in it could see it.

nats-server's read loop does not apply a consumer's acks: it hands them to
the consumer's own queue (``ackMsgs``), which the consumer's goroutine
drains while the read loop goes on to the next message, a pull request
among them (itself handed to ``nextMsgReqs``, another goroutine's).  A
client that acknowledges a batch and asks for the next one in one write
(what every client library's fetch loop does) thus has its next batch
coming while its acks are still being applied.

fakejs serves on one thread.  A handler that may wait (the consumer's
:class:`~fakejs.jetstream.consumer.ack_messages.AckMessages`) puts its work
here while a client read is being applied (:attr:`ReadDeferrals.reading`),
naming the subjects whose messages cannot see that work (its pull
subject).  The session applies everything put off before it routes any
other message (:meth:`ReadDeferrals.before`), and at the end of the read,
once what the read produced is written (:meth:`ReadDeferrals.run`).  No
work outlives the read that put it off: no timer, no other client's read,
runs in between.
"""

from __future__ import annotations

from collections.abc import Callable

from fakejs.core.subjects import ACK_PREFIX


class ReadDeferrals:
    """What handlers put off during the client read being applied, with the subjects that do not need it done."""

    __slots__ = ("_keeps", "_work", "queued", "reading")

    def __init__(self) -> None:
        self.reading = 0  # client reads being applied (one, or more when a handler feeds another session)
        self.queued = False  # whether anything waits (a truth the session tests per message, without a call)
        self._work: dict[object, Callable[[], None]] = {}  # by owner, in the order they were put off
        self._keeps: set[str] = set()  # subjects whose messages do not see the work

    def put_off(self, owner: object, work: Callable[[], None], keeps: str) -> None:
        """``owner`` has work to do before anything that could see it, or at the read's end (once per owner
        until it is run); messages on ``keeps`` (and on ack subjects, each consumer's own) cannot see it."""
        self._work[owner] = work
        self._keeps.add(keeps)
        self.queued = True

    def before(self, subject: str) -> None:
        """A message on ``subject`` is about to be routed: run what it could see."""
        if not subject.startswith(ACK_PREFIX) and subject not in self._keeps:
            self.run()

    def forget(self, owner: object) -> None:
        """``owner`` did its work itself."""
        self._work.pop(owner, None)
        if not self._work:
            self.queued = False
            self._keeps.clear()

    def run(self) -> None:
        """Everything put off, in the order it was put off (work put off meanwhile runs too)."""
        while self._work:
            work = list(self._work.values())
            self._work.clear()
            self._keeps.clear()
            for action in work:
                action()
        self.queued = False
