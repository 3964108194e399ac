"""Helpers for JetStream parity tests: a nats-py connection, raw API requests and reply normalisation.

JetStream replies contain values that differ between any two servers or
runs: timestamps and server ids and names.  :func:`normalize` (shared with
the parity campaign, :mod:`fakejs.parity.normalize`) replaces exactly those
with placeholders so a test can compare a whole reply from fakejs with the
same reply from nats-server -- or with a literal expectation that holds for
both.  JetStream durations are nanoseconds: :data:`MS` and :data:`SEC`.
"""

from __future__ import annotations

import calendar
import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError

from fakejs.gocompat.gotime import NS
from fakejs.parity.normalize import SERVER_KEYS, TIME_KEYS, ZERO_TIME, normalize
from tests.harness.wait import WAIT

__all__ = [
    "MS",
    "NS",
    "SEC",
    "SERVER_KEYS",
    "TIME_KEYS",
    "ZERO_TIME",
    "Pull",
    "add_stream",
    "api",
    "arrival",
    "connect",
    "connected",
    "create_stream",
    "fetch_no_wait",
    "is_status",
    "normalize",
    "publish",
    "request",
    "rfc3339_ns",
    "silent",
    "stored",
]

SEC = NS  # nanoseconds in a second
MS = NS // 1_000  # nanoseconds in a millisecond


async def connect(target: Any, **kwargs: Any) -> Client:
    return await nats.connect(target.url, **kwargs)


@contextlib.asynccontextmanager
async def connected(target: Any, **kwargs: Any) -> AsyncIterator[Client]:
    """A nats-py connection for the ``async with`` block."""
    nc = await nats.connect(target.url, **kwargs)
    try:
        yield nc
    finally:
        await nc.close()


async def api(
    nc: Client, subject: str, body: Any = None, *, timeout: float = WAIT, headers: dict[str, str] | None = None
) -> dict:
    """Send a ``$JS.API`` request and return the decoded JSON reply.

    ``body`` may be ``None`` (empty payload), ``bytes`` (sent as is) or a
    JSON-serialisable value.
    """
    if body is None:
        payload = b""
    elif isinstance(body, bytes):
        payload = body
    else:
        payload = json.dumps(body).encode()
    msg = await nc.request(subject, payload, timeout=timeout, headers=headers)
    return json.loads(msg.data)


async def request(
    nc: Client, subject: str, payload: bytes = b"", *, timeout: float = WAIT, headers: dict[str, str] | None = None
) -> Msg:
    """A raw request; returns the reply message (status headers included)."""
    return await nc.request(subject, payload, timeout=timeout, headers=headers)


async def create_stream(nc: Client, config: dict[str, Any]) -> dict:
    """Create a stream; fails the test if the server refuses."""
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{config['name']}", config)
    assert "error" not in reply, reply
    return reply


async def add_stream(nc: Client, name: str = "S", subjects: list[str] | None = None, **config: Any) -> dict:
    """Create stream ``name`` on ``<name in lower case>.>`` (unless ``subjects`` are given), with ``config``."""
    return await create_stream(nc, {"name": name, "subjects": subjects or [name.lower() + ".>"], **config})


async def publish(
    nc: Client, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None, timeout: float = WAIT
) -> bytes:
    """Publish with a reply subject and return the raw PubAck payload bytes."""
    msg = await nc.request(subject, payload, timeout=timeout, headers=headers)
    return msg.data


async def stored(
    nc: Client, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None, timeout: float = WAIT
) -> int:
    """Publish to a stream; fails the test on an error PubAck; returns the stream sequence."""
    ack = json.loads(await publish(nc, subject, payload, headers, timeout))
    assert "error" not in ack, ack
    return int(ack["seq"])


def rfc3339_ns(text: str) -> int:
    """``2026-01-02T03:04:05.123456789Z`` -> nanoseconds since the epoch."""
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z", text)
    assert match, text
    y, mo, d, h, mi, s, frac = match.groups()
    seconds = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s), 0, 0, 0))
    return seconds * NS + int((frac or "0").ljust(9, "0"))


