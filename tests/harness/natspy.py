"""nats-py's ``flush()`` made to mean what the tests take it to mean: the server has read everything before.

nats-py 2.16 queues a ``SUB`` or ``PUB`` for its flusher task, which writes
it on a later turn of the event loop, but writes a flush's ``PING`` straight
to the socket.  The ``PING`` therefore goes out *ahead* of the commands still
queued, and its ``PONG`` proves nothing about them: a test that subscribes,
flushes and then publishes from another connection sometimes publishes
before nats-server has read the ``SUB`` (the other connection's goroutine
runs first on a busy machine) and the message is lost.

:func:`order_pings_after_queued_commands` makes a connected client queue
its ``PING`` behind them instead, as the Go client (nats.go) does; a
disconnected one keeps nats-py's behaviour (its queued commands are resent
on reconnect, the ``PING`` would not be).
"""

from __future__ import annotations

import asyncio
from typing import Any

from nats.aio.client import PING_PROTO, Client

_unordered_send_ping = Client._send_ping


async def _send_ping_in_order(self: Any, future: asyncio.Future[Any] | None = None) -> None:
    """nats-py's ``_send_ping``, with the PING queued behind the commands not yet written."""
    if not self.is_connected:
        await _unordered_send_ping(self, future)
        return
    self._pongs.append(future if future is not None else asyncio.Future())
    self._pending.append(PING_PROTO)
    self._pending_data_size += len(PING_PROTO)
    await self._flush_pending()


def order_pings_after_queued_commands() -> None:
    """Patch nats-py's client for this test process (idempotent)."""
    Client._send_ping = _send_ping_in_order  # type: ignore[method-assign]
