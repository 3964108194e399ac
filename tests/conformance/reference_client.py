"""The reference client for ``fakejs conformance run``: the repository's ADR-37 loop, driven by the contract.

Reads the contract's environment (``NATS_URL``, ``FAKEJS_STREAM``,
``FAKEJS_CONSUMER``, ``FAKEJS_MODE``, ``FAKEJS_ACK``, ``FAKEJS_GROUP``,
``FAKEJS_MAX_MESSAGES``, ``FAKEJS_EXPIRES_MS``, ``FAKEJS_HEARTBEAT_MS``,
``FAKEJS_DURATION_MS``), consumes with :class:`tests.harness.consume.Consume`
for the duration and prints ``{"received": N, "errors": [...]}``.

``Consume`` lacks a few things the scenarios ask for; they are done here,
each in a block marked ``STAND-IN`` so it can be dropped once ``Consume``
has it:

* acknowledging other than ``+ACK`` (AckSync, ``+TERM``, none);
* priority groups: the group and the pin id in every pull, the id dropped on 423;
* backing off after ``409 Exceeded MaxWaiting`` (that status ends the pull
  without pending counts, which ``Consume`` would wait on forever);
* ordered consumers (ADR-17): an ephemeral consumer recreated after a gap.

Run as ``python tests/conformance/reference_client.py`` from anywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests.harness

import nats
from nats.aio.msg import Msg

from tests.harness.consume import Consume

NAME = "conformance-client"
BACKOFF = 0.25  # seconds to wait after 409 Exceeded MaxWaiting (STAND-IN)


class Settings:
    """The contract's variables, read once."""

    def __init__(self, env: dict[str, str]) -> None:
        self.url = env["NATS_URL"]
        self.stream = env["FAKEJS_STREAM"]
        self.consumer = env.get("FAKEJS_CONSUMER", "")
        self.mode = env.get("FAKEJS_MODE", "consume")
        self.ack = env.get("FAKEJS_ACK", "ack")
        self.group = env.get("FAKEJS_GROUP", "")
        self.max_messages = int(env.get("FAKEJS_MAX_MESSAGES", "10"))
        self.expires = int(env.get("FAKEJS_EXPIRES_MS", "2000")) / 1000
        self.heartbeat = int(env.get("FAKEJS_HEARTBEAT_MS", "500")) / 1000
        self.duration = int(env.get("FAKEJS_DURATION_MS", "3000")) / 1000