async def arrival(target: Any, sub: Any, timeout: float = WAIT) -> Msg:
    """The next message of ``sub``, sent when a server timer fires: the target's clock moves until it comes.

    At most ``timeout`` seconds pass (really on the real server, on the
    manual clock for fakejs); what was sent in that time is then read.
    """
    await target.elapse_until(lambda: sub.pending_msgs, timeout)
    return await sub.next_msg(timeout=timeout)


async def silent(sub: Any, wait: float = 0.3, target: Any = None) -> None:
    """Nothing arrives on ``sub`` for ``wait`` seconds (of the server's clock, with ``target``)."""
    if target is not None:
        await target.elapse(wait)
        if sub.pending_msgs == 0:
            return
        wait = 0.01  # what arrived is read at once, and fails the check below
    with pytest.raises(NatsTimeoutError):
        msg = await sub.next_msg(timeout=wait)
        print("unexpected", msg.subject, msg.reply, msg.headers, msg.data)


def is_status(msg: Msg) -> bool:
    return bool(msg.headers) and "Status" in msg.headers


class Pull:
    """A reply inbox for pull requests (and ``+NXT`` acks) made with a nats-py connection."""

    def __init__(self, nc: Client, stream: str, consumer: str) -> None:
        self.nc, self.stream, self.consumer = nc, stream, consumer
        self.inbox = nc.new_inbox()
        self.sub: Any = None

    @classmethod
    async def open(cls, nc: Client, stream: str = "S", consumer: str = "C") -> Pull:
        pull = cls(nc, stream, consumer)
        pull.sub = await nc.subscribe(pull.inbox)
        return pull

    async def request(self, body: Any = None) -> None:
        if body is None:
            payload = b""
        elif isinstance(body, bytes):
            payload = body
        else:
            payload = json.dumps(body).encode()
        await self.nc.publish(f"$JS.API.CONSUMER.MSG.NEXT.{self.stream}.{self.consumer}", payload, reply=self.inbox)
        await self.nc.flush()

    async def next(self, timeout: float = WAIT, target: Any = None) -> Msg:
        """The next reply; with ``target``, the server's clock moves until it comes (see :func:`arrival`)."""
        if target is not None:
            return await arrival(target, self.sub, timeout)
        return await self.sub.next_msg(timeout=timeout)

    async def message(self, timeout: float = WAIT, target: Any = None) -> Msg:
        msg = await self.next(timeout, target)
        assert not is_status(msg), msg.headers
        return msg

    async def silent(self, wait: float = 0.3, target: Any = None) -> None:
        """Nothing arrives for ``wait`` seconds (of the server's clock, with ``target``)."""
        await silent(self.sub, wait, target)

    async def close(self) -> None:
        await self.sub.unsubscribe()


async def fetch_no_wait(nc: Client, stream: str, consumer: str, batch: int = 1) -> list[Msg]:
    """A ``no_wait`` pull of ``batch`` messages: what arrives until the batch is full or a status ends it."""
    pull = await Pull.open(nc, stream, consumer)
    await pull.request({"batch": batch, "no_wait": True})
    got = []
    while True:
        msg = await pull.next()
        got.append(msg)
        if is_status(msg) or len(got) == batch:
            break
    await pull.close()
    return got


async def fetch_delivered(nc: Client, stream: str, consumer: str, batch: int = 1) -> list[Msg]:
    """A pull that waits (up to the shared limit) for ``batch`` messages and fails on a status.

    For a message published after the consumer was made: a ``no_wait``
    pull may find nothing yet on a busy nats-server, whose consumer learns
    of new messages a moment after the PubAck.
    """
    pull = await Pull.open(nc, stream, consumer)
    await pull.request({"batch": batch, "expires": int(WAIT * 1e9)})
    got = [await pull.message() for _ in range(batch)]
    await pull.close()
    return got
