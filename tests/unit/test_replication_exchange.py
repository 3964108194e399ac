"""The in-process exchange: a message handed over before ``publish`` returns, in the order sent; a cut drops it."""

from __future__ import annotations

from fakejs.jetstream.replication.exchange import LocalExchange


def test_messages_are_delivered_at_once_in_the_order_sent_even_from_a_delivery() -> None:
    exchange = LocalExchange()
    a, b = exchange.wire("a"), exchange.wire("b")
    seen: list[tuple[str, bytes]] = []

    def at_b(subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object) -> None:
        seen.append(("b", payload))
        if payload == b"1":
            b.publish("to-a", "", None, b"answer")  # sent while "1" is being delivered: after "2"
            seen.append(("b", b"sent answer"))

    a.subscribe_internal("to-a", lambda *args: seen.append(("a", args[3])))
    b.subscribe_internal("to-b", at_b)
    assert a.publish("to-b", "", None, b"1")
    assert seen == [("b", b"1"), ("b", b"sent answer"), ("a", b"answer")]
    assert b.has_interest("to-a") and not b.has_interest("to-c")


def test_a_cut_drops_what_crosses_it_and_an_unsubscribed_member_gets_nothing() -> None:
    exchange = LocalExchange()
    a, b = exchange.wire("a"), exchange.wire("b")
    seen: list[bytes] = []
    listener = b.subscribe_internal("to-b", lambda *args: seen.append(args[3]))
    exchange.reaches = lambda sender, receiver: False
    assert not a.publish("to-b", "", None, b"cut") and not a.has_interest("to-b")
    exchange.reaches = lambda sender, receiver: True
    assert a.publish("to-b", "", None, b"healed")
    b.unsubscribe(listener)
    assert not a.publish("to-b", "", None, b"gone")
    assert seen == [b"healed"]


def test_a_request_is_claimed_once_per_group() -> None:
    exchange = LocalExchange()
    assert exchange.claim("S-R3F-x", "_INBOX.1")
    assert not exchange.claim("S-R3F-x", "_INBOX.1")
    assert exchange.claim("S-R3F-y", "_INBOX.1")
