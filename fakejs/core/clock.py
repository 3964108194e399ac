"""The one clock every server timer goes through.

Domain code asks the clock for the time (:meth:`Clock.monotonic` for
intervals, :meth:`Clock.time_ns` for timestamps it reports) and for timers
(:meth:`Clock.call_later` / :meth:`Clock.call_at`).  :class:`SystemClock`
uses the asyncio loop and real time; :class:`ManualClock` moves only when a
test calls :meth:`ManualClock.advance`, firing everything that falls due in
deadline order, so a 2-minute timeout takes no time at all.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Any, Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""

    def time_ns(self) -> int:
        """Wall-clock nanoseconds since the Unix epoch (for reported timestamps)."""

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` after ``delay`` seconds."""

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` when :meth:`monotonic` reaches ``when``."""


class SystemClock:
    """Real time, timers on the running asyncio loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def monotonic(self) -> float:
        return time.monotonic()

    def time_ns(self) -> int:
        return time.time_ns()

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        return self.loop.call_later(max(delay, 0.0), callback, *args)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        return self.loop.call_later(max(when - time.monotonic(), 0.0), callback, *args)


class _ManualTimer:
    __slots__ = ("args", "callback", "cancelled", "seq", "when")

    def __init__(self, when: float, seq: int, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.when = when
        self.seq = seq
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def __lt__(self, other: _ManualTimer) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)


class ManualClock:
    """Virtual time that moves only on :meth:`advance` (like trio's MockClock).

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
        self.advances = 0  # how many times advance() ran (clients get one chance to answer per advance)

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Accepted for symmetry with :class:`SystemClock`; unused."""

    def monotonic(self) -> float:
        return self._now

    def time_ns(self) -> int:
        return self._start_ns + int(round(self._now * 1e9))

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> _ManualTimer:
        return self.call_at(self._now + max(delay, 0.0), callback, *args)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> _ManualTimer:
        timer = _ManualTimer(max(when, self._now), next(self._seq), callback, args)
        heapq.heappush(self._timers, timer)
        return timer

    def next_deadline(self) -> float | None:
        """When the next pending timer fires, or ``None``."""
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0].when if self._timers else None

    def jump(self) -> int:
        """Advance exactly to the next pending timer (if any); returns how many fired."""
        deadline = self.next_deadline()
        if deadline is None:
            return 0
        return self.advance(max(deadline - self._now, 0.0))

    def advance(self, seconds: float) -> int:
        """Move time forward, firing every timer due on the way; returns how many fired.

        Timers scheduled by callbacks also fire if they fall due before the
        target time.
        """
        if seconds < 0:
            raise ValueError("time only moves forward")
        target = self._now + seconds
        self.advances += 1
        fired = 0
        while True:
            deadline = self.next_deadline()
            if deadline is None or deadline > target:
                break
            timer = heapq.heappop(self._timers)
            self._now = max(self._now, timer.when)
            timer.callback(*timer.args)
            fired += 1
        self._now = target
        return fired
