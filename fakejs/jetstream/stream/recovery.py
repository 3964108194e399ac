"""What a stream rebuilds from its stored messages after a restart: the duplicate window, the TTLs, the schedules.

Go: the part of ``stream.go``'s restart (``rebuildDedupe``, the TTL and
schedule recovery of the filestore) that reads back stored messages.
"""

from __future__ import annotations

from fakejs.gocompat.gotime import NS
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream import publish
from fakejs.jetstream.stream.dedup import DuplicateWindow
from fakejs.jetstream.stream.expiry import MessageExpiry
from fakejs.jetstream.stream.schedules import MessageSchedules
from fakejs.protocol import headers as hdrs

__all__ = ["recover"]


def recover(
    store: MessageStore,
    window_ns: int,
    now_ns: int,
    parts: tuple[DuplicateWindow, MessageExpiry, MessageSchedules],
) -> str | None:
    """Refill the duplicate window (messages within ``window_ns`` of ``now_ns``), the TTLs and the schedules
    from ``store``; the last message's id (the stream's last msg id), None when the last message has no headers."""
    dedup, expiry, schedules = parts
    for msg in store:
        if msg.hdr and now_ns - msg.ts < window_ns:
            msg_id = hdrs.get(msg.hdr, publish.MSG_ID)
            if msg_id:
                dedup.remember_at(msg_id.decode("utf-8", "surrogateescape"), msg.seq, msg.ts)
        if msg.ttl > 0:
            expiry.add_ttl(msg.ts + msg.ttl * NS, msg.seq)
    schedules.recover(iter(store))
    last = store.last_message()
    return publish.msg_id(last.hdr) if last is not None and last.hdr else None
