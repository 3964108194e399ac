"""One node driven by hand: the durability rule (nothing that promises stored state leaves before it is
stored), the commit rules, timers, redirects and append batches."""

from __future__ import annotations

import random

import pytest

from fakejs.jetstream.raft import (
    Accepted,
    AppendEntries,
    AppendResponse,
    Entry,
    EntryKind,
    Envelope,
    LeaderChange,
    NotLeader,
    PersistentState,
    RaftNode,
    RaftSettings,
    Ready,
    Refused,
    Role,
    SaveHardState,
    TimeoutNow,
    TimerKind,
    VoteRequest,
    VoteResponse,
    WriteEntries,
)

PEERS = ["a", "b", "c"]


def make_node(state: PersistentState | None = None, settings: RaftSettings | None = None) -> RaftNode:
    return RaftNode("a", state or PersistentState(), rng=random.Random(7), peers=PEERS, settings=settings)


def timer(ready: Ready, kind: TimerKind):  # type: ignore[no-untyped-def]
    (armed,) = [timer for timer in ready.timers if timer.kind is kind]
    return armed


def stored(node: RaftNode, ready: Ready) -> Ready:
    """Confirm ``ready``'s writes; the follow-up output."""
    assert ready.ticket is not None
    return node.persisted(ready.ticket)


def elect(node: RaftNode) -> None:
    """Make ``a`` the leader of its term with ``b``'s votes, storing every write at once."""
    node.timer_fired(timer(node.start(), TimerKind.ELECTION))
    candidacy = node.receive(VoteResponse("b", node.term + 1, True, pre_vote=True))
    stored(node, candidacy)
    won = node.receive(VoteResponse("b", node.term, True))
    assert node.role is Role.LEADER
    stored(node, won)


def entries(first: int, last: int, term: int) -> tuple[Entry, ...]:
    return tuple(Entry(index, term, EntryKind.NORMAL, b"v%d" % index) for index in range(first, last + 1))


def test_a_vote_leaves_only_once_it_is_stored() -> None:
    node = make_node()
    node.start()
    ready = node.receive(VoteRequest("b", 1, 0, 0))
    assert ready.writes == [SaveHardState(1, "b")]
    assert ready.messages == []
    assert stored(node, ready).messages == [Envelope("b", VoteResponse("a", 1, True))]


def test_a_candidate_asks_for_votes_only_once_its_own_vote_is_stored() -> None:
    node = make_node()
    pre_vote = node.timer_fired(timer(node.start(), TimerKind.ELECTION))
    assert pre_vote.writes == [] and node.term == 0  # a pre-vote changes nothing stored
    assert {envelope.to for envelope in pre_vote.messages} == {"b", "c"}
    candidacy = node.receive(VoteResponse("b", 1, True, pre_vote=True))
    assert candidacy.writes == [SaveHardState(1, "a")]
    assert candidacy.messages == []
    requests = stored(node, candidacy).messages
    assert requests == [Envelope(peer, VoteRequest("a", 1, 0, 0)) for peer in ("b", "c")]


def test_a_follower_acknowledges_entries_only_once_they_are_stored() -> None:
    node = make_node()
    node.start()
    ready = node.receive(AppendEntries("b", 1, 0, 0, 0, entries(1, 3, term=1)))
    assert ready.writes == [SaveHardState(1, None), WriteEntries(1, entries(1, 3, term=1))]
    assert ready.messages == []
    assert stored(node, ready).messages == [Envelope("b", AppendResponse("a", 1, True, 3))]


def test_a_follower_applies_only_what_is_committed_and_stored() -> None:
    node = make_node()
    node.start()
    first = node.receive(AppendEntries("b", 1, 0, 0, 0, entries(1, 3, term=1)))
    second = node.receive(AppendEntries("b", 1, 3, 1, 2))  # commit 2 arrives before the entries are stored
    assert first.committed == second.committed == []
    assert [entry.index for entry in stored(node, first).committed] == [1, 2]


