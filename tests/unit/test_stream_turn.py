"""A replicated stream's turn: taken at once when free, else waited for in order, handed over on release."""

from __future__ import annotations

import asyncio

from fakejs.jetstream.stream.turn import Turn


async def _hold(turn: Turn, name: str, order: list[str], release: asyncio.Event) -> None:
    async with turn:
        order.append(name)
        await release.wait()


async def test_a_free_turn_is_taken_at_once_and_a_held_one_is_not() -> None:
    turn = Turn()
    assert turn.take_now() and turn.locked()
    assert not turn.take_now()
    turn.release()
    assert not turn.locked() and turn.take_now()


async def test_waiters_take_the_turn_in_the_order_they_came_and_nobody_takes_it_in_between() -> None:
    turn, order, release = Turn(), [], asyncio.Event()
    assert turn.take_now()
    waiting = [asyncio.create_task(_hold(turn, name, order, release)) for name in "abc"]
    while len(turn._waiting) < 3:
        await asyncio.sleep(0)
    turn.release()  # handed to "a": still held, though "a" has not run yet
    assert turn.locked() and not turn.take_now()
    release.set()
    await asyncio.wait_for(asyncio.gather(*waiting), 5)
    assert order == ["a", "b", "c"]
    assert not turn.locked()


async def test_a_cancelled_waiter_is_passed_over_and_one_cancelled_once_handed_the_turn_passes_it_on() -> None:
    turn, order, release = Turn(), [], asyncio.Event()
    release.set()
    assert turn.take_now()
    first, second, third = (asyncio.create_task(_hold(turn, name, order, release)) for name in "abc")
    while len(turn._waiting) < 3:
        await asyncio.sleep(0)
    first.cancel()  # cancelled while waiting: passed over
    await asyncio.sleep(0)
    turn.release()  # handed to "b"...
    second.cancel()  # ...cancelled before it ran: the turn goes on to "c"
    await asyncio.wait_for(asyncio.gather(first, second, third, return_exceptions=True), 5)
    assert first.cancelled() and second.cancelled()
    assert order == ["c"]
    assert not turn.locked()
