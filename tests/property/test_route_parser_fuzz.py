"""The route parser: any cut of a valid stream parses the same, and arbitrary bytes never crash it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.protocol import route as wire
from fakejs.protocol.events import ProtocolViolation
from fakejs.protocol.route import RouteEvent, RouteParser

tokens = st.text(alphabet="abcXYZ019_-", min_size=1, max_size=6)
subjects = st.lists(tokens, min_size=1, max_size=4).map(".".join)
payloads = st.binary(max_size=40)
headers = st.sampled_from([None, b"NATS/1.0\r\n\r\n", b"NATS/1.0\r\nA: b\r\n\r\n"])

frames = st.one_of(
    st.builds(lambda s, q, w: wire.sub("$G", s, q, w), subjects, st.sampled_from(["", "q1", "grp"]), st.integers(1, 9)),
    st.builds(lambda s, q: wire.unsub("$G", s, q), subjects, st.sampled_from(["", "q1"])),
    st.builds(
        lambda s, r, q, h, p: wire.routed_msg("$G", s, r, q, h, p),
        subjects,
        st.sampled_from(["", "_INBOX.x"]),
        st.lists(tokens, max_size=3),
        headers,
        payloads,
    ),
    st.sampled_from([b"PING\r\n", b"PONG\r\n", b"+OK\r\n", b'INFO {"server_id":"N"}\r\n']),
)


def _events(parser: RouteParser, data: bytes, cuts: list[int]) -> list[RouteEvent]:
    events: list[RouteEvent] = []
    start = 0
    for cut in sorted(set(cuts)) + [len(data)]:
        parser.receive_data(data[start:cut])
        start = cut
        while (event := parser.next_event()) is not None:
            events.append(event)
    return events


@settings(max_examples=200, deadline=None)
@given(st.lists(frames, min_size=1, max_size=8), st.data())
def test_any_cut_of_a_valid_stream_gives_the_same_events(stream: list[bytes], data: st.DataObject) -> None:
    joined = b"".join(stream)
    whole = _events(RouteParser(), joined, [])
    assert len(whole) == len(stream)
    cuts = data.draw(st.lists(st.integers(0, len(joined)), max_size=6))
    assert _events(RouteParser(), joined, cuts) == whole


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=120))
def test_arbitrary_bytes_give_events_or_a_protocol_violation(junk: bytes) -> None:
    parser = RouteParser()
    parser.receive_data(junk)
    try:
        while parser.next_event() is not None:
            pass
    except ProtocolViolation:
        pass
