"""A consumer's plain acks held until the end of the client read that brought them (nats-server's ``ackMsgs``).

nats-server's consumer applies acks on its own goroutine, from a queue the
client's read loop fills, so a pull request in the same read is served
while the acks before it are still being applied (see
:mod:`fakejs.core.read_deferrals`).  :class:`WaitingAcks` is that queue
for one consumer: plain acks (``+ACK``, ``+OK``, empty) wait while a client
read is applied, and are applied at its end, before any message of the read
that could see them, before any other kind of message on the ack subject,
or before a pull of this consumer whose deliveries could depend on them
(:meth:`~fakejs.jetstream.consumer.ack_messages.AckMessages.before_pull`).
"""

from __future__ import annotations

from collections.abc import Callable

from fakejs.core.read_deferrals import ReadDeferrals

# (subject, reply) of one plain ack
WaitingAck = tuple[str, str]


class WaitingAcks:
    """One consumer's plain acks waiting for the read's end; ``apply`` applies a list of them, in order."""

    def __init__(self, deferrals: ReadDeferrals, pull_subject: str, apply: Callable[[list[WaitingAck]], None]) -> None:
        self._deferrals = deferrals
        self._pull_subject = pull_subject  # a pull of this consumer does not apply them first (it decides)
        self._apply = apply
        self.acks: list[WaitingAck] = []

    def hold(self, subject: str, reply: str) -> None:
        """Keep the ack on ``subject`` (answered on ``reply``) for the end of the client read being applied."""
        if not self.acks:
            self._deferrals.put_off(self, self.apply_now, self._pull_subject)
        self.acks.append((subject, reply))

    def apply_now(self) -> None:
        """Apply the acks held, if any."""
        acks = self.acks
        if not acks:
            return
        self.acks = []
        self._deferrals.forget(self)
        self._apply(acks)
