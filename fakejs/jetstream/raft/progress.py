"""What a leader knows of each follower's log (nats-server keeps the like in ``lps`` and its catch-up queues)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(slots=True)
class Progress:
    """One follower as its leader sees it.  ``match_index``: the follower's log is known to match up to there;
    ``next_index``: the next entry to send.  While ``probing`` (after a refusal, or at first) the leader sends
    one append and waits for its answer; otherwise it pipelines up to its limit of appends in flight."""

    next_index: int
    match_index: int = 0
    probing: bool = True
    inflight: int = 0
    snapshot_sent: bool = False
    active: bool = False  # heard from since the last quorum check
    commit_sent: int = 0  # the highest commit index sent to it

    def lacks_commit(self, commit_index: int) -> bool:
        """Whether the follower may not know yet that what it holds is committed up to ``commit_index``."""
        return self.commit_sent < min(commit_index, self.match_index)


def quorum_index(matches: Iterable[int], quorum: int) -> int:
    """The highest index at least ``quorum`` of ``matches`` reach (0 when fewer than ``quorum`` are given)."""
    ordered = sorted(matches, reverse=True)
    return ordered[quorum - 1] if len(ordered) >= quorum else 0
