"""Fast-ingest batches over a raw connection: ``$FI`` reply subjects, flow and error notices, exchanges."""

from __future__ import annotations

from typing import Any

from tests.harness.publish import Raw


def fi(batch: str, seq: int, op: int, gap: str = "ok", flow: int | str = 10) -> str:
    """A fast-batch reply subject under the ``R.`` prefix the raw connection listens on."""
    return f"R.{batch}.{flow}.{gap}.{seq}.{op}.$FI"


def msg(reply: str, payload: bytes) -> bytes:
    return b"MSG %s 1 %d\r\n%s\r\n" % (reply.encode(), len(payload), payload)


def flow(seq: int, every: int) -> bytes:
    return b'{"type":"ack","seq":%d,"msgs":%d}' % (seq, every)


def error_notice(seq: int, code: int, err_code: int, description: str) -> bytes:
    return b'{"type":"err","seq":%d,"error":{"code":%d,"err_code":%d,"description":"%s"}}' % (
        seq,
        code,
        err_code,
        description.encode(),
    )


async def exchange(raw: Raw, *publishes: tuple[Any, ...], frames: int = 0, quiet: float = 0.15) -> bytes:
    """Send ``(subject, reply[, payload[, headers]])`` publishes at once; everything answered, in order.

    nats-server answers from the stream's goroutine, later than the PONG to a PING sent behind
    the publishes: the ``frames`` answers a test expects are waited for, then anything more
    that comes within ``quiet`` seconds is taken too.
    """
    out = b""
    for subject, reply, *rest in publishes:
        payload: bytes = rest[0] if rest else b"x"
        hdr: bytes | None = rest[1] if len(rest) > 1 else None
        if hdr is None:
            out += f"PUB {subject} {reply} {len(payload)}\r\n".encode() + payload + b"\r\n"
        else:
            out += f"HPUB {subject} {reply} {len(hdr)} {len(hdr) + len(payload)}\r\n".encode() + hdr + payload + b"\r\n"
    await raw.send(out)
    taken = raw.taken
    await raw.until(lambda: len(raw.frames) - taken >= frames or bool(raw.errors), f"{frames} answer(s)")
    return await raw.silence(quiet)
