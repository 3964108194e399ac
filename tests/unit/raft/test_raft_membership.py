"""Membership changes through the log, one peer at a time: a joining voter catches up and can lead, a
removed one (the leader too) leaves, and an observer follows the log without a say in quorums."""

from __future__ import annotations

from fakejs.jetstream.raft import Accepted, Membership, RaftNode, Refused, Role
from tests.unit.raft.schedules import settle
from tests.unit.raft.simulator import Simulation


def elected(sim: Simulation) -> RaftNode:
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)
    leader = sim.leader()
    assert leader is not None
    return leader


def committed_everywhere(sim: Simulation, names: list[str]) -> bool:
    leader = sim.leader()
    return leader is not None and all(sim.node(name).applied_index == leader.last_index for name in names)


def test_a_joining_voter_catches_up_and_can_lead() -> None:
    sim = Simulation(3, seed=31, compact_every=5)
    leader = elected(sim)
    for number in range(12):
        sim.propose(b"value-%d" % number)
    sim.run_for(1.0)
    sim.add_node("n4")
    ready = sim.act(leader.id, lambda node: node.add_peer("n4"))
    assert isinstance(ready.outcome, Accepted)
    assert sim.run_until(lambda: committed_everywhere(sim, ["n1", "n2", "n3", "n4"]), 5.0)
    for node in sim.up():
        assert node.membership == Membership.of(["n1", "n2", "n3", "n4"])
    assert sim.sent["InstallSnapshot"] >= 1  # what it lacked was compacted
    sim.act(leader.id, lambda node: node.step_down("n4"))
    assert sim.run_until(lambda: sim.leader() is sim.node("n4"), 2.0)
    settle(sim)


def test_one_membership_change_at_a_time() -> None:
    sim = Simulation(3, seed=32)
    leader = elected(sim)
    sim.run_for(1.0)
    sim.add_node("n4")
    sim.add_node("n5")
    assert isinstance(sim.act(leader.id, lambda node: node.add_peer("n4")).outcome, Accepted)
    assert sim.act(leader.id, lambda node: node.add_peer("n5")).outcome == Refused("a membership change is under way")
    assert sim.run_until(lambda: committed_everywhere(sim, ["n1", "n2", "n3", "n4"]), 5.0)
    assert isinstance(sim.act(leader.id, lambda node: node.add_peer("n5")).outcome, Accepted)
    assert sim.act(leader.id, lambda node: node.add_peer("n5")).outcome == Refused("a membership change is under way")


def test_a_removed_follower_no_longer_counts() -> None:
    sim = Simulation(3, seed=33)
    leader = elected(sim)
    sim.run_for(1.0)
    removed = next(name for name in sim.nodes if name != leader.id)
    assert isinstance(sim.act(leader.id, lambda node: node.remove_peer(removed)).outcome, Accepted)
    remaining = [name for name in sim.nodes if name != removed]
    assert sim.run_until(lambda: committed_everywhere(sim, remaining), 5.0)
    sim.crash(removed)
    ready = sim.propose(b"after")
    assert ready is not None and isinstance(ready.outcome, Accepted)
    assert sim.run_until(lambda: committed_everywhere(sim, remaining), 5.0)  # two of two voters
    sim.run_for(60.0)
    assert sim.leader() is leader


def test_a_leader_that_removes_itself_steps_down_once_that_commits() -> None:
    sim = Simulation(3, seed=34)
    old = elected(sim)
    sim.run_for(1.0)
    assert isinstance(sim.act(old.id, lambda node: node.remove_peer(old.id)).outcome, Accepted)
    assert sim.run_until(lambda: old.role is Role.FOLLOWER, 5.0)
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)
    new = sim.leader()
    assert new is not None and new is not old
    sim.run_for(60.0)
    assert old.role is Role.FOLLOWER and sim.leader() is new  # the removed node never campaigns


def test_an_observer_follows_the_log_but_makes_no_quorum() -> None:
    sim = Simulation(3, seed=35)
    leader = elected(sim)
    assert sim.act(leader.id, lambda node: node.add_peer("n4", voter=False)).outcome == Refused(
        "the leader has not yet committed an entry of its term"
    )
    sim.run_for(1.0)
    sim.add_node("n4")
    assert isinstance(sim.act(leader.id, lambda node: node.add_peer("n4", voter=False)).outcome, Accepted)
    sim.propose(b"seen")
    assert sim.run_until(lambda: committed_everywhere(sim, ["n1", "n2", "n3", "n4"]), 5.0)
    assert sim.node("n4").membership == Membership.of(["n1", "n2", "n3"], ["n4"])
    for name in [name for name in ("n1", "n2", "n3") if name != leader.id]:
        sim.crash(name)
    sim.run_for(60.0)
    assert sim.leader() is None  # the old leader lost its quorum; an observer is none
    assert sim.node("n4").role is Role.FOLLOWER and sim.node("n4").term == leader.term


def test_a_node_that_knows_no_peers_waits_to_be_added() -> None:
    sim = Simulation(3, seed=36)
    leader = elected(sim)
    sim.add_node("n4")
    sim.run_for(60.0)
    assert sim.node("n4").role is Role.FOLLOWER and sim.node("n4").term == 0
    assert sim.leader() is leader
