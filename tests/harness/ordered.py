"""An ADR-17 ordered consume written over core NATS: an ephemeral consumer recreated on every gap.

The ordered consumer is an ephemeral pull consumer without acks, in memory,
with one replica, that the client owns: it checks every delivery's consumer
sequence (from the ``$JS.ACK`` reply subject) and, on a gap -- or when
idle heartbeats stop -- deletes the consumer and creates a new one that
starts at the stream sequence after the last message it got, on a new
inbox.  Pulling is :class:`~tests.harness.consume.Consume`'s (one per
consumer made), with two hooks: every message passes the sequence check
first, and missed heartbeats reset instead of pulling again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.gocompat.gotime import NS
from tests.harness.consume import Consume
from tests.harness.wait import WAIT


def ack_sequences(reply: str) -> tuple[int, int]:
    """``(stream sequence, consumer sequence)`` of a ``$JS.ACK`` subject (9-token or 12-token form)."""
    tokens = reply.split(".")
    if len(tokens) == 9:
        return int(tokens[5]), int(tokens[6])
    return int(tokens[7]), int(tokens[8])


@dataclass
class OrderedConsume:
    """One ordered ``Consume()``: every message of the stream once, in order, through any number of resets."""

    nc: Client
    stream: str
    max_messages: int = 10
    expires: float = 1.0
    heartbeat: float = 0.25
    inactive_threshold: float = 5.0
    filter_subject: str = ""
    clock: Callable[[], float] | None = None
    received: list[Msg] = field(default_factory=list)
    consumers: list[str] = field(default_factory=list)  # every consumer made, the current one last
    resets: list[int] = field(default_factory=list)  # the stream sequence each reset started from
    last_stream_seq: int = 0
    last_consumer_seq: int = 0

    def __post_init__(self) -> None:
        self.inner: Consume | None = None
        self._resetting: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._begin(0)

    async def stop(self) -> None:
        if self._resetting is not None:
            await self._resetting
        if self.inner is not None:
            self.inner.done.set()
            await self.inner.stop()

    async def _begin(self, start_seq: int) -> None:
        """Create a consumer (from ``start_seq``; 0: the whole stream) and start pulling from it."""
        name = await self._create(start_seq)
        self.consumers.append(name)
        self.last_consumer_seq = 0
        self.inner = Consume(
            self.nc,
            self.stream,
            name,
            max_messages=self.max_messages,
            expires=self.expires,
            heartbeat=self.heartbeat,
            clock=self.clock,
            acknowledge=False,
            accept=self._in_order,
            on_missed_heartbeat=self._heartbeats_missed,
        )
        await self.inner.start()

    async def _create(self, start_seq: int) -> str:
        config: dict[str, Any] = {
            "ack_policy": "none",
            "mem_storage": True,
            "num_replicas": 1,
            "inactive_threshold": int(self.inactive_threshold * NS),
            "deliver_policy": "by_start_sequence" if start_seq else "all",
        }
        if start_seq:
            config["opt_start_seq"] = start_seq
        if self.filter_subject:
            config["filter_subject"] = self.filter_subject
        body = json.dumps({"stream_name": self.stream, "config": config}).encode()
        reply = json.loads((await self.nc.request(f"$JS.API.CONSUMER.CREATE.{self.stream}", body, timeout=WAIT)).data)
        if "error" in reply:
            raise RuntimeError(f"ordered consumer not created: {reply['error']}")
        return str(reply["name"])

    def _in_order(self, msg: Msg) -> bool:
        """The sequence check: the next delivery is taken, anything else starts a reset (and is dropped)."""
        if self._resetting is not None:
            return False
        stream_seq, consumer_seq = ack_sequences(msg.reply)
        if consumer_seq != self.last_consumer_seq + 1:
            self._reset()
            return False
        self.last_stream_seq, self.last_consumer_seq = stream_seq, consumer_seq
        self.received.append(msg)
        return True

    async def _heartbeats_missed(self) -> None:
        self._reset()

    def _reset(self) -> None:
        if self._resetting is None:
            assert self.inner is not None
            self.inner.done.set()  # the old consumer's loop pulls no more
            self._resetting = asyncio.create_task(self._recreate(self.inner))

    async def _recreate(self, old: Consume) -> None:
        """Drop the old consumer (its subscription, then the consumer itself) and start after the last message."""
        await old.stop()
        await self.nc.request(f"$JS.API.CONSUMER.DELETE.{self.stream}.{old.consumer}", b"", timeout=WAIT)
        start = self.last_stream_seq + 1
        self.resets.append(start)
        await self._begin(start)
        self._resetting = None
