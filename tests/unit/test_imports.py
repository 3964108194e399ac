"""Exports and imports between accounts: stream imports, service imports, their responses."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from fakejs.core.account_config import CHUNKED, STREAM, AccountConfig, Export, Import
from fakejs.core.broker import Broker
from fakejs.core.imports import Imports, wire_imports
from fakejs.core.options import ServerOptions
from fakejs.core.session import ClientSession
from fakejs.core.users import User
from fakejs.jetstream import JetStreamWithApi
from fakejs.testkit.clock import ManualClock
from tests.harness.session_io import FakeIO

REPLY = re.compile(rb"MSG \S+ \d+ (_R_\.\w{6}\.\w{6}) ")


def _setup(configs: list[AccountConfig]) -> tuple[Broker, ManualClock, Imports]:
    clock = ManualClock(start_ns=0)
    users = [User(c.name.lower(), "pw", account=c.name) for c in configs]
    broker = Broker(ServerOptions(seed=7, users=users), clock)
    return broker, clock, wire_imports(broker.accounts, configs, clock, broker.random)


def _login(broker: Broker, user: str, **extra: object) -> ClientSession:
    session = ClientSession(broker, FakeIO())
    session.start()
    connect = {"verbose": False, "protocol": 1, "user": user, "pass": "pw", "headers": True, **extra}
    session.data_received(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
    session.take_output()
    return session


def _send(session: ClientSession, data: bytes) -> None:
    session.data_received(data)


def test_stream_import_with_prefix_keeps_reply_and_headers() -> None:
    configs = [
        AccountConfig("A", exports=(Export("ev.>", False),)),
        AccountConfig("B", imports=(Import("A", "ev.>", False, "from.a.ev.>", "from.a"),)),
    ]
    broker, _, wiring = _setup(configs)
    a, b = _login(broker, "a"), _login(broker, "b")
    _send(b, b"SUB from.> 1\r\nSUB ev.> 2\r\n")
    _send(a, b"PUB ev.x rep.y 2\r\nhi\r\nHPUB ev.h 12 14\r\nNATS/1.0\r\n\r\nhi\r\n")
    assert b.take_output() == b"MSG from.a.ev.x 1 rep.y 2\r\nhi\r\nHMSG from.a.ev.h 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
    assert wiring.counts["carried"] == 2


def test_stream_imports_are_not_carried_on() -> None:
    """A imports from B and B from A: a message crosses once, never back."""
    configs = [
        AccountConfig("A", exports=(Export("x", False),), imports=(Import("B", "x", False, "x"),)),
        AccountConfig("B", exports=(Export("x", False),), imports=(Import("A", "x", False, "x"),)),
        AccountConfig("C", imports=(Import("B", "x", False, "c.x"),)),
    ]
    broker, _, wiring = _setup(configs)
    a, b, c = _login(broker, "a"), _login(broker, "b"), _login(broker, "c")
    for session in (a, b, c):
        _send(session, b"SUB > 1\r\n")
    _send(a, b"PUB x 1\r\n1\r\n")
    assert a.take_output() == b"MSG x 1 1\r\n1\r\n"
    assert b.take_output() == b"MSG x 1 1\r\n1\r\n"
    assert c.take_output() == b""
    assert wiring.counts["carried"] == 1


def test_service_import_singleton_reply_mapping() -> None:
    configs = [
        AccountConfig("A", exports=(Export("svc.one", True),)),
        AccountConfig("B", imports=(Import("A", "svc.one", True, "uno"),)),
    ]
    broker, _, _ = _setup(configs)
    a, b = _login(broker, "a"), _login(broker, "b")
    _send(a, b"SUB svc.one 5\r\n")
    _send(b, b"SUB inbox.> 9\r\nPUB uno inbox.1 3\r\nreq\r\n")
    got = a.take_output()
    assert got.startswith(b"HMSG svc.one 5 _R_.")
    assert b'NATS/1.0\r\nNats-Request-Info: {"acc":"B","rtt":' in got and got.endswith(b"}\r\n\r\nreq\r\n")
    match = REPLY.search(got)
    assert match is not None
    reply = match.group(1)
    responses = next(iter(broker.accounts.get("A").router.index.match(reply.decode()).psubs))  # type: ignore[union-attr]
    assert responses.subject.endswith(".>")
    _send(a, b"PUB " + reply + b" 2\r\nr1\r\nPUB " + reply + b" 2\r\nr2\r\n")
    assert b.take_output() == b"MSG inbox.1 9 2\r\nr1\r\n"


def test_service_import_stream_responses_until_the_threshold() -> None:
    configs = [
        AccountConfig("A", exports=(Export("svc.many", True, response_type=STREAM, response_threshold=1.0),)),
        AccountConfig("B", imports=(Import("A", "svc.many", True, "many"),)),
    ]
    broker, clock, wiring = _setup(configs)
    a, b = _login(broker, "a"), _login(broker, "b")
    _send(a, b"SUB svc.many 6\r\n")
    _send(b, b"SUB inbox.> 9\r\nPUB many inbox.2 3\r\nreq\r\n")
    match = REPLY.search(a.take_output())
    assert match is not None
    reply = match.group(1)
    _send(a, b"PUB " + reply + b" 2\r\nr1\r\nPUB " + reply + b" 2\r\nr2\r\n")
    assert b.take_output() == b"MSG inbox.2 9 2\r\nr1\r\nMSG inbox.2 9 2\r\nr2\r\n"
    clock.advance(0.8)
    _send(a, b"PUB " + reply + b" 2\r\nr3\r\n")  # keeps it alive
    clock.advance(0.8)
    _send(a, b"PUB " + reply + b" 2\r\nr4\r\n")
    assert b.take_output() == b"MSG inbox.2 9 2\r\nr3\r\nMSG inbox.2 9 2\r\nr4\r\n"
    clock.advance(1.5)
    assert not wiring.responses(broker.accounts.get("A")).routes  # type: ignore[arg-type]
    _send(a, b"PUB " + reply + b" 2\r\nr5\r\n")
    assert b"MSG" not in b.take_output()


def test_chunked_ends_with_an_empty_response() -> None:
    configs = [
        AccountConfig("A", exports=(Export("chk", True, response_type=CHUNKED),)),
        AccountConfig("B", imports=(Import("A", "chk", True, "chk"),)),
    ]
    broker, _, wiring = _setup(configs)
    a, b = _login(broker, "a"), _login(broker, "b")
    _send(a, b"SUB chk 3\r\n")
    _send(b, b"SUB inbox.> 1\r\nPUB chk inbox.3 3\r\nreq\r\n")
    match = REPLY.search(a.take_output())
    assert match is not None
    reply = match.group(1)
    _send(a, b"PUB " + reply + b" 2\r\nr1\r\nPUB " + reply + b" 0\r\n\r\nPUB " + reply + b" 2\r\nr3\r\n")
    assert b.take_output() == b"MSG inbox.3 1 2\r\nr1\r\nMSG inbox.3 1 0\r\n\r\n"
    assert not wiring.responses(broker.accounts.get("A")).routes  # type: ignore[arg-type]


def test_no_responders_across_the_import_names_the_local_subject() -> None:
    configs = [
        AccountConfig("A", exports=(Export("api.>", True),)),
        AccountConfig("B", imports=(Import("A", "api.>", True, "remote.>"),)),
    ]
    broker, _, wiring = _setup(configs)
    b = _login(broker, "b", no_responders=True)
    _send(b, b"SUB inbox.> 1\r\nPUB remote.foo inbox.2 3\r\nreq\r\n")
    assert b.take_output() == b"HMSG inbox.2 1 42 42\r\nNATS/1.0 503\r\nNats-Subject: remote.foo\r\n\r\n\r\n"
    assert not wiring.responses(broker.accounts.get("A")).routes  # type: ignore[arg-type]
    a = _login(broker, "a")
    _send(a, b"SUB > 2\r\n")
    _send(b, b"PUB remote.foo.bar 3\r\nreq\r\n")
    out = a.take_output()
    assert out.startswith(b"HMSG api.foo.bar 2 ") and b'Nats-Request-Info: {"acc":"B","rtt":0}' in out


def test_service_imports_that_lead_back_stop() -> None:
    configs = [
        AccountConfig("A", exports=(Export("x", True),), imports=(Import("B", "x", True, "x"),)),
        AccountConfig("B", exports=(Export("x", True),), imports=(Import("A", "x", True, "x"),)),
    ]
    broker, _, wiring = _setup(configs)
    a, b = _login(broker, "a"), _login(broker, "b")
    _send(b, b"SUB x 1\r\n")
    _send(a, b"PUB x 1\r\n1\r\n")
    assert b.take_output().endswith(b"\r\n\r\n1\r\n")
    assert wiring.counts["requests"] == 2  # A -> B, then B -> A found its own import already on the way


@pytest.mark.slow
def test_ten_thousand_imports_cost_only_what_matches() -> None:
    imports = tuple(Import("A", f"ev.{i}", False, f"b.ev.{i}") for i in range(5000))
    imports += tuple(Import("A", f"svc.{i}", True, f"s.{i}") for i in range(5000))
    configs = [
        AccountConfig("A", exports=(Export("ev.>", False), Export("svc.>", True))),
        AccountConfig("B", imports=imports),
    ]
    broker, _, wiring = _setup(configs)
    a, b = _login(broker, "a"), _login(broker, "b")
    _send(b, b"SUB b.ev.> 1\r\n")
    _send(a, b"SUB svc.> 2\r\n")
    _send(a, b"PUB ev.4321 1\r\n1\r\n")
    _send(b, b"PUB s.1234 1\r\n1\r\n")
    assert b.take_output() == b"MSG b.ev.4321 1 1\r\n1\r\n"
    assert a.take_output().startswith(b"HMSG svc.1234 2 ")
    assert wiring.counts == {"carried": 1, "requests": 1, "responses": 0}


async def test_jetstream_through_imports(tmp_path: Path) -> None:
    """The docs' pattern: JS exports its API (and acks), APP imports them under JS.API and uses a stream."""
    configs = [
        AccountConfig(
            "JS",
            exports=(Export("$JS.API.>", True), Export("$JS.ACK.>", True), Export("orders.>", True)),
        ),
        AccountConfig(
            "APP",
            imports=(
                Import("JS", "$JS.API.>", True, "JS.API.>"),
                Import("JS", "$JS.ACK.>", True, "$JS.ACK.>"),
                Import("JS", "orders.>", True, "orders.>"),
            ),
        ),
    ]
    broker, clock, _ = _setup(configs)
    js = JetStreamWithApi(broker, str(tmp_path), own_store=False, account=broker.accounts.get("JS"))
    js.start()
    try:
        app = _login(broker, "app")
        _send(app, b"SUB _INBOX.> 1\r\n")
        config = json.dumps({"name": "ORDERS", "subjects": ["orders.>"]}).encode()
        _send(app, b"PUB JS.API.STREAM.CREATE.ORDERS _INBOX.1 %d\r\n%s\r\n" % (len(config), config))
        assert b'"type":"io.nats.jetstream.api.v1.stream_create_response"' in app.take_output()
        _send(app, b"PUB orders.1 _INBOX.2 3\r\none\r\n")
        assert b'{"stream":"ORDERS","seq":1}' in app.take_output()
        consumer = json.dumps({"stream_name": "ORDERS", "config": {"durable_name": "C", "ack_policy": "explicit"}})
        body = consumer.encode()
        _send(app, b"PUB JS.API.CONSUMER.CREATE.ORDERS.C _INBOX.3 %d\r\n%s\r\n" % (len(body), body))
        assert b"consumer_create_response" in app.take_output()
        _send(app, b'PUB JS.API.CONSUMER.MSG.NEXT.ORDERS.C _INBOX.4 11\r\n{"batch":1}\r\n')
        for _ in range(3):
            await asyncio.sleep(0)
            clock.advance(0.01)
        out = app.take_output()
        match = re.search(rb"MSG orders.1 1 (\$JS\.ACK\.ORDERS\.C\.\S+) 3\r\none\r\n", out)
        assert match is not None, out
        _send(app, b"PUB " + match.group(1) + b" _INBOX.5 0\r\n\r\n")
        clock.advance(0.01)
        _send(app, b"PUB JS.API.CONSUMER.INFO.ORDERS.C _INBOX.6 0\r\n\r\n")
        assert b'"num_ack_pending":0' in app.take_output()
    finally:
        js.stop()


def test_stream_import_of_a_delivery_subject_keeps_the_shown_subject() -> None:
    """A push consumer's deliveries (routed on ``deliver.>``, shown as the stored subject) cross as they are."""
    configs = [
        AccountConfig("A", exports=(Export("deliver.>", False),)),
        AccountConfig("B", imports=(Import("A", "deliver.>", False, "deliver.>"),)),
    ]
    broker, _, _ = _setup(configs)
    b = _login(broker, "b")
    _send(b, b"SUB deliver.app 1\r\n")
    exporter = broker.accounts.get("A")
    assert exporter is not None
    exporter.router.publish("deliver.app", "$JS.ACK.x", None, b"m", None, shown_as="orders.1")
    assert b.take_output() == b"MSG orders.1 1 $JS.ACK.x 1\r\nm\r\n"
