"""A node's timers on the server's clock: each kind armed at most once, handed back to the node when it fires.

The node says what to arm in each :class:`~fakejs.jetstream.raft.Ready`
(a :class:`~fakejs.jetstream.raft.Timer` replaces the armed one of its kind,
or cancels it); :class:`NodeTimers` arms them with
:meth:`~fakejs.core.clock.Clock.call_later`, so that a manual clock drives
elections and heartbeats in tests, and passes a timer that fires back as it
came.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fakejs.core.clock import Clock, TimerHandle
from fakejs.jetstream.raft import Timer, TimerKind


class NodeTimers:
    """The timers of one node on ``clock``; ``fired`` receives each one that fires."""

    def __init__(self, clock: Clock, fired: Callable[[Timer], None]) -> None:
        self._clock = clock
        self._fired = fired
        self._armed: dict[TimerKind, tuple[Timer, TimerHandle]] = {}

    def arm(self, timers: Iterable[Timer]) -> None:
        """Arm (or, with ``seconds`` of ``None``, cancel) each timer, replacing the one of its kind."""
        for timer in timers:
            armed = self._armed.pop(timer.kind, None)
            if armed is not None:
                armed[1].cancel()
            if timer.seconds is not None:
                self._armed[timer.kind] = (timer, self._clock.call_later(timer.seconds, self._fire, timer))

    def _fire(self, timer: Timer) -> None:
        armed = self._armed.get(timer.kind)
        if armed is not None and armed[0] is timer:
            del self._armed[timer.kind]
        self._fired(timer)

    def cancel_all(self) -> None:
        for _, handle in self._armed.values():
            handle.cancel()
        self._armed.clear()
