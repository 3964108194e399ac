"""What the test kit needs from the running server: the :class:`ServerActions` interface.

The controller, the introspection and the scenarios act on a server they
never import: :class:`fakejs.server.Server` implements this protocol (its
broker and JetStream, its clock and faults, the event loop it runs on, and
the two things only the socket layer can do, restart and lame duck mode).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from fakejs.core.broker import Broker
from fakejs.core.clock import Clock
from fakejs.jetstream import JetStreamWithApi
from fakejs.testkit.conformance import Conformance
from fakejs.testkit.faults import Faults
from fakejs.testkit.timeline import Timeline, TimelineFilter
from fakejs.testkit.transcript import Transcript


class ServerActions(Protocol):
    """A running server, as the test kit steers and reads it."""

    @property
    def broker(self) -> Broker:
        """Clients, accounts, identity and the record of handler failures."""
        ...

    @property
    def clock(self) -> Clock: ...

    @property
    def faults(self) -> Faults: ...

    @property
    def jetstream(self) -> JetStreamWithApi | None:
        """The global account's JetStream, or ``None`` when it is off (or the server is down)."""
        ...

    @property
    def port(self) -> int: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the server runs on (actions are scheduled there)."""
        ...

    @property
    def transcripts(self) -> dict[int, Transcript]: ...

    @property
    def recorded(self) -> Timeline:
        """The server's timeline (off, and empty, when its size is 0)."""
        ...

    @property
    def cluster_timeline(self) -> Callable[[TimelineFilter], dict[str, Any]] | None:
        """A node of an in-process cluster: the timeline document of every node merged (None: not in one)."""
        ...

    @property
    def conformance_watch(self) -> Conformance | None:
        """The client conformance watch, when the server keeps one."""
        ...

    async def restart(self, down_for: float = 0.0) -> None:
        """Stop, stay down ``down_for`` seconds of server time, start again on the same port."""

    async def lame_duck(self, duration: float | None = None, grace: float | None = None) -> None:
        """nats-server's lame duck mode, then shut down."""
