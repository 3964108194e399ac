"""Differential state machine: stream and consumer operations on fakejs and nats-server.

Hypothesis drives a :class:`RuleBasedStateMachine` whose every rule sends one
JetStream request -- stream create and update (with atomic batches,
subject transforms and republish among the settings), publish with headers,
atomic batches of one to four messages (some broken), purge, delete, message
get, info, list; consumer create, info, delete, no-wait fetch, ack/nak/term
-- to both servers and requires the two replies to be
equal once timestamps and server ids are normalised.  When the answers
differ, hypothesis shrinks the run to the shortest sequence of operations
that still shows it.

The operations, their value sets and the normalisation are those of the
parity campaign (:mod:`fakejs.parity`): each rule draws operations with
:func:`fakejs.parity.strategies.operations` and runs them with
:meth:`fakejs.parity.executor.Pair.both`, so a campaign's reproduction and a
failure here speak the same language.

Both servers and their nats-py connections live on one event loop in a
background thread, shared by every example; each example starts by deleting
every stream so examples never see each other's state.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Coroutine
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from fakejs.parity.executor import Pair
from fakejs.parity.operations import BASE, BUILDERS, CAMPAIGN, Operation, generate
from fakejs.parity.strategies import operations
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON or "")]

EXAMPLES = int(os.environ.get("FAKEJS_FUZZ_EXAMPLES", "25"))


class _LoopPair:
    """A :class:`Pair` on a private event loop thread, driven from hypothesis' synchronous rules."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="differential-loop", daemon=True)
        self.thread.start()
        self.pair = Pair(binary=REAL_BINARY)
        self.run(self.pair.start())

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.run(self.pair.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


_pair: _LoopPair | None = None


def pair() -> _LoopPair:
    global _pair
    if _pair is None:
        _pair = _LoopPair()
    return _pair


@pytest.fixture(scope="module", autouse=True)
def _close_pair():
    yield
    global _pair
    if _pair is not None:
        _pair.close()
        _pair = None


class StreamMachine(RuleBasedStateMachine):
    """Every rule: operations sent to each server, equal normalised replies."""

    def same(self, ops: list[Operation]) -> None:
        p = pair()
        for op in ops:
            fake, real = p.run(p.pair.step(op))
            assert fake == real, f"{json.dumps(op)}\nfake: {fake}\nreal: {real}"

    @initialize()
    def clean(self) -> None:
        p = pair()
        p.run(p.pair.reset())

    @rule(ops=operations("stream.create", BASE))
    def create(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("stream.update", BASE))
    def update(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("stream.delete", BASE))
    def delete(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("publish", BASE))
    def publish(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("publish_many", BASE))
    def publish_many(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("atomic_batch", BASE))
    def atomic_batch(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("stream.purge", BASE))
    def purge(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("msg.delete", BASE))
    def delete_message(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("msg.get", BASE))
    def get_message(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("stream.info", BASE))
    def info(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(names=operations("stream.names", BASE), listing=operations("stream.list", BASE))
    def names_and_list(self, names: list[Operation], listing: list[Operation]) -> None:
        self.same(names + listing)

    # -- consumers ------------------------------------------------------------

    @rule(ops=operations("consumer.create", BASE))
    def create_consumer(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("consumer.info", BASE))
    def consumer_info(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("consumer.delete", BASE))
    def delete_consumer(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("fetch", BASE))
    def fetch(self, ops: list[Operation]) -> None:
        self.same(ops)

    @rule(ops=operations("ack", BASE))
    def ack(self, ops: list[Operation]) -> None:
        self.same(ops)

    @invariant()
    def account_usage_agrees(self) -> None:
        self.same([{"op": "account.info"}])


StreamMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_stream_operations_agree = StreamMachine.TestCase


def test_strategies_and_seeded_generation_share_value_sets() -> None:
    """A seed always names the same sequence, and every operation it holds is one the machine can draw."""
    first = generate(1234, 40)
    assert first == generate(1234, 40)
    assert json.loads(json.dumps(first)) == first  # plain data
    assert {op["op"] for op in generate(7, 400, CAMPAIGN)} <= set(BUILDERS) - {"publish_many"}
