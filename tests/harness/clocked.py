"""A server on a manual clock, asked over the JetStream API: a request, the clock moved, a stream's message count."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats

from fakejs import ManualClock


async def call(nc: nats.NATS, subject: str, body: Any = None) -> dict:
    reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=2)
    return json.loads(reply.data)


async def settle(clock: ManualClock, seconds: float) -> None:
    clock.advance(seconds)
    await asyncio.sleep(0.05)


async def messages(nc: nats.NATS, name: str) -> int:
    return (await call(nc, f"$JS.API.STREAM.INFO.{name}"))["state"]["messages"]
