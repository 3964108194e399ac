"""The sans-IO parser, fed each case whole, one byte at a time, and with trailing data."""

from __future__ import annotations

from typing import Any

import pytest

from fakejs.protocol import Connect, Info, Notice, Ok, Parser, Ping, Pong, ProtocolViolation, Pub, Sub, Unsub
from fakejs.protocol.parser import parse_size

TRAILER = b"PING\r\n"


def run(chunks: list[bytes], **settings: Any) -> tuple[list[Any], ProtocolViolation | None]:
    """Feed chunks; return the events and the violation (if any).

    A CONNECT event applies its header and pedantic settings, as a server
    session would, before the next event is parsed.
    """
    parser = Parser()
    for key, value in settings.items():
        setattr(parser, key, value)
    events: list[Any] = []
    try:
        for chunk in chunks:
            parser.receive_data(chunk)
            for event in parser.events():
                events.append(event)
                if isinstance(event, Connect):
                    parser.headers = bool(event.options.get("headers", parser.headers))
                    parser.pedantic = bool(event.options.get("pedantic", parser.pedantic))
    except ProtocolViolation as violation:
        return events, violation
    return events, None


def three_ways(data: bytes, **settings: Any) -> tuple[list[Any], ProtocolViolation | None]:
    """Parse whole, byte by byte and with trailing data; all must agree."""
    whole = run([data], **settings)
    split = run([data[i : i + 1] for i in range(len(data))], **settings)
    assert [e for e in split[0]] == whole[0]
    assert (split[1] and split[1].err) == (whole[1] and whole[1].err)
    trailing = run([data + TRAILER], **settings)
    if whole[1] is None:
        # A complete input followed by more data parses the same, then the PING.
        assert trailing[0][: len(whole[0])] == whole[0]
    else:
        assert trailing[0] == whole[0]
        assert trailing[1] is not None and trailing[1].err == whole[1].err
    return whole


VALID = [
    (b"PING\r\n", [Ping()]),
    (b"PONG\r\n", [Pong()]),
    (b"ping\r\n", [Ping()]),
    (b"PING whatever\r\n", [Ping()]),
    (b"PING\n", [Ping()]),
    (b"+OK\r\n", [Ok()]),
    (b"CONNECT {}\r\n", [Connect({})]),
    (b'CONNECT {"verbose":false,"Name":"x"}\r\n', [Connect({"verbose": False, "name": "x"})]),
    (b"CONNECT null\r\n", [Connect({})]),
    (b'CONNECT\t {"echo":true}\r\n', [Connect({"echo": True})]),
    (b"INFO {}\r\n", [Info({})]),
    (b"PUB a 0\r\n\r\n", [Pub("a", "", None, b"")]),
    (b"PUB a.b reply 5\r\nhello\r\n", [Pub("a.b", "reply", None, b"hello")]),
    # Runs of spaces separate arguments too (nats-py: ``PUB subject  0`` for an ack).
    (b"PUB a.b  4\r\n+ACK\r\n", [Pub("a.b", "", None, b"+ACK")]),
    (b"PUB a  r   1\r\nx\r\n", [Pub("a", "r", None, b"x")]),
    (b"pub\ta\t\t2\r\nhi\r\n", [Pub("a", "", None, b"hi")]),
    (b"PUB a 4\r\n\r\n\r\n\r\n", [Pub("a", "", None, b"\r\n\r\n")]),
    (b"PUB a 1\nx\r\n", [Pub("a", "", None, b"x")]),
    (b"SUB a 1\r\n", [Sub("a", "", "1")]),
    (b"SUB a q 1\r\n", [Sub("a", "q", "1")]),
    (b"SUB  a  q  1 \r\n", [Sub("a", "q", "1")]),
    (b"UNSUB 1\r\n", [Unsub("1", -1)]),
    (b"UNSUB 1 10\r\n", [Unsub("1", 10)]),
    (b"UNSUB 1 x\r\n", [Unsub("1", -1)]),
    (b"PUB a.* 0\r\n\r\n", [Notice("Invalid Publish Subject"), Pub("a.*", "", None, b"")]),
    (b"HMSG a 1 0\r\n\r\n", [Pub("", "", None, b"")]),
    (
        b'CONNECT {"headers":true}\r\nHPUB a r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n',
        [Connect({"headers": True}), Pub("a", "r", b"NATS/1.0\r\n\r\n", b"hi")],
    ),
    (b'CONNECT {"headers":true}\r\nHPUB a 0 2\r\nhi\r\n', [Connect({"headers": True}), Pub("a", "", None, b"hi")]),
    # The first argument byte is taken as is, even a newline.
    (b"PUB \nfoo 1\nx\r\n", [Pub("\nfoo", "", None, b"x")]),
    (b"CONNECT\n{}\n", [Connect({})]),
    # Only spaces and tabs separate PUB arguments (a vertical tab does not).
    (b"PUB a\x0bb 0\r\n\r\n", [Pub("a\x0bb", "", None, b"")]),
]


