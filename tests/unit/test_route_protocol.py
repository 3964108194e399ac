"""The route protocol without I/O: every operation parsed whole, one byte at a time and with trailing data.

The lines are the ones nats-server 2.15.1 writes on a route (seen in its
trace): ``RS+ $G work g 1``, ``RMSG $G qq | grp 2``, ``HMSG $G foo rr 12 14``,
``LS+ <origin> ...``, and on a route dedicated to one account (``$SYS``)
the same lines without the account.
"""

from __future__ import annotations

import pytest

from fakejs.protocol import route as wire
from fakejs.protocol.events import Ok, Ping, Pong, ProtocolViolation
from fakejs.protocol.route import (
    RemoteSub,
    RemoteUnsub,
    RouteConnect,
    RoutedMsg,
    RouteError,
    RouteEvent,
    RouteInfo,
    RouteParser,
)

CASES: list[tuple[bytes, RouteEvent]] = [
    (b'INFO {"server_id":"N1","route_pool_size":3}\r\n', RouteInfo({"server_id": "N1", "route_pool_size": 3})),
    (b'CONNECT {"name":"N1","cluster":"C"}\r\n', RouteConnect({"name": "N1", "cluster": "C"})),
    (b"PING\r\n", Ping()),
    (b"PONG\r\n", Pong()),
    (b"+OK\r\n", Ok()),
    (b"-ERR 'Authorization Violation'\r\n", RouteError("Authorization Violation")),
    (b"RS+ $G foo.>\r\n", RemoteSub("$G", "foo.>", "", 0)),
    (b"RS+ $G work g 4\r\n", RemoteSub("$G", "work", "g", 4)),
    (b"RS- $G foo.>\r\n", RemoteUnsub("$G", "foo.>", "")),
    (b"RS- $G work g\r\n", RemoteUnsub("$G", "work", "g")),
    (b"LS+ LEAF $G foo\r\n", RemoteSub("$G", "foo", "", 0, "LEAF")),
    (b"LS- LEAF $G foo\r\n", RemoteUnsub("$G", "foo", "", "LEAF")),
    (b"RMSG $G zzz 2\r\nhi\r\n", RoutedMsg("$G", "zzz", "", (), None, b"hi")),
    (b"RMSG $G zzz r1 2\r\nhi\r\n", RoutedMsg("$G", "zzz", "r1", (), None, b"hi")),
    (b"RMSG $G qq | grp 2\r\nhi\r\n", RoutedMsg("$G", "qq", "", ("grp",), None, b"hi")),
    (b"RMSG $G bar + rep q1 q2 2\r\ncd\r\n", RoutedMsg("$G", "bar", "rep", ("q1", "q2"), None, b"cd")),
    (b"HMSG $G foo 12 14\r\nNATS/1.0\r\n\r\ngh\r\n", RoutedMsg("$G", "foo", "", (), b"NATS/1.0\r\n\r\n", b"gh")),
    (
        b"HMSG $G foo rr 12 14\r\nNATS/1.0\r\n\r\ngh\r\n",
        RoutedMsg("$G", "foo", "rr", (), b"NATS/1.0\r\n\r\n", b"gh"),
    ),
    (
        b"HMSG $G foo | g 12 12\r\nNATS/1.0\r\n\r\n\r\n",
        RoutedMsg("$G", "foo", "", ("g",), b"NATS/1.0\r\n\r\n", b""),
    ),
    (
        b"LMSG LEAF $G foo r 12 13\r\nNATS/1.0\r\n\r\nx\r\n",
        RoutedMsg("$G", "foo", "r", (), b"NATS/1.0\r\n\r\n", b"x", "LEAF"),
    ),
    (b"RMSG $G empty 0\r\n\r\n", RoutedMsg("$G", "empty", "", (), None, b"")),
]


def _parse_all(parser: RouteParser, data: bytes, step: int) -> list[RouteEvent]:
    events: list[RouteEvent] = []
    for start in range(0, len(data), step):
        parser.receive_data(data[start : start + step])
        while (event := parser.next_event()) is not None:
            events.append(event)
    return events


@pytest.mark.parametrize(("data", "expected"), CASES, ids=[c[0][:20].decode() for c in CASES])
def test_each_operation_whole_bytewise_and_with_trailing_data(data: bytes, expected: RouteEvent) -> None:
    assert _parse_all(RouteParser(), data, len(data)) == [expected]
    assert _parse_all(RouteParser(), data, 1) == [expected]
    assert _parse_all(RouteParser(), data + b"PING\r\n", len(data) + 6) == [expected, Ping()]


