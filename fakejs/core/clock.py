"""The one clock every server timer goes through.

Domain code asks the clock for the time (:meth:`Clock.monotonic` for
intervals, :meth:`Clock.time_ns` for timestamps it reports) and for timers
(:meth:`Clock.call_later` / :meth:`Clock.call_at`, and
:meth:`Clock.call_punctually` for a deadline a client measures).  :class:`SystemClock`
uses the asyncio loop and real time; the test kit's manual clock
(:class:`fakejs.testkit.clock.ManualClock`) moves only when a test says so.

A timer callback that raises is a server bug that must not go unseen: a
clock hands the exception to every *error sink* added to it (a server adds
one that records it, see :mod:`fakejs.core.failures`) and logs it with its
traceback when nobody listens.  :class:`TimerErrors` is that shared part.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any, Protocol

from fakejs.core.log import get_logger

# Receives (what was running, the exception) for each failed timer callback.
ErrorSink = Callable[[str, BaseException], None]


class TimerHandle(Protocol):
    """A timer armed by :meth:`Clock.call_later` (an ``asyncio.TimerHandle`` on real time): it can be cancelled."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """The server clock: monotonic and wall time, and timers on them.

    Real time in a running server; a manual clock a test moves by hand (``advances`` counts its moves).
    """

    @property
    def advances(self) -> int | None:
        """How many times a test moved this clock by hand; ``None`` for real time."""
        ...

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Use ``loop`` for timers (called when a server starts on it)."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""

    def time_ns(self) -> int:
        """Wall-clock nanoseconds since the Unix epoch (for reported timestamps)."""

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` after ``delay`` seconds."""

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` when :meth:`monotonic` reaches ``when``."""

    def call_punctually(self, when: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """:meth:`call_at` for a deadline a client measures (a pull request's expiry): never late by the loop's
        timer granularity; a real-time clock wakes a little early and then waits turn by turn."""

    def call_background(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """:meth:`call_later` for a timer that only keeps connections alive (PINGs).

        It fires as any timer does; a manual clock's ``advance_to_next()``
        moves past it to the next timer that does work.
        """

    def call_soon(self, callback: Callable[..., object], *args: Any) -> None:
        """Run ``callback(*args)`` once the loop has finished what it is doing now.

        Ordering, not time: output already queued (a reply being flushed)
        goes out first, and a manual clock does not have to move for it.
        """

    def add_error_sink(self, sink: ErrorSink) -> None:
        """Hand every exception a timer callback raises to ``sink``."""

    def remove_error_sink(self, sink: ErrorSink) -> None:
        """Stop handing exceptions to ``sink``."""


async def sleep(clock: Clock, seconds: float) -> None:
    """Wait ``seconds`` of ``clock``'s time (on a manual clock, until it is moved that far)."""
    done = asyncio.get_running_loop().create_future()

    def wake() -> None:
        if not done.done():
            done.set_result(None)

    handle = clock.call_later(seconds, wake)
    try:
        await done
    finally:
        handle.cancel()


def describe_callback(callback: Callable[..., object]) -> str:
    """A readable name for a timer callback, for error reports."""
    name = getattr(callback, "__qualname__", None) or repr(callback)
    return f"timer callback {name}"


class TimerErrors:
    """The error sinks of one clock, and what happens to a failed timer callback."""

    def __init__(self) -> None:
        self.sinks: list[ErrorSink] = []

    def add(self, sink: ErrorSink) -> None:
        if sink not in self.sinks:
            self.sinks.append(sink)

    def remove(self, sink: ErrorSink) -> None:
        if sink in self.sinks:
            self.sinks.remove(sink)

    def report(self, callback: Callable[..., object], exc: BaseException) -> None:
        """Hand a timer callback's exception to the sinks, or log it when there are none."""
        where = describe_callback(callback)
        if not self.sinks:
            get_logger().error("%s failed", where, exc_info=exc)
        for sink in list(self.sinks):
            sink(where, exc)


class SystemClock:
    """Real time, timers on the running asyncio loop.

    A timer never fires before its time, whatever the loop: asyncio's own
    loop runs a timer at or after its time, but a loop that counts time in
    whole milliseconds (uvloop: libuv's clock, delays rounded to the nearest
    millisecond) may run it up to 1.5 ms early, so on such a loop a delay is
    rounded up to the next millisecond and one more is added.
    """

    advances: int | None = None

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._errors = TimerErrors()
        self._whole_ms = loop is not None and counts_whole_ms(loop)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = asyncio.get_running_loop()
            self.bind(loop)
        return loop

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._whole_ms = counts_whole_ms(loop)

    def monotonic(self) -> float:
        return time.monotonic()

    def time_ns(self) -> int:
        return time.time_ns()

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        return self.loop_later(delay, self._fire, callback, args)

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        return self.loop_later(when - time.monotonic(), self._fire, callback, args)

    def loop_later(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """The loop's ``call_later``, never early (see the class)."""
        loop = self.loop
        if delay <= 0:
            return loop.call_later(0.0, callback, *args)
        if self._whole_ms:
            delay = (math.ceil(delay * 1000) + 1) / 1000
        return loop.call_later(delay, callback, *args)

    def call_punctually(self, when: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        timer = PunctualTimer(self, when, callback, args)
        timer.start()
        return timer

    def call_background(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        return self.call_later(delay, callback, *args)

    def call_soon(self, callback: Callable[..., object], *args: Any) -> None:
        self.loop.call_soon(self._fire, callback, args)

    def add_error_sink(self, sink: ErrorSink) -> None:
        self._errors.add(sink)

    def remove_error_sink(self, sink: ErrorSink) -> None:
        self._errors.remove(sink)

    def _fire(self, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self.fire(callback, args)

    def fire(self, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        """Run a timer's callback; an exception goes to the error sinks."""
        try:
            callback(*args)
        except Exception as exc:  # noqa: BLE001 - reported to the error sinks (recorded on the server); the loop goes on
            self._errors.report(callback, exc)


def counts_whole_ms(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``loop`` may run a timer early: every loop but asyncio's own (uvloop's timers are libuv's)."""
    return not isinstance(loop, asyncio.BaseEventLoop)


# How early a punctual timer wakes: the selector rounds its timeout up to whole milliseconds, and a
# busy loop starts a callback late; the rest of the wait is spent yielding to the loop.
PUNCTUAL_LEAD = 0.004


class PunctualTimer:
    """A timer of :class:`SystemClock` that fires at its time, not a millisecond or more after it.

    The loop's timer wakes :data:`PUNCTUAL_LEAD` early; from there the timer
    checks the time on every loop turn (other work goes on between the turns)
    and fires on the first turn at or past ``when``.
    """

    __slots__ = ("_args", "_callback", "_clock", "_handle", "_when", "cancelled")

    def __init__(self, clock: SystemClock, when: float, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self._clock = clock
        self._when = when
        self._callback = callback
        self._args = args
        self._handle: TimerHandle | None = None  # not asyncio.Handle: uvloop's handles are of their own classes
        self.cancelled = False

    def start(self) -> None:
        clock = self._clock
        lead = self._when - PUNCTUAL_LEAD - time.monotonic()
        self._handle = clock.loop_later(lead, self._check) if lead > 0 else clock.loop.call_soon(self._check)

    def cancel(self) -> None:
        self.cancelled = True
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _check(self) -> None:
        if self.cancelled:
            return
        if time.monotonic() < self._when:
            self._handle = self._clock.loop.call_soon(self._check)
            return
        self._handle = None
        self._clock.fire(self._callback, self._args)


class EarliestTimer:
    """One timer for the earliest of many due times, on a :class:`Clock`.

    Owners with a queue of due times (message expiry, message schedules)
    arm it for the head of their queue after every change: a timer already
    armed as early or earlier is kept, a later one is replaced, so a change
    costs no timer churn.  ``callback`` runs once the time comes; the owner
    then takes what is due and arms again.
    """

    def __init__(self, clock: Clock, callback: Callable[[], None]) -> None:
        self._clock = clock
        self._callback = callback
        self._timer: TimerHandle | None = None
        self._fires_at: float | None = None  # the clock's monotonic time the timer fires at

    def arm(self, delay: float) -> None:
        """Fire in ``delay`` seconds, unless already armed to fire no later than that."""
        when = self._clock.monotonic() + delay
        if self._timer is not None and self._fires_at is not None and self._fires_at <= when:
            return
        self.cancel()
        self._fires_at = when
        self._timer = self._clock.call_later(delay, self._fire)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._fires_at = None

    def _fire(self) -> None:
        self._timer = self._fires_at = None
        self._callback()


class Countdown:
    """A countdown that activity restarts, on a :class:`Clock`: ``callback`` runs once it runs out.

    Go restarts such a timer on every event (``timer.Reset``: idle heartbeats,
    inactivity).  Here a restart only moves the due time on; one timer runs,
    and when it fires before the due time it waits out the rest, so a busy
    countdown costs no timer per event.
    """

    def __init__(self, clock: Clock, callback: Callable[[], None]) -> None:
        self._clock = clock
        self._callback = callback
        self._timer: TimerHandle | None = None
        self._timer_at = 0.0  # the clock's monotonic time the timer fires at
        self.due = 0.0  # the clock's monotonic time the countdown runs out

    @property
    def running(self) -> bool:
        return self._timer is not None

    def restart(self, delay: float) -> None:
        """Run out ``delay`` seconds from now (sooner or later than before)."""
        self.run_until(self._clock.monotonic() + delay)

    def run_until(self, due: float) -> None:
        """Run out at the clock's monotonic time ``due``; a timer armed no later than that stays."""
        self.due = due
        if self._timer is None or self._timer_at > due:
            self.cancel()
            self._timer_at = due
            self._timer = self._clock.call_at(due, self._fired)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None

    def _fired(self) -> None:
        self._timer = None
        if self._clock.monotonic() < self.due:
            self.run_until(self.due)  # restarted since the timer was armed
            return
        self._callback()