@pytest.mark.parametrize(("applied", "handed_out"), [(0, []), (3, [1, 2, 3]), (9, [1, 2, 3, 4])])
def test_a_restarted_node_hands_out_what_its_member_had_applied_without_a_leader(
    applied: int, handed_out: list[int]
) -> None:
    """Entries up to the stored applied index were committed; past the log's end (a hint outliving entries a
    machine crash took), only the entries there."""
    node = make_node(PersistentState(term=1, entries=entries(1, 4, term=1), applied=applied))
    ready = node.start()
    assert [entry.index for entry in ready.committed] == handed_out
    assert node.leader is None and node.commit_index == len(handed_out)


def test_the_leader_counts_itself_only_for_entries_it_stored() -> None:
    node = make_node()
    elect(node)
    node.receive(AppendResponse("b", 1, False, 0, 0))  # b answers the first probe: not yet
    node.receive(AppendResponse("b", 1, True, 0))
    proposal = node.propose(b"x")
    assert proposal.outcome == Accepted(2, 2, 1)
    assert {envelope.to for envelope in proposal.messages} == {"b"}  # replication need not wait; c is probed
    acknowledged = node.receive(AppendResponse("b", 1, True, 2))
    assert node.commit_index == 1  # b holds 2, but the leader has not stored it yet
    assert [entry.index for entry in acknowledged.committed] == [1]
    confirmed = stored(node, proposal)
    assert node.commit_index == 2
    assert [entry.data for entry in confirmed.committed][-1] == b"x"


def test_entries_of_an_older_term_commit_only_with_one_of_the_leaders_term() -> None:
    node = make_node(PersistentState(term=1, vote="a", entries=entries(1, 2, term=1)))
    elect(node)
    assert node.term == 2 and node.log.last_index == 3  # the new leader's peer state entry
    node.receive(AppendResponse("b", 2, True, 2))
    assert node.commit_index == 0  # a quorum holds entry 2, but it is of term 1
    ready = node.receive(AppendResponse("b", 2, True, 3))
    assert node.commit_index == 3
    assert [entry.index for entry in ready.committed] == [1, 2, 3]


def test_the_leader_reports_itself_once_its_first_entry_is_applied() -> None:
    node = make_node()
    node.timer_fired(timer(node.start(), TimerKind.ELECTION))
    stored(node, node.receive(VoteResponse("b", 1, True, pre_vote=True)))
    won = node.receive(VoteResponse("b", 1, True))
    assert node.role is Role.LEADER and won.leader_change is None
    stored(node, won)
    applied = node.receive(AppendResponse("b", 1, True, 1))
    assert applied.leader_change is not None and applied.leader_change.leader == "a"


def test_a_follower_handed_leadership_reports_no_leader_while_it_campaigns() -> None:
    node = make_node()
    node.start()
    stored(node, node.receive(AppendEntries("b", 1, 0, 0, 0)))
    assert node.leader == "b"
    campaign = node.receive(TimeoutNow("b", 1))
    assert node.role is Role.CANDIDATE and node.term == 2
    assert campaign.leader_change == LeaderChange(None, 2)  # not b, which leads no term 2


def test_a_stale_timer_is_ignored() -> None:
    node = make_node()
    first = timer(node.start(), TimerKind.ELECTION)
    heartbeat = node.receive(AppendEntries("b", 1, 0, 0, 0))
    stored(node, heartbeat)
    second = timer(heartbeat, TimerKind.ELECTION)
    assert node.timer_fired(first).empty
    assert node.timer_fired(second).messages  # the pre-vote round
    assert node.role is Role.PRE_CANDIDATE


def test_a_ticket_never_issued_is_refused() -> None:
    node = make_node()
    node.start()
    with pytest.raises(ValueError, match="never issued"):
        node.persisted(5)


