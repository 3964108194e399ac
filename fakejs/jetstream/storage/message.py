"""One stored message, and the byte sizes nats-server accounts for it.

The sizes follow nats-server so that ``state.bytes`` is identical:

* memory storage: ``len(subject) + len(headers) + len(payload) + 16``;
* file storage: ``22 + len(subject) + len(payload) + 8``, plus
  ``4 + len(headers)`` when there are headers.
"""

from __future__ import annotations


class StoredMessage:
    """One message in a stream's store: sequence, subject, headers (``hdr``), payload (``data``),
    timestamp (``ts``, ns) and per-message TTL (nats-server's ``StoreMsg``)."""

    __slots__ = ("data", "hdr", "seq", "subject", "ts", "ttl")

    def __init__(self, seq: int, subject: str, hdr: bytes | None, data: bytes, ts: int, ttl: int = 0) -> None:
        self.seq = seq
        self.subject = subject
        self.hdr = hdr
        self.data = data
        self.ts = ts
        self.ttl = ttl  # per-message TTL in ns; 0 none, -1 never expire

    def __repr__(self) -> str:
        return f"<StoredMessage {self.seq} {self.subject!r} {len(self.data)}B>"


def memory_size(subject: str, hdr: bytes | None, data: bytes) -> int:
    return len(subject) + (len(hdr) if hdr else 0) + len(data) + 16


def file_size(subject: str, hdr: bytes | None, data: bytes) -> int:
    size = 22 + len(subject) + len(data) + 8
    if hdr:
        size += 4 + len(hdr)
    return size
