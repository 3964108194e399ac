"""Random schedules of faults and requests played on a :class:`~tests.unit.raft.simulator.Simulation`,
and the quiet end of a run where every node must catch up."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from tests.unit.raft.simulator import Faults, Simulation

ACTIONS = (
    "crash",
    "crash_leader",
    "restart",
    "partition",
    "heal",
    "step_down",
    "propose",
    "propose_many",
    "campaign",
    "wait",
)
MEMBERSHIP_ACTIONS = ("add_voter", "add_observer", "remove")


@dataclass(frozen=True)
class Step:
    """One action of a schedule (``pick`` chooses its node or its partition), then ``pause`` seconds of run."""

    action: str
    pick: int
    pause: float


class Player:
    """Plays steps on a simulation; proposals carry unique bytes."""

    def __init__(self, sim: Simulation, seed: int) -> None:
        self.sim = sim
        self.rng = random.Random(seed)
        self.names = sorted(sim.nodes)
        self.proposed = 0

    def play(self, steps: Sequence[Step]) -> None:
        for number, step in enumerate(steps):
            self.do(step.action, step.pick)
            self.sim.run_for(step.pause)
            if number % 8 == 7:
                self.sim.invariants.check_logs(self.sim.up())

    def do(self, action: str, pick: int) -> None:
        sim, name = self.sim, self.names[pick % len(self.names)]
        if action == "crash":
            sim.crash(name)
        elif action == "crash_leader":
            leader = sim.leader()
            if leader is not None:
                sim.crash(leader.id)
        elif action == "restart":
            sim.restart(name)
        elif action == "partition" and len(self.names) > 1:
            side = self.rng.sample(self.names, 1 + pick % (len(self.names) - 1))
            sim.partition(side, [other for other in self.names if other not in side])
        elif action == "heal":
            sim.heal()
        elif action in ("step_down", "campaign"):
            self._request(name, action)
        elif action in MEMBERSHIP_ACTIONS:
            self._change(name, action)
        elif action in ("propose", "propose_many"):
            count = 1 if action == "propose" else 1 + pick % 5
            items = [self._next_value() for _ in range(count)]
            leader = sim.leader()
            if leader is not None:
                sim.act(leader.id, lambda node: node.propose_many(items))

    def _request(self, name: str, action: str) -> None:
        sim = self.sim
        if sim.nodes[name].node is None:
            return
        if action == "campaign":
            sim.act(name, lambda node: node.campaign())
        else:
            leader = sim.leader()
            if leader is not None:
                sim.act(leader.id, lambda node: node.step_down(None if leader.id == name else name))

    def _change(self, name: str, action: str) -> None:
        leader = self.sim.leader()
        if leader is None:
            return
        if action == "remove":
            if leader.membership.voters - {name}:
                self.sim.act(leader.id, lambda node: node.remove_peer(name))
        else:
            self.sim.act(leader.id, lambda node: node.add_peer(name, voter=action == "add_voter"))

    def _next_value(self) -> bytes:
        self.proposed += 1
        return b"value-%d" % self.proposed


def settle(sim: Simulation, seconds: float = 300.0) -> None:
    """Heal, restart everyone, stop the faults, and run until one leader's log is committed and applied
    everywhere; then check that no committed entry was lost."""
    sim.heal()
    sim.faults = Faults()
    for name in sim.nodes:
        sim.restart(name)

    def members() -> list[str]:
        leader = sim.leader()
        return sorted(leader.membership.members) if leader is not None else []

    def settled() -> bool:
        leader = sim.leader()
        if leader is None or leader.commit_index != leader.last_index:
            return False
        return all(
            sim.node(name).applied_index == leader.last_index and sim.node(name).term == leader.term
            for name in members()
        )

    assert sim.run_until(settled, seconds), [
        (node.id, node.role, node.term, node.commit_index, node.last_index, node.applied_index) for node in sim.up()
    ]
    sim.invariants.check_logs(sim.node(name) for name in members())
    for name in members():
        machine = sim.nodes[name].machine
        sim.invariants.check_nothing_lost(name, machine.values, machine.applied_index)
