"""What the node has asked to store and the driver has not yet confirmed, and the messages that wait for it.

Each :class:`~fakejs.jetstream.raft.outputs.Ready` that carries writes gets a
ticket; ``node.persisted(ticket)`` confirms it and every earlier one.  A
message that must not leave before those writes are durable (a vote, an
acknowledgement of entries) is held here and released by that confirmation.
The tracker also knows how far the log is durable, which bounds what a leader
counts for itself and what the state machine may apply.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from fakejs.jetstream.raft.outputs import Envelope


@dataclass(slots=True)
class _Ticket:
    number: int
    last_index: int = 0
    truncated_from: int | None = None


class Durability:
    """The tickets under way, the messages held behind them, and the durable end of the log."""

    def __init__(self, durable_index: int) -> None:
        self.durable_index = durable_index
        self.issued = 0
        self.confirmed = 0
        self._pending: deque[_Ticket] = deque()
        self._held: deque[tuple[int, Envelope]] = deque()

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def open(self) -> int:
        """A new ticket for the writes of one step."""
        self.issued += 1
        self._pending.append(_Ticket(self.issued))
        return self.issued

    def truncated(self, first_index: int) -> None:
        """The open ticket drops the log from ``first_index`` on: what was durable there no longer counts."""
        ticket = self._pending[-1]
        ticket.truncated_from = min(first_index, ticket.truncated_from or first_index)
        self.durable_index = min(self.durable_index, first_index - 1)

    def close(self, last_index: int) -> None:
        """The open ticket's writes leave the log ending at ``last_index``."""
        self._pending[-1].last_index = last_index

    def hold(self, envelope: Envelope) -> None:
        """Keep ``envelope`` until every ticket issued so far is confirmed."""
        self._held.append((self.issued, envelope))

    def confirm(self, ticket: int) -> list[Envelope]:
        """Tickets up to ``ticket`` are durable: the messages that waited for them."""
        if ticket > self.issued:
            raise ValueError(f"ticket {ticket} was never issued (the last is {self.issued})")
        while self._pending and self._pending[0].number <= ticket:
            self.durable_index = self._pending.popleft().last_index
        for later in self._pending:
            if later.truncated_from is not None:
                self.durable_index = min(self.durable_index, later.truncated_from - 1)
        self.confirmed = max(self.confirmed, ticket)
        released = []
        while self._held and self._held[0][0] <= ticket:
            released.append(self._held.popleft()[1])
        return released
