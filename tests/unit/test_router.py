"""The router without sockets: subscriptions, fan-out, queue groups, auto-unsubscribe, internal handlers."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakejs.core.empty_reply import EMPTY_REPLY
from fakejs.core.router import InvalidSubject, Router, Subscription
from fakejs.core.subjects import SubscriptionIndex


class Owner:
    """A subscriber that keeps what it was handed."""

    def __init__(self, name: str, echo: bool = True) -> None:
        self.name = name
        self.echo = echo
        self.denies = None
        self.got: list[tuple[str, str, str, bytes | None, bytes]] = []
        self.removed: list[Subscription] = []

    def deliver(
        self, sub: Subscription, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any
    ) -> None:
        self.got.append((sub.sid, subject, reply, headers, payload))

    def remove_subscription(self, sub: Subscription) -> None:
        self.removed.append(sub)

    def limit_reached(self, sub: Subscription, exceeded: bool) -> None:
        pass


def _sub(router: Router, owner: Owner, subject: str, sid: str = "1", queue: str = "") -> Subscription:
    sub = Subscription(subject, queue, sid, owner)
    router.subscribe(sub)
    return sub


def test_publish_reaches_every_matching_subscription() -> None:
    router = Router(random.Random(1))
    a, b, c = Owner("a"), Owner("b"), Owner("c")
    _sub(router, a, "orders.*")
    _sub(router, b, "orders.>")
    _sub(router, c, "other")
    assert router.publish("orders.new", "reply", b"H", b"data") is True
    assert a.got == [("1", "orders.new", "reply", b"H", b"data")]
    assert b.got == [("1", "orders.new", "reply", b"H", b"data")]
    assert c.got == []
    assert router.publish("nobody", "", None, b"") is False


def test_shown_as_changes_the_subject_subscribers_see() -> None:
    router = Router()
    owner = Owner("a")
    _sub(router, owner, "deliver.here")
    router.publish("deliver.here", "", None, b"x", shown_as="orders.1")
    assert owner.got[0][1] == "orders.1"


def test_one_member_per_queue_group_chosen_by_the_generator() -> None:
    def picks(seed: int) -> list[str]:
        router = Router(random.Random(seed))
        members = [Owner(name) for name in "abc"]
        for i, member in enumerate(members):
            _sub(router, member, "work", str(i), queue="q")
        plain = Owner("plain")
        _sub(router, plain, "work")
        order = []
        for _ in range(20):
            before = [len(m.got) for m in members]
            router.publish("work", "", None, b"")
            [chosen] = [m.name for m, n in zip(members, before) if len(m.got) == n + 1]
            order.append(chosen)
        assert len(plain.got) == 20 and sum(len(m.got) for m in members) == 20
        return order

    assert picks(7) == picks(7)  # the same generator seed picks the same members
    assert len(set(picks(7))) > 1


def test_echo_off_skips_the_publisher_itself() -> None:
    router = Router()
    quiet, other = Owner("quiet", echo=False), Owner("other")
    _sub(router, quiet, "s")
    _sub(router, other, "s")
    router.publish("s", "", None, b"", origin=quiet)
    assert quiet.got == [] and len(other.got) == 1


def test_auto_unsubscribe_after_max_messages() -> None:
    router = Router()
    owner = Owner("a")
    sub = _sub(router, owner, "s")
    sub.max = 2
    for _ in range(3):
        router.publish("s", "", None, b"")
    assert len(owner.got) == 2
    assert owner.removed == [sub] and sub.closed
    assert not router.has_interest("s")


def test_unsubscribe_is_idempotent_and_invalid_subjects_are_refused() -> None:
    router = Router()
    sub = _sub(router, Owner("a"), "s")
    router.unsubscribe(sub)
    router.unsubscribe(sub)
    assert router.index.count == 0
    with pytest.raises(InvalidSubject):
        router.subscribe(Subscription("bad..subject", "", "1", Owner("b")))


def test_internal_handler_may_decline_a_message() -> None:
    router = Router()
    seen: list[tuple[str, str]] = []

    def handler(subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> bool:
        seen.append((subject, reply))
        return False

    router.subscribe_internal("api.>", handler)
    assert router.publish("api.x", "r", None, b"") is False  # declined: nobody took it
    assert seen == [("api.x", "r")]


def test_failing_internal_handler_is_reported_and_fan_out_goes_on() -> None:
    errors: list[tuple[str, BaseException]] = []
    router = Router(on_error=lambda where, exc: errors.append((where, exc)))
    owner = Owner("client")

    def broken(subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        raise ZeroDivisionError("bad handler")

    router.subscribe_internal("s.*", broken)
    _sub(router, owner, "s.1")
    assert router.publish("s.1", "", None, b"x") is True
    assert len(owner.got) == 1
    [(where, exc)] = errors
    assert where == "internal subscription on 's.*' (a message on 's.1')"
    assert isinstance(exc, ZeroDivisionError)


def test_interest_watchers_hear_of_exact_subscriptions() -> None:
    router = Router()
    calls: list[str] = []

    def watcher() -> None:
        calls.append("changed")

    router.watch_interest("deliver", watcher)
    sub = _sub(router, Owner("a"), "deliver")
    assert router.has_exact_interest("deliver")
    _sub(router, Owner("b"), "deliver", queue="q")
    assert router.has_exact_interest("deliver", "q") and not router.has_exact_interest("deliver", "other")
    router.unsubscribe(sub)
    router.unwatch_interest("deliver", watcher)
    _sub(router, Owner("c"), "deliver")
    assert calls == ["changed", "changed", "changed"]


def test_empty_reply_is_an_empty_string() -> None:
    assert EMPTY_REPLY == "" and not EMPTY_REPLY


class Route:
    """Another server's side of a route: the messages sent on to it."""

    rid = 1
    remote_name = "n2"
    carries_request_info = True

    def __init__(self) -> None:
        self.forwarded: list[tuple[str, list[str]]] = []

    def forward(
        self, account: str, subject: str, reply: str, queues: list[str], headers: bytes | None, payload: bytes
    ) -> None:
        self.forwarded.append((subject, queues))


class Remote:
    """The cluster's side of an account, with one remote queue member."""

    account = "$G"
    carries_imports = False
    has_fallbacks = False

    def __init__(self) -> None:
        self.index = SubscriptionIndex()

    def local_changed(self, sub: Subscription, delta: int) -> None:
        pass


@pytest.mark.parametrize("seed", range(8))
def test_a_queue_message_no_local_member_takes_goes_to_another_servers_member(seed: int) -> None:
    """nats-server's queue delivery: a local member that declines (its own request, no echo) leaves it to a route."""
    router = Router(random.Random(seed))
    remote, route = Remote(), Route()
    remote.index.insert(Subscription("work", "q", "", route))
    router.remote = remote
    declined: list[str] = []
    router.subscribe_internal(
        "work", lambda subject, reply, headers, payload, origin: declined.append(subject) or False, queue="q"
    )
    assert router.publish("work", "", None, b"x")
    assert route.forwarded == [("work", ["q"])]
