"""Leadership in a simulated group: pre-vote keeps a cut-off node from raising terms, a leader that lost its
quorum steps down so that only the majority serves, and a leader hands over to a chosen peer."""

from __future__ import annotations

from fakejs.jetstream.raft import Accepted, NotLeader, RaftNode, Refused, Role
from tests.unit.raft.schedules import settle
from tests.unit.raft.simulator import Simulation


def elected(sim: Simulation) -> RaftNode:
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)
    leader = sim.leader()
    assert leader is not None
    sim.run_for(2.0)  # every follower hears of it
    return leader


def others(sim: Simulation, name: str) -> list[str]:
    return [other for other in sim.nodes if other != name]


def test_a_sole_voter_leads_at_once() -> None:
    sim = Simulation(1)
    assert sim.node("n1").role is Role.LEADER
    ready = sim.propose(b"x")
    assert ready is not None and isinstance(ready.outcome, Accepted)


def test_pre_vote_keeps_a_cut_off_node_from_raising_terms() -> None:
    sim = Simulation(3, seed=4)
    leader = elected(sim)
    term = leader.term
    follower = others(sim, leader.id)[0]
    sim.partition([follower], others(sim, follower))
    sim.run_for(60.0)  # many election timeouts
    assert sim.node(follower).term == term
    assert sim.node(follower).role is Role.PRE_CANDIDATE
    sim.heal()
    sim.run_for(3.0)
    assert sim.leader() is leader and leader.term == term  # the rejoining node disturbed nobody
    assert sim.node(follower).leader == leader.id


def test_a_follower_that_knows_a_live_leader_refuses_pre_votes() -> None:
    sim = Simulation(3, seed=5)
    leader = elected(sim)
    follower = others(sim, leader.id)[0]
    term = leader.term
    sim.act(follower, lambda node: node.campaign())  # asks while the others follow a live leader
    sim.run_for(3.0)
    assert sim.leader() is leader and leader.term == term
    assert sim.node(follower).leader == leader.id


def test_a_leader_without_quorum_steps_down_and_only_the_majority_serves() -> None:
    sim = Simulation(3, seed=6)
    old = elected(sim)
    term = old.term
    sim.partition([old.id], others(sim, old.id))
    sim.run_for(9.5)
    assert old.role is Role.LEADER  # not before the lost-quorum interval
    sim.run_for(11.0)
    assert old.role is Role.FOLLOWER and old.leader is None
    assert old.term == term  # and, alone, it raised no term
    ready = sim.act(old.id, lambda node: node.propose(b"lost"))
    assert ready.outcome == NotLeader(None)
    new = sim.leader()
    assert new is not None and new.id != old.id and new.term > term
    ready = sim.act(new.id, lambda node: node.propose(b"kept"))
    assert isinstance(ready.outcome, Accepted)
    sim.heal()
    sim.run_for(5.0)
    assert old.leader == new.id and old.term == new.term
    assert b"kept" in [value for _, value in sim.nodes[old.id].machine.values.values()]
    settle(sim)


def test_a_leader_with_a_quorum_keeps_leading_when_one_follower_is_cut_off() -> None:
    sim = Simulation(3, seed=7)
    leader = elected(sim)
    follower = others(sim, leader.id)[0]
    sim.partition([follower], others(sim, follower))
    sim.run_for(40.0)
    assert sim.leader() is leader


def test_step_down_hands_over_to_the_preferred_peer() -> None:
    sim = Simulation(3, seed=8)
    old = elected(sim)
    term = old.term
    preferred = others(sim, old.id)[1]
    ready = sim.act(old.id, lambda node: node.step_down(preferred))
    assert ready.outcome is None
    assert old.role is Role.FOLLOWER
    assert sim.run_until(lambda: sim.leader() is not None, 1.0)  # at once: no election timeout to wait for
    new = sim.leader()
    assert new is not None and new.id == preferred and new.term == term + 1
    assert sim.sent["TimeoutNow"] == 1


def test_step_down_without_a_preference_hands_over_to_another_voter() -> None:
    sim = Simulation(5, seed=9)
    old = elected(sim)
    sim.act(old.id, lambda node: node.step_down())
    assert sim.run_until(lambda: sim.leader() is not None, 1.0)
    assert sim.leader() is not old


