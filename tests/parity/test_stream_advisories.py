"""Stream action advisories and the API audit advisory, byte for byte.

nats-server publishes, in the account of the stream:

* ``$JS.EVENT.ADVISORY.STREAM.CREATED|UPDATED|DELETED.<stream>``
  (``io.nats.jetstream.advisory.v1.stream_action``: type, id, timestamp,
  stream, action ``create``/``modify``/``delete``, domain when one is set),
  from the stream's own send queue: in order with the advisories of its
  consumers (a stream's delete comes after its consumers' deletes), and
  never for a create that finds the same stream already there or for a
  refused request;
* ``$JS.EVENT.ADVISORY.API`` (``api_audit``) after every API reply, with
  an empty reply-to in its ``MSG`` line: the server's name, the requester's
  client info, the subject, the request (left out when empty) and the reply
  exactly as sent;
* ``$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>`` (``consumer_ack``
  metric) for the explicit acks a consumer with ``sample_freq`` samples
  (all of them at 100%), with ``ack_time`` the nanoseconds since delivery;
* an abandoned atomic batch on ``STREAM.BATCH_ABANDONED.<stream>`` in the
  stream's account and, naming the ``account``, in the system account, both
  with an empty reply-to.

Ids, timestamps, server names, the client's id and RTT differ between any
two runs; they are replaced by placeholders before comparing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nats
from nats.js.api import ConsumerConfig

from tests.harness.configured import configured_servers
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT
from tests.harness.wire import Frame, Wire

ADVISORY = "$JS.EVENT.ADVISORY."
AUDIT = ADVISORY + "API"
TYPE = "io.nats.jetstream.advisory.v1."
STREAM = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory"}).encode()
STREAM_WIDER = json.dumps({"name": "S", "subjects": ["s.>", "t.>"], "storage": "memory"}).encode()
CONSUMER = json.dumps({"stream_name": "S", "config": {"durable_name": "C", "ack_policy": "explicit"}}).encode()
CONNECT = {"name": "watcher", "lang": "raw", "version": "1.0"}

_ID = re.compile(r'"id":"[0-9A-Za-z]{22}"')
_TIMESTAMP = re.compile(r'"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z"')


class Watcher(Wire):
    """A raw connection watching ``$JS.EVENT.>`` (sid 1) that sends API requests with replies on ``_R.>`` (sid 2)."""

    @classmethod
    async def watching(cls, target: Target, **login: str) -> Watcher:
        wire = cls(await RawClient.connect(target.host, target.port), target)
        await wire.until(lambda: wire.infos >= 1, "INFO")
        options = {"verbose": False, "pedantic": False, "headers": True, "protocol": 1, **CONNECT, **login}
        await wire.send(b"CONNECT " + json.dumps(options).encode() + b"\r\nSUB $JS.EVENT.> 1\r\nSUB _R.> 2\r\n")
        await wire.ping()
        return wire

    def audits(self) -> list[Frame]:
        return [f for f in self.frames if f.subject == AUDIT]

    def actions(self) -> list[Frame]:
        """The stream and consumer advisories so far (everything on ``$JS.EVENT`` but the audit)."""
        return [f for f in self.frames if f.sid == 1 and f.subject != AUDIT]

    async def request(self, subject: str, body: bytes = b"") -> tuple[Frame, dict[str, Any]]:
        """Send a request; its reply and its audit advisory (which nats-server sends after the reply)."""
        seen = len(self.audits())
        await self.send(b"PUB %s _R.x %d\r\n%s\r\n" % (subject.encode(), len(body), body))
        await self.until(lambda: len(self.audits()) > seen, f"the audit advisory of {subject}")
        audit = self.audits()[seen]
        replies = [f for f in self.frames[: self.frames.index(audit)] if f.sid == 2]
        assert replies, f"the audit of {subject} came before its reply"
        assert audit.raw.startswith(b"MSG " + AUDIT.encode() + b" 1  "), audit.raw[:60]  # empty reply-to
        return replies[-1], json.loads(audit.payload)

    async def actions_until(self, count: int) -> list[str]:
        await self.until(lambda: len(self.actions()) >= count, f"{count} stream and consumer advisories")
        return [action_text(frame) for frame in self.actions()]

    async def actions_to_the_stream_delete(self, expected: list[str]) -> list[str]:
        """The advisories of a stream's life, ``expected`` ending in its delete (one nats-server lost filled in).

        nats-server 2.15.1 sends a stream's delete advisory through the
        stream's own send queue, which the deleted stream stops, now and then
        before the advisory has gone: on nats-server it may be missing (never
        different).  A later request's audit comes after it when it is sent.
        """
        if self.target is not None and self.target.is_fake:
            return await self.actions_until(len(expected))
        await self.actions_until(len(expected) - 1)
        await self.request("$JS.API.INFO")
        found = [action_text(frame) for frame in self.actions()]
        return expected if found == expected[:-1] else found


def action_text(frame: Frame) -> str:
    """An advisory's subject and JSON as sent, its id and timestamp replaced by placeholders."""
    assert frame.header is None and not frame.reply, frame.raw
    text, ids = _ID.subn('"id":"<id>"', frame.payload.decode())
    text, stamps = _TIMESTAMP.subn('"timestamp":"<ts>"', text)
    assert (ids, stamps) == (1, 1), frame.raw
    return f"{frame.subject} {text}"


