"""Carrying out the wider families of :mod:`fakejs.parity.families` on both servers.

Most of them need both servers at once, not one client after the other:

* ``priority_pulls``: each client writes its pulls in one write, then both
  servers are asked for the consumer's ``num_waiting`` in lockstep (the same
  number of API requests on each, 40 rounds of 50 ms at most) until every
  pull is queued; then the messages are published and each pull's
  deliveries gathered until every pull is filled or ended by a status
  (endings that come together are sorted by pull, :func:`endings_sorted`);
Polls go through the pair's pollers, clients named ``parity-poll`` whose API
audits :mod:`fakejs.parity.events` leaves out (what they see depends on when
they look).

* ``ttl.settle``: both servers' STREAM.INFO of the bucket, in lockstep every
  100 ms, until on each the stream is empty and two answers in a row are
  equal (8 s at most); the last answers are compared;
* ``advisories``: what each client's subscription on
  ``$JS.EVENT.ADVISORY.>`` got since the last look, once neither has had
  anything new for 150 ms (:mod:`fakejs.parity.events` normalises them);
* ``traced_publish`` (one client at a time): the publish's replies and the
  trace events on ``Nats-Trace-Dest``, until a quiet spell.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.parity.events import advisories_by_subject, trace_event
from fakejs.parity.normalize import jsonable, normalize_headers, payload_view, text

PULL_EXPIRES = 2_000_000_000  # nanoseconds: a pull that is not filled ends with a 408 after 2 s
PULLS_LIMIT = 6.0  # seconds to gather the deliveries of prioritized pulls
WAITING_ROUNDS = 40
TTL_LIMIT = 8.0
TTL_INTERVAL = 0.1
ADVISORY_QUIET = 0.15
ADVISORY_LIMIT = 2.0
ADVISORIES = "$JS.EVENT.ADVISORY.>"


async def _request(nc: Client, subject: str, payload: bytes = b"") -> Any:
    try:
        msg = await nc.request(subject, payload, timeout=2.0)
    except Exception as exc:  # noqa: BLE001 - the kind of failure is what is compared
        return {"failure": type(exc).__name__}
    return payload_view(msg.data)


# ---------------------------------------------------------------------------- prioritized pulls


class _Pulls:
    """One client's pulls: their inboxes, and what came to each."""

    def __init__(self, nc: Client, op: dict[str, Any]) -> None:
        self.nc, self.op = nc, op
        self.inbox = nc.new_inbox()
        self.got: list[list[Any]] = []
        self.done = [False] * len(op["pulls"])
        self.counts = [0] * len(op["pulls"])
        self.changed = asyncio.Event()

    async def on_msg(self, index: int, msg: Msg) -> None:
        headers = normalize_headers(msg.headers)
        if headers and "Status" in headers:
            self.got.append([index, "status", headers])
            self.done[index] = True
        else:
            self.got.append([index, msg.subject, headers, text(msg.data)])
            self.counts[index] += 1
            self.done[index] = self.counts[index] >= self.op["pulls"][index]["batch"]
        self.changed.set()

    async def send(self) -> list[Any]:
        """Every pull in one write (no flush in between), then a flush: the server has read them.

        Each pull has its own inbox and subscription (a delivery's subject is the message's).
        """
        subs = [
            await self.nc.subscribe(f"{self.inbox}.{index}", cb=functools.partial(self.on_msg, index))
            for index in range(len(self.op["pulls"]))
        ]
        subject = f"$JS.API.CONSUMER.MSG.NEXT.{self.op['stream']}.{self.op['consumer']}"
        for index, pull in enumerate(self.op["pulls"]):
            body = json.dumps({**pull, "expires": PULL_EXPIRES}).encode()
            await self.nc.publish(subject, body, reply=f"{self.inbox}.{index}")
        await self.nc.flush()
        return subs

    async def waiting(self, poller: Client) -> bool:
        """Whether every pull is queued (or the consumer cannot be asked)."""
        info = await _request(poller, f"$JS.API.CONSUMER.INFO.{self.op['stream']}.{self.op['consumer']}")
        if not isinstance(info, dict) or "num_waiting" not in info:
            return True
        return bool(info["num_waiting"] + len(self.got) >= len(self.op["pulls"]))

    async def publish(self) -> list[Any]:
        return [await _request(self.nc, self.op["subject"], b"p%d" % i) for i in range(self.op["messages"])]

    async def finish(self, deadline: float) -> None:
        while not all(self.done) and time.monotonic() < deadline:
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break


