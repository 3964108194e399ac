"""The clocks: timers fire in deadline order (manual: only when time is advanced), and a failing timer is never lost."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from fakejs.core import clock as clock_module
from fakejs.core.clock import Countdown, SystemClock
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


def test_advance_fires_every_due_timer_when_one_raises_then_raises_the_first() -> None:
    clock = ManualClock()
    fired: list[str] = []
    reported: list[tuple[str, BaseException]] = []
    clock.add_error_sink(lambda where, exc: reported.append((where, exc)))

    def boom(label: str) -> None:
        fired.append(label)
        raise RuntimeError(label)

    clock.call_later(1, fired.append, "before")
    clock.call_later(2, boom, "first")
    clock.call_later(3, fired.append, "between")
    clock.call_later(4, boom, "second")
    clock.call_later(5, fired.append, "after")
    clock.call_later(20, fired.append, "not yet")
    with pytest.raises(RuntimeError, match="first") as raised:
        clock.advance(10)
    assert fired == ["before", "first", "between", "second", "after"]
    assert clock.monotonic() == 10  # time moved all the way
    assert [str(exc) for _, exc in reported] == ["first", "second"]
    assert all(where.startswith("timer callback ") and "boom" in where for where, _ in reported)
    assert any("second" in note for note in raised.value.__notes__)
    assert clock.next_deadline() == 20


def test_jump_fires_the_next_timer_even_when_it_raises() -> None:
    clock = ManualClock()
    fired: list[str] = []
    clock.call_later(3, _raise, ValueError("bad"))
    clock.call_later(3, fired.append, "same instant")
    with pytest.raises(ValueError, match="bad"):
        clock.jump()
    assert fired == ["same instant"]
    assert clock.monotonic() == 3


def test_without_error_sinks_a_failed_timer_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock()
    clock.call_later(1, _raise, KeyError("lost"))
    with caplog.at_level(logging.ERROR, logger="fakejs"), pytest.raises(KeyError):
        clock.advance(1)
    assert "timer callback" in caplog.text and "KeyError" in caplog.text
    assert caplog.records[0].exc_info is not None


def test_a_removed_error_sink_hears_nothing() -> None:
    clock = ManualClock()
    reported: list[BaseException] = []

    def sink(where: str, exc: BaseException) -> None:
        reported.append(exc)

    clock.add_error_sink(sink)
    clock.remove_error_sink(sink)
    clock.call_later(0, _raise, RuntimeError("x"))
    with pytest.raises(RuntimeError):
        clock.advance(0)
    assert reported == []


def test_system_clock_reports_a_failed_timer_and_keeps_running_the_others() -> None:
    reported: list[tuple[str, BaseException]] = []
    fired: list[str] = []

    async def main() -> None:
        clock = SystemClock()
        clock.add_error_sink(lambda where, exc: reported.append((where, exc)))
        clock.call_later(0, _raise, RuntimeError("real time"))
        clock.call_later(0.001, fired.append, "later")
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert [str(exc) for _, exc in reported] == ["real time"]
    assert fired == ["later"]


def _raise(exc: BaseException) -> None:
    raise exc


def test_a_punctual_timer_fires_at_its_time_not_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """It wakes early and waits turn by turn: never before ``when``; cancel stops it while it waits."""
    monkeypatch.setattr(clock_module, "PUNCTUAL_LEAD", 10.0)  # every timer here waits turn by turn
    fired: list[Any] = []

    async def main() -> None:
        clock = SystemClock()
        when = clock.monotonic() + 0.02
        clock.call_punctually(when, lambda: fired.append(clock.monotonic() - when))
        cancelled = clock.call_punctually(when + 1.0, fired.append, "cancelled")
        for _ in range(3):
            await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.sleep(0.05)

    asyncio.run(main())
    (lateness,) = fired
    assert 0 <= lateness < 0.05


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_system_clock_timers_never_fire_early(loop: str) -> None:
    """uvloop counts time in whole milliseconds and rounds delays: the clock makes up for it on that loop."""
    factory = None if loop == "asyncio" else pytest.importorskip("uvloop").new_event_loop
    early: list[float] = []

    async def main() -> None:
        clock = SystemClock()
        fired: list[asyncio.Future[None]] = []
        for i in range(40):
            delay = 0.0002 + i * 0.00037  # fractions of a millisecond, up to 15 ms
            done = asyncio.get_running_loop().create_future()
            armed = clock.monotonic()
            if i % 2:
                clock.call_later(delay, _note_lateness, clock, armed + delay, early, done)
            else:
                clock.call_at(armed + delay, _note_lateness, clock, armed + delay, early, done)
            fired.append(done)
        await asyncio.gather(*fired)

    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())
    assert len(early) == 40 and min(early) >= 0


def _note_lateness(clock: SystemClock, due: float, lateness: list[float], done: asyncio.Future[None]) -> None:
    lateness.append(clock.monotonic() - due)
    done.set_result(None)


def test_a_punctual_timer_on_the_manual_clock_is_exact() -> None:
    clock = ManualClock(start_ns=0)
    fired: list[float] = []
    clock.call_punctually(0.25, lambda: fired.append(clock.monotonic()))
    clock.advance(0.2499)
    assert fired == []
    clock.advance(0.0001)
    assert fired == [pytest.approx(0.25)]


def test_a_countdown_runs_out_once_after_the_last_restart_with_one_timer() -> None:
    clock = ManualClock()
    ran_out: list[float] = []
    countdown = Countdown(clock, lambda: ran_out.append(clock.monotonic()))
    countdown.restart(5)
    for _ in range(4):
        clock.advance(1)
        countdown.restart(5)  # at 1, 2, 3, 4: now due at 9
    assert clock.next_deadline() == 5.0  # the first timer stays: a restart armed none
    clock.advance(4.5)
    assert ran_out == [] and countdown.running
    clock.advance(1)
    assert ran_out == [9.0] and not countdown.running


def test_a_countdown_restarted_sooner_runs_out_sooner_and_a_cancelled_one_never() -> None:
    clock = ManualClock()
    ran_out: list[float] = []
    countdown = Countdown(clock, lambda: ran_out.append(clock.monotonic()))
    countdown.restart(10)
    countdown.restart(2)
    clock.advance(3)
    assert ran_out == [2.0]
    countdown.restart(1)
    countdown.cancel()
    clock.advance(5)
    assert ran_out == [2.0] and not countdown.running


async def test_a_sleep_on_a_manual_clock_ends_only_once_the_clock_is_moved_that_far() -> None:
    clock = ManualClock()
    clock.bind(asyncio.get_running_loop())
    sleeping = asyncio.ensure_future(clock_module.sleep(clock, 5.0))
    for _ in range(3):
        await asyncio.sleep(0)
    clock.advance(4.0)
    await asyncio.sleep(0)
    assert not sleeping.done()
    clock.advance(1.0)
    await asyncio.wait_for(sleeping, 1.0)
    cancelled = asyncio.ensure_future(clock_module.sleep(clock, 1.0))
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    clock.advance(2.0)  # its timer went with it: nothing fires
