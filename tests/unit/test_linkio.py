"""What route and leaf links share with their socket (fakejs.core.linkio), and the message lines both write."""

from __future__ import annotations

import pytest

from fakejs.core.linkio import LinkDeadline, LinkOutput, read_operations
from fakejs.protocol import leaf as leaf_wire
from fakejs.protocol import route as route_wire
from fakejs.protocol.events import Ping, Pong
from fakejs.protocol.route import RouteEvent, RouteParser
from fakejs.testkit.clock import ManualClock


class Socket:
    """Counts the flushes a link asks for."""

    def __init__(self) -> None:
        self.flushes_asked = 0

    def want_flush(self) -> None:
        self.flushes_asked += 1


class Link:
    """Closes after ``closes_after`` operations."""

    def __init__(self, closes_after: int) -> None:
        self.closed = False
        self.seen: list[RouteEvent] = []
        self._closes_after = closes_after

    def handle(self, event: RouteEvent) -> None:
        self.seen.append(event)
        self.closed = len(self.seen) >= self._closes_after


def test_the_output_asks_one_flush_per_batch_and_hands_it_over_whole() -> None:
    socket = Socket()
    output = LinkOutput(socket)
    output.add(b"PING\r\n")
    output.add(b"PONG\r\n")
    assert (socket.flushes_asked, output.size) == (1, 12)
    assert output.take() == b"PING\r\nPONG\r\n"
    assert (output.take(), output.size) == (b"", 0)
    output.add(b"PING\r\n")
    assert socket.flushes_asked == 2


def test_a_last_frame_asks_a_flush_even_behind_others() -> None:
    socket = Socket()
    output = LinkOutput(socket)
    output.add(b"PING\r\n")
    output.add_last(b"-ERR 'Stale Connection'\r\n")
    assert socket.flushes_asked == 2
    assert output.take() == b"PING\r\n-ERR 'Stale Connection'\r\n"


def test_reading_stops_where_the_link_closed() -> None:
    link = Link(closes_after=1)
    parser = RouteParser()
    assert read_operations(link, parser, b"PING\r\nPONG\r\n", link.handle) is None
    assert link.seen == [Ping()]
    link.closed = False
    assert read_operations(link, parser, b"", link.handle) is None
    assert link.seen == [Ping(), Pong()]


def test_reading_returns_the_violation_of_broken_input() -> None:
    link = Link(closes_after=10)
    violation = read_operations(link, RouteParser(), b"PING\r\nBOGUS\r\n", link.handle)
    assert violation is not None
    assert link.seen == [Ping()]


def test_a_deadline_fires_once_unless_cleared() -> None:
    clock = ManualClock()
    expired: list[str] = []
    deadline = LinkDeadline(clock)
    deadline.arm(2.0, lambda: expired.append("first"))
    clock.advance(1.9)
    assert expired == []
    clock.advance(0.2)
    assert expired == ["first"]
    deadline.arm(2.0, lambda: expired.append("second"))
    deadline.clear()
    clock.advance(5.0)
    assert expired == ["first"]


@pytest.mark.parametrize(
    ("reply", "queues", "headers", "route_line", "leaf_line"),
    [
        ("", [], None, b"RMSG $G a 1\r\nx\r\n", b"LMSG a 1\r\nx\r\n"),
        ("r", [], None, b"RMSG $G a r 1\r\nx\r\n", b"LMSG a r 1\r\nx\r\n"),
        ("", ["g1", "g2"], None, b"RMSG $G a | g1 g2 1\r\nx\r\n", b"LMSG a | g1 g2 1\r\nx\r\n"),
        ("r", ["g"], b"H\r\n\r\n", b"HMSG $G a + r g 5 6\r\nH\r\n\r\nx\r\n", b"HMSG a + r g 5 6\r\nH\r\n\r\nx\r\n"),
    ],
)
def test_route_and_leaf_message_lines(
    reply: str, queues: list[str], headers: bytes | None, route_line: bytes, leaf_line: bytes
) -> None:
    assert route_wire.routed_msg("$G", "a", reply, queues, headers, b"x") == route_line
    assert leaf_wire.leaf_msg("a", reply, queues, headers, b"x") == leaf_line
