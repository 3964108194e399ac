"""A stream and its consumer without a server: the stand-in JetStream of :mod:`tests.harness.stream_host`, with
what a consumer needs from it besides (faults, a seeded generator, pull requests' reply interest), and a
client on its router pulling and acknowledging.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from fakejs.core.hooks import NoHooks
from fakejs.core.options import ServerOptions
from fakejs.core.read_deferrals import ReadDeferrals
from fakejs.core.router import Router
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config import consumer_rules
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.testkit.clock import ManualClock
from tests.harness.stream_host import Host


class ConsumerHost(Host):
    """What a stream and its consumers need from their JetStream."""

    def __init__(self, clock: ManualClock | None = None) -> None:
        super().__init__()
        if clock is not None:
            self.clock = clock  # the servers' own, to run on one virtual time
        self.broker = SimpleNamespace(
            options=ServerOptions(), faults=NoHooks(), random=random.Random(0), deferrals=ReadDeferrals()
        )
        self.rng = random.Random(0)
        self.system_router = None
        self.replies: list[tuple[str, bytes | None, bytes]] = []  # what the JetStream answered, in order

    def reply(self, subject: str, payload: bytes, hdr: bytes | None = None, empty_reply: bool = False) -> None:
        self.replies.append((subject, hdr, payload))
        super().reply(subject, payload, hdr, empty_reply)

    def reply_interest(self, reply: str, within: Any = None) -> tuple[Router, str]:
        return self.router, reply

    def after_answer(self, action: Callable[[], None]) -> None:
        action()


def consumer_config(stream: StreamConfig, **fields: Any) -> ConsumerConfig:
    """A consumer config as the server holds it after applying its defaults for ``stream``."""
    config = consumerconfig.from_request(fields)
    consumer_rules.apply_defaults(config, stream)
    return config


class Client:
    """A client on a host's router: pulls from a consumer and acknowledges what it got."""

    def __init__(self, router: Router, inbox: str) -> None:
        self.router = router
        self.inbox = inbox
        self.received: list[tuple[str, str, bytes]] = []  # (subject, ack reply, payload)
        self.answers: list[str] = []  # acks answered (their reply subjects)
        router.subscribe_internal(f"{inbox}.>", self._heard)

    def _heard(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        if subject.startswith(f"{self.inbox}.ack."):
            self.answers.append(subject)
        elif reply:
            self.received.append((subject, reply, payload))

    def pull(self, stream: str, consumer: str, batch: int, expires_ns: int = 0) -> None:
        request = b'{"batch":%d%s}' % (batch, b',"expires":%d' % expires_ns if expires_ns else b"")
        self.router.publish(f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}", f"{self.inbox}.pull", None, request)

    def ack(self, ack_reply: str, sync: str = "") -> None:
        """Acknowledge a delivery; with ``sync``, ask for an answer on ``<inbox>.ack.<sync>``."""
        self.router.publish(ack_reply, f"{self.inbox}.ack.{sync}" if sync else "", None, b"+ACK")
