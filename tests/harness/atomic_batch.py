"""Atomic batch publishes over a raw connection: the batch headers, and the replies as frames."""

from __future__ import annotations

from tests.harness.publish import hdr_block

EMPTY = b"MSG R.1 1 0\r\n\r\n"


def msg(payload: bytes) -> bytes:
    return b"MSG R.1 1 %d\r\n%s\r\n" % (len(payload), payload)


def batch_hdr(bid: str, seq: int | str, *extra: str, commit: str = "") -> bytes:
    lines = [f"Nats-Batch-Id: {bid}", f"Nats-Batch-Sequence: {seq}", *extra]
    if commit:
        lines.append(f"Nats-Batch-Commit: {commit}")
    return hdr_block(*lines)
