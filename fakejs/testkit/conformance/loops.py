"""One consume loop as the server can reconstruct it: the pulls it has out and what they still owe.

A loop is every pull a client publishes with the same reply subject (in
one account): ADR-37's ``Consume()`` uses one subscription, and so one
reply subject, for all its pulls; a fetch loop reuses its inbox too.  The
server knows exactly what each pull still owes, so the loop keeps ADR-37's
pending counts from the server's side of the wire.  The client's own counts
can only be higher (messages on the wire, messages buffered but not yet
processed), which is why the rules built on them only ever flag what no
correct client could do.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from fakejs.testkit.conformance.wire import PullRequest, Status

FORGOTTEN_KEPT = 16


@dataclass
class Pull:
    """A pull the server has not finished: what it still owes."""

    request: PullRequest
    at: float
    owed_messages: int
    owed_bytes: int
    evidence: bytes
    delivered: int = 0


@dataclass
class Trigger:
    """Something the server sent that changes what the loop's next pulls must look like."""

    at: float
    evidence: bytes
    pulls_since: int = 0
    value: str = ""


@dataclass
class Awaiting:
    """A pull the rules expect from the loop by ``deadline``."""

    rule: str
    deadline: float
    detail: str
    evidence: bytes


@dataclass
class PullLoop:
    """The pulls one client publishes to one consumer with one reply subject."""

    account: str
    reply: str
    stream: str
    consumer: str
    client_id: int
    client_name: str
    consuming: bool = False
    connected: bool = True
    pulls: deque[Pull] = field(default_factory=deque)
    owed_messages: int = 0
    owed_bytes: int = 0
    buffer_messages: int = 0
    buffer_bytes: int = 0
    last_inbound: float = 0.0
    last_pull_at: float = 0.0
    # What the server sent last that the next pulls must answer to.
    pending_status: Trigger | None = None
    terminal: Trigger | None = None
    max_waiting: Trigger | None = None
    unpinned: Trigger | None = None
    pinned: Trigger | None = None
    awaiting: Awaiting | None = None
    heartbeat_scheduled: bool = False
    silence_reported: float = -1.0
    empty_ends: deque[float] = field(default_factory=deque)
    # Pulls forgotten after missed heartbeats that the server may still end; and whether one just did
    # (the client's counts are then the server's guess: the next pull is not held to the buffer).
    forgotten: deque[Pull] = field(default_factory=deque)
    absorbed: bool = False
    storm_reported: float = -1.0

    @property
    def key(self) -> tuple[str, str]:
        return self.account, self.reply

    @property
    def heartbeat(self) -> float:
        """The idle heartbeat the loop's outstanding pulls asked for (0: none)."""
        return max((pull.request.heartbeat for pull in self.pulls), default=0.0)

    @property
    def silent_since(self) -> float:
        """Since when nothing happened on the loop: the rule's clock restarts with every pull."""
        return max(self.last_inbound, self.last_pull_at)

    @property
    def quiet_since(self) -> float:
        """Since when the client has heard nothing its pulls could bring (ADR-37's heartbeat timer).

        A client's timer restarts on what it receives, not on what it sends:
        a top-up after the last message does not restart it.
        """
        oldest = self.pulls[0].at if self.pulls else self.last_pull_at
        return max(self.last_inbound, min(oldest, self.last_pull_at))

    def add(self, pull: Pull) -> None:
        self.pulls.append(pull)
        self.owed_messages += pull.owed_messages
        self.owed_bytes += pull.owed_bytes
        self.last_pull_at = pull.at

    def delivered(self, size: int) -> None:
        """A message for the pull the server serves next: the first in line that it fits.

        The server takes waiting pulls in turn, putting one that still owes
        back at the end of the line after each message (nats-server's wait
        queue), so messages go round the loop's pulls.  A max_bytes pull
        whose remaining bytes are fewer than the message's size is not
        given it: the server ends that pull (409 Message Size Exceeds
        MaxBytes, with its pending counts) and serves the next.
        """
        if not self.pulls:
            return
        pull = next((p for p in self.pulls if not p.request.max_bytes or p.owed_bytes >= size), self.pulls[0])
        pull.delivered += 1
        pull.owed_messages -= 1
        self.owed_messages -= 1
        if pull.owed_bytes:
            used = min(size, pull.owed_bytes)
            pull.owed_bytes -= used
            self.owed_bytes -= used
        if pull.owed_messages <= 0 or (pull.request.max_bytes and pull.owed_bytes <= 0):
            self._remove(pull)
        elif len(self.pulls) > 1:
            self.pulls.remove(pull)
            self.pulls.append(pull)

    def ended(self, status: Status) -> Pull | None:
        """The pull a status ends: the one whose count it names, a refused (newest) one, or the oldest."""
        if status.pending_messages is not None and self.forgotten:
            # The oldest pulls end first: a forgotten pull's 408 (the client cannot tell it from the others).
            self.forgotten.popleft()
            self.absorbed = True
            return None
        if not self.pulls:
            return None
        if status.pending_messages is not None:
            pull = next((p for p in self.pulls if p.owed_messages == status.pending_messages), self.pulls[0])
        elif status.code in (400, 503) or status.description.startswith("Exceeded Max"):
            pull = self.pulls[-1]  # refused on arrival: the server never queued it
        else:
            pull = self.pulls[0]
        self._remove(pull)
        return pull

    def disconnected(self) -> None:
        """The connection closed: its pulls died with it."""
        self.connected = False
        self.forget()
        self.forgotten.clear()

    def forget(self) -> None:
        """Count nothing as owed any more: the pulls are gone, or the client may take them for gone.

        The server still holds the pulls of a connection that lives on, and
        answers them later; those answers are ``forgotten``'s (at most the
        last few kept).
        """
        if self.connected:
            self.forgotten.extend(self.pulls)
            while len(self.forgotten) > FORGOTTEN_KEPT:
                self.forgotten.popleft()
        self.pulls.clear()
        self.owed_messages = self.owed_bytes = 0

    def silent_for(self, now: float) -> bool:
        """Whether the client may have counted two of its heartbeats missed by ``now``.

        ADR-37 says two intervals; a client that checks on a ticker of one
        interval (nats.js) can count two ticks without news a little before
        two full intervals have passed, so one and a half is accepted.
        """
        heartbeat = self.heartbeat
        return heartbeat > 0 and now - self.quiet_since >= 1.5 * heartbeat

    def _remove(self, pull: Pull) -> None:
        self.pulls.remove(pull)
        self.owed_messages -= pull.owed_messages
        self.owed_bytes -= pull.owed_bytes

    def empty_pull(self, now: float) -> int:
        """Count a pull that ended with nothing; returns how many did in the last second."""
        ends = self.empty_ends
        ends.append(now)
        while ends and ends[0] <= now - 1.0:
            ends.popleft()
        return len(ends)
