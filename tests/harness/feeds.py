"""Mirrors and sources over the JetStream API: streams created, their info polled, their messages read."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import nats

from tests.harness.js import api

DEADLINE = 6.0


async def create(nc: nats.NATS, name: str, **cfg: Any) -> dict:
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", {"name": name, "storage": "memory", **cfg})
    assert "error" not in reply, reply
    return reply


async def info(nc: nats.NATS, name: str) -> dict:
    return await api(nc, f"$JS.API.STREAM.INFO.{name}")


async def until(nc: nats.NATS, name: str, check: Any, deadline: float = DEADLINE) -> dict:
    """Poll STREAM.INFO until ``check(info)`` holds."""
    end = time.monotonic() + deadline
    while True:
        got = await info(nc, name)
        if check(got) or time.monotonic() > end:
            return got
        await asyncio.sleep(0.05)


async def get(nc: nats.NATS, name: str, seq: int) -> dict:
    reply = await api(nc, f"$JS.API.STREAM.MSG.GET.{name}", {"seq": seq})
    return reply.get("message", reply)


def shape(block: dict) -> dict:
    """A mirror/source info block with ``active`` reduced to never (-1) / ever (1)."""
    return {**block, "active": -1 if block["active"] == -1 else 1}


def source_header(msg: dict) -> str:
    """The ``Nats-Stream-Source`` header of a message as STREAM.MSG.GET returns it (base64 headers)."""
    block = base64.b64decode(msg.get("hdrs", "")).decode()
    for line in block.split("\r\n"):
        if line.startswith("Nats-Stream-Source: "):
            return line.split(": ", 1)[1]
    return ""
