"""JetStream advisories: subjects and payloads, as nats-server publishes them.

Advisories are fire and forget: nothing is built unless someone listens on
the subject.  Payload fields follow nats-server's struct order (a typed
event header, then the advisory's own fields).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.gocompat import gotime

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.service import JetStream

PREFIX = "$JS.EVENT.ADVISORY."
TYPE_PREFIX = "io.nats.jetstream.advisory.v1."


def _event(js: JetStream, kind: str) -> dict[str, Any]:
    return {"type": TYPE_PREFIX + kind, "id": js.nuid(), "timestamp": gotime.rfc3339(js.clock.time_ns())}


def _send(js: JetStream, subject: str, build: Any) -> None:
    if js.router.has_interest(subject):
        js.reply(subject, js_encode(build()))


def js_encode(doc: dict[str, Any]) -> bytes:
    from fakejs.gocompat.gojson import dumps

    return dumps(doc).encode()


def _consumer_subject(consumer: Consumer, kind: str) -> str:
    return f"{PREFIX}CONSUMER.{kind}.{consumer.stream.name}.{consumer.name}"


def stream_action(js: JetStream, stream: str, action: str) -> None:
    kind = {"create": "CREATED", "delete": "DELETED", "modify": "UPDATED"}[action]
    _send(
        js,
        f"{PREFIX}STREAM.{kind}.{stream}",
        lambda: {**_event(js, "stream_action"), "stream": stream, "action": action},
    )


def consumer_action(consumer: Consumer, action: str) -> None:
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


def terminated(consumer: Consumer, sseq: int, dseq: int, deliveries: int, reason: str) -> None:
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


def nak(consumer: Consumer, sseq: int, dseq: int, deliveries: int) -> None:
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


def max_deliveries(consumer: Consumer, sseq: int, deliveries: int) -> None:
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


def pause(consumer: Consumer, paused: bool, until: gotime.GoTime | None) -> None:
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


def pinned(consumer: Consumer, group: str, pin_id: str) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "PINNED"),
        lambda: {
            **_event(js, "consumer_group_pinned"),
            "account": "$G",
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "group": group,
            "pinned_id": pin_id,
        },
    )


def unpinned(consumer: Consumer, group: str, reason: str) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "UNPINNED"),
        lambda: {
            **_event(js, "consumer_group_unpinned"),
            "account": "$G",
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "group": group,
            "reason": reason,
        },
    )