def test_a_follower_redirects_proposals_to_its_leader() -> None:
    node = make_node()
    node.start()
    assert node.propose(b"x").outcome == NotLeader(None)
    node.receive(AppendEntries("b", 1, 0, 0, 0))
    ready = node.propose(b"x")
    assert ready.outcome == NotLeader("b")
    assert ready.writes == [] and node.log.last_index == 0


def test_an_empty_batch_is_refused() -> None:
    node = make_node()
    elect(node)
    ready = node.propose_many([])
    assert ready.outcome == Refused("nothing was proposed")
    assert ready.writes == [] and node.log.last_index == 1


def test_a_snapshot_past_what_was_applied_is_a_driver_error() -> None:
    node = make_node()
    elect(node)
    with pytest.raises(ValueError, match="past what was applied"):
        node.compact(5, b"state")
    assert isinstance(node.compact(0, b"state").outcome, Refused)


def test_appends_carry_at_most_the_batch_limits() -> None:
    node = make_node(settings=RaftSettings(max_append_entries=10, max_append_bytes=1000, max_inflight_appends=2))
    elect(node)
    node.receive(AppendResponse("b", 1, True, 1))  # b is caught up: out of probing
    ready = node.propose_many([b"x" * 30] * 100)
    to_b = [envelope.message for envelope in ready.messages if envelope.to == "b"]
    assert len(to_b) == 2  # the limit of appends in flight
    for append in to_b:
        assert isinstance(append, AppendEntries)
        assert 1 <= len(append.entries) <= 10
        assert sum(entry.size for entry in append.entries) <= 1000
    assert [append.entries[0].index for append in to_b if isinstance(append, AppendEntries)] == [2, 12]


def test_a_leader_that_hears_of_a_higher_term_steps_down() -> None:
    node = make_node()
    elect(node)
    ready = node.receive(AppendResponse("c", 7, False, 0, 1))
    assert node.role is Role.FOLLOWER and node.term == 7 and node.leader is None
    assert ready.writes == [SaveHardState(7, None)]
    kinds = {timer.kind: timer.seconds for timer in ready.timers}
    assert kinds[TimerKind.HEARTBEAT] is None and kinds[TimerKind.ELECTION] is not None


def test_a_follower_ahead_of_a_candidate_campaigns_soon_once_its_leader_is_gone() -> None:
    """nats-server's processVoteRequest: a voter with a more up-to-date log than the candidate's, not having voted,
    campaigns after a campaign timeout rather than its election timeout; not while it follows a live leader."""
    settings = RaftSettings()
    node = make_node(settings=settings)
    node.start()
    stored(node, node.receive(AppendEntries("b", 1, 0, 0, 0, entries(1, 3, term=1))))
    followed = node.receive(VoteRequest("c", 2, 1, 1, pre_vote=True))  # b still heard: its lease holds
    assert followed.messages == [Envelope("c", VoteResponse("a", 1, False, pre_vote=True))]
    assert not [armed for armed in followed.timers if armed.kind is TimerKind.ELECTION]
    node.peers_lost(["b"])
    refused = node.receive(VoteRequest("c", 2, 1, 1, pre_vote=True))
    assert refused.messages == [Envelope("c", VoteResponse("a", 1, False, pre_vote=True))]
    soon = timer(refused, TimerKind.ELECTION).seconds
    assert soon is not None and settings.campaign_timeout_min <= soon <= settings.campaign_timeout_max
    voted = node.receive(VoteRequest("c", 2, 1, 1))  # the real vote of a higher term: refused, and soon again
    assert voted.messages == [] or not voted.messages[0].message.granted  # type: ignore[attr-defined]
    again = timer(voted, TimerKind.ELECTION).seconds
    assert again is not None and again <= settings.campaign_timeout_max
    up_to_date = node.receive(VoteRequest("c", 3, 1, 3))  # a candidate as up to date: granted, no hurry
    assert timer(up_to_date, TimerKind.ELECTION).seconds >= settings.election_timeout_min  # type: ignore[operator]
