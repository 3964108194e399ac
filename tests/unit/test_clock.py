"""The manual clock: timers fire in deadline order, only when time is advanced."""

from __future__ import annotations

import pytest

from fakejs.testkit.clock import ManualClock


def test_advance_fires_due_timers_in_order() -> None:
    clock = ManualClock(start_ns=1_000_000_000)
    fired: list[str] = []
    clock.call_later(2, fired.append, "two")
    clock.call_later(1, fired.append, "one")
    clock.call_later(1, fired.append, "one-again")
    late = clock.call_later(5, fired.append, "late")
    assert clock.advance(1.5) == 2
    assert fired == ["one", "one-again"]
    assert clock.monotonic() == 1.5
    assert clock.time_ns() == 2_500_000_000
    late.cancel()
    clock.advance(10)
    assert fired == ["one", "one-again", "two"]


def test_timers_scheduled_by_callbacks_fire_within_the_same_advance() -> None:
    clock = ManualClock()
    fired: list[float] = []

    def tick() -> None:
        fired.append(clock.monotonic())
        if len(fired) < 3:
            clock.call_later(1, tick)

    clock.call_later(1, tick)
    clock.advance(10)
    assert fired == [1.0, 2.0, 3.0]


def test_time_only_moves_forward() -> None:
    clock = ManualClock()
    with pytest.raises(ValueError):
        clock.advance(-1)
    assert clock.next_deadline() is None
