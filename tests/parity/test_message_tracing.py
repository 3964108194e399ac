"""Message tracing: the trace event of a message with ``Nats-Trace-Dest`` (or a sampled ``traceparent``).

Both servers start from the same configuration; the JSON they send on the
trace destination is compared as text (field order and omissions
included) once server ids, sequence numbers, times and connection ids
are replaced by fixed names.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import cramjam
import nats
import pytest
from nats.aio.client import Client
from nats.aio.subscription import Subscription

from tests.harness.configured import Start, configured_servers
from tests.harness.targets import Target
from tests.harness.wait import WAIT

CONFIG = """
accounts {
  A {
    users: [
      {user: a, password: a}
      {user: d, password: d, permissions: {subscribe: {allow: ">", deny: "orders.new"}}}
      {user: p, password: p, permissions: {publish: {deny: "secret"}}}
    ]
    mappings: { "old": "orders.new" }
    exports: [{stream: "ev.>"}, {service: "svc.>"}]
  }
  B {
    users: [{user: b, password: b}]
    imports: [
      {stream: {account: A, subject: "ev.>"}, prefix: "from.a"}
      {service: {account: A, subject: "svc.>"}, to: "remote.>"}
    ]
    msg_trace: {dest: "sampled.traces", sampling: 100}
  }
}
"""

SERVER_KEYS = ["name", "host", "id", "ver", "feature_flags", "jetstream", "flags", "seq", "time"]
TRACE = {"Nats-Trace-Dest": "traces"}


@pytest.fixture
async def server(target_kind: str, tmp_path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path) as start:
        yield start


async def connect(target: Target, user: str, name: str = "") -> Client:
    options: dict[str, Any] = {"user": user, "password": user, "allow_reconnect": False}
    if name:
        options["name"] = name
    return await nats.connect(target.url, **options)


def normalized(data: bytes, names: dict[int, str]) -> str:
    """The trace event as text, with what differs from run to run replaced."""
    event = json.loads(data)
    server = event["server"]
    assert list(server) == SERVER_KEYS and server["ver"] == "2.15.1" and server["host"] == "127.0.0.1"
    event["server"] = "SERVER"
    for item in event["events"]:
        item["ts"] = "TS"
        if "cid" in item:
            item["cid"] = names[item["cid"]]
    return json.dumps(event)


def expected(request: dict[str, Any], events: list[dict[str, Any]]) -> str:
    return json.dumps({"server": "SERVER", "request": request, "events": events})


def size(headers: dict[str, str], payload: bytes) -> int:
    """A message's size as nats-py sends it: its header block and payload."""
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return len(f"NATS/1.0\r\n{lines}\r\n") + len(payload)


def ingress(cid: str, subject: str, account: str = "A", name: str = "", error: str = "") -> dict[str, Any]:
    event: dict[str, Any] = {"type": "in", "ts": "TS", "kind": 0, "cid": cid}
    if name:
        event["name"] = name
    event.update(acc=account, subj=subject)
    if error:
        event["error"] = error
    return event


def egress(cid: str, sub: str, name: str = "", queue: str = "", error: str = "") -> dict[str, Any]:
    event: dict[str, Any] = {"type": "eg", "ts": "TS", "kind": 0, "cid": cid}
    if name:
        event["name"] = name
    event["sub"] = sub
    if queue:
        event["queue"] = queue
    if error:
        event["error"] = error
    return event


async def next_event(sub: Subscription, names: dict[int, str]) -> str:
    msg = await sub.next_msg(WAIT)
    assert msg.headers is None
    return normalized(msg.data, names)


def names_of(**clients: Client) -> dict[int, str]:
    return {client.client_id: name for name, client in clients.items() if client.client_id is not None}


async def test_publish_to_subscribers_queue_and_denied_egress(server: Start) -> None:
    target = await server(CONFIG)
    pub, app, denied = await connect(target, "a"), await connect(target, "a", "app"), await connect(target, "d")
    names = names_of(pub=pub, app=app, denied=denied)
    traces = await pub.subscribe("traces")
    plain, grouped = await app.subscribe("orders.new"), await app.subscribe("orders.new", queue="q")
    await denied.subscribe("orders.>")
    for client in (pub, app, denied):
        await client.flush()
    await pub.publish("orders.new", b"hello", headers=TRACE)
    assert await next_event(traces, names) == expected(
        {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"hello")},
        [
            ingress("pub", "orders.new"),
            egress("denied", "orders.>", error="Not delivered because subscription denies this subject"),
            egress("app", "orders.new", name="app"),
            egress("app", "orders.new", name="app", queue="q"),
        ],
    )
    assert (await plain.next_msg(WAIT)).data == b"hello"
    assert (await grouped.next_msg(WAIT)).data == b"hello"
    for client in (pub, app, denied):
        await client.close()


