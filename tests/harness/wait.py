"""Waiting for something the server does asynchronously: one polling loop for every test.

nats-server does some work after it has answered (counting new messages
into a consumer's pending numbers, removing a closed connection's pull
requests, recording a closed connection for ``/connz``), so a test that
checks the result asks again until it holds.  :func:`poll` returns the last
value it saw, for the caller to assert on; :func:`eventually` asserts itself.
Timeouts are real seconds: they bound a test, they are not server time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

# Seconds to wait for something that must happen.  Generous: a busy machine can hold
# nats-server (or this process) back for a second or more, and the wait ends as soon as
# the thing happens, so only a failing test pays it.
WAIT = 10.0

T = TypeVar("T")


async def poll(
    fetch: Callable[[], Awaitable[T]],
    done: Callable[[T], object] = bool,
    *,
    timeout: float = WAIT,
    interval: float = 0.02,
) -> T:
    """``await fetch()`` until ``done(value)`` holds or ``timeout`` has passed; returns the last value."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await fetch()
        if done(value) or loop.time() > deadline:
            return value
        await asyncio.sleep(interval)


async def eventually(
    fetch: Callable[[], Awaitable[T]],
    done: Callable[[T], object] = bool,
    *,
    what: str = "the condition",
    timeout: float = WAIT,
    interval: float = 0.02,
) -> T:
    """:func:`poll`, failing the test if ``done`` never held; returns the value that made it hold."""
    value = await poll(fetch, done, timeout=timeout, interval=interval)
    assert done(value), f"timed out waiting for {what}; last seen: {value!r}"
    return value
