"""Pull requests over a raw connection: :class:`PullWire`, :class:`PullEnv` and the statuses a pull gets.

A pull request is a publish to ``$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>``
with a reply subject; what comes back on it -- messages, heartbeats, the
``404``/``408``/``409`` statuses with their pending counts -- is checked byte
for byte, so the tests speak the protocol themselves.
"""

from __future__ import annotations

import itertools
import json

from tests.harness.env import Env
from tests.harness.raw import RawClient
from tests.harness.wait import WAIT
from tests.harness.wire import Frame, Wire

INBOXES = itertools.count(1)  # inbox names unique across connections


# --------------------------------------------------------------------------- status blocks


def pending(status: str, msgs: int, nbytes: int) -> bytes:
    return (
        b"NATS/1.0 "
        + status.encode()
        + b"\r\nNats-Pending-Messages: %d\r\nNats-Pending-Bytes: %d\r\n\r\n" % (msgs, nbytes)
    )


NO_MESSAGES = b"NATS/1.0 404 No Messages\r\n\r\n"
REQUESTS_PENDING = b"NATS/1.0 408 Requests Pending\r\n\r\n"
CONSUMER_DELETED = b"NATS/1.0 409 Consumer Deleted\r\n\r\n"
HB_TOO_LARGE = b"NATS/1.0 400 Bad Request - heartbeat value too large\r\n\r\n"


def timeout_(msgs: int, nbytes: int = 0) -> bytes:
    return pending("408 Request Timeout", msgs, nbytes)


def too_big(msgs: int, nbytes: int) -> bytes:
    return pending("409 Message Size Exceeds MaxBytes", msgs, nbytes)


def completed(msgs: int, nbytes: int) -> bytes:
    return pending("409 Batch Completed", msgs, nbytes)


def bad_request(text: str) -> bytes:
    return b"NATS/1.0 400 Bad Request - " + text.encode() + b"\r\n\r\n"


def heartbeat(last_consumer: int, last_stream: int) -> bytes:
    return b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: %d\r\nNats-Last-Stream: %d\r\n\r\n" % (
        last_consumer,
        last_stream,
    )


def ack(dc: int, sseq: int, cseq: int, ts: int, left: int, stream: str = "S", consumer: str = "C") -> str:
    return f"$JS.ACK.{stream}.{consumer}.{dc}.{sseq}.{cseq}.{ts}.{left}"


# --------------------------------------------------------------------------- raw wire


def pull_bytes(
    body: bytes | str | dict | int, stream: str, consumer: str, reply: str, headers: bytes | None = None
) -> bytes:
    """The PUB (or HPUB) of one pull request."""
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    elif isinstance(body, int):
        body = str(body).encode()
    elif isinstance(body, str):
        body = body.encode()
    subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}".encode()
    target = subject + (b" " + reply.encode() if reply else b"")
    if headers is None:
        return b"PUB %s %d\r\n%s\r\n" % (target, len(body), body)
    return b"HPUB %s %d %d\r\n%s%s\r\n" % (target, len(headers), len(headers) + len(body), headers, body)


