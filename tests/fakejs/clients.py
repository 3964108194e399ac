"""The clients the scenario tests drive: a reconnecting connection with ADR-37 consumes, raw pullers, polling."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from tests.harness.consume import STATUS, Consume


async def eventually(check: Callable[[], Any], timeout: float = 3.0, what: str = "condition") -> Any:
    """Poll ``check()`` in the test's loop until it is truthy (a bound on the test, not a delay)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"{what} not met within {timeout}s")
        await asyncio.sleep(0.005)


class Link:
    """A nats-py connection whose disconnect and reconnect events reach the consumes made on it.

    nats-py reports reconnects on the connection (``disconnected_cb`` /
    ``reconnected_cb``), not on subscriptions; an ADR-37 consume needs them,
    so they are forwarded to every :class:`Consume` started through
    :meth:`consume`.  Reconnect attempts are quick (50 ms apart) and never
    give up, so a test waits only for the server.
    """

    def __init__(self) -> None:
        self.nc: Client | None = None
        self.consumes: list[Consume] = []
        self.disconnects = 0
        self.reconnected_to: list[str] = []
        self.errors: list[Exception] = []
        self.before_repull: Callable[[], None] | None = None

    async def open(self, url: str) -> Client:
        self.nc = await nats.connect(
            url,
            reconnect_time_wait=0.05,
            max_reconnect_attempts=-1,
            disconnected_cb=self._disconnected,
            reconnected_cb=self._reconnected,
            error_cb=self._error,
        )
        return self.nc

    @property
    def url(self) -> str:
        assert self.nc is not None and self.nc.connected_url is not None
        return self.nc.connected_url.netloc

    async def consume(self, stream: str, consumer: str, **options: Any) -> Consume:
        assert self.nc is not None
        consume = Consume(self.nc, stream, consumer, **options)
        await consume.start()
        self.consumes.append(consume)
        return consume

    async def close(self) -> None:
        for consume in self.consumes:
            consume.done.set()
            await consume.stop()
        if self.nc is not None:
            await self.nc.close()

    async def _disconnected(self) -> None:
        self.disconnects += 1
        for consume in self.consumes:
            await consume.disconnected()

    async def _reconnected(self) -> None:
        self.reconnected_to.append(self.url)
        if self.before_repull is not None:
            self.before_repull()
        for consume in self.consumes:
            await consume.reconnected()

    async def _error(self, exc: Exception) -> None:
        self.errors.append(exc)  # the dropped connection (EOF, refused reconnects) is expected here


class Puller:
    """One pull "client": raw ``CONSUMER.MSG.NEXT`` requests on its own inbox, collecting what comes back."""

    def __init__(self, nc: Client, stream: str, consumer: str) -> None:
        self.nc = nc
        self.subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}"
        self.inbox = nc.new_inbox()
        self.got: list[Msg] = []

    async def start(self) -> Puller:
        async def on_msg(msg: Msg) -> None:
            self.got.append(msg)

        await self.nc.subscribe(self.inbox, cb=on_msg)
        return self

    async def pull(self, **body: Any) -> bytes:
        """Publish one pull; returns its body."""
        payload = json.dumps(body).encode()
        await self.nc.publish(self.subject, payload, reply=self.inbox)
        await self.nc.flush()
        return payload

    def messages(self) -> list[Msg]:
        return [m for m in self.got if not (m.headers and STATUS in m.headers)]

    def statuses(self) -> list[tuple[str, str]]:
        return [
            (m.headers[STATUS], m.headers.get("Description", "")) for m in self.got if m.headers and STATUS in m.headers
        ]


async def publish(nc: Client, subject: str, payloads: list[bytes]) -> None:
    js = nc.jetstream()
    for payload in payloads:
        await js.publish(subject, payload)


def payloads(consume: Consume) -> list[bytes]:
    return [m.data for m in consume.received]
