"""Helpers for JetStream parity tests: raw API requests and reply normalisation.

JetStream replies contain values that differ between any two servers or
runs: timestamps and server ids and names.  :func:`normalize` (shared with
the parity campaign, :mod:`fakejs.parity.normalize`) replaces exactly those
with placeholders so a test can compare a whole reply from fakejs with the
same reply from nats-server -- or with a literal expectation that holds for
both.
"""

from __future__ import annotations

import calendar
import json
import re
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.parity.normalize import SERVER_KEYS, TIME_KEYS, ZERO_TIME, normalize

__all__ = [
    "SERVER_KEYS",
    "TIME_KEYS",
    "ZERO_TIME",
    "api",
    "connect",
    "create_stream",
    "normalize",
    "publish",
    "request",
    "rfc3339_ns",
]


async def connect(target: Any, **kwargs: Any) -> Client:
    return await nats.connect(target.url, **kwargs)


async def api(
    nc: Client, subject: str, body: Any = None, *, timeout: float = 2.0, headers: dict[str, str] | None = None
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
    nc: Client, subject: str, payload: bytes = b"", *, timeout: float = 2.0, headers: dict[str, str] | None = None
) -> Msg:
    """A raw request; returns the reply message (status headers included)."""
    return await nc.request(subject, payload, timeout=timeout, headers=headers)


async def create_stream(nc: Client, config: dict[str, Any]) -> dict:
    """Create a stream; fails the test if the server refuses."""
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{config['name']}", config)
    assert "error" not in reply, reply
    return reply


async def publish(
    nc: Client, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None, timeout: float = 2.0
) -> bytes:
    """Publish with a reply subject and return the raw PubAck payload bytes."""
    msg = await nc.request(subject, payload, timeout=timeout, headers=headers)
    return msg.data


def rfc3339_ns(text: str) -> int:
    """``2026-01-02T03:04:05.123456789Z`` -> nanoseconds since the epoch."""
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z", text)
    assert match, text
    y, mo, d, h, mi, s, frac = match.groups()
    seconds = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s), 0, 0, 0))
    return seconds * 1_000_000_000 + int((frac or "0").ljust(9, "0"))
