"""What a group replicates into: the :class:`StateMachine` interface a stream, a consumer or the meta group
implements.

The group calls it on the server's loop, in log order, and never concurrently:
``restore`` when a snapshot replaces its state (after a restart, or from the
leader), ``apply`` with the committed entries that follow, ``leader_changed``
when another member (or this one, or none) is known to lead, and ``snapshot``
when the group compacts its log.  An exception in any of them is recorded as
a server error and the group goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fakejs.jetstream.raft import Entry


class StateMachine(Protocol):
    """What the group's committed entries are applied to (see the module docstring)."""

    def apply(self, entries: Sequence[Entry]) -> None:
        """Committed entries, in index order (the proposals' bytes are ``entry.data``)."""

    def snapshot(self) -> bytes:
        """Everything applied so far, as bytes :meth:`restore` takes back."""

    def restore(self, data: bytes) -> None:
        """Replace the state with a snapshot's (what :meth:`snapshot` made, here or on another member)."""

    def leader_changed(self, leader: str | None, term: int) -> None:
        """The member known to lead now (its peer id; ``None``: none), in ``term``."""
