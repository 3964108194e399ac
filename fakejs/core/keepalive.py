"""A connection's keepalive: PINGs on the ping interval, stale detection, the round-trip time.

As nats-server does, the server PINGs a client that has been quiet for a
ping interval (or whose RTT is over an hour old) and closes it as stale
once ``ping_max`` PINGs are unanswered.  The first PING comes sooner, with
jitter from the server's seeded generator so clients do not ping in step.
"""

from __future__ import annotations

import random
from typing import Protocol

from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.options import ServerOptions
from fakejs.gocompat.gotime import format_duration
from fakejs.protocol import writer

# How old a measured RTT may get before a PING is sent to measure it again.
RTT_MAX_AGE = 3600.0


class Pinged(Protocol):
    """The connection a :class:`Keepalive` looks after."""

    @property
    def closed(self) -> bool: ...

    @property
    def websocket(self) -> bool:
        """A websocket client (the ``websocket {}`` block may set its own ping interval)."""
        ...

    @property
    def kind(self) -> str:
        """``Client`` or ``Router``, as nats-server's lines name the connection."""
        ...

    @property
    def last_in(self) -> float:
        """When (monotonic seconds) the client last sent a message or a PING."""
        ...

    def send(self, frame: bytes) -> None: ...

    def stale(self) -> None:
        """Too many PINGs went unanswered: tell the client and close it."""

    def debug(self, text: str) -> None:
        """A debug line about the connection (nats-server's ``c.Debugf``)."""


class Keepalive:
    """The PING timer, outstanding PINGs and round-trip time of one connection."""

    def __init__(self, client: Pinged, clock: Clock, options: ServerOptions, rng: random.Random) -> None:
        self.client = client
        self.clock = clock
        self.options = options
        self.rng = rng
        self.pings_out = 0
        self.rtt_start: float | None = None
        self.rtt = 0.0
        self._timer: TimerHandle | None = None
        self._advance: int | None = None
        self.interval = self.configured_interval()
        self.ping_max = 0  # unanswered PINGs before the connection is stale (0: the server's ping_max)
        # PING on every interval, whatever arrived meanwhile (nats-server's routes and a leaf's link to its hub).
        self.always = False

    def configured_interval(self) -> float:
        """The ping interval the options give this connection (a websocket client's own, when set)."""
        ws = self.options.websocket
        own = ws.ping_interval if ws is not None and self.client.websocket else 0.0
        return own if own > 0 else self.options.ping_interval

    def start(self) -> None:
        """The connection is open: PING after a ping interval."""
        self._set(self.interval)

    def connected(self, since_start: float, first: float = 0.0) -> None:
        """CONNECT arrived ``since_start`` seconds after the connection opened: the first PING comes soon.

        ``first``: how soon at most (0: the options' first ping interval, a client's).
        """
        if self.rtt == 0.0:
            self.rtt = since_start
        delay = min(self.interval, first or self.options.first_ping_interval)
        # nats-server adds up to 20% so that many clients do not ping in step.
        self._set(delay + self.rng.uniform(0, delay / 5))

    def pong(self) -> None:
        """The client answered: nothing outstanding, and a fresh RTT."""
        self.pings_out = 0
        if self.rtt_start is not None:
            self.rtt = self.clock.monotonic() - self.rtt_start

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _set(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.clock.call_background(delay, self._due)

    def _due(self) -> None:
        self._timer = None
        client = self.client
        if client.closed:
            return
        client.debug(f"{client.kind} Ping Timer")
        interval = self.interval
        now = self.clock.monotonic()
        need_rtt = self.rtt_start is None or now - self.rtt_start > RTT_MAX_AGE
        if self.always or need_rtt or now - client.last_in >= interval:
            # Under a manual clock one advance() may span many ping intervals with
            # no chance for the client to answer: only one PING per advance counts.
            advance = self.clock.advances
            if advance is not None and self.pings_out and advance == self._advance:
                self._set(interval)
                return
            self._advance = advance
            if self.pings_out + 1 > (self.ping_max or self.options.ping_max):
                client.stale()
                return
            self.rtt_start = now
            self.pings_out += 1
            client.send(writer.PING)
        else:
            quiet = round(now - client.last_in) * 1_000_000_000  # rounded to the second, as nats-server
            client.debug(f"Delaying PING due to remote client data or ping {format_duration(quiet)} ago")
        self._set(interval)