class PullWire(Wire):
    """A raw connection with helpers for pull requests; frames are read per inbox."""

    def __init__(self, client: RawClient) -> None:
        super().__init__(client)
        self.sids: dict[str, int] = {}
        self.counter = 0

    # -- subscriptions and requests

    async def inbox(self, name: str | None = None) -> str:
        self.counter += 1
        subject = name or f"_INBOX.pull.{next(INBOXES)}"
        self.sids[subject] = self.counter
        await self.send(b"SUB %s %d\r\n" % (subject.encode(), self.counter))
        return subject

    async def unsub(self, subject: str) -> None:
        await self.send(b"UNSUB %d\r\n" % self.sids[subject])

    async def pull(
        self,
        body: bytes | str | dict | int = b"",
        *,
        stream: str = "S",
        consumer: str = "C",
        reply: str | None = "",
        headers: bytes | None = None,
    ) -> str:
        """Send a pull request; by default to a fresh subscribed inbox, which is returned."""
        if reply == "":
            reply = await self.inbox()
        await self.send(pull_bytes(body, stream, consumer, reply or "", headers))
        return reply or ""

    async def pulls_together(self, bodies: list[bytes | str | dict | int]) -> list[str]:
        """Send several pull requests in one write (the server reads them at once); their fresh inboxes."""
        inboxes = [await self.inbox() for _ in bodies]
        await self.send(b"".join(pull_bytes(body, "S", "C", inbox) for body, inbox in zip(bodies, inboxes)))
        return inboxes

    def on(self, subject: str) -> list[Frame]:
        sid = self.sids[subject]
        return [f for f in self.frames if f.sid == sid]

    def raw(self, subject: str) -> list[bytes]:
        return [f.raw for f in self.on(subject)]

    async def wait(self, subject: str, count: int = 1, timeout: float = WAIT) -> list[Frame]:
        await self.until(lambda: len(self.on(subject)) >= count, f"{count} frame(s) on {subject}", timeout)
        return self.on(subject)

    async def wait_status(self, subject: str, timeout: float = WAIT) -> Frame:
        """Wait for the first status frame other than a heartbeat."""

        def final() -> list[Frame]:
            return [f for f in self.on(subject) if f.status and not f.status.startswith("100")]

        await self.until(lambda: bool(final()), f"a status on {subject}", timeout)
        return final()[0]

    async def barrier(self, stream: str = "S", consumer: str = "C") -> None:
        """A request that fails at once: once its 400 arrives, every earlier request has been processed."""
        inbox = await self.pull(b'{"batch":"x"}', stream=stream, consumer=consumer)
        await self.wait(inbox)

    # -- expected bytes

    def hmsg(
        self, subject: str, header: bytes, payload: bytes = b"", *, reply: str = "", to: str | None = None
    ) -> bytes:
        """A header frame as received on the subscription for ``to`` (default: ``subject``)."""
        sid = self.sids[to or subject]
        reply_part = b" " + reply.encode() if reply else b""
        return b"HMSG %s %d%s %d %d\r\n%s%s\r\n" % (
            subject.encode(),
            sid,
            reply_part,
            len(header),
            len(header) + len(payload),
            header,
            payload,
        )

    def msg(self, subject: str, reply: str, payload: bytes, *, to: str) -> bytes:
        return b"MSG %s %d %s %d\r\n%s\r\n" % (subject.encode(), self.sids[to], reply.encode(), len(payload), payload)


# --------------------------------------------------------------------------- environment


class PullEnv(Env):
    """One stream ``S`` (subjects ``s.>``, memory), a pull consumer ``C`` and a raw wire."""

    wire_class = PullWire

    async def start(self, *, consumer: dict | None = None, messages: int = 0, make_consumer: bool = True) -> PullWire:
        """Messages ``s.<i>``/``m<i>`` are stored before the consumer exists.

        The real server counts messages stored after a consumer was created into its num_pending
        asynchronously; a pull served before that catch-up shows a smaller pending count in
        the ack reply.  Creating the consumer afterwards makes every count exact.
        """
        await self.connect()
        await self.add_stream()
        for i in range(messages):
            await self.publish(f"s.{i}", b"m%d" % i)
        if make_consumer:
            await self.add_consumer("C", **(consumer or {}))
        wire: PullWire = await self.open_wire()
        return wire

    async def info(self, consumer: str = "C") -> dict:
        reply = await super().info(consumer)
        assert "error" not in reply, reply
        return reply

    async def waiting(self, consumer: str = "C") -> int:
        """num_waiting once every request sent so far on the first wire has been processed."""
        await self.wires[0].barrier(consumer=consumer)
        return int((await self.info(consumer))["num_waiting"])
