"""A consumer's life between deliveries: deletion after inactivity, and pauses.

nats-server deletes an idle consumer after ``inactive_threshold`` (pull
consumers with 100ms-1s of jitter, and only once no pull waits and no ack
can still come; push consumers only while nobody listens), and holds
delivery back until ``pause_until``.  Both run on the server clock; the
jitter comes from the server's seeded random generator.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from fakejs.core.clock import Clock, Countdown, TimerHandle
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.consumer.view import ConsumerView

JITTER_BASE_NS = 100_000_000  # pull consumers' threshold gets 100ms ...
JITTER_STEPS = 900  # ... plus 0-899 more milliseconds


class Inactivity:
    """The inactivity threshold and its countdown (``deleteNotActive``).

    ``remove`` deletes the consumer; ``pulls_waiting`` ends expired pulls and
    tells whether any still wait; ``latest_ack_deadline_ns`` is when the last
    outstanding delivery stops waiting for its ack (None: nothing pending).
    """

    def __init__(
        self,
        consumer: ConsumerView,
        clock: Clock,
        rng: random.Random,
        remove: Callable[[], None],
        pulls_waiting: Callable[[], bool],
        latest_ack_deadline_ns: Callable[[], int | None],
    ) -> None:
        self._consumer = consumer
        self._clock = clock
        self._random = rng
        self._remove = remove
        self._pulls_waiting = pulls_waiting
        self._latest_ack_deadline_ns = latest_ack_deadline_ns
        self.threshold = 0  # ns in effect, jitter included; 0: never deleted for inactivity
        self._countdown = Countdown(clock, self._ran_out)  # from the last activity, ``threshold`` long
        # An update may not turn a push consumer into a pull one or back, so this holds for good.
        self._is_push = consumerconfig.is_push(consumer.config)
        self.set_threshold()

    def set_threshold(self) -> None:
        """``updateInactiveThreshold``: pull consumers get 100ms to 1s of jitter, as in nats-server."""
        threshold = self._consumer.config["inactive_threshold"]
        if threshold > 0 and not self._is_push:
            threshold += JITTER_BASE_NS + self._random.randrange(JITTER_STEPS) * 1_000_000
        self.threshold = max(threshold, 0)

    def touch(self) -> None:
        """Activity: restart the countdown (pull consumers, push consumers nobody listens to)."""
        consumer = self._consumer
        if self.threshold > 0 and not consumer.closed and not (self._is_push and consumer.active):
            self._countdown.restart(self.threshold / NS)
        else:
            self.stop()

    def ack_seen(self) -> None:
        """An ack holds off the deletion (a push consumer's only while its countdown runs)."""
        if self.threshold > 0 and (not self._is_push or self._countdown.running):
            self.touch()

    def _ran_out(self) -> None:
        """Go, unless pulls wait, push interest is back or acks may still come."""
        consumer = self._consumer
        if consumer.closed:
            return
        if self._is_push:
            if not consumer.active:
                self._remove()
            return
        if self._pulls_waiting():
            self.touch()
            return
        # Outstanding deliveries may still be acked: wait for the last ack deadline plus the threshold.
        deadline = self._latest_ack_deadline_ns()
        latest = 0 if deadline is None else max(0, deadline + self.threshold - self._clock.time_ns())
        if latest > 0:
            self._countdown.restart(latest / NS)
            return
        self._remove()

    def stop(self) -> None:
        self._countdown.cancel()


class PauseTimer:
    """Ends a pause at ``pause_until``: ``on_resumed`` announces it, then delivery resumes."""

    def __init__(self, consumer: ConsumerView, clock: Clock, on_resumed: Callable[[], None]) -> None:
        self._consumer = consumer
        self._clock = clock
        self._on_resumed = on_resumed
        self._timer: TimerHandle | None = None

    def remaining_ns(self) -> int:
        """How long the pause still lasts (0 or less: not paused)."""
        until = self._consumer.config["pause_until"]
        return 0 if until is None else int(until.ns) - self._clock.time_ns()

    def is_paused(self) -> bool:
        until = self._consumer.config["pause_until"]
        return until is not None and self._clock.time_ns() < int(until.ns)

    def arm(self) -> None:
        """Follow the config's ``pause_until`` (set, changed or cleared)."""
        self.stop()
        remaining = self.remaining_ns()
        if remaining > 0:
            self._timer = self._clock.call_later(remaining / NS, self._ended)

    def _ended(self) -> None:
        self._timer = None
        if not self._consumer.closed:
            self._on_resumed()
            self._consumer.kick()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
