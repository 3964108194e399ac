"""Arbitrary bytes never crash the parser: events, or the error nats-server gives."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakejs.protocol import Connect, Parser, ProtocolViolation

# Every -ERR text the parser may answer with (None: closed without one).
KNOWN_ERRORS = {
    None,
    "Unknown Protocol Operation",
    "maximum control line exceeded",
    "Maximum Payload Violation",
    "Authorization Violation",
}

FRAGMENTS = [
    b"PUB ",
    b"HPUB ",
    b"SUB ",
    b"UNSUB ",
    b"PING",
    b"PONG",
    b"CONNECT ",
    b"INFO ",
    b"+OK",
    b"-ERR ",
    b"HMSG ",
    b"pub ",
    b"\r\n",
    b"\n",
    b"\r",
    b" ",
    b"\t",
    b"a",
    b"a.b",
    b"*",
    b">",
    b"0",
    b"1",
    b"12",
    b"{}",
    b'{"headers":true}',
    b'{"verbose":1}',
    b"NATS/1.0\r\n\r\n",
    b"\x00",
    b"\xff",
]

protocolish = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=8)), max_size=30).map(b"".join)


def parse_all(chunks: list[bytes], auth_pending: bool = False) -> tuple[list, str | None, bool]:
    parser = Parser()
    parser.auth_pending = auth_pending
    events = []
    try:
        for chunk in chunks:
            parser.receive_data(chunk)
            for event in parser.events():
                events.append(event)
                if isinstance(event, Connect):
                    parser.headers = bool(event.options.get("headers", parser.headers))
                    parser.auth_pending = False
    except ProtocolViolation as violation:
        return events, violation.err, True
    return events, None, False


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(st.binary(max_size=200), protocolish), auth=st.booleans())
def test_arbitrary_bytes(data: bytes, auth: bool) -> None:
    _events, err, failed = parse_all([data], auth)
    if failed:
        assert err in KNOWN_ERRORS


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=protocolish, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_any_split_parses_the_same(data: bytes, cuts: list[int]) -> None:
    """Where a stream is split into reads never changes the events or the error."""
    points = sorted({c for c in cuts if c <= len(data)})
    chunks = [data[a:b] for a, b in zip([0] + points, points + [len(data)])]
    assert parse_all(chunks) == parse_all([data])
