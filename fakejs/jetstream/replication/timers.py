"""A node's timers on the server's clock: each kind armed at most once, handed back to the node when it fires.

The node says what to arm in each :class:`~fakejs.jetstream.raft.Ready`
(a :class:`~fakejs.jetstream.raft.Timer` replaces the armed one of its kind,
or cancels it); :class:`NodeTimers` arms them with
:meth:`~fakejs.core.clock.Clock.call_later`, so that a manual clock drives
elections and heartbeats in tests, and passes a timer that fires back as it
came.

A follower's election timer is pushed back by every append it takes, many
times a second under load: a timer replaced by a later one keeps the clock's
handle it has, and only notes the new deadline; when that handle fires before
the deadline, it is armed again for what remains.  So a replacement costs no
handle cancelled and made again, and the timer still fires at its deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fakejs.core.clock import Clock, TimerHandle
from fakejs.jetstream.raft import Timer, TimerKind


@dataclass(slots=True)
class _Armed:
    """The latest timer of a kind, when it is due, and the clock's handle (due at ``fires_at``, no later)."""

    timer: Timer
    deadline: float
    fires_at: float
    handle: TimerHandle


class NodeTimers:
    """The timers of one node on ``clock``; ``fired`` receives each one that fires."""

    def __init__(self, clock: Clock, fired: Callable[[Timer], None]) -> None:
        self._clock = clock
        self._fired = fired
        self._armed: dict[TimerKind, _Armed] = {}

    def arm(self, timers: Iterable[Timer]) -> None:
        """Arm (or, with ``seconds`` of ``None``, cancel) each timer, replacing the one of its kind."""
        for timer in timers:
            armed = self._armed.get(timer.kind)
            if timer.seconds is None:
                if armed is not None:
                    armed.handle.cancel()
                    del self._armed[timer.kind]
                continue
            deadline = self._clock.monotonic() + timer.seconds
            if armed is not None and armed.fires_at <= deadline:
                armed.timer, armed.deadline = timer, deadline  # its handle fires first, and is armed again
                continue
            if armed is not None:
                armed.handle.cancel()
            handle = self._clock.call_later(timer.seconds, self._fire, timer.kind)
            self._armed[timer.kind] = _Armed(timer, deadline, deadline, handle)

    def _fire(self, kind: TimerKind) -> None:
        armed = self._armed.get(kind)
        if armed is None:
            return
        remaining = armed.deadline - self._clock.monotonic()
        if remaining > 0:  # replaced by a later one since the handle was made
            armed.fires_at = armed.deadline
            armed.handle = self._clock.call_later(remaining, self._fire, kind)
            return
        del self._armed[kind]
        self._fired(armed.timer)

    def cancel_all(self) -> None:
        for armed in self._armed.values():
            armed.handle.cancel()
        self._armed.clear()