async def priority_pulls(clients: list[Client], op: dict[str, Any], pollers: list[Client]) -> list[Any]:
    """Pulls written together; the messages stored after they wait, or (``pending``) before they come.

    With messages pending, deliveries are compared pull by pull: the order
    across pulls is the order nats-server's delivery goroutine happened to
    take them in, while which pull gets which message is the policy's.
    """
    sides = [_Pulls(nc, op) for nc in clients]
    acks: list[Any] = []
    if op.get("pending"):
        acks = list(await asyncio.gather(*(side.publish() for side in sides)))
    subs = await asyncio.gather(*(side.send() for side in sides))
    if not op.get("pending"):
        for _ in range(WAITING_ROUNDS):
            if all(await asyncio.gather(*(side.waiting(poller) for side, poller in zip(sides, pollers)))):
                break
            await asyncio.sleep(0.05)
        acks = list(await asyncio.gather(*(side.publish() for side in sides)))
    deadline = time.monotonic() + PULLS_LIMIT
    await asyncio.gather(*(side.finish(deadline) for side in sides))
    for sub in (sub for side in subs for sub in side):
        await sub.unsubscribe()
    out = []
    for ack, side in zip(acks, sides):
        got = sorted(side.got, key=lambda item: int(item[0])) if op.get("pending") else endings_sorted(side.got)
        out.append({"acks": ack, "deliveries": jsonable(got)})
    return out


def endings_sorted(got: list[list[Any]]) -> list[list[Any]]:
    """Deliveries with each run of consecutive endings (statuses) sorted by pull.

    Pulls written together expire together, microseconds apart: which of
    them nats-server's expiry check finds first is timing, not policy.
    """
    out: list[list[Any]] = []
    run: list[list[Any]] = []
    for item in got:
        if item[1] == "status":
            run.append(item)
            continue
        out += sorted(run, key=lambda ending: int(ending[0])) + [item]
        run = []
    return out + sorted(run, key=lambda ending: int(ending[0]))


# ---------------------------------------------------------------------------- TTL expiry


def _empty(info: Any) -> bool:
    if not isinstance(info, dict) or "state" not in info:
        return True  # an error reply: nothing to wait for
    return bool(info["state"].get("messages") == 0)


async def ttl_settle(clients: list[Client], op: dict[str, Any]) -> list[Any]:
    """Both servers' STREAM.INFO in lockstep until each stream is empty and stable (or the limit)."""
    subject = f"$JS.API.STREAM.INFO.{op['stream']}"
    deadline = time.monotonic() + TTL_LIMIT
    previous: list[Any] = [None] * len(clients)
    while True:
        infos = list(await asyncio.gather(*(_request(nc, subject) for nc in clients)))
        settled = all(_empty(now) and now == before for now, before in zip(infos, previous))
        previous = infos
        if settled or time.monotonic() > deadline:
            return [{"data": info} for info in infos]
        await asyncio.sleep(TTL_INTERVAL)


# ---------------------------------------------------------------------------- advisories


class AdvisoryWatch:
    """A subscription on ``$JS.EVENT.ADVISORY.>`` and what it got since the last look."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.events: list[tuple[str, bytes]] = []
        self.sub: Any = None

    async def start(self) -> AdvisoryWatch:
        async def on_msg(msg: Msg) -> None:
            self.events.append((msg.subject, msg.data))

        self.sub = await self.nc.subscribe(ADVISORIES, cb=on_msg)
        await self.nc.flush()
        return self

    async def stop(self) -> None:
        if self.sub is not None:
            try:
                await self.sub.unsubscribe()
            except Exception:  # noqa: BLE001, S110 - a closed connection has no subscription left to remove
                pass


async def advisories(watches: list[AdvisoryWatch]) -> list[Any]:
    """Each watch's advisories since the last look, once none has had a new one for a quiet spell."""
    for watch in watches:
        await watch.nc.flush()
    deadline = time.monotonic() + ADVISORY_LIMIT
    counts = [len(w.events) for w in watches]
    while time.monotonic() < deadline:
        await asyncio.sleep(ADVISORY_QUIET)
        now = [len(w.events) for w in watches]
        if now == counts:
            break
        counts = now
    out = []
    for watch in watches:
        taken, watch.events = watch.events, []
        out.append({"advisories": advisories_by_subject(taken)})
    return out


# ---------------------------------------------------------------------------- traced publishes


async def traced_publish(nc: Client, op: dict[str, Any], quiet: float) -> dict[str, Any]:
    """A publish with trace headers: its replies and the trace events, each in arrival order."""
    inbox = nc.new_inbox()
    replies: list[Any] = []
    traces: list[Any] = []
    arrived = asyncio.Event()

    async def on_reply(msg: Msg) -> None:
        replies.append(jsonable({"headers": normalize_headers(msg.headers), "data": payload_view(msg.data)}))
        arrived.set()

    async def on_trace(msg: Msg) -> None:
        traces.append(jsonable(trace_event(msg.data, msg.headers)))
        arrived.set()

    subs = [await nc.subscribe(inbox, cb=on_reply)]
    dest = (op.get("headers") or {}).get("Nats-Trace-Dest")
    if dest:
        subs.append(await nc.subscribe(dest, cb=on_trace))
    await nc.publish(op["subject"], op["payload"].encode(), reply=inbox, headers=op["headers"])
    while True:
        arrived.clear()
        try:
            await asyncio.wait_for(arrived.wait(), quiet)
        except TimeoutError:
            break
    for sub in subs:
        await sub.unsubscribe()
    return {"replies": replies, "traces": traces}