def test_a_dedicated_route_leaves_the_account_out() -> None:
    parser = RouteParser()
    parser.account = b"$SYS"
    data = b"RS+ $SYS.REQ.SERVER.PING\r\nRS- q.* g\r\nRMSG $SYS.X r 1\r\nz\r\nLS+ O a b 2\r\n"
    assert _parse_all(parser, data, 3) == [
        RemoteSub("$SYS", "$SYS.REQ.SERVER.PING", "", 0),
        RemoteUnsub("$SYS", "q.*", "g"),
        RoutedMsg("$SYS", "$SYS.X", "r", (), None, b"z"),
        RemoteSub("$SYS", "a", "b", 2, "O"),
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"BOGUS x\r\n",
        b"RS+ $G\r\n",
        b"RS+ $G a b c d e\r\n",
        b"RS+ $G work g x\r\n",
        b"RMSG $G foo\r\n",
        b"RMSG $G foo ? q 2\r\nhi\r\n",
        b"RMSG $G foo 2\r\nhiXX",
        b"HMSG $G foo 5 2\r\nhi\r\n",
        b"INFO [1]\r\n",
        b"CONNECT {\r\n",
    ],
)
def test_what_no_server_sends_breaks_the_route(data: bytes) -> None:
    parser = RouteParser()
    parser.receive_data(data)
    with pytest.raises(ProtocolViolation):
        while parser.next_event() is not None:
            pass


def test_the_writer_speaks_what_the_parser_reads() -> None:
    frames = [
        wire.sub("$G", "foo"),
        wire.sub("$G", "work", "g", 3),
        wire.unsub("$G", "foo"),
        wire.unsub("$G", "work", "g"),
        wire.routed_msg("$G", "a", "", [], None, b"1"),
        wire.routed_msg("$G", "a", "r", [], None, b"2"),
        wire.routed_msg("$G", "a", "", ["g1", "g2"], None, b"3"),
        wire.routed_msg("$G", "a", "r", ["g"], b"NATS/1.0\r\n\r\n", b"4"),
    ]
    assert frames[:3] == [b"RS+ $G foo\r\n", b"RS+ $G work g 3\r\n", b"RS- $G foo\r\n"]
    assert frames[6] == b"RMSG $G a | g1 g2 1\r\n3\r\n"
    assert frames[7] == b"HMSG $G a + r g 12 13\r\nNATS/1.0\r\n\r\n4\r\n"
    parser = RouteParser()
    parser.receive_data(b"".join(frames))
    events = list(iter(parser.next_event, None))
    assert [type(e).__name__ for e in events] == ["RemoteSub"] * 2 + ["RemoteUnsub"] * 2 + ["RoutedMsg"] * 4
    last = events[-1]
    assert isinstance(last, RoutedMsg)
    assert (last.reply, last.queues, last.headers, last.payload) == ("r", ("g",), b"NATS/1.0\r\n\r\n", b"4")


def test_dedicated_route_frames_have_no_account() -> None:
    assert wire.sub("", "x", "q", 1) == b"RS+ x q 1\r\n"
    assert wire.routed_msg("", "x", "", [], None, b"") == b"RMSG x 0\r\n\r\n"


def test_a_leaf_connections_interest_names_its_cluster() -> None:
    frames = [
        wire.leaf_sub("LC", "$G", "foo"),
        wire.leaf_sub("LC", "$G", "work", "g", 2),
        wire.leaf_unsub("LC", "$G", "work", "g"),
        wire.leaf_sub("LC", "", "bar"),
    ]
    assert frames == [
        b"LS+ LC $G foo\r\n",
        b"LS+ LC $G work g 2\r\n",
        b"LS- LC $G work g\r\n",
        b"LS+ LC bar\r\n",
    ]
    parser = RouteParser()
    parser.receive_data(b"".join(frames[:3]))
    seen = []
    for event in iter(parser.next_event, None):
        assert isinstance(event, RemoteSub | RemoteUnsub)
        seen.append((type(event).__name__, event.origin, event.account, event.subject, event.queue))
    assert seen == [
        ("RemoteSub", "LC", "$G", "foo", ""),
        ("RemoteSub", "LC", "$G", "work", "g"),
        ("RemoteUnsub", "LC", "$G", "work", "g"),
    ]
