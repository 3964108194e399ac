"""The JetStream a stream lives in, as the stream and its parts see it (the stream imports no service).

The methods that concern consumers take the stream as ``Any``: the service
that implements them holds the concrete stream, and this module may not
import it back.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

from fakejs.core.clock import Clock
from fakejs.core.recorder import Recorder
from fakejs.core.router import Router
from fakejs.jetstream.internal_client import InternalClient
from fakejs.jetstream.stream.batch_limits import BatchLimits
from fakejs.jetstream.stream.consumer_view import StreamConsumer
from fakejs.jetstream.stream.direct import DirectHost


class StreamHost(DirectHost, Protocol):
    """The JetStream a stream lives in, as the stream and its consumers see it.

    What to do when a consumer goes, acknowledges or changes is decided
    there (it involves other consumers, retention and the store on disk);
    a consumer's own API requests are answered there too.
    """

    @property
    def router(self) -> Router: ...

    # The timeline its streams and consumers record to (see fakejs.core.recorder).
    recorder: Recorder

    @property
    def clock(self) -> Clock: ...

    @property
    def rng(self) -> random.Random:
        """The server's seeded generator (``{{random}}`` in subject transforms)."""
        ...

    @property
    def server_name(self) -> str: ...

    @property
    def account_name(self) -> str: ...

    def account_client(self) -> InternalClient:
        """The account's internal client (it asks an origin to delete a mirror's or source's consumer)."""
        ...

    def reply_interest(self, reply: str, within: Any = None) -> tuple[Router, str]:
        """The router and subject whose interest keeps a pull request with ``reply`` waiting (``within``: the
        consumer's ``ConsumerName``)."""
        ...

    def online(self, stream: str, consumer: str = "") -> bool:
        """Whether a stream (or consumer) has a running leader; only in a cluster can it lack one."""
        ...

    def cluster_section(self, stream: str, consumer: str = "") -> dict[str, Any] | None:
        """The ``cluster`` section of a stream's (or its consumer's) info; None where there is none."""
        ...

    @property
    def domain(self) -> str:
        """The JetStream domain (``jetstream { domain }``), empty without one."""
        ...

    @property
    def system_router(self) -> Router | None:
        """The system account's router, where some advisories are copied; None without one."""
        ...

    def nuid(self) -> str: ...

    # Whether a publish to a memory (first) or file (second) stream has a server or account limit to meet;
    # without one, neither check below can refuse it.
    limits_checked: tuple[bool, bool]

    def limits_exceeded(self, memory: bool) -> bool:
        """Whether the server's JetStream memory (or file) store is already over its configured limit."""
        ...

    def account_limits_exceeded(self, memory: bool, subject: str, hdr: bytes | None, payload: bytes) -> bool:
        """Whether storing this message (of that kind) would take the account over its JetStream limit."""
        ...

    def remove_consumer(self, stream: Any, consumer: StreamConsumer, cause: str = "api") -> None:
        """Remove ``consumer`` (``cause``: why, for the timeline: ``api``, ``control``, ``inactive``)."""
        ...

    def consumer_acked(self, stream: Any, consumer: StreamConsumer, seq: int) -> None: ...

    def consumer_updated(self, stream: Any, consumer: StreamConsumer) -> None: ...

    def asset_request(self, kind: str, *args: object) -> None: ...

    def after_answer(self, action: Callable[[], None]) -> None: ...

    @property
    def batch_limits(self) -> BatchLimits: ...
