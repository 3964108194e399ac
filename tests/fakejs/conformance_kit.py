"""Hand-rolled clients for the conformance tests: every pull and ack is a core NATS publish the test writes.

The tests show the exact bytes that break (or keep) a rule, so nothing here
hides a pull: :meth:`Puller.pull` publishes one ``CONSUMER.MSG.NEXT``
request and returns the ``PUB`` frame the server reads, which is what a
violation's evidence must hold.
"""

from __future__ import annotations

import json
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs import Server
from fakejs.gocompat.gotime import NS
from fakejs.testkit.conformance import Conformance, ConformanceReport, Violation
from tests.fakejs import clients
from tests.fakejs.clients import eventually

STREAM, CONSUMER = "S", "C"


def watch_of(server: Server) -> Conformance:
    """The server's conformance watch (the tests start servers with ``conformance=True``)."""
    watch = server.conformance_watch
    assert watch is not None
    return watch


def seconds(value: float) -> int:
    """A pull body's duration (nanoseconds)."""
    return int(value * NS)


def pub_frame(subject: str, reply: str, body: bytes) -> bytes:
    """The ``PUB`` a client sends, as the server reads it."""
    head = f"{subject} {reply}" if reply else subject
    return f"PUB {head} {len(body)}\r\n".encode() + body + b"\r\n"


async def connect(url: str, name: str) -> Client:
    return await nats.connect(url, name=name, reconnect_time_wait=0.05, max_reconnect_attempts=-1)


async def api(nc: Client, subject: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = await nc.request(subject, json.dumps(body).encode(), timeout=2)
    doc = json.loads(reply.data)
    assert "error" not in doc, doc
    return dict(doc)


async def setup(nc: Client, **consumer: Any) -> None:
    """Stream ``S`` (``s.>``, memory) and the durable pull consumer ``C`` with ``consumer`` settings."""
    await api(nc, f"$JS.API.STREAM.CREATE.{STREAM}", {"name": STREAM, "subjects": ["s.>"], "storage": "memory"})
    config = {"durable_name": CONSUMER, "ack_policy": "explicit", **consumer}
    await api(nc, f"$JS.API.CONSUMER.CREATE.{STREAM}.{CONSUMER}", {"stream_name": STREAM, "config": config})


async def publish(nc: Client, count: int) -> None:
    for index in range(count):
        await nc.request("s.a", b"m%d" % index, timeout=2)


class Puller:
    """One reply subject (one loop, to the watch) and everything that arrives on it.

    :class:`tests.fakejs.clients.Puller` does the pulling; this adds the
    pull's frame (the evidence a violation should carry) and waits on what arrives.
    """

    def __init__(self, nc: Client, consumer: str = CONSUMER) -> None:
        self.nc = nc
        self.raw = clients.Puller(nc, STREAM, consumer)
        self.subject = self.raw.subject
        self.inbox = self.raw.inbox

    @property
    def got(self) -> list[Msg]:
        return self.raw.got

    async def start(self) -> Puller:
        await self.raw.start()
        await self.nc.flush()
        return self

    async def pull(self, **body: Any) -> bytes:
        """Publish one pull; returns its ``PUB`` frame."""
        return pub_frame(self.subject, self.inbox, await self.raw.pull(**body))

    def messages(self) -> list[Msg]:
        return self.raw.messages()

    def statuses(self) -> list[str]:
        return [f"{code} {description}".strip() for code, description in self.raw.statuses()]

    async def wait_messages(self, count: int) -> list[Msg]:
        await eventually(lambda: len(self.messages()) >= count, what=f"{count} messages on {self.inbox}")
        return self.messages()

    async def wait_status(self, text: str) -> None:
        await eventually(lambda: any(s.startswith(text) for s in self.statuses()), what=f"status {text}")


def only(report: ConformanceReport, rule: str) -> Violation:
    """The one violation of ``rule``, after checking no other rule was broken."""
    assert report.broken() == {rule}, report.text()
    found = report.of(rule)
    assert len(found) == 1, report.text()
    return found[0]


def check(violation: Violation, client: str, evidence: bytes, consumer: str = CONSUMER) -> None:
    """The violation names the client and the consumer, and carries the offending frame."""
    assert (violation.client_name, violation.stream, violation.consumer) == (client, STREAM, consumer)
    assert evidence in violation.evidence, (violation.evidence, evidence)
