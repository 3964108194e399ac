"""Direct Get over a raw connection: :class:`DirectWire` and :class:`DirectEnv`.

``$JS.API.DIRECT.GET.<stream>`` answers with header frames (or a batch of
them and an ``EOB`` status); the tests read them raw, per reply inbox, and
build the expected bytes from what :class:`DirectEnv` stored.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from tests.harness.env import Env
from tests.harness.js import api
from tests.harness.raw import RawClient
from tests.harness.wire import Frame, Wire

WAIT = 5.0  # seconds to wait for a reply that must come
INBOXES = itertools.count(1)
RFC3339NANO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$")


# --------------------------------------------------------------------------- raw wire


class DirectWire(Wire):
    """A raw connection with helpers for direct gets; frames are read per inbox."""

    default_timeout = WAIT

    def __init__(self, client: RawClient) -> None:
        super().__init__(client)
        self.sids: dict[str, int] = {}
        self.barrier_inbox: str | None = None

    async def inbox(self) -> str:
        subject = f"_INBOX.dg.{next(INBOXES)}"
        self.sids[subject] = len(self.sids) + 1
        await self.send(b"SUB %s %d\r\n" % (subject.encode(), self.sids[subject]))
        return subject

    def on(self, inbox: str) -> list[Frame]:
        return [f for f in self.frames if f.sid == self.sids[inbox]]

    async def publish(self, subject: str, payload: bytes, reply: str = "", header: bytes | None = None) -> None:
        target = subject.encode() + (b" " + reply.encode() if reply else b"")
        if header is None:
            await self.send(b"PUB %s %d\r\n%s\r\n" % (target, len(payload), payload))
        else:
            size = len(header) + len(payload)
            await self.send(b"HPUB %s %d %d\r\n%s%s\r\n" % (target, len(header), size, header, payload))

    async def request(self, subject: str, payload: bytes = b"", header: bytes | None = None) -> tuple[str, Frame]:
        """A request whose reply is a single frame (a publish with its PubAck)."""
        inbox = await self.inbox()
        await self.publish(subject, payload, inbox, header)
        await self.until(lambda: len(self.on(inbox)) >= 1, f"a reply on {inbox}")
        return inbox, self.on(inbox)[0]

    async def direct(
        self, subject: str, body: bytes | dict = b"", header: bytes | None = None
    ) -> tuple[str, list[bytes]]:
        """Send a direct get; return the reply inbox and every frame it received.

        Completion is proven by a barrier: an empty request to the same stream's
        ``$JS.API.DIRECT.GET.<stream>`` sent right after.  Its ``408 Empty Request``
        (or 503) is queued behind everything the first request produced.
        """
        if isinstance(body, dict):
            body = json.dumps(body).encode()
        inbox = await self.inbox()
        await self.publish(subject, body, inbox, header)
        if self.barrier_inbox is None:
            self.barrier_inbox = await self.inbox()
        stream = subject.split(".")[4]
        seen = len(self.on(self.barrier_inbox))
        await self.publish(f"$JS.API.DIRECT.GET.{stream}", b"", self.barrier_inbox)
        await self.until(lambda: len(self.on(self.barrier_inbox)) > seen, "the barrier reply")
        return inbox, [f.raw for f in self.on(inbox)]

    # -- expected bytes

    def hmsg(self, inbox: str, header: bytes, payload: bytes = b"") -> bytes:
        return b"HMSG %s %d %d %d\r\n%s%s\r\n" % (
            inbox.encode(),
            self.sids[inbox],
            len(header),
            len(header) + len(payload),
            header,
            payload,
        )

    def msg(self, inbox: str, payload: bytes) -> bytes:
        return b"MSG %s %d %d\r\n%s\r\n" % (inbox.encode(), self.sids[inbox], len(payload), payload)


# --------------------------------------------------------------------------- environment


@dataclass
class Stored:
    subject: str
    payload: bytes
    header: bytes  # the stored header block, b"" when none


class DirectEnv(Env):
    """A stream ``S`` (subjects ``s.>``, ``allow_direct``) and a raw wire."""

    wire_class = DirectWire
    stream_defaults: ClassVar[dict[str, Any]] = {
        "name": "S",
        "subjects": ["s.>"],
        "storage": "file",
        "allow_direct": True,
    }

    def __init__(self, target: Any) -> None:
        super().__init__(target)
        self.wire: DirectWire | None = None
        self.stream = "S"
        self.messages: dict[int, Stored] = {}
        self.times: dict[int, str] = {}

    async def start(self, *, storage: str = "file", **config: Any) -> DirectWire:
        await self.connect()
        await self.add_stream(storage=storage, **config)
        self.wire = await self.open_wire()
        return self.wire

    async def publish(self, subject: str, payload: bytes = b"", header: bytes | None = None) -> int:  # type: ignore[override]
        """Store a message through the raw wire (``header`` is a header block); remembers it for :meth:`block`."""
        assert self.wire is not None
        _, frame = await self.wire.request(subject, payload, header)
        ack = json.loads(frame.payload)
        assert "error" not in ack, ack
        self.messages[ack["seq"]] = Stored(subject, payload, header or b"")
        return int(ack["seq"])

    async def fill(self, *items: tuple[str, bytes]) -> list[int]:
        return [await self.publish(subject, payload) for subject, payload in items]

    async def delete(self, seq: int) -> None:
        reply = await api(self.nc, f"$JS.API.STREAM.MSG.DELETE.{self.stream}", {"seq": seq})
        assert reply.get("success") is True, reply

    async def ts(self, seq: int) -> str:
        if seq not in self.times:
            self.times[seq] = await self.stored_time(seq)
            assert RFC3339NANO.match(self.times[seq]), self.times[seq]
        return self.times[seq]

    async def block(self, seq: int, pending: int | None = None, last: int | None = None) -> bytes:
        """The header block a direct get sends for stored message ``seq``."""
        stored = self.messages[seq]
        block = stored.header[:-2] if stored.header else b"NATS/1.0\r\n"
        block += b"Nats-Stream: %s\r\nNats-Subject: %s\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %s\r\n" % (
            self.stream.encode(),
            stored.subject.encode(),
            seq,
            (await self.ts(seq)).encode(),
        )
        if pending is not None:
            block += b"Nats-Num-Pending: %d\r\nNats-Last-Sequence: %d\r\n" % (pending, last)
        return block + b"\r\n"

    async def item(self, inbox: str, seq: int, pending: int | None = None, last: int | None = None) -> bytes:
        assert self.wire is not None
        return self.wire.hmsg(inbox, await self.block(seq, pending, last), self.messages[seq].payload)

    async def batch(self, inbox: str, seqs: list[int], pending: list[int]) -> list[bytes]:
        """Batch items for ``seqs`` with the given Num-Pending values (Last-Sequence chains)."""
        frames, last = [], 0
        for seq, left in zip(seqs, pending):
            frames.append(await self.item(inbox, seq, left, last))
            last = seq
        return frames

    async def get(
        self, body: bytes | dict = b"", *, suffix: str = "", header: bytes | None = None
    ) -> tuple[str, list[bytes]]:
        assert self.wire is not None
        subject = f"$JS.API.DIRECT.GET.{self.stream}" + (f".{suffix}" if suffix else "")
        return await self.wire.direct(subject, body, header)