async def test_trace_only_is_not_delivered(server: Start) -> None:
    target = await server(CONFIG)
    pub, app = await connect(target, "a"), await connect(target, "a", "app")
    names = names_of(pub=pub, app=app)
    traces = await pub.subscribe("traces")
    plain = await app.subscribe("orders.new")
    await app.flush()
    await pub.flush()
    await pub.publish("orders.new", b"only", headers={**TRACE, "Nats-Trace-Only": "On"})
    assert await next_event(traces, names) == expected(
        {
            "header": {"Nats-Trace-Dest": ["traces"], "Nats-Trace-Only": ["On"]},
            "msgsize": size({**TRACE, "Nats-Trace-Only": "On"}, b"only"),
        },
        [ingress("pub", "orders.new"), egress("app", "orders.new", name="app")],
    )
    await pub.publish("orders.new", b"after")
    assert (await plain.next_msg(WAIT)).data == b"after"
    await pub.close()
    await app.close()


async def test_subject_mapping_and_no_interest(server: Start) -> None:
    target = await server(CONFIG)
    pub, app = await connect(target, "a", "publisher"), await connect(target, "a")
    names = names_of(pub=pub, app=app)
    traces = await pub.subscribe("traces")
    await app.subscribe("orders.new")
    await app.flush()
    await pub.flush()
    await pub.publish("old", b"m", headers=TRACE)
    assert await next_event(traces, names) == expected(
        {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"m")},
        [
            ingress("pub", "old", name="publisher"),
            {"type": "sm", "ts": "TS", "to": "orders.new"},
            egress("app", "orders.new"),
        ],
    )
    await pub.publish("nobody", b"m", headers=TRACE)
    assert await next_event(traces, names) == expected(
        {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"m")},
        [ingress("pub", "nobody", name="publisher")],
    )
    await pub.close()
    await app.close()


async def test_publish_denied_is_an_ingress_error(server: Start) -> None:
    target = await server(CONFIG)
    pub = await connect(target, "p")
    names = names_of(pub=pub)
    traces = await pub.subscribe("traces")
    await pub.flush()
    await pub.publish("secret", b"m", headers=TRACE)
    assert await next_event(traces, names) == expected(
        {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"m")},
        [ingress("pub", "secret", error='Permissions Violation for Publish to "secret"')],
    )
    await pub.close()


async def test_service_import_and_stream_export(server: Start) -> None:
    target = await server(CONFIG)
    a, b = await connect(target, "a", "exporter"), await connect(target, "b", "importer")
    names = names_of(a=a, b=b)
    traces_a, traces_b = await a.subscribe("traces"), await b.subscribe("traces")
    service, events = await a.subscribe("svc.>"), await b.subscribe("from.a.ev.>")
    await a.flush()
    await b.flush()
    await b.publish("remote.x", b"req", headers=TRACE)
    assert await next_event(traces_b, names) == expected(
        {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"req")},
        [
            ingress("b", "remote.x", account="B", name="importer"),
            {"type": "si", "ts": "TS", "acc": "A", "from": "remote.x", "to": "svc.x"},
        ],
    )
    request = await service.next_msg(WAIT)
    assert request.subject == "svc.x" and request.headers is not None
    # Past the import the message goes on untraced: its destination disabled, moved after the request info.
    assert list(request.headers) == ["Nats-Request-Info", "Nats-Trace-Dest"]
    assert request.headers["Nats-Trace-Dest"] == "trace disabled"
    await a.publish("ev.one", b"e", headers=TRACE)
    assert await next_event(traces_a, names) == expected(
        {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"e")},
        [
            ingress("a", "ev.one", name="exporter"),
            {"type": "se", "ts": "TS", "acc": "B", "to": "from.a.ev.one"},
        ],
    )
    exported = await events.next_msg(WAIT)
    assert exported.subject == "from.a.ev.one" and exported.headers == TRACE
    await a.close()
    await b.close()


async def test_traceparent_sampling_uses_the_account_destination(server: Start) -> None:
    target = await server(CONFIG)
    b = await connect(target, "b")
    names = names_of(b=b)
    sampled, own = await b.subscribe("sampled.traces"), await b.subscribe("from.a.ev.>")
    await b.flush()
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-"
    await b.publish("from.a.ev.z", b"tp", headers={"traceparent": parent + "00"})
    await b.publish("from.a.ev.z", b"tp", headers={"traceparent": parent + "01"})
    assert await next_event(sampled, names) == expected(
        {"header": {"traceparent": [parent + "01"]}, "msgsize": size({"traceparent": parent + "01"}, b"tp")},
        [ingress("b", "from.a.ev.z", account="B"), egress("b", "from.a.ev.>")],
    )
    assert [(await own.next_msg(WAIT)).data for _ in range(2)] == [b"tp", b"tp"]
    await b.publish("from.a.ev.z", b"plain")
    assert (await own.next_msg(WAIT)).data == b"plain"
    assert sampled.pending_msgs == 0
    await b.close()


