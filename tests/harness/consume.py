"""An ADR-37 ``Consume()`` written over core NATS, for tests on any target.

The simplified client's algorithm (seed ADR-37): keep a buffer target
(``max_messages`` or ``max_bytes``), publish a ``CONSUMER.MSG.NEXT`` request
whenever what is pending drops to the threshold (half the target), subtract
one message (or, buffering by bytes, its server-computed size) for every
delivery, subtract ``Nats-Pending-Messages`` / ``Nats-Pending-Bytes`` from
every status that carries them, warn on missed heartbeats, stop on the
terminal statuses, and re-pull after a reconnect.

Reconnects are the caller's to report (nats-py tells the connection, not
the subscription): wire the client's ``disconnected_cb`` /
``reconnected_cb`` to :meth:`Consume.disconnected` /
:meth:`Consume.reconnected`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.gocompat.gotime import NS

STATUS = "Status"
TERMINAL = ("Consumer Deleted", "Consumer is push based")
# Statuses after which what the server still owes is unknown: forget the pending counts (as nats.go does).
RESET_PENDING = ("Leadership Change",)
# Statuses ADR-37 says not to telegraph (the pull simply ended).
NOT_TELEGRAPHED = ("No Messages", "Request Timeout", "Message Size Exceeds MaxBytes", "Batch Completed")


@dataclass
class Consume:
    """One ``Consume()`` call: buffer accounting, heartbeats and terminal statuses."""

    nc: Client
    stream: str
    consumer: str
    max_messages: int = 0
    max_bytes: int = 0
    expires: float = 1.0
    heartbeat: float = 0.25
    pending_messages: int = 0
    pending_bytes: int = 0
    received: list[Msg] = field(default_factory=list)
    statuses: list[tuple[str, str]] = field(default_factory=list)
    heartbeats: int = 0
    missed_heartbeats: int = 0
    requests: int = 0
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    connected: bool = True
    reconnects: int = 0
    # nats.go's Consume() also pulls again (pending counts reset) when heartbeats are missed;
    # ADR-37 only asks for a warning.
    repull_on_missed_heartbeat: bool = False
    # The clock heartbeats are missed on: the server's (a test target's ``now``), real time by default.
    clock: Callable[[], float] | None = None

    def __post_init__(self) -> None:
        self.inbox = self.nc.new_inbox()
        self.done = asyncio.Event()
        self.now = self.clock or asyncio.get_running_loop().time
        self._last_seen = self.now()

    @property
    def by_bytes(self) -> bool:
        return self.max_bytes > 0

    async def start(self) -> None:
        self.sub = await self.nc.subscribe(self.inbox, cb=self._on_msg)
        self._watchdog = asyncio.create_task(self._watch_heartbeats())
        await self._maybe_pull()

    async def stop(self) -> None:
        self._watchdog.cancel()
        await self.sub.unsubscribe()

    def _below_threshold(self) -> bool:
        if self.by_bytes:
            return self.pending_bytes <= self.max_bytes // 2
        return self.pending_messages <= self.max_messages // 2

    async def disconnected(self) -> None:
        """ADR-37 "Server reconnects": pause the heartbeat timer and publish no pulls while disconnected."""
        self.connected = False

    async def reconnected(self) -> None:
        """ADR-37 "Server reconnects": reset the heartbeat timer and publish a new pull.

        The pulls made on the old connection died with it and will never
        answer, so the pending counts start again from zero: the new pull
        asks for the whole buffer.
        """
        self.connected = True
        self.reconnects += 1
        self._last_seen = self.now()
        self.pending_messages = 0
        self.pending_bytes = 0
        await self._maybe_pull()

    async def _maybe_pull(self) -> None:
        if self.done.is_set() or not self.connected or not self._below_threshold():
            return
        body: dict = {"expires": int(self.expires * NS), "idle_heartbeat": int(self.heartbeat * NS)}
        if self.by_bytes:
            body["batch"] = 1_000_000
            body["max_bytes"] = self.max_bytes - self.pending_bytes
            self.pending_bytes += body["max_bytes"]
        else:
            body["batch"] = self.max_messages - self.pending_messages
            self.pending_messages += body["batch"]
        self.requests += 1
        subject = f"$JS.API.CONSUMER.MSG.NEXT.{self.stream}.{self.consumer}"
        await self.nc.publish(subject, json.dumps(body).encode(), reply=self.inbox)

    async def _on_msg(self, msg: Msg) -> None:
        self._last_seen = self.now()
        headers = msg.headers or {}
        code = headers.get(STATUS)
        if code is None:
            self.received.append(msg)
            if self.by_bytes:
                self.pending_bytes -= len(msg.subject) + len(msg.reply) + len(msg.data)  # no stored headers here
            else:
                self.pending_messages -= 1
            await msg.ack()
        elif code == "100":
            self.heartbeats += 1
        else:
            description = headers.get("Description", "")
            self.statuses.append((code, description))
            if "Nats-Pending-Messages" in headers:
                if self.by_bytes:
                    self.pending_bytes -= int(headers.get("Nats-Pending-Bytes", "0"))
                else:
                    self.pending_messages -= int(headers["Nats-Pending-Messages"])
            if code == "409" and description in TERMINAL:
                self.error = description
                self.done.set()
                return
            if description in RESET_PENDING:
                self.pending_messages = 0
                self.pending_bytes = 0
            if code not in ("404", "408") and description not in NOT_TELEGRAPHED:
                self.warnings.append(f"{code} {description}".strip())
        await self._maybe_pull()

    async def _watch_heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat / 2)
            if not self.connected:
                self._last_seen = self.now()  # paused while disconnected
            elif self.now() - self._last_seen > 2 * self.heartbeat:
                self.missed_heartbeats += 1
                self._last_seen = self.now()
                if self.repull_on_missed_heartbeat:
                    self.pending_messages = 0
                    self.pending_bytes = 0
                    await self._maybe_pull()
