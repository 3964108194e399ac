"""Virtual time for tests: a clock that moves only when a test says so.

:class:`ManualClock` implements :class:`fakejs.core.clock.Clock`.  It moves
on :meth:`ManualClock.advance`, firing everything that falls due in deadline
order, so a 2-minute timeout takes no time at all; :meth:`ManualClock.advance_to_next`
moves to the next timer that does work (an ack deadline, a pull's expiry)
without the test knowing when exactly that is, and
:meth:`ManualClock.advance_until` moves timer by timer until a condition
holds.  A callback that raises does not stop the others: every due timer
fires, each failure goes to the clock's error sinks (the servers on it
record it), and the first is raised again once time has moved.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Any

from fakejs.core.clock import ErrorSink, TimerErrors, describe_callback
from fakejs.gocompat.gotime import NS
from fakejs.testkit.conditions import not_met

__all__ = ["ManualClock"]


class _ManualTimer:
    __slots__ = ("args", "background", "callback", "cancelled", "seq", "when")

    def __init__(
        self, when: float, seq: int, callback: Callable[..., Any], args: tuple[Any, ...], background: bool = False
    ) -> None:
        self.when = when
        self.seq = seq
        self.callback = callback
        self.args = args
        self.cancelled = False
        self.background = background  # keeps connections alive only: advance_to_next() does not stop at it

    def cancel(self) -> None:
        self.cancelled = True

    def __lt__(self, other: _ManualTimer) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)


class ManualClock:
    """Virtual time that moves only when a test moves it (like trio's MockClock).

    :meth:`advance` moves by a number of seconds; :meth:`advance_to_next`
    to the next timer that does work, whenever that is; :meth:`advance_until`
    timer by timer until a condition holds.

    ``start_ns`` is the wall-clock time reported at virtual time zero; it
    defaults to the real time when the clock is made, so timestamps look
    current.  Timers due at the same instant fire in the order they were
    scheduled.

    With ``autojump_threshold`` (real seconds), a server on this clock jumps
    to the next timer by itself whenever no client has sent anything for
    that long -- a client waiting on a 30 s pull expiry gets its 408 after
    the threshold, not after 30 s.
    """

    def __init__(self, start_ns: int | None = None, autojump_threshold: float | None = None) -> None:
        self.autojump_threshold = autojump_threshold
        self._now = 0.0
        self._start_ns = time.time_ns() if start_ns is None else start_ns
        self._timers: list[_ManualTimer] = []
        self._seq = itertools.count()
        self._errors = TimerErrors()
        self.advances = 0  # how many times advance() ran (clients get one chance to answer per advance)
        self._loop: asyncio.AbstractEventLoop | None = None
        # Told the seconds of each move before its timers fire (the servers' timelines on this clock).
        self.on_advance: list[Callable[[float], None]] = []

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop :meth:`call_soon` queues on (timers never use it: they wait for :meth:`advance`)."""
        self._loop = loop

    def monotonic(self) -> float:
        return self._now

    def time_ns(self) -> int:
        return self._start_ns + round(self._now * NS)

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> _ManualTimer:
        return self.call_at(self._now + max(delay, 0.0), callback, *args)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> _ManualTimer:
        timer = _ManualTimer(max(when, self._now), next(self._seq), callback, args)
        heapq.heappush(self._timers, timer)
        return timer

    def call_punctually(self, when: float, callback: Callable[..., Any], *args: Any) -> _ManualTimer:
        """Virtual time is exact: the same as :meth:`call_at`."""
        return self.call_at(when, callback, *args)

    def call_background(self, delay: float, callback: Callable[..., Any], *args: Any) -> _ManualTimer:
        """A timer that only keeps connections alive (PINGs): it fires as any other, but
        :meth:`advance_to_next` and :meth:`advance_until` move past it to the next timer that does work."""
        timer = _ManualTimer(self._now + max(delay, 0.0), next(self._seq), callback, args, background=True)
        heapq.heappush(self._timers, timer)
        return timer

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Queue ``callback`` on the loop: work to do next, not a timer, so time need not move."""
        loop = self._loop if self._loop is not None else asyncio.get_running_loop()
        loop.call_soon(self._fire_soon, callback, args)

    def _fire_soon(self, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            callback(*args)
        except Exception as exc:  # noqa: BLE001 - reported to the error sinks (recorded on the server); the loop goes on
            self._errors.report(callback, exc)

    def add_error_sink(self, sink: ErrorSink) -> None:
        self._errors.add(sink)

    def remove_error_sink(self, sink: ErrorSink) -> None:
        self._errors.remove(sink)

    def next_deadline(self) -> float | None:
        """When the next pending timer fires, or ``None``."""
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0].when if self._timers else None

    def next_work(self) -> float | None:
        """When the next pending timer that does work fires (keepalive PINGs left out), or ``None``."""
        due = [timer.when for timer in self._timers if not timer.cancelled and not timer.background]
        return min(due) if due else None

    def jump(self) -> int:
        """Advance exactly to the next pending timer (if any); returns how many fired."""
        deadline = self.next_deadline()
        if deadline is None:
            return 0
        return self._advance_to(deadline)

    def advance(self, seconds: float) -> int:
        """Move time forward, firing every timer due on the way; returns how many fired.

        Timers scheduled by callbacks also fire if they fall due before the
        target time.  A callback that raises is reported to the error sinks
        and the others still fire; then the first exception is raised (its
        notes name the later ones).
        """
        if seconds < 0:
            raise ValueError("time only moves forward")
        return self._advance_to(self._now + seconds)

    def advance_to_next(self) -> float | None:
        """Move to the next timer that does work and fire everything due by then; returns the seconds moved.

        An unacknowledged message's redelivery, a pull's expiry, a message's
        max age: the test need not know the exact deadline (nats-server's ack
        deadline, for one, is ``ack_wait`` plus a millisecond).  Keepalive
        PINGs are not stopped at, though they fire when due on the way.
        Every timer due at the new time fires, also those its callbacks
        schedule for that same instant.  ``None``: no such timer is pending
        (time does not move); ``0.0``: one was already due.
        """
        deadline = self.next_work()
        if deadline is None:
            return None
        start = self._now
        self._advance_to(deadline)
        return deadline - start

    def advance_until(self, condition: Callable[[], Any], limit: float) -> float:
        """Move timer by timer (as :meth:`advance_to_next`) until ``condition()`` is truthy; returns the seconds moved.

        ``condition`` is checked before time moves and after each step; at
        most ``limit`` seconds pass.  If it still does not hold, time stays
        at the last timer fired and :class:`TimeoutError` says what was
        waited for.  The whole walk counts as one :meth:`advance` (clients
        get one chance to answer a PING in it): the condition sees the
        server's own state, and clients act only once this returns.
        """
        if limit < 0:
            raise ValueError("time only moves forward")
        start = self._now
        self.advances += 1
        while not (value := condition()):
            deadline = self.next_work()
            if deadline is None or deadline > start + limit:
                raise not_met(condition, f"{self._now - start:g} s of virtual time (limit {limit:g} s)", value)
            self._tell_advance(deadline - self._now)
            self._fire_until(deadline)
        return self._now - start

    def _advance_to(self, target: float) -> int:
        self.advances += 1
        self._tell_advance(target - self._now)
        return self._fire_until(target)

    def _tell_advance(self, seconds: float) -> None:
        for listener in self.on_advance:
            listener(seconds)

    def _fire_until(self, target: float) -> int:
        """Fire every timer due up to ``target`` in deadline order, then set the time to it."""
        fired = 0
        first: Exception | None = None
        while True:
            deadline = self.next_deadline()
            if deadline is None or deadline > target:
                break
            timer = heapq.heappop(self._timers)
            self._now = max(self._now, timer.when)
            fired += 1
            try:
                timer.callback(*timer.args)
            except Exception as exc:  # noqa: BLE001 - every due timer still fires; the first failure is raised below
                self._errors.report(timer.callback, exc)
                if first is None:
                    first = exc
                else:
                    first.add_note(f"also failed in the same advance: {describe_callback(timer.callback)}: {exc!r}")
        self._now = max(self._now, target)
        if first is not None:
            raise first
        return fired