async def test_jetstream_event(server: Start) -> None:
    target = await server("")
    nc = await nats.connect(target.url, name="js", allow_reconnect=False)
    names = names_of(nc=nc)
    js = nc.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    await js.add_stream(name="INT", subjects=["int.>"], retention="interest")
    traces = await nc.subscribe("traces")
    await nc.flush()
    global_trace = {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"o")}
    ack = await js.publish("orders.new", b"o", headers=TRACE)
    assert ack.seq == 1
    assert await next_event(traces, names) == expected(
        global_trace,
        [
            ingress("nc", "orders.new", account="$G", name="js"),
            {"type": "js", "ts": "TS", "stream": "ORDERS", "subject": "orders.new"},
        ],
    )
    await nc.publish("orders.new", b"o", headers={**TRACE, "Nats-Trace-Only": "1"})
    assert await next_event(traces, names) == expected(
        {
            "header": {"Nats-Trace-Dest": ["traces"], "Nats-Trace-Only": ["1"]},
            "msgsize": size({**TRACE, "Nats-Trace-Only": "1"}, b"o"),
        },
        [
            ingress("nc", "orders.new", account="$G", name="js"),
            {"type": "js", "ts": "TS", "stream": "ORDERS", "subject": "orders.new"},
        ],
    )
    await js.publish("int.x", b"o", headers=TRACE)
    assert await next_event(traces, names) == expected(
        {"header": {"Nats-Trace-Dest": ["traces"]}, "msgsize": size(TRACE, b"o")},
        [
            ingress("nc", "int.x", account="$G", name="js"),
            {"type": "js", "ts": "TS", "stream": "INT", "subject": "int.x", "nointerest": True},
        ],
    )
    assert (await js.stream_info("ORDERS")).state.messages == 1
    stored = await js.get_msg("ORDERS", 1)
    assert stored.headers == {"Nats-Trace-Dest": "trace disabled"}
    await asyncio.sleep(0)
    await nc.close()


JS_ERRORS = [
    ({"Nats-Expected-Last-Sequence": "99"}, "last sequence mismatch: 99 vs 1"),
    ({"Nats-Expected-Last-Subject-Sequence": "7"}, "last sequence by subject mismatch: 7 vs 1"),
    ({"Nats-Expected-Last-Msg-Id": "abc"}, 'last msgid mismatch: "abc" vs "first"'),
    ({"Nats-Expected-Stream": "OTHER"}, "expected stream does not match"),
    ({"Nats-Msg-Id": "first"}, "msgid is duplicate"),
    ({"Nats-TTL": "5s"}, "message TTL disabled"),
    ({"Nats-Rollup": "all"}, "rollup not permitted"),
    ({"Nats-Incr": "1"}, "message counters is disabled (10168)"),
]


async def test_jetstream_event_errors_are_the_server_own(server: Start) -> None:
    target = await server("")
    nc = await nats.connect(target.url, allow_reconnect=False)
    js = nc.jetstream()
    await js.add_stream(name="E", subjects=["e.>"], max_msg_size=200)
    await js.add_stream(name="FULL", subjects=["full.>"], max_msgs=1, discard="new")
    traces = await nc.subscribe("traces")
    await nc.flush()
    await js.publish("e.x", b"first", headers={"Nats-Msg-Id": "first"})
    await js.publish("full.x", b"first")
    cases = [*JS_ERRORS, ({"Big": "x" * 300}, "maximum payload exceeded")]
    for extra, error in cases:
        await nc.request("e.x", b"m", headers={**TRACE, **extra}, timeout=WAIT)
        event = json.loads((await traces.next_msg(WAIT)).data)["events"][-1]
        assert (event["type"], event["stream"], event.get("error")) == ("js", "E", error), extra
    await nc.request("full.x", b"m", headers=TRACE, timeout=WAIT)
    event = json.loads((await traces.next_msg(WAIT)).data)["events"][-1]
    # Refused by the store: the event names the subject first (nats-server's order of checks).
    assert event == {
        "type": "js",
        "ts": event["ts"],
        "stream": "FULL",
        "subject": "full.x",
        "error": "maximum messages exceeded",
    }
    await nc.close()