@pytest.mark.parametrize("data,expected", VALID, ids=[repr(v[0])[:40] for v in VALID])
def test_valid(data: bytes, expected: list[Any]) -> None:
    events, violation = three_ways(data)
    assert violation is None
    assert events == expected


INVALID = [
    (b"FOO\r\n", "Unknown Protocol Operation"),
    (b"MSG a 1 0\r\n", "Unknown Protocol Operation"),
    (b"RS+ a\r\n", "Unknown Protocol Operation"),
    (b"UNSUB\r\n", "Unknown Protocol Operation"),
    (b"PUBX a 1\r\n", "Unknown Protocol Operation"),
    (b"PUB a 3\r\nabcd\r\n", "Unknown Protocol Operation"),
    (b"PUB a 1\r\nxy", "Unknown Protocol Operation"),
    (b"PUB a 1\r\nx\rx", "Unknown Protocol Operation"),
    (b"PUB a\r\n", None),
    (b"PUB a x\r\n", None),
    (b"PUB a 1234567890\r\n", None),
    (b"PUB a b c 1\r\n", None),
    (b"SUB a\r\n", None),
    (b"SUB a b c d\r\n", None),
    (b"UNSUB 1 2 3\r\n", None),
    (b"HPUB a 1 1\r\n", None),
    (b"CONNECT {\r\n", None),
    (b'CONNECT {"verbose":"x"}\r\n', None),
    (b'CONNECT {"protocol":1.5}\r\n', None),
    (b"CONNECT 5\r\n", None),
    (b"CONNECT {} x\r\n", None),
    (b"INFO x\r\n", None),
    (b'INFO {"port":"x"}\r\n', None),
    (b"-ERR 'x'\r\n", None),
    (b"PUB a 1048577\r\n", "Maximum Payload Violation"),
    (b"SUB " + b"a" * 4095 + b" 1\r\n", "maximum control line exceeded"),
    (b"PUB " + b"a" * 4097, "maximum control line exceeded"),
]


@pytest.mark.parametrize("data,err", INVALID, ids=[repr(v[0])[:40] for v in INVALID])
def test_invalid(data: bytes, err: str | None) -> None:
    _events, violation = three_ways(data)
    assert violation is not None
    assert violation.err == err


def test_control_line_at_the_limit_is_accepted() -> None:
    arg = b"a" * 4094 + b" 1"
    assert len(arg) == 4096
    events, violation = three_ways(b"SUB " + arg + b"\r\n")
    assert violation is None and events == [Sub("a" * 4094, "", "1")]


def test_hpub_header_larger_than_total() -> None:
    _events, violation = three_ways(b"HPUB a 3 2\r\n", headers=True)
    assert violation is not None and violation.err is None


def test_auth_pending_requires_connect_first() -> None:
    events, violation = three_ways(b"PING\r\n", auth_pending=True)
    assert violation is not None and violation.err == "Authorization Violation"
    events, violation = three_ways(b'CONNECT {"user":"a"}\r\n', auth_pending=True)
    assert violation is None and events == [Connect({"user": "a"})]


def test_pedantic_off_accepts_wildcard_publish() -> None:
    events, _violation = three_ways(b"PUB a.> 0\r\n\r\n", pedantic=False)
    assert events == [Pub("a.>", "", None, b"")]


def test_max_payload_setting() -> None:
    events, violation = three_ways(b"PUB a 5\r\n12345\r\nPUB a 6\r\n", max_payload=5)
    assert events == [Pub("a", "", None, b"12345")]
    assert violation is not None and violation.err == "Maximum Payload Violation"


def test_pipelined_operations_come_out_in_order() -> None:
    data = b"SUB a 1\r\nPUB a 1\r\nx\r\nPING\r\nUNSUB 1\r\nPONG\r\n"
    events, _violation = three_ways(data)
    assert events == [Sub("a", "", "1"), Pub("a", "", None, b"x"), Ping(), Unsub("1", -1), Pong()]


def test_parser_stays_broken_after_a_violation() -> None:
    parser = Parser()
    parser.receive_data(b"FOO\r\n")
    with pytest.raises(ProtocolViolation):
        parser.next_event()
    parser.receive_data(b"PING\r\n")
    with pytest.raises(ProtocolViolation):
        parser.next_event()


def test_skipped_line_does_not_accumulate() -> None:
    parser = Parser()
    parser.receive_data(b"PING")
    for _ in range(100):
        parser.receive_data(b"x" * 1000)
        assert parser.next_event() is None
    assert parser.buffered < 2000
    parser.receive_data(b"\r\n")
    assert parser.next_event() == Ping()


def test_non_utf8_subjects_round_trip() -> None:
    events, _violation = three_ways(b"SUB a\xff 1\r\n")
    sub = events[0]
    assert sub.subject.encode("utf-8", "surrogateescape") == b"a\xff"


@pytest.mark.parametrize(
    "token,size",
    [(b"0", 0), (b"123", 123), (b"999999999", 999999999), (b"1234567890", -1), (b"", -1), (b"1a", -1), (b"-1", -1)],
)
def test_parse_size(token: bytes, size: int) -> None:
    assert parse_size(token) == size
