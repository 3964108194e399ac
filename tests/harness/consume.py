"""An ADR-37 ``Consume()`` written over core NATS, for tests on any target.

The simplified client's algorithm (seed ADR-37): keep a buffer target
(``max_messages`` or ``max_bytes``), publish a ``CONSUMER.MSG.NEXT`` request
whenever what is pending drops to the threshold (half the target), subtract
one message (or, buffering by bytes, its server-computed size) for every
delivery, subtract ``Nats-Pending-Messages`` / ``Nats-Pending-Bytes`` from
every status that carries them, warn on missed heartbeats, stop on the
terminal statuses, and re-pull after a reconnect.  It also pulls again
(its pending counts reset, as nats.go's ``Consume()`` does) when two idle
heartbeats are missed, backs off after "409 Exceeded MaxWaiting", keeps
the pin of an ADR-42 priority group (``Nats-Pin-Id`` echoed as ``id`` in
every later pull, dropped on "423 Nats-Wrong-Pin-Id"), and can acknowledge
with AckSync.  A server started with ``conformance=True`` finds no fault
with it (:mod:`tests.fakejs.test_conformance_reference`).

Reconnects are the caller's to report (nats-py tells the connection, not
the subscription): wire the client's ``disconnected_cb`` /
``reconnected_cb`` to :meth:`Consume.disconnected` /
:meth:`Consume.reconnected`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.gocompat.gotime import NS

STATUS = "Status"
PIN_ID = "Nats-Pin-Id"
MAX_WAITING = "Exceeded MaxWaiting"
WRONG_PIN = "423"
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
    # Subtractions that would have taken a pending count below zero (0 unless the counts were forgotten).
    clamped: int = 0
    # Pull again (pending counts reset, as nats.go's Consume() does) when two heartbeats are missed:
    # the pulls out may be gone without a word (the conformance rule heartbeat-missed asks for it).
    repull_on_missed_heartbeat: bool = True
    # The clock heartbeats are missed and backoffs waited on: the server's (a test target's ``now``),
    # the event loop's by default.
    clock: Callable[[], float] | None = None
    # The least wait after "409 Exceeded MaxWaiting" before pulling again.
    backoff: float = 0.25
    # An ADR-42 priority group to pull in, and the pin id the server gave (echoed in every pull).
    group: str = ""
    pin_id: str = ""
    # Acknowledge with AckSync (a reply subject, waiting for the server's answer); or not at all.
    ack_sync: bool = False
    acknowledge: bool = True
    # Answer every message +TERM instead (and nothing more: a terminated message takes no other ack).
    term: bool = False
    # Hooks for a loop built on this one (the ordered consume): ``accept`` sees every message first and
    # may refuse it; ``on_missed_heartbeat`` replaces the re-pull.
    accept: Callable[[Msg], bool] | None = None
    on_missed_heartbeat: Callable[[], Awaitable[None]] | None = None

    def __post_init__(self) -> None:
        self.inbox = self.nc.new_inbox()
        self.done = asyncio.Event()
        self.now = self.clock or asyncio.get_running_loop().time
        self._last_seen = self.now()
        self._last_asked = (0, 0)  # what the newest pull asked for: messages, bytes
        self._backoff: asyncio.Task[None] | None = None

    @property
    def by_bytes(self) -> bool:
        return self.max_bytes > 0

    async def start(self) -> None:
        self.sub = await self.nc.subscribe(self.inbox, cb=self._on_msg)
        self._watchdog = asyncio.create_task(self._watch_heartbeats())
        await self._maybe_pull()

    async def stop(self) -> None:
        self._watchdog.cancel()
        if self._backoff is not None:
            self._backoff.cancel()
        await self.sub.unsubscribe()

    def forget_pending(self) -> None:
        """What the server still owes is unknown (its pulls may be gone): start counting again from zero."""
        self.pending_messages = 0
        self.pending_bytes = 0

    def _subtract(self, messages: int, size: int) -> None:
        """Take what arrived (or what a status says will not) off the pending counts, never below zero.

        After the counts were forgotten, a pull they no longer include may
        still deliver or end: it must not make the next pull ask for more
        than the buffer.
        """
        if messages > self.pending_messages or size > self.pending_bytes:
            self.clamped += 1
        self.pending_messages = max(self.pending_messages - messages, 0)
        self.pending_bytes = max(self.pending_bytes - size, 0)

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
        self.forget_pending()
        await self._maybe_pull()

    async def _maybe_pull(self) -> None:
        if self._backoff is not None or self.done.is_set() or not self.connected or not self._below_threshold():
            return
        body: dict = {"expires": int(self.expires * NS), "idle_heartbeat": int(self.heartbeat * NS)}
        if self.by_bytes:
            body["batch"] = 1_000_000
            body["max_bytes"] = self.max_bytes - self.pending_bytes
            self.pending_bytes += body["max_bytes"]
            self._last_asked = (0, body["max_bytes"])
        else:
            body["batch"] = self.max_messages - self.pending_messages
            self.pending_messages += body["batch"]
            self._last_asked = (body["batch"], 0)
        if self.group:
            body["group"] = self.group
            if self.pin_id:
                body["id"] = self.pin_id
        self.requests += 1
        subject = f"$JS.API.CONSUMER.MSG.NEXT.{self.stream}.{self.consumer}"
        await self.nc.publish(subject, json.dumps(body).encode(), reply=self.inbox)

    async def _on_msg(self, msg: Msg) -> None:
        self._last_seen = self.now()
        headers = msg.headers or {}
        code = headers.get(STATUS)
        if code is None:
            await self._on_delivery(msg, headers)
        elif code == "100":
            self.heartbeats += 1
        else:
            description = headers.get("Description", "")
            self.statuses.append((code, description))
            if "Nats-Pending-Messages" in headers:
                if self.by_bytes:
                    self._subtract(0, int(headers.get("Nats-Pending-Bytes", "0")))
                else:
                    self._subtract(int(headers["Nats-Pending-Messages"]), 0)
            if code == "409" and description in TERMINAL:
                self.error = description
                self.done.set()
                return
            if description in RESET_PENDING:
                self.forget_pending()
            if code == WRONG_PIN:
                self.pin_id = ""  # ADR-42: the pin went to another client; pull without an id
            if code not in ("404", "408") and description not in NOT_TELEGRAPHED:
                self.warnings.append(f"{code} {description}".strip())
            if description == MAX_WAITING:
                self._back_off()
                return
        await self._maybe_pull()

    async def _on_delivery(self, msg: Msg, headers: dict[str, str]) -> None:
        """A message: counted off what is pending (never below zero: a forgotten pull may still deliver)."""
        if self.accept is not None and not self.accept(msg):
            return
        self.received.append(msg)
        if self.by_bytes:
            self._subtract(0, len(msg.subject) + len(msg.reply) + len(msg.data))  # no stored headers here
        else:
            self._subtract(1, 0)
        if self.group and headers.get(PIN_ID):
            self.pin_id = headers[PIN_ID]
        if self.term:
            await msg.term()
        elif self.ack_sync:
            await msg.ack_sync()
        elif self.acknowledge:
            await msg.ack()

    def _back_off(self) -> None:
        """After "409 Exceeded MaxWaiting" (the newest pull refused, never queued): wait, then pull again."""
        self._subtract(*self._last_asked)
        if self._backoff is None:
            self._backoff = asyncio.create_task(self._pull_after_backoff())

    async def _pull_after_backoff(self) -> None:
        await self.sleep(self.backoff)
        self._backoff = None
        await self._maybe_pull()

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on the loop's clock (a manual server clock moves only when the test moves it)."""
        until = self.now() + seconds
        while self.now() < until:
            await asyncio.sleep(min(0.01, seconds))

    async def _watch_heartbeats(self) -> None:
        if not self.heartbeat:
            return
        while True:
            await asyncio.sleep(self.heartbeat / 2)
            if not self.connected:
                self._last_seen = self.now()  # paused while disconnected
            elif self.now() - self._last_seen > 2 * self.heartbeat:
                self.missed_heartbeats += 1
                self._last_seen = self.now()
                if self.on_missed_heartbeat is not None:
                    await self.on_missed_heartbeat()
                elif self.repull_on_missed_heartbeat:
                    self.forget_pending()
                    await self._maybe_pull()