@pytest.mark.parametrize(("accept", "encoding"), [("gzip", "gzip"), ("SNAPPY", "snappy"), ("deflate", "identity")])
async def test_accept_encoding_compresses_the_event(server: Start, accept: str, encoding: str) -> None:
    target = await server(CONFIG)
    pub = await connect(target, "a")
    names = names_of(pub=pub)
    traces = await pub.subscribe("traces")
    await pub.flush()
    headers = {**TRACE, "Accept-Encoding": accept}
    await pub.publish("nobody", b"m", headers=headers)
    msg = await traces.next_msg(WAIT)
    assert msg.headers == {"Content-Encoding": encoding}
    data = msg.data
    if encoding == "gzip":
        data = gzip.decompress(data)
    elif encoding == "snappy":
        data = bytes(cramjam.snappy.decompress(data))
    assert normalized(data, names) == expected(
        {"header": {"Accept-Encoding": [accept], "Nats-Trace-Dest": ["traces"]}, "msgsize": size(headers, b"m")},
        [ingress("pub", "nobody")],
    )
    await pub.publish("nobody", b"m", headers={**TRACE, "accept-encoding": "gzip"})
    assert (await traces.next_msg(WAIT)).headers is None
    await pub.close()


TRACE_ONLY = {**TRACE, "Nats-Trace-Only": "true"}


async def trace_only_reply(nc: Client, traces: Subscription, subject: str, extra: dict[str, str]) -> tuple[Any, Any]:
    """A trace-only request: the stream's answer and the ``js`` event's error."""
    reply = json.loads((await nc.request(subject, b"m", headers={**TRACE_ONLY, **extra}, timeout=WAIT)).data)
    event = json.loads((await traces.next_msg(WAIT)).data)["events"][-1]
    return reply.get("error", reply), event.get("error")


async def test_trace_only_runs_the_stream_checks_and_answers_refusals(server: Start) -> None:
    target = await server("")
    nc = await nats.connect(target.url, allow_reconnect=False)
    js = nc.jetstream()
    await js.add_stream(name="E", subjects=["e.>"], max_msg_size=200)
    await nc.request("$JS.API.STREAM.CREATE.C", b'{"name":"C","subjects":["c.>"],"allow_msg_counter":true}', WAIT)
    traces = await nc.subscribe("traces")
    await nc.flush()
    await js.publish("e.x", b"first", headers={"Nats-Msg-Id": "first"})
    answers = []
    for extra, _ in [*JS_ERRORS, ({"Big": "x" * 300}, "")]:
        answers.append(await trace_only_reply(nc, traces, "e.x", extra))
    answers.append(await trace_only_reply(nc, traces, "c.x", {}))
    answers.append(await trace_only_reply(nc, traces, "c.x", {"Nats-Incr": "x"}))
    await nc.request("$JS.API.STREAM.CREATE.B", b'{"name":"B","subjects":["b.>"],"allow_atomic":true}', WAIT)
    answers.append(await trace_only_reply(nc, traces, "e.x", {"Nats-Batch-Id": "b1", "Nats-Batch-Sequence": "1"}))
    answers.append(await trace_only_reply(nc, traces, "b.x", {"Nats-Batch-Id": "b2", "Nats-Batch-Sequence": "2"}))
    answers.append(await trace_only_reply(nc, traces, "b.x", {"Nats-Batch-Id": "b3"}))
    codes = [(answer.get("err_code", answer), error) for answer, error in answers]
    assert codes == [
        (10071, "last sequence mismatch: 99 vs 1"),
        (10071, "last sequence by subject mismatch: 7 vs 1"),
        (10070, 'last msgid mismatch: "abc" vs "first"'),
        (10060, "expected stream does not match"),
        ({"stream": "E", "seq": 1, "duplicate": True}, "msgid is duplicate"),
        (10166, "message TTL disabled"),
        (10111, "rollup not permitted"),
        (10168, "message counters is disabled (10168)"),
        (10054, "maximum payload exceeded"),
        (10169, "message counter increment is missing (10169)"),
        (10171, "message counter increment is invalid (10171)"),
        (10174, "atomic publish is disabled (10174)"),
        (10176, "atomic publish batch is incomplete (10176)"),
        (10175, "atomic publish sequence is missing (10175)"),
    ]
    # A trace-only message that passes every check gets no answer: the next one on the inbox is a PubAck.
    inbox = await nc.subscribe("inbox")
    await nc.publish("c.x", b"", reply="inbox", headers={**TRACE_ONLY, "Nats-Incr": "1"})
    event = json.loads((await traces.next_msg(WAIT)).data)["events"][-1]
    assert (event["stream"], event.get("subject"), event.get("error")) == ("C", "c.x", None)
    await nc.publish("c.x", b"", reply="inbox", headers={"Nats-Incr": "2"})
    assert json.loads((await inbox.next_msg(WAIT)).data) == {"stream": "C", "seq": 1, "val": "2"}
    assert (await js.stream_info("E")).state.messages == 1
    await nc.close()
