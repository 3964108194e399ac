"""JetStream advisories: subjects and payloads, as nats-server publishes them.

Advisories are fire and forget: nothing is built unless someone listens on
the subject.  Payload fields follow nats-server's struct order (a typed
event header, then the advisory's own fields).  The JetStream and the
consumers are seen through the small protocols below, so this module
imports nothing of the layers that call it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fakejs.core.clock import Clock
from fakejs.core.router import Router
from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import dumps

PREFIX = "$JS.EVENT.ADVISORY."
TYPE_PREFIX = "io.nats.jetstream.advisory.v1."


class Publisher(Protocol):
    """The JetStream an advisory is published through."""

    @property
    def router(self) -> Router: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def account_name(self) -> str: ...

    def nuid(self) -> str: ...

    def reply(self, subject: str, payload: bytes, hdr: bytes | None = None, empty_reply: bool = False) -> None: ...


class Named(Protocol):
    @property
    def name(self) -> str: ...


class AdvisedConsumer(Protocol):
    """A consumer an advisory is about: its name, its stream's name, its JetStream."""

    @property
    def name(self) -> str: ...

    @property
    def stream(self) -> Named: ...

    @property
    def js(self) -> Publisher: ...


def _event(js: Publisher, kind: str) -> dict[str, Any]:
    return {"type": TYPE_PREFIX + kind, "id": js.nuid(), "timestamp": gotime.rfc3339(js.clock.time_ns())}


def _send(js: Publisher, subject: str, build: Callable[[], dict[str, Any]]) -> None:
    if js.router.has_interest(subject):
        js.reply(subject, dumps(build()).encode())


def _consumer_subject(consumer: AdvisedConsumer, kind: str) -> str:
    return f"{PREFIX}CONSUMER.{kind}.{consumer.stream.name}.{consumer.name}"


def consumer_action(consumer: AdvisedConsumer, action: str) -> None:
    kind = {"create": "CREATED", "delete": "DELETED"}[action]
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, kind),
        lambda: {
            **_event(js, "consumer_action"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "action": action,
        },
    )


def terminated(consumer: AdvisedConsumer, sseq: int, dseq: int, deliveries: int, reason: str) -> None:
    js = consumer.js

    def build() -> dict[str, Any]:
        doc = {
            **_event(js, "terminated"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "consumer_seq": dseq,
            "stream_seq": sseq,
            "deliveries": deliveries,
        }
        if reason:
            doc["reason"] = reason
        return doc

    _send(js, _consumer_subject(consumer, "MSG_TERMINATED"), build)


def nak(consumer: AdvisedConsumer, sseq: int, dseq: int, deliveries: int) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "MSG_NAKED"),
        lambda: {
            **_event(js, "nak"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "consumer_seq": dseq,
            "stream_seq": sseq,
            "deliveries": deliveries,
        },
    )


def max_deliveries(consumer: AdvisedConsumer, sseq: int, deliveries: int) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "MAX_DELIVERIES"),
        lambda: {
            **_event(js, "max_deliver"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "stream_seq": sseq,
            "deliveries": deliveries,
        },
    )


def pause(consumer: AdvisedConsumer, paused: bool, until: gotime.GoTime | None) -> None:
    js = consumer.js

    def build() -> dict[str, Any]:
        doc: dict[str, Any] = {
            **_event(js, "consumer_pause"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "paused": paused,
        }
        doc["pause_until"] = until.text() if until is not None else gotime.ZERO_TIME
        return doc

    _send(js, _consumer_subject(consumer, "PAUSE"), build)


def pinned(consumer: AdvisedConsumer, group: str, pin_id: str) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "PINNED"),
        lambda: {
            **_event(js, "consumer_group_pinned"),
            "account": js.account_name,
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "group": group,
            "pinned_id": pin_id,
        },
    )


def unpinned(consumer: AdvisedConsumer, group: str, reason: str) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "UNPINNED"),
        lambda: {
            **_event(js, "consumer_group_unpinned"),
            "account": js.account_name,
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "group": group,
            "reason": reason,
        },
    )


def batch_abandoned(js: Publisher, stream: str, domain: str, batch_id: str, reason: str) -> None:
    """An atomic batch was dropped (``timeout``, ``large``, ``incomplete`` or ``unsupported``)."""
    _send(
        js,
        f"{PREFIX}STREAM.BATCH_ABANDONED.{stream}",
        lambda: {
            **_event(js, "stream_batch_abandoned"),
            "stream": stream,
            **({"domain": domain} if domain else {}),
            "batch": batch_id,
            "reason": reason,
        },
    )
