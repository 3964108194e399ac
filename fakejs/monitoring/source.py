"""What the monitoring documents read from a running server.

The documents take a :class:`MonitoredServer`, a small interface that
:class:`fakejs.server.Server` implements, so monitoring knows the core and
JetStream objects it reports on but never the socket layer that serves it.
"""

from __future__ import annotations

from typing import Protocol

from fakejs.core.broker import Broker
from fakejs.jetstream import JetStreamWithApi
from fakejs.monitoring.records import ClosedConnections


class MonitoredServer(Protocol):
    """A server as the monitoring endpoints see it."""

    @property
    def broker(self) -> Broker:
        """Identity, options, clients, accounts and counters."""
        ...

    @property
    def jetstream(self) -> JetStreamWithApi | None:
        """The global account's JetStream, or ``None`` when it is off."""
        ...

    @property
    def account_jetstreams(self) -> list[JetStreamWithApi]:
        """Every account's JetStream (``$G``'s alone without configured accounts); empty when off."""
        ...

    @property
    def http_requests(self) -> dict[str, int]:
        """Requests served per monitoring path (``/varz``'s ``http_req_stats``)."""
        ...

    @property
    def closed_connections(self) -> ClosedConnections:
        """The records ``/connz?state=closed`` lists."""
        ...
