"""Raft's safety properties under random schedules, and its liveness without faults.

Hypothesis draws a network (drops, duplicates, late messages), a group size
and a schedule of crashes (each losing what was not yet stored), restarts,
partitions, step-downs, campaigns and proposals; the simulation's
:class:`~tests.unit.raft.invariants.Invariants` check election safety, leader
completeness and state machine safety at every step and log matching along
the way; at the end, healed and quiet, every node must catch up and hold every
entry that any node applied.  ``FAKEJS_FUZZ_EXAMPLES`` sets how many schedules
are tried (a long run: ``FAKEJS_FUZZ_EXAMPLES=2000``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakejs.jetstream.raft import Accepted, Role
from tests.unit.raft.schedules import ACTIONS, MEMBERSHIP_ACTIONS, Player, Step, settle
from tests.unit.raft.simulator import Faults, Simulation

EXAMPLES = int(os.environ.get("FAKEJS_FUZZ_EXAMPLES", "200"))

steps = st.builds(Step, st.sampled_from(ACTIONS), st.integers(0, 9), st.floats(0.0, 4.0))
faults = st.builds(
    Faults,
    drop=st.sampled_from([0.0, 0.05, 0.3]),
    duplicate=st.sampled_from([0.0, 0.1]),
    late=st.sampled_from([0.0, 0.1]),
    max_write_delay=st.sampled_from([0.0, 0.01, 0.5]),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    size=st.sampled_from([1, 3, 5]),
    network=faults,
    compact_every=st.sampled_from([0, 3, 20]),
    schedule=st.lists(steps, min_size=1, max_size=40),
)
def test_safety_holds_under_random_faults(
    seed: int, size: int, network: Faults, compact_every: int, schedule: list[Step]
) -> None:
    sim = Simulation(size, seed=seed, faults=network, compact_every=compact_every)
    Player(sim, seed).play(schedule)
    settle(sim)


membership_steps = st.builds(
    Step, st.sampled_from(ACTIONS + MEMBERSHIP_ACTIONS * 3), st.integers(0, 9), st.floats(0.0, 4.0)
)


@settings(max_examples=max(EXAMPLES // 2, 10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), network=faults, schedule=st.lists(membership_steps, min_size=1, max_size=40))
def test_safety_holds_while_the_membership_changes(seed: int, network: Faults, schedule: list[Step]) -> None:
    """Five nodes, three of them the first voters; peers are added (as voters or observers) and removed."""
    sim = Simulation(5, seed=seed, faults=network, compact_every=5, peers=["n1", "n2", "n3"])
    Player(sim, seed).play(schedule)
    settle(sim)


@settings(max_examples=max(EXAMPLES // 10, 10), deadline=None)
@given(seed=st.integers(0, 2**32), size=st.sampled_from([3, 5, 7]))
def test_a_leader_is_elected_in_bounded_time_without_faults(seed: int, size: int) -> None:
    sim = Simulation(size, seed=seed)
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)
    leader = sim.leader()
    assert leader is not None
    assert sum(node.role is Role.LEADER for node in sim.up()) == 1


@settings(max_examples=max(EXAMPLES // 10, 10), deadline=None)
@given(seed=st.integers(0, 2**32), size=st.sampled_from([1, 3, 5]), count=st.integers(1, 50))
def test_proposals_commit_everywhere_without_faults(seed: int, size: int, count: int) -> None:
    sim = Simulation(size, seed=seed)
    assert sim.run_until(lambda: sim.leader() is not None, 30.0)
    for number in range(count):
        ready = sim.propose(b"value-%d" % number)
        assert ready is not None and isinstance(ready.outcome, Accepted)
    last = sim.accepted[-1].last_index
    assert sim.run_until(lambda: all(node.applied_index >= last for node in sim.up()), 5.0)
    values = [value for _, value in sorted(sim.nodes["n1"].machine.values.values())]
    assert sorted(values) == sorted(b"value-%d" % number for number in range(count))


def test_a_seed_replays_a_run_exactly() -> None:
    def run(seed: int) -> tuple[object, ...]:
        sim = Simulation(5, seed=seed, faults=Faults(drop=0.1, duplicate=0.1, late=0.1), compact_every=4)
        steps = [Step(action, pick, 0.7) for pick, action in enumerate(ACTIONS * 3)]
        Player(sim, seed).play(steps)
        settle(sim)
        return sim.now, sim.invariants.leaders, sim.invariants.committed, sim.sent, sim.accepted

    assert run(3) == run(3)
    assert run(3) != run(4)
