"""Why a proposal or a request to a group failed.

Every failure is a :class:`ProposalFailed`: :class:`NotLeader` (ask the
leader it names, if any), :class:`ProposalRefused` (the leader cannot take it
now: a leader transfer under way...), :class:`ProposalLost` (another leader's
entry took its place in the log, or its fate cannot be told) and
:class:`GroupStopped` (the member stopped before the proposal was applied).
"""

from __future__ import annotations


class ProposalFailed(Exception):
    """A proposal (or a request to the leader) that did not, or may not, take effect."""


class NotLeader(ProposalFailed):
    """Only the leader takes this; ``leader`` is the peer id of the leader this member knows of, if any."""

    def __init__(self, leader: str | None) -> None:
        super().__init__(f"not the leader (the leader is {leader})" if leader else "not the leader (no leader known)")
        self.leader = leader


class ProposalRefused(ProposalFailed):
    """The leader cannot take this request now; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ProposalLost(ProposalFailed):
    """The proposal was not committed as proposed: propose it again if that is safe."""


class GroupStopped(ProposalFailed):
    """The member stopped before the proposal was applied here."""
