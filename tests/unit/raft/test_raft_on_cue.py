"""What a driver that caused a failure tells the nodes at once (``peers_lost``), and a follower that lost its log."""

from __future__ import annotations

from fakejs.jetstream.raft import MemoryStorage, RaftNode
from tests.unit.raft.simulator import Simulation


def elected(sim: Simulation) -> RaftNode:
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)
    leader = sim.leader()
    assert leader is not None
    return leader


def test_survivors_told_of_a_dead_leader_elect_another_without_time_passing() -> None:
    sim = Simulation(3, seed=31)
    leader = elected(sim)
    sim.propose(b"kept")
    sim.run_for(0.5)
    sim.crash(leader.id)
    survivors = [name for name in sim.nodes if name != leader.id]
    for name in survivors:
        sim.act(name, lambda node: node.peers_lost([leader.id]))
    before = sim.now
    sim.act(survivors[0], lambda node: node.campaign())
    # a few network round trips, well within the shortest election timeout (4 s)
    assert sim.run_until(lambda: sim.leader() is not None and sim.leader() is not leader, 1.0)
    assert sim.now - before < 1.0
    new = sim.leader()
    assert new is not None and new.id == survivors[0]


def test_a_follower_not_told_refuses_the_pre_vote_while_its_leader_lives() -> None:
    sim = Simulation(3, seed=32)
    leader = elected(sim)
    sim.run_for(0.5)
    follower = next(name for name in sim.nodes if name != leader.id)
    sim.act(follower, lambda node: node.campaign())
    sim.run_for(1.0)
    assert sim.leader() is leader  # the other follower still heard its leader: no pre-vote granted


def test_a_leader_told_it_lost_its_quorum_steps_down_and_one_that_keeps_it_leads_on() -> None:
    sim = Simulation(3, seed=33)
    leader = elected(sim)
    others = sorted(name for name in sim.nodes if name != leader.id)
    sim.act(leader.id, lambda node: node.peers_lost(others[:1]))
    assert leader.is_leader  # itself and one follower are a quorum of three
    sim.act(leader.id, lambda node: node.peers_lost(others))
    assert not leader.is_leader


def test_a_follower_that_lost_its_log_is_caught_up_from_the_start() -> None:
    sim = Simulation(3, seed=34)
    leader = elected(sim)
    for number in range(5):
        sim.propose(b"value-%d" % number)
    sim.run_for(1.0)
    follower = next(name for name in sim.nodes if name != leader.id)
    sim.crash(follower)
    sim.nodes[follower].storage = MemoryStorage()  # a log kept in memory is gone with its server
    sim.restart(follower)
    assert sim.run_until(lambda: sim.node(follower).applied_index == leader.last_index, 5.0)
    assert leader.counters.emptied == 1
    values = [value for _, (_, value) in sorted(sim.nodes[follower].machine.values.items())]
    assert values == [b"value-%d" % number for number in range(5)]
