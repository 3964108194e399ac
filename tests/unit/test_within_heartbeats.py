"""The meta leader's bounded waits (a move's catch-up and handover, a scale-down's settling): a condition asked at
once and then after each heartbeat of the meta group on the server's clock, at most a given number of times."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from types import SimpleNamespace
from typing import Any

from fakejs.jetstream.service.replicated_peers import within_heartbeats
from fakejs.testkit.clock import ManualClock

HEARTBEAT = 0.25


def share_on(clock: ManualClock) -> Any:
    """A share whose meta group beats every :data:`HEARTBEAT` seconds on ``clock``."""
    group = SimpleNamespace(node=SimpleNamespace(settings=SimpleNamespace(heartbeat_interval=HEARTBEAT)))
    return SimpleNamespace(group=group, js=SimpleNamespace(clock=clock))


async def on_manual_time(clock: ManualClock, waiting: Awaitable[bool]) -> bool:
    """Run ``waiting``, moving ``clock`` to its next timer whenever the wait is asleep."""
    task = asyncio.ensure_future(waiting)
    while not task.done():
        for _ in range(3):
            await asyncio.sleep(0)
        clock.jump()
    return task.result()


async def test_a_condition_that_comes_true_ends_the_wait_at_once() -> None:
    clock = ManualClock()
    asked: list[float] = []

    async def holds() -> bool:
        asked.append(clock.monotonic())
        return len(asked) == 3

    assert await on_manual_time(clock, within_heartbeats(share_on(clock), 5, holds))
    assert asked == [0.0, HEARTBEAT, 2 * HEARTBEAT]
    assert clock.next_deadline() is None  # no heartbeat left waiting


async def test_a_condition_that_never_holds_is_asked_as_many_times_as_heartbeats_given() -> None:
    clock = ManualClock()
    asked: list[float] = []

    async def never() -> bool:
        asked.append(clock.monotonic())
        return False

    assert not await on_manual_time(clock, within_heartbeats(share_on(clock), 4, never))
    assert asked == [index * HEARTBEAT for index in range(4)]
