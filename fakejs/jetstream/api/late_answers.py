"""The answer a stream's or consumer's new leader gives a create or update it did not hear: once it is heard here.

The meta leader hears the request (routed after the requester's interest in
its reply subject, on the same route), but the answer comes from the group's
new leader, which may be a third server: the group's messages can reach it
before the route from the requester's server has told it of that interest
(always so in one process, where they are handed over at once).  The answer
waits for the interest a few turns of the loop -- input already sent, not
time -- and goes out either way, as nats-server's does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["answer_once_heard"]

TURNS = 200  # turns of the loop an answer waits for its reply subject's interest to arrive


def answer_once_heard(js: JetStream, reply: str, payload: bytes, then: Callable[[], None] = lambda: None) -> None:
    """Publish ``payload`` on ``reply`` now if it has interest here, else once it has (or after :data:`TURNS`);
    ``then`` runs right after (what follows the answer: its audit, an advisory)."""
    if js.router.has_interest(reply):
        js.reply(reply, payload)
        then()
        return
    task = asyncio.get_running_loop().create_task(_answer_later(js, reply, payload, then))
    _WAITING.add(task)
    task.add_done_callback(_WAITING.discard)


_WAITING: set[asyncio.Task[None]] = set()


async def _answer_later(js: JetStream, reply: str, payload: bytes, then: Callable[[], None]) -> None:
    for _ in range(TURNS):
        await asyncio.sleep(0)
        if js.router.has_interest(reply):
            break
    js.reply(reply, payload)
    then()
