"""The parser's events as values: compared by value, shown with their fields, taken apart by ``match``.

The compiled build (see setup.py) compiles the events too; these run on both builds.
"""

from __future__ import annotations

import pytest

from fakejs.protocol.events import Connect, Event, Notice, Ping, Pong, Pub, Sub, Unsub


def describe(event: Event) -> str:
    """What ``match`` finds in an event, by position and by keyword."""
    match event:
        case Pub(subject, reply, None, payload):
            return f"pub {subject} {reply} {payload!r}"
        case Pub(subject=subject, headers=headers):
            return f"hpub {subject} {headers!r}"
        case Sub(subject, queue, sid):
            return f"sub {subject} {queue or '-'} {sid}"
        case Unsub(sid=sid, max=most):
            return f"unsub {sid} {most}"
        case Connect(options):
            return f"connect {sorted(options)}"
        case Ping():
            return "ping"
        case _:
            return "other"


def test_match_takes_events_apart_by_position_and_keyword() -> None:
    assert describe(Pub("a.b", "r", None, b"x")) == "pub a.b r b'x'"
    assert describe(Pub("a.b", "", b"NATS/1.0\r\n\r\n", b"")) == "hpub a.b b'NATS/1.0\\r\\n\\r\\n'"
    assert describe(Sub("a.>", "", "7")) == "sub a.> - 7"
    assert describe(Sub("a", "q", "8")) == "sub a q 8"
    assert describe(Unsub("7", -1)) == "unsub 7 -1"
    assert describe(Connect({"verbose": False, "echo": True})) == "connect ['echo', 'verbose']"
    assert describe(Ping()) == "ping"
    assert describe(Pong()) == "other"


def test_events_name_their_fields_for_match() -> None:
    assert Pub.__match_args__ == ("subject", "reply", "headers", "payload")
    assert Notice.__match_args__ == ("text",)
    assert Ping.__match_args__ == ()


def test_events_are_equal_by_class_and_fields() -> None:
    assert Pub("a", "", None, b"x") == Pub("a", "", None, b"x")
    assert hash(Pub("a", "", None, b"x")) == hash(Pub("a", "", None, b"x"))
    assert Pub("a", "", None, b"x") != Pub("a", "", None, b"y")
    assert Ping() == Ping()
    assert Ping() != Pong()
    assert Sub("a", "", "1") != ("a", "", "1")
    assert len({Ping(), Ping(), Pong()}) == 2


def test_events_are_shown_with_their_fields() -> None:
    assert repr(Sub("a", "", "1")) == "Sub(subject='a', queue='', sid='1')"
    assert repr(Pub("a", "r", None, b"x")) == "Pub(subject='a', reply='r', headers=None, payload=b'x')"
    assert repr(Ping()) == "Ping()"


def test_events_take_no_other_attributes() -> None:
    event = Unsub("1", 2)
    with pytest.raises(AttributeError):
        event.other = 1  # type: ignore[attr-defined]