def test_the_preferred_peer_catches_up_before_it_is_handed_leadership() -> None:
    sim = Simulation(3, seed=10)
    leader = elected(sim)
    lagging = others(sim, leader.id)[0]
    sim.partition([lagging], others(sim, lagging))
    for number in range(20):
        sim.propose(b"value-%d" % number)
    sim.run_for(1.0)
    sim.heal()
    ready = sim.act(leader.id, lambda node: node.step_down(lagging))
    assert ready.outcome is None and leader.role is Role.LEADER  # it waits for the lagging peer
    assert sim.propose(b"refused", to=leader.id).outcome == NotLeader(None)  # type: ignore[union-attr]
    assert sim.run_until(lambda: sim.leader() is sim.node(lagging), 3.0)
    values = {value for _, value in sim.nodes[lagging].machine.values.values()}
    assert all(b"value-%d" % number in values for number in range(20))


def test_a_handover_to_a_peer_that_never_answers_ends_in_a_plain_step_down() -> None:
    sim = Simulation(3, seed=11)
    leader = elected(sim)
    gone = others(sim, leader.id)[0]
    sim.crash(gone)
    sim.propose(b"x")
    sim.act(leader.id, lambda node: node.step_down(gone))
    sim.run_for(sim.settings.transfer_timeout - 0.5)
    assert leader.role is Role.LEADER and leader.transfer_target == gone
    sim.run_for(1.0)
    assert leader.role is Role.FOLLOWER and sim.sent["TimeoutNow"] == 0
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)


def test_step_down_refuses_a_peer_outside_the_group() -> None:
    sim = Simulation(3, seed=12)
    leader = elected(sim)
    ready = sim.act(leader.id, lambda node: node.step_down("elsewhere"))
    assert isinstance(ready.outcome, Refused)
    assert leader.role is Role.LEADER


def test_followers_redirect_proposals_to_the_leader() -> None:
    sim = Simulation(3, seed=13)
    leader = elected(sim)
    follower = others(sim, leader.id)[0]
    ready = sim.propose(b"x", to=follower)
    assert ready is not None and ready.outcome == NotLeader(leader.id)


def test_the_first_follower_to_time_out_wins_once_the_leader_is_gone() -> None:
    """A follower's lease on its leader ends before the shortest election timeout: the first follower to time
    out gets the others' pre-votes (nats-server's first candidate gets their votes), rather than waiting for the
    last of them to time out too."""
    waits = []
    for seed in range(20):
        sim = Simulation(3, seed=seed)
        old = elected(sim)
        sim.crash(old.id)
        crashed_at = sim.now
        assert sim.run_until(lambda sim=sim, old=old: (new := sim.leader()) is not None and new.id != old.id, 30.0)
        waits.append(sim.now - crashed_at)
    settings = sim.settings
    assert max(waits) < settings.election_timeout_max + 0.5  # one timeout, never a second round
    middle = (settings.election_timeout_min + settings.election_timeout_max) / 2
    assert sum(waits) / len(waits) < middle  # the earlier of two timeouts, not the later


def test_two_survivors_that_split_their_votes_ask_again_within_a_campaign_timeout() -> None:
    """Both followers of a crashed leader time out at once: each grants the other's pre-vote, then votes for
    itself and refuses the other; each campaigns again after a campaign timeout (not another election
    timeout of 4 to 9 s), and the first to ask wins."""
    sim = Simulation(3, seed=13)  # a seed whose two followers split their votes
    leader = elected(sim)
    first, second = others(sim, leader.id)
    sim.crash(leader.id)
    sim.run_for(2.5)  # their leases on the crashed leader are over; their election timeouts (4 s at least) are not
    sim.act(first, lambda node: node.campaign())
    sim.act(second, lambda node: node.campaign())

    def split() -> bool:
        nodes = [sim.node(first), sim.node(second)]
        return all(node.role is Role.CANDIDATE for node in nodes) and nodes[0].term == nodes[1].term

    assert sim.run_until(split, 0.5)
    assert sim.run_until(lambda: sim.leader() is not None, 1.0)
