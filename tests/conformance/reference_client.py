"""The reference client for ``fakejs conformance run``: the repository's ADR-37 loop, driven by the contract.

Reads the contract's environment (``NATS_URL``, ``FAKEJS_STREAM``,
``FAKEJS_CONSUMER``, ``FAKEJS_MODE``, ``FAKEJS_ACK``, ``FAKEJS_GROUP``,
``FAKEJS_MAX_MESSAGES``, ``FAKEJS_EXPIRES_MS``, ``FAKEJS_HEARTBEAT_MS``,
``FAKEJS_DURATION_MS``), consumes for the duration with
:class:`tests.harness.consume.Consume` (or, in ``ordered`` mode,
:class:`tests.harness.ordered.OrderedConsume`) and prints
``{"received": N, "errors": [...]}``.

Run as ``python tests/conformance/reference_client.py`` from anywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests.harness

import nats

from tests.conformance.contract import Settings
from tests.harness.consume import Consume
from tests.harness.ordered import OrderedConsume

NAME = "conformance-client"


class Client:
    """One run: the connection, the loop, and what went wrong."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.errors: list[str] = []
        self.loop: Consume | None = None
        self.ordered: OrderedConsume | None = None

    @property
    def received(self) -> int:
        if self.ordered is not None:
            return len(self.ordered.received)
        return len(self.loop.received) if self.loop is not None else 0

    async def run(self) -> None:
        settings = self.settings
        self.nc = await nats.connect(
            settings.url,
            name=NAME,
            disconnected_cb=self._disconnected,
            reconnected_cb=self._reconnected,
            error_cb=self._error,
            max_reconnect_attempts=-1,
        )
        try:
            if settings.mode == "ordered":
                self.ordered = OrderedConsume(
                    self.nc, settings.stream, settings.max_messages, settings.expires, settings.heartbeat
                )
                await self.ordered.start()
                await asyncio.sleep(settings.duration)
                await self.ordered.stop()
                return
            self.loop = Consume(
                self.nc,
                settings.stream,
                settings.consumer,
                max_messages=settings.max_messages,
                expires=settings.expires,
                heartbeat=settings.heartbeat,
                group=settings.group,
                ack_sync=settings.ack == "sync",
                term=settings.ack == "term",
                acknowledge=settings.ack != "none",
            )
            await self.loop.start()
            try:
                await asyncio.wait_for(self.loop.done.wait(), settings.duration)  # set by a terminal status
            except TimeoutError:
                pass
            await self.loop.stop()
            self.errors.extend(self.loop.warnings)
            if self.loop.error:
                self.errors.append(self.loop.error)
        finally:
            await self.nc.drain()

    # -- connection events -------------------------------------------------------------

    def _inner(self) -> Consume | None:
        return self.ordered.inner if self.ordered is not None else self.loop

    async def _disconnected(self) -> None:
        if (loop := self._inner()) is not None:
            await loop.disconnected()

    async def _reconnected(self) -> None:
        if (loop := self._inner()) is not None:
            await loop.reconnected()

    async def _error(self, error: Exception) -> None:
        self.errors.append(repr(error))


async def main() -> int:
    client = Client(Settings.from_env(dict(os.environ)))
    try:
        await client.run()
    except Exception as exc:
        client.errors.append(repr(exc))
    print(json.dumps({"received": client.received, "errors": client.errors}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