def stream_action(stream: str, action: str, domain: str = "") -> str:
    subject = {"create": "CREATED", "modify": "UPDATED", "delete": "DELETED"}[action]
    tail = f',"domain":"{domain}"' if domain else ""
    doc = (
        f'{{"type":"{TYPE}stream_action","id":"<id>","timestamp":"<ts>","stream":"{stream}","action":"{action}"{tail}}}'
    )
    return f"{ADVISORY}STREAM.{subject}.{stream} {doc}"


def consumer_action(stream: str, consumer: str, action: str, domain: str = "") -> str:
    subject = {"create": "CREATED", "delete": "DELETED"}[action]
    tail = f',"domain":"{domain}"' if domain else ""
    doc = (
        f'{{"type":"{TYPE}consumer_action","id":"<id>","timestamp":"<ts>","stream":"{stream}",'
        f'"consumer":"{consumer}","action":"{action}"{tail}}}'
    )
    return f"{ADVISORY}CONSUMER.{subject}.{stream}.{consumer} {doc}"


def audit_shape(audit: dict[str, Any], reply: Frame) -> str:
    """The audit advisory with what differs between runs replaced (its response must be the reply as sent)."""
    assert audit.get("response") == reply.payload.decode(), (audit.get("response"), reply.payload)
    assert isinstance(audit["client"].get("id"), int) and audit["client"].get("rtt", 0) > 0, audit["client"]
    assert audit["client"]["server"] == audit["server"], audit
    placeholders = {"id": "<id>", "timestamp": "<ts>", "server": "<server>", "response": "<reply>"}
    client = {"start": "<ts>", "id": "<cid>", "rtt": "<rtt>", "server": "<server>"}
    shaped = {key: placeholders.get(key, value) for key, value in audit.items()}
    shaped["client"] = {key: client.get(key, value) for key, value in audit["client"].items()}
    return json.dumps(shaped)


def expected_audit(subject: str, request: bytes, acc: str = "$G", user: str = "", domain: str = "") -> str:
    client: dict[str, Any] = {"start": "<ts>", "host": "127.0.0.1", "id": "<cid>", "acc": acc}
    if user:
        client["user"] = user
    client |= {"name": "watcher", "lang": "raw", "ver": "1.0", "rtt": "<rtt>", "server": "<server>"}
    client |= {"kind": "Client", "client_type": "nats"}
    doc: dict[str, Any] = {"type": TYPE + "api_audit", "id": "<id>", "timestamp": "<ts>", "server": "<server>"}
    doc |= {"client": client, "subject": subject}
    if request:
        doc["request"] = request.decode()
    doc["response"] = "<reply>"
    if domain:
        doc["domain"] = domain
    return json.dumps(doc)


