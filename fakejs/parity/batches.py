"""Operations made of several publishes: atomic batches and fast-ingest (``$FI``) batches.

Both send all their messages first, on one connection, with reply subjects
under a private inbox, then gather what comes back until every message has
been answered, the batch's final PubAck arrives, or nothing more comes for
:data:`~fakejs.parity.executor.QUIET` seconds.  Reply subjects are shown
with the inbox replaced, since each client makes up its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.parity.normalize import jsonable, normalize_headers, payload_view

Publish = tuple[str, bytes, dict[str, str] | None, str]  # subject, payload, headers, reply subject


async def gather_replies(
    nc: Client, inbox: str, publishes: Sequence[Publish], done: Callable[[list[Msg]], bool], quiet: float
) -> list[Any]:
    """Send ``publishes``; the replies under ``inbox`` until ``done`` says so or ``quiet`` seconds of silence."""
    queue: asyncio.Queue[Msg] = asyncio.Queue()

    async def put(msg: Msg) -> None:
        queue.put_nowait(msg)

    sub = await nc.subscribe(f"{inbox}.>", cb=put)
    for subject, payload, headers, reply in publishes:
        await nc.publish(subject, payload, reply=reply, headers=headers)
    seen: list[Msg] = []
    items: list[Any] = []
    while not done(seen):
        try:
            msg = await asyncio.wait_for(queue.get(), quiet)
        except TimeoutError:
            items.append("silence")
            break
        seen.append(msg)
        reply_to = "<inbox>" + msg.subject[len(inbox) :] if msg.subject.startswith(inbox) else msg.subject
        items.append([reply_to, jsonable(normalize_headers(msg.headers)), payload_view(msg.data)])
    await sub.unsubscribe()
    return items


async def atomic_batch(nc: Client, op: dict[str, Any], quiet: float) -> dict[str, Any]:
    """An atomic batch: every message is answered (empty while staged, the PubAck or an error at the end)."""
    inbox = nc.new_inbox()
    messages = op["messages"]
    publishes = [
        (m["subject"], m["payload"].encode(), m.get("headers"), f"{inbox}.{i}") for i, m in enumerate(messages)
    ]
    items = await gather_replies(nc, inbox, publishes, lambda seen: len(seen) >= len(messages), quiet)
    return {"items": sorted(items, key=message_index)}


def message_index(item: Any) -> int:
    """Replies in the order of the messages they answer.

    Messages of one batch may go to different streams (a refused batch), and
    each stream answers from its own goroutine on nats-server, so replies to
    different streams' messages arrive in either order.  Each reply names its
    message, so sorting hides nothing; a trailing ``"silence"`` stays last.
    """
    if isinstance(item, list):
        return int(item[0].rsplit(".", 1)[1])
    return 1 << 30


def _final(msg: Msg) -> bool:
    """The PubAck that ends a fast batch (``{"stream": ..., "batch": ...}``)."""
    return msg.data.startswith(b'{"stream"') and b'"batch"' in msg.data


async def fast_batch(nc: Client, op: dict[str, Any], quiet: float) -> dict[str, Any]:
    """A fast batch: flow acks, gaps and errors as they come, until the final PubAck or silence."""
    inbox = nc.new_inbox()
    prefix = f"{inbox}.{op['batch']}.{op['flow']}.{op['mode']}"
    publishes = [
        (op["subject"], m["payload"].encode(), None, f"{prefix}.{m['seq']}.{m['op']}.$FI") for m in op["messages"]
    ]
    items = await gather_replies(nc, inbox, publishes, lambda seen: bool(seen) and _final(seen[-1]), quiet)
    return {"items": items}
