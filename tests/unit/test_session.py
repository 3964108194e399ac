"""A client session without sockets: bytes in through ``data_received``, frames out through ``take_output``.

The broker is the real one (it has no sockets either); the socket layer is
replaced by :class:`FakeIO`, and time by a manual clock.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakejs.core.broker import Broker
from fakejs.core.clientio import (
    AUTH_TIMEOUT,
    AUTH_VIOLATION,
    CLIENT_CLOSED,
    PROTOCOL_VIOLATION,
    SLOW_CONSUMER_PENDING,
    STALE_CONNECTION,
)
from fakejs.core.options import ServerOptions
from fakejs.core.router import Subscription
from fakejs.core.session import ClientSession
from fakejs.testkit.clock import ManualClock
from tests.harness.session_io import FakeIO


def _broker(**settings: Any) -> Broker:
    settings.setdefault("seed", 1)
    return Broker(ServerOptions(**settings), ManualClock(start_ns=0))


def _session(broker: Broker, connect: dict[str, Any] | None = None) -> tuple[ClientSession, FakeIO]:
    io = FakeIO()
    session = ClientSession(broker, io, "10.0.0.1", 5000)
    session.start()
    session.take_output()  # the INFO greeting
    if connect is not None:
        session.data_received(b"CONNECT " + json.dumps(connect).encode() + b"\r\n")
    return session, io


QUIET = {"verbose": False, "headers": True, "protocol": 1}


def test_greets_with_info_and_registers_with_the_broker() -> None:
    broker = _broker()
    io = FakeIO()
    session = ClientSession(broker, io, "10.0.0.1", 5000)
    session.start()
    out = session.take_output()
    assert out.startswith(b"INFO {") and out.endswith(b"} \r\n")
    info = json.loads(out[5:])
    assert (info["server_id"], info["client_id"], info["client_ip"]) == (broker.server_id, 1, "10.0.0.1")
    assert broker.clients == {1: session}
    assert io.flushes == 1
    assert session.account is broker.accounts.default


def test_verbose_connect_and_ping() -> None:
    session, _ = _session(_broker(), {"verbose": True})
    session.data_received(b"PING\r\n")
    assert session.take_output() == b"+OK\r\nPONG\r\n"


def test_first_pong_is_followed_by_info_with_connect_info() -> None:
    session, _ = _session(_broker(), QUIET)
    session.data_received(b"PING\r\n")
    out = session.take_output()
    assert out.startswith(b"PONG\r\nINFO {")
    assert json.loads(out.split(b"INFO ", 1)[1])["remote_account"] == "$G"
    session.data_received(b"PING\r\n")
    assert session.take_output() == b"PONG\r\n"


def test_messages_between_two_sessions() -> None:
    broker = _broker()
    sender, _ = _session(broker, QUIET)
    receiver, _ = _session(broker, QUIET)
    receiver.data_received(b"SUB greet.* 7\r\n")
    sender.data_received(b"PUB greet.you reply.1 5\r\nhello\r\nHPUB greet.me 12 14\r\nNATS/1.0\r\n\r\nhi\r\n")
    assert receiver.take_output() == (
        b"MSG greet.you 7 reply.1 5\r\nhello\r\nHMSG greet.me 7 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
    )
    assert (sender.in_msgs, receiver.out_msgs, broker.stats.in_msgs, broker.stats.out_msgs) == (2, 2, 2, 2)


def test_no_responders_for_a_request_nobody_hears() -> None:
    session, _ = _session(_broker(), {**QUIET, "no_responders": True})
    session.data_received(b"SUB _INBOX.1 1\r\nPUB nobody _INBOX.1 0\r\n\r\n")
    assert session.take_output() == b"HMSG _INBOX.1 1 38 38\r\nNATS/1.0 503\r\nNats-Subject: nobody\r\n\r\n\r\n"


def test_unsub_with_a_limit() -> None:
    session, _ = _session(_broker(), QUIET)
    session.data_received(b"SUB s 1\r\nUNSUB 1 2\r\n" + b"PUB s 1\r\nx\r\n" * 3)
    assert session.take_output().count(b"MSG s 1 1\r\nx\r\n") == 2
    assert session.subs == {}


def test_reserved_reply_subject_is_a_permissions_violation() -> None:
    session, _ = _session(_broker(), QUIET)
    session.data_received(b"PUB s _R_.x 0\r\n\r\n")
    assert session.take_output() == b"-ERR 'Permissions Violation for Publish with Reply of \"_R_.x\"'\r\n"


def test_invalid_subscription_subject() -> None:
    session, _ = _session(_broker(), QUIET)
    session.data_received(b"SUB a..b 1\r\n")
    assert session.take_output() == b"-ERR 'Invalid Subject'\r\n"
    assert session.subs == {}


def test_protocol_violation_closes_the_connection() -> None:
    broker = _broker()
    closed: list[tuple[ClientSession, list[Subscription]]] = []
    broker.on_client_closed.append(lambda client, subs: closed.append((client, subs)))
    session, io = _session(broker, QUIET)
    session.data_received(b"SUB s 1\r\nBOGUS\r\n")
    assert session.take_output() == b"-ERR 'Unknown Protocol Operation'\r\n"  # written as the connection closes
    assert io.closed and session.close_reason == PROTOCOL_VIOLATION
    assert [(client, [sub.subject for sub in subs]) for client, subs in closed] == [(session, ["s"])]
    assert broker.clients == {}


def test_repeated_connect_drops_the_subscriptions() -> None:
    broker = _broker()
    session, _ = _session(broker, QUIET)
    session.data_received(b"SUB s 1\r\n")
    session.data_received(b"CONNECT " + json.dumps(QUIET).encode() + b"\r\nPUB s 0\r\n\r\n")
    assert session.take_output() == b""
    assert session.subs == {} and broker.router.index.count == 0


@pytest.mark.parametrize(
    ("settings", "connect", "accepted"),
    [
        ({"token": "secret"}, {"auth_token": "secret"}, True),
        ({"token": "secret"}, {"auth_token": "wrong"}, False),
        ({"user": "ann", "password": "pw"}, {"user": "ann", "pass": "pw"}, True),
        ({"user": "ann", "password": "pw"}, {"user": "ann", "pass": "nope"}, False),
        ({"user": "ann", "password": "pw"}, {"user": "bob", "pass": "pw"}, False),
        ({}, {"account": "OTHER"}, False),
    ],
)
def test_authentication(settings: dict[str, Any], connect: dict[str, Any], accepted: bool) -> None:
    broker = _broker(**settings)
    session, io = _session(broker, {"verbose": False, **connect})
    if accepted:
        assert not session.closed and session.account is broker.accounts.default
    else:
        assert session.take_output() == b"-ERR 'Authorization Violation'\r\n" or session.closed
        assert session.close_reason == AUTH_VIOLATION and io.closed


def test_authentication_timeout_on_the_clock() -> None:
    broker = _broker(token="t", auth_timeout=2.0)
    session, io = _session(broker)
    clock = broker.clock
    assert isinstance(clock, ManualClock)
    clock.advance(1.9)
    assert not session.closed
    clock.advance(0.2)
    assert session.close_reason == AUTH_TIMEOUT and io.closed


def test_stale_connection_after_unanswered_pings() -> None:
    broker = _broker(ping_interval=10.0, ping_max=2)
    session, io = _session(broker, QUIET)
    clock = broker.clock
    assert isinstance(clock, ManualClock)
    clock.advance(2.5)  # the first PING: 2 s after CONNECT plus up to 20%
    assert session.take_output() == b"PING\r\n"
    clock.advance(10)
    assert session.take_output() == b"PING\r\n"
    clock.advance(10)
    assert session.take_output() == b"-ERR 'Stale Connection'\r\n"
    assert session.close_reason == STALE_CONNECTION and io.closed


def test_pong_resets_the_outstanding_pings_and_measures_rtt() -> None:
    broker = _broker(ping_interval=10.0)
    session, _ = _session(broker, QUIET)
    clock = broker.clock
    assert isinstance(clock, ManualClock)
    clock.jump()  # the first PING, 2 s after CONNECT plus jitter
    assert session.take_output() == b"PING\r\n"
    clock.advance(0.25)
    session.data_received(b"PONG\r\n")
    assert session.keepalive.pings_out == 0
    assert session.rtt == pytest.approx(0.25)


def test_slow_consumer_is_cut_off() -> None:
    broker = _broker(max_pending=1000, max_payload=500)
    sender, _ = _session(broker, QUIET)
    receiver, io = _session(broker, QUIET)
    receiver.data_received(b"SUB s 1\r\n")
    io.buffered = 900
    sender.data_received(b"PUB s 200\r\n" + b"x" * 200 + b"\r\n")
    assert receiver.close_reason == SLOW_CONSUMER_PENDING and io.aborted
    assert broker.stats.slow_consumers == 1


def test_a_fast_producer_is_stalled_while_its_consumer_is_nearly_full() -> None:
    broker = _broker(max_pending=1000, max_payload=500)
    sender, sender_io = _session(broker, QUIET)
    receiver, io = _session(broker, QUIET)
    receiver.data_received(b"SUB s 1\r\n")
    io.buffered = 700
    sender.data_received(b"PUB s 100\r\n" + b"x" * 100 + b"\r\nPUB s 1\r\ny\r\n")
    assert sender_io.paused == [0.002] and sender.paused
    assert receiver.out_msgs == 1  # the second message waits for the stall to end
    sender.resume()
    assert receiver.out_msgs == 2


def test_connection_lost_closes_quietly() -> None:
    broker = _broker()
    session, io = _session(broker, QUIET)
    session.connection_lost()
    assert session.closed and session.close_reason == CLIENT_CLOSED and io.aborted
    session.data_received(b"PING\r\n")
    assert session.take_output() == b""


def test_a_large_queued_output_is_written_before_the_turn_ends() -> None:
    broker = _broker()
    subscriber, io = _session(broker, QUIET)
    subscriber.data_received(b"SUB big 1\r\n")
    publisher, _ = _session(broker, QUIET)
    payload = b"x" * 1000
    frame = b"PUB big %d\r\n%s\r\n" % (len(payload), payload)
    publisher.data_received(frame * 2)  # just under 2 KB: left for the end of the turn
    assert io.early_writes == 0
    publisher.data_received(frame)  # past FIRST_EARLY_WRITE (2 KB): the socket layer is asked to write now
    assert io.early_writes == 1
    subscriber.take_output()  # what the socket layer does when asked
    for _ in range(7):  # 7 frames of about 1 KB: below EARLY_WRITE, left for the end of the turn
        publisher.data_received(frame)
    assert io.early_writes == 1
    publisher.data_received(frame * 2)
    assert io.early_writes == 2  # past EARLY_WRITE (8 KB): written now
    subscriber.take_output()
    subscriber.data_received(b"PING\r\n")  # a read of its own: its output's first write comes early again
    publisher.data_received(frame * 2)
    assert io.early_writes == 3