async def test_stream_lifecycle_advisories_and_their_audits(target: Target) -> None:
    wire = await Watcher.watching(target)
    steps: list[tuple[str, bytes, str]] = [
        ("$JS.API.STREAM.CREATE.S", STREAM, "stream_create_response"),
        ("$JS.API.STREAM.UPDATE.S", STREAM_WIDER, "stream_update_response"),
        ("$JS.API.STREAM.UPDATE.S", STREAM_WIDER, "stream_update_response"),  # unchanged: still "modify"
        ("$JS.API.STREAM.CREATE.S", STREAM_WIDER, "stream_create_response"),  # the same stream: no advisory
        ("$JS.API.STREAM.CREATE.S", STREAM, "stream_create_response"),  # another config: refused, no advisory
        ("$JS.API.CONSUMER.DURABLE.CREATE.S.C", CONSUMER, "consumer_create_response"),
        ("$JS.API.STREAM.INFO.NOPE", b"", "stream_info_response"),
        ("$JS.API.STREAM.DELETE.S", b"", "stream_delete_response"),
        ("$JS.API.STREAM.DELETE.S", b"", "stream_delete_response"),  # gone: refused, no advisory
    ]
    for subject, body, response_type in steps:
        reply, audit = await wire.request(subject, body)
        assert json.loads(reply.payload)["type"] == "io.nats.jetstream.api.v1." + response_type
        assert audit_shape(audit, reply) == expected_audit(subject, body)
    # Go's JSON: the request and reply, strings in the audit, have their "<>&" escaped.
    assert b'\\"s.\\u003e\\"' in wire.audits()[0].payload, wire.audits()[0].payload
    lifecycle = [
        stream_action("S", "create"),
        stream_action("S", "modify"),
        stream_action("S", "modify"),
        consumer_action("S", "C", "create"),
        consumer_action("S", "C", "delete"),
        stream_action("S", "delete"),
    ]
    assert await wire.actions_to_the_stream_delete(lifecycle) == lifecycle
    for frame in wire.actions():  # sent with no reply-to: one space before the size
        assert frame.raw.startswith(b"MSG %s 1 %d\r\n" % (frame.subject.encode(), len(frame.payload))), frame.raw
    await wire.close()


async def test_advisories_name_the_jetstream_domain(make_target: Any) -> None:
    target = await make_target(Settings(jetstream_domain="HUB"))
    wire = await Watcher.watching(target)
    for subject, body in (
        ("$JS.API.STREAM.CREATE.S", STREAM),
        ("$JS.API.STREAM.UPDATE.S", STREAM_WIDER),
        ("$JS.API.CONSUMER.DURABLE.CREATE.S.C", CONSUMER),
        ("$JS.API.STREAM.DELETE.S", b""),
    ):
        reply, audit = await wire.request(subject, body)
        assert audit_shape(audit, reply) == expected_audit(subject, body, domain="HUB")
    lifecycle = [
        stream_action("S", "create", "HUB"),
        stream_action("S", "modify", "HUB"),
        consumer_action("S", "C", "create", "HUB"),
        consumer_action("S", "C", "delete", "HUB"),
        stream_action("S", "delete", "HUB"),
    ]
    assert await wire.actions_to_the_stream_delete(lifecycle) == lifecycle
    await wire.close()


ACCOUNTS = """
accounts {
  A { users: [ {user: a, password: a} ], jetstream: enabled }
  B { users: [ {user: b, password: b} ], jetstream: enabled }
}
"""


async def test_advisories_stay_in_the_stream_account(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path, Settings()) as start:
        target = await start(ACCOUNTS)
        in_a = await Watcher.watching(target, **{"user": "a", "pass": "a"})
        in_b = await Watcher.watching(target, **{"user": "b", "pass": "b"})
        reply, audit = await in_a.request("$JS.API.STREAM.CREATE.S", STREAM)
        assert audit_shape(audit, reply) == expected_audit("$JS.API.STREAM.CREATE.S", STREAM, acc="A", user="a")
        assert await in_a.actions_until(1) == [stream_action("S", "create")]
        # B's own stream, after A's: B hears only of its own, and no audit of A's request.
        await in_b.request("$JS.API.STREAM.CREATE.T", STREAM.replace(b'"S"', b'"T"'))
        assert await in_b.actions_until(1) == [stream_action("T", "create")]
        assert [json.loads(f.payload)["subject"] for f in in_b.audits()] == ["$JS.API.STREAM.CREATE.T"]
        await in_a.close()
        await in_b.close()


async def test_a_client_watching_advisories_hears_of_the_stream_it_creates(target: Target) -> None:
    nc = await nats.connect(target.url)
    try:
        watching = await nc.subscribe("$JS.EVENT.ADVISORY.>")
        js = nc.jetstream()
        await js.add_stream(name="ORDERS", subjects=["orders.>"])
        seen = []
        while not any(m.subject == ADVISORY + "STREAM.CREATED.ORDERS" for m in seen):
            seen.append(await watching.next_msg(timeout=WAIT))
        created = next(m for m in seen if m.subject.startswith(ADVISORY + "STREAM."))
        doc = json.loads(created.data)
        assert (doc["type"], doc["stream"], doc["action"]) == (TYPE + "stream_action", "ORDERS", "create")
        await js.delete_stream("ORDERS")
        while not any(m.subject == ADVISORY + "STREAM.DELETED.ORDERS" for m in seen):
            seen.append(await watching.next_msg(timeout=WAIT))
    finally:
        await nc.close()