class Client:
    """One run: the connection, the loop in use, what was received and what went wrong."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.received = 0
        self.errors: list[str] = []
        self.loop: Consume | None = None
        self.pin_id = ""  # STAND-IN (priority groups)
        self.ordered = OrderedState()  # STAND-IN (ordered consumer)
        self.tasks: set[asyncio.Future[None]] = set()

    async def run(self) -> None:
        self.nc = await nats.connect(
            self.settings.url,
            name=NAME,
            disconnected_cb=self._disconnected,
            reconnected_cb=self._reconnected,
            error_cb=self._error,
            max_reconnect_attempts=-1,
        )
        try:
            if self.settings.mode == "ordered":
                await self._create_ordered(start=0)
            else:
                await self._start_loop(self.settings.consumer)
            ended = asyncio.ensure_future(self._terminal())
            try:
                await asyncio.wait_for(asyncio.shield(ended), self.settings.duration)
            except TimeoutError:
                pass
            finally:
                ended.cancel()
            if self.loop is not None:
                await self.loop.stop()
                self.errors.extend(self.loop.warnings)
                if self.loop.error:
                    self.errors.append(self.loop.error)
        finally:
            await self.nc.drain()

    async def _terminal(self) -> None:
        while True:
            loop = self.loop
            if loop is not None and loop.error:
                return
            await asyncio.sleep(0.05)

    async def _start_loop(self, consumer: str) -> None:
        settings = self.settings
        connection: Any = PinningConnection(self.nc, self) if settings.group else self.nc
        loop = Consume(
            connection,
            settings.stream,
            consumer,
            max_messages=settings.max_messages,
            expires=settings.expires,
            heartbeat=settings.heartbeat,
            repull_on_missed_heartbeat=True,  # as nats.go's Consume() recovers from silence
        )
        handle = loop._on_msg
        loop._on_msg = self._wrap(loop, handle)  # type: ignore[method-assign]
        self.loop = loop
        await loop.start()

    def _wrap(self, loop: Consume, handle: Callable[[Msg], Awaitable[None]]) -> Callable[[Msg], Awaitable[None]]:
        async def on_msg(msg: Msg) -> None:
            if loop is not self.loop or self.ordered.resetting:
                return  # STAND-IN (ordered consumer): what reaches a loop being replaced is dropped
            headers = msg.headers or {}
            status = headers.get("Status")
            if status is None:
                if self.settings.mode == "ordered" and self.ordered.gap(msg):
                    self.ordered.resetting = True  # STAND-IN (ordered consumer)
                    self.tasks.add(asyncio.ensure_future(self._reset_ordered()))
                    return
                self.received += 1
                msg.ack = self._acknowledger(msg)  # type: ignore[method-assign]  # STAND-IN (ack kinds)
                if headers.get("Nats-Pin-Id"):
                    self.pin_id = headers["Nats-Pin-Id"]  # STAND-IN (priority groups)
            elif status == "423":  # STAND-IN (priority groups): the pin is gone, the pull over
                self.pin_id = ""
                if "Nats-Pending-Messages" not in headers:
                    loop.pending_messages = loop.pending_bytes = 0
            elif headers.get("Description") == "Exceeded MaxWaiting":  # STAND-IN (backoff)
                await asyncio.sleep(BACKOFF)
                if "Nats-Pending-Messages" not in headers:
                    loop.pending_messages = loop.pending_bytes = 0
            await handle(msg)

        return on_msg

    def _acknowledger(self, msg: Msg) -> Callable[[], Awaitable[None]]:
        """STAND-IN (ack kinds): what ``Consume``'s ``msg.ack()`` does, per ``FAKEJS_ACK``."""
        kind = self.settings.ack

        async def acknowledge() -> None:
            try:
                if kind == "sync":
                    await Msg.ack_sync(msg)
                elif kind == "term":
                    await Msg.term(msg)
                elif kind == "ack":
                    await Msg.ack(msg)
            except Exception as exc:
                self.errors.append(f"ack: {exc!r}")

        return acknowledge

    # -- STAND-IN (ordered consumer, ADR-17) ------------------------------------------------

    async def _create_ordered(self, start: int) -> None:
        config: dict[str, Any] = {
            "ack_policy": "none",
            "mem_storage": True,
            "num_replicas": 1,
            "inactive_threshold": 5_000_000_000,
            "max_deliver": 1,
            "deliver_policy": "by_start_sequence" if start else "all",
        }
        if start:
            config["opt_start_seq"] = start
        body = json.dumps({"stream_name": self.settings.stream, "config": config}).encode()
        reply = await self.nc.request(f"$JS.API.CONSUMER.CREATE.{self.settings.stream}", body, timeout=2)
        info = json.loads(reply.data)
        if "error" in info:
            raise RuntimeError(f"creating the ordered consumer: {info['error']}")
        self.ordered.restart()
        await self._start_loop(info["name"])

    async def _reset_ordered(self) -> None:
        old = self.loop
        if old is not None:
            old.done.set()
            await old.stop()
        try:
            await self._create_ordered(start=self.ordered.last_stream_seq + 1)
        except Exception as exc:
            self.ordered.resetting = False
            self.errors.append(f"ordered reset: {exc!r}")

    # -- connection events -------------------------------------------------------------

    async def _disconnected(self) -> None:
        if self.loop is not None:
            await self.loop.disconnected()

    async def _reconnected(self) -> None:
        if self.loop is not None:
            await self.loop.reconnected()

    async def _error(self, error: Exception) -> None:
        self.errors.append(repr(error))


class OrderedState:
    """STAND-IN (ordered consumer): the last sequences seen, to notice a gap."""

    def __init__(self) -> None:
        self.last_consumer_seq = 0
        self.last_stream_seq = 0
        self.resetting = False

    def restart(self) -> None:
        self.last_consumer_seq = 0
        self.resetting = False

    def gap(self, msg: Msg) -> bool:
        sequence = msg.metadata.sequence
        if sequence.consumer != self.last_consumer_seq + 1:
            return True
        self.last_consumer_seq, self.last_stream_seq = sequence.consumer, sequence.stream
        return False


class PinningConnection:
    """STAND-IN (priority groups): the connection ``Consume`` pulls through, adding group and pin id."""

    def __init__(self, nc: Any, client: Client) -> None:
        self._nc = nc
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nc, name)

    async def publish(self, subject: str, payload: bytes = b"", reply: str = "", headers: Any = None) -> None:
        if ".CONSUMER.MSG.NEXT." in subject:
            body = json.loads(payload)
            body["group"] = self._client.settings.group
            if self._client.pin_id:
                body["id"] = self._client.pin_id
            payload = json.dumps(body).encode()
        await self._nc.publish(subject, payload, reply=reply, headers=headers)


async def main() -> int:
    client = Client(Settings(dict(os.environ)))
    try:
        await client.run()
    except Exception as exc:
        client.errors.append(repr(exc))
    print(json.dumps({"received": client.received, "errors": client.errors}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
