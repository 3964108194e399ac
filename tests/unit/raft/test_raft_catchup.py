"""A node that fell behind catches up: from the log, or from the leader's snapshot when the entries it lacks
are compacted away; a restarted node does the same from what its store kept, in memory or in a directory."""

from __future__ import annotations

from pathlib import Path

from fakejs.jetstream.raft import Accepted, DirectoryStorage, RaftNode
from tests.unit.raft.schedules import Player, Step, settle
from tests.unit.raft.simulator import Simulation


def elected(sim: Simulation) -> RaftNode:
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)
    leader = sim.leader()
    assert leader is not None
    return leader


def values(sim: Simulation, name: str) -> list[bytes]:
    return [value for _, (_, value) in sorted(sim.nodes[name].machine.values.items())]


def test_a_restarted_follower_catches_up_from_the_log() -> None:
    sim = Simulation(3, seed=21)
    leader = elected(sim)
    follower = next(name for name in sim.nodes if name != leader.id)
    sim.crash(follower)
    for number in range(30):
        sim.propose(b"value-%d" % number)
    sim.run_for(1.0)
    sim.restart(follower)
    assert sim.run_until(lambda: sim.node(follower).applied_index == leader.last_index, 5.0)
    assert values(sim, follower) == [b"value-%d" % number for number in range(30)]
    assert sim.sent["InstallSnapshot"] == 0


def test_a_follower_behind_the_compacted_log_catches_up_from_a_snapshot() -> None:
    sim = Simulation(3, seed=22, compact_every=5)
    leader = elected(sim)
    follower = next(name for name in sim.nodes if name != leader.id)
    sim.crash(follower)
    for number in range(40):
        sim.propose(b"value-%d" % number)
        sim.run_for(0.05)
    stored = sim.nodes[follower].storage.load()
    assert leader.log.snapshot.index > stored.snapshot.index + len(stored.entries)  # what it lacks is compacted
    sim.restart(follower)
    assert sim.run_until(lambda: sim.node(follower).applied_index == leader.last_index, 5.0)
    assert sim.sent["InstallSnapshot"] >= 1
    assert values(sim, follower) == [b"value-%d" % number for number in range(40)]
    settle(sim)


def test_acknowledged_entries_survive_a_kill_of_every_node_with_directory_stores(tmp_path: Path) -> None:
    sim = Simulation(3, seed=23, storage=lambda name: DirectoryStorage(str(tmp_path / name), fsync=False))
    leader = elected(sim)
    for number in range(10):
        sim.propose(b"value-%d" % number)
    last = sim.accepted[-1].last_index
    assert sim.run_until(lambda: leader.applied_index >= last, 2.0)  # what a publisher would be acknowledged
    for name in sim.nodes:
        sim.crash(name)
    for name in sim.nodes:
        sim.restart(name)
    settle(sim)
    for name in sim.nodes:
        assert values(sim, name)[:10] == [b"value-%d" % number for number in range(10)]


def test_random_faults_with_directory_stores(tmp_path: Path) -> None:
    """The property run of test_raft_properties, on files: a few fixed schedules."""
    for seed in range(3):
        sim = Simulation(
            3,
            seed=seed,
            storage=lambda name, seed=seed: DirectoryStorage(str(tmp_path / f"{seed}-{name}"), fsync=False),  # type: ignore[misc]
            compact_every=4,
        )
        steps = [
            Step(action, pick, pause)
            for action, pick, pause in [
                ("propose_many", 3, 0.2),
                ("crash_leader", 0, 0.1),
                ("propose", 0, 6.0),
                ("restart", seed, 0.3),
                ("partition", seed + 1, 0.5),
                ("propose_many", 4, 12.0),
                ("crash", seed + 2, 0.0),
                ("heal", 0, 3.0),
                ("propose_many", 2, 0.1),
            ]
        ]
        Player(sim, seed).play(steps)
        settle(sim)
        assert any(isinstance(outcome, Accepted) for outcome in sim.accepted)