METRIC = "$JS.EVENT.METRIC.CONSUMER.ACK."


async def _acked_twice(target: Target, **consumer: Any) -> list[Any]:
    """Two messages fetched by a pull consumer: the first acked, the second nak'ed; what ``$JS.EVENT.>`` heard."""
    nc = await nats.connect(target.url)
    try:
        heard = await nc.subscribe("$JS.EVENT.>")
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        for n in range(2):
            await js.publish("s.x", str(n).encode())
        sub = await js.pull_subscribe("s.x", durable="C", stream="S", config=ConsumerConfig(**consumer))
        first, second = await sub.fetch(2, timeout=WAIT)
        await first.ack_sync()
        await second.nak()
        events = []
        while not any(m.subject.startswith(ADVISORY + "CONSUMER.MSG_NAKED.") for m in events):
            events.append(await heard.next_msg(timeout=WAIT))
        return [m for m in events if m.subject.startswith((METRIC, ADVISORY + "CONSUMER.MSG_NAKED."))]
    finally:
        await nc.close()


async def test_a_sampled_ack_is_measured(target: Target) -> None:
    metric, naked = await _acked_twice(target, sample_freq="100%")
    assert metric.subject == METRIC + "S.C" and naked.subject == ADVISORY + "CONSUMER.MSG_NAKED.S.C"
    doc = json.loads(metric.data)
    assert isinstance(doc["ack_time"], int) and doc["ack_time"] > 0, doc
    text = re.sub(r'"ack_time":\d+', '"ack_time":"<ns>"', _TIMESTAMP.sub('"timestamp":"<ts>"', metric.data.decode()))
    assert _ID.sub('"id":"<id>"', text) == (
        '{"type":"io.nats.jetstream.metric.v1.consumer_ack","id":"<id>","timestamp":"<ts>","stream":"S",'
        '"consumer":"C","consumer_seq":1,"stream_seq":1,"ack_time":"<ns>","deliveries":1}'
    )


async def test_acks_are_not_measured_without_a_sample_frequency(target: Target) -> None:
    assert [m.subject for m in await _acked_twice(target)] == [ADVISORY + "CONSUMER.MSG_NAKED.S.C"]


SYSTEM = """
accounts {
  A { users: [ {user: a, password: a} ], jetstream: enabled }
  SYS { users: [ {user: sys, password: sys} ] }
}
system_account: SYS
"""


def batch_message(seq: int) -> bytes:
    header = b"NATS/1.0\r\nNats-Batch-Id: G\r\nNats-Batch-Sequence: %d\r\n\r\n" % seq
    return b"HPUB s.a _R.b %d %d\r\n%s\r\n" % (len(header), len(header), header)


async def test_an_abandoned_batch_is_told_to_the_system_account_too(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path, Settings()) as start:
        target = await start(SYSTEM)
        in_a = await Watcher.watching(target, **{"user": "a", "pass": "a"})
        in_sys = await Watcher.watching(target, **{"user": "sys", "pass": "sys"})
        atomic = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_atomic": True}).encode()
        await in_a.request("$JS.API.STREAM.CREATE.S", atomic)
        await in_a.send(batch_message(1) + batch_message(3))  # a gap: the batch is incomplete
        subject = ADVISORY + "STREAM.BATCH_ABANDONED.S"
        body = '"stream":"S","batch":"G","reason":"incomplete"}'
        head = f'{{"type":"{TYPE}stream_batch_abandoned","id":"<id>","timestamp":"<ts>",'
        for wire, expected in ((in_a, head + body), (in_sys, head + '"account":"A",' + body)):
            await wire.until(lambda w=wire: any(f.subject == subject for f in w.frames), subject)
            frame = next(f for f in wire.frames if f.subject == subject)
            assert frame.raw.startswith(b"MSG " + subject.encode() + b" 1  "), frame.raw[:80]  # empty reply-to
            assert action_text(frame) == f"{subject} {expected}"
        await in_a.close()
        await in_sys.close()
