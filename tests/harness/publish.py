"""Publishing into a stream: a raw connection that takes PubAck frames, header blocks, PubAck bytes, a memory stream."""

from __future__ import annotations

import json
from typing import Any

import nats

from tests.harness.js import add_stream as js_add_stream
from tests.harness.js import api
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT
from tests.harness.wire import Wire


def ack(stream: str, seq: int) -> bytes:
    return b'{"stream":"%s","seq":%d}' % (stream.encode(), seq)


def err(stream: str, code: int, err_code: int, description: str) -> bytes:
    """An error PubAck; ``description`` is given as it appears inside the JSON string."""
    return b'{"error":{"code":%d,"err_code":%d,"description":"%s"},"stream":"%s","seq":0}' % (
        code,
        err_code,
        description.encode(),
        stream.encode(),
    )


def wrong_last_seq(stream: str, seq: int) -> bytes:
    return err(stream, 400, 10071, f"wrong last sequence: {seq}")


async def add_stream(nc: nats.NATS, name: str = "S", **cfg: Any) -> dict:
    """A memory stream unless ``cfg`` says otherwise."""
    return await js_add_stream(nc, name, **{"storage": "memory", **cfg})


async def info(nc: nats.NATS, name: str = "S", **request: Any) -> dict:
    reply = await api(nc, f"$JS.API.STREAM.INFO.{name}", request or None)
    assert "error" not in reply, reply
    return reply


def hdr_block(*lines: str) -> bytes:
    return ("NATS/1.0\r\n" + "".join(f"{line}\r\n" for line in lines) + "\r\n").encode()


class Raw(Wire):
    """A raw protocol connection with a subscription on ``R.>`` for replies; frames are taken in arrival order."""

    def __init__(self, client: RawClient, target: Target | None = None) -> None:
        super().__init__(client, target)
        self.taken = 0  # frames already returned by frame()

    @classmethod
    async def open(cls, target: Target, *, headers: bool = True) -> Raw:  # type: ignore[override]
        raw = cls(await RawClient.connect(target.host, target.port), target)
        await raw.until(lambda: raw.infos >= 1, "INFO")
        options = {"verbose": False, "pedantic": False, "headers": headers, "no_responders": headers}
        await raw.send(b"CONNECT " + json.dumps(options).encode() + b"\r\nSUB R.> 1\r\n")
        await raw.ping()
        return raw

    async def pub(
        self, subject: str, payload: bytes = b"", hdr: bytes | None = None, reply: str | None = "R.1"
    ) -> None:
        reply_part = f" {reply}" if reply else ""
        if hdr is None:
            cmd = f"PUB {subject}{reply_part} {len(payload)}\r\n".encode()
        else:
            cmd = f"HPUB {subject}{reply_part} {len(hdr)} {len(hdr) + len(payload)}\r\n".encode() + hdr
        await self.send(cmd + payload + b"\r\n")

    async def frame(self, timeout: float = WAIT) -> bytes:
        """The next complete MSG/HMSG frame (control line, payload and CRLF)."""
        await self.until(lambda: len(self.frames) > self.taken or bool(self.errors), "a frame", timeout)
        assert not self.errors, self.errors
        self.taken += 1
        return self.frames[self.taken - 1].raw

    async def request(self, subject: str, payload: bytes = b"", hdr: bytes | None = None) -> bytes:
        await self.pub(subject, payload, hdr)
        return await self.frame()

    async def silence(self, quiet: float = 0.3) -> bytes:
        """Everything not yet taken that the server sends until ``quiet`` seconds of silence after a PING."""
        infos = self.infos
        await self.ping()
        await self.quiet(quiet)
        rest = b"".join(frame.raw for frame in self.frames[self.taken :])
        rest += b"".join(line + b"\r\n" for line in self.errors)
        rest += b"INFO ...\r\n" * (self.infos - infos)
        self.taken = len(self.frames)
        return rest
