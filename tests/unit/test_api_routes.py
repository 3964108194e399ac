"""The ``$JS.API`` route table: every subject nats-server 2.15 answers resolves to the right route.

The rows are checked against each other: who serves a row and its handler
agree, rows of one response type carry the same facts, error fields are Go
zero values, info requests go to the info queue, no row or declined prefix
shadows another.

The subjects are those of the inventory of nats-server's API
(``$JS.API.INFO`` ... ``CONSUMER.PEER.EVACUATE``); the system-account-only
ones (``META``, ``SERVER``, ``ACCOUNT``) are not routed, as in an ordinary
account.  The dispatcher is exercised on a JetStream over a real router
and a manual clock: no sockets.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from fakejs.core.broker import Broker
from fakejs.core.options import ServerOptions
from fakejs.jetstream import JetStreamWithApi, service
from fakejs.jetstream.api import consumers, leaders, streams
from fakejs.jetstream.api.routes import ROUTES
from fakejs.jetstream.api.table import Route
from fakejs.testkit.clock import ManualClock

# (subject, handler, response type, named tokens, served by)
INVENTORY: list[tuple[str, Any, str, dict[str, str], str]] = [
    ("$JS.API.INFO", streams.account_info, "account_info_response", {}, "api"),
    ("$JS.API.STREAM.CREATE.S1", streams.create, "stream_create_response", {"stream": "S1"}, "api"),
    ("$JS.API.STREAM.UPDATE.S1", streams.update, "stream_update_response", {"stream": "S1"}, "api"),
    ("$JS.API.STREAM.NAMES", streams.names, "stream_names_response", {}, "api"),
    ("$JS.API.STREAM.LIST", streams.listing, "stream_list_response", {}, "api"),
    ("$JS.API.STREAM.INFO.S1", streams.info, "stream_info_response", {"stream": "S1"}, "api"),
    ("$JS.API.STREAM.DELETE.S1", streams.delete, "stream_delete_response", {"stream": "S1"}, "api"),
    ("$JS.API.STREAM.PURGE.S1", streams.purge, "stream_purge_response", {"stream": "S1"}, "api"),
    ("$JS.API.STREAM.SNAPSHOT.S1", streams.snapshot, "stream_snapshot_response", {"stream": "S1"}, "api"),
    ("$JS.API.STREAM.RESTORE.S1", streams.restore, "stream_restore_response", {"stream": "S1"}, "api"),
    (
        "$JS.API.STREAM.MSG.DELETE.S1",
        streams.delete_message,
        "stream_msg_delete_response",
        {"stream": "S1"},
        "api",
    ),
    ("$JS.API.STREAM.MSG.GET.S1", streams.get_message, "stream_msg_get_response", {"stream": "S1"}, "api"),
    (
        "$JS.API.STREAM.PEER.REMOVE.S1",
        leaders.stream_remove_peer,
        "stream_remove_peer_response",
        {"stream": "S1"},
        "api",
    ),
    (
        "$JS.API.STREAM.PEER.EVACUATE.S1",
        streams.needs_cluster,
        "stream_evacuate_peer_response",
        {"stream": "S1"},
        "api",
    ),
    (
        "$JS.API.STREAM.CANCEL_MOVE.S1",
        streams.needs_cluster,
        "stream_cancel_move_response",
        {"stream": "S1"},
        "api",
    ),
    (
        "$JS.API.STREAM.LEADER.STEPDOWN.S1",
        leaders.stream_stepdown,
        "stream_leader_stepdown_response",
        {"stream": "S1"},
        "api",
    ),
    ("$JS.API.DIRECT.GET.S1", None, "", {"stream": "S1"}, "stream"),
    ("$JS.API.DIRECT.GET.S1.kv.a.b", None, "", {"stream": "S1", "subject": "kv.a.b"}, "stream"),
    ("$JS.API.CONSUMER.CREATE.S1", consumers.create_ephemeral, "consumer_create_response", {"stream": "S1"}, "api"),
    (
        "$JS.API.CONSUMER.CREATE.S1.C1",
        consumers.create_named,
        "consumer_create_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.CREATE.S1.C1.orders.*.eu",
        consumers.create_named,
        "consumer_create_response",
        {"stream": "S1", "consumer": "C1", "filter": "orders.*.eu"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.DURABLE.CREATE.S1.C1",
        consumers.create_durable,
        "consumer_create_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    ("$JS.API.CONSUMER.NAMES.S1", consumers.names, "consumer_names_response", {"stream": "S1"}, "api"),
    ("$JS.API.CONSUMER.LIST.S1", consumers.listing, "consumer_list_response", {"stream": "S1"}, "api"),
    (
        "$JS.API.CONSUMER.INFO.S1.C1",
        consumers.info,
        "consumer_info_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.DELETE.S1.C1",
        consumers.delete,
        "consumer_delete_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.PAUSE.S1.C1",
        consumers.pause,
        "consumer_pause_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.UNPIN.S1.C1",
        consumers.unpin,
        "consumer_unpin_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.RESET.S1.C1",
        consumers.reset,
        "consumer_reset_response",
        {"stream": "S1", "consumer": "C1"},
        "consumer",
    ),
    ("$JS.API.CONSUMER.MSG.NEXT.S1.C1", None, "", {"stream": "S1", "consumer": "C1"}, "consumer"),
    (
        "$JS.API.CONSUMER.LEADER.STEPDOWN.S1.C1",
        leaders.consumer_stepdown,
        "consumer_leader_stepdown_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.PEER.REMOVE.S1.C1",
        leaders.consumer_remove_peer,
        "consumer_remove_peer_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
    (
        "$JS.API.CONSUMER.PEER.EVACUATE.S1.C1",
        streams.needs_cluster,
        "consumer_evacuate_peer_response",
        {"stream": "S1", "consumer": "C1"},
        "api",
    ),
]

NOT_ROUTED = [
    "$JS.API.META.LEADER.STEPDOWN",
    "$JS.API.META.RESCUE",
    "$JS.API.SERVER.REMOVE",
    "$JS.API.SERVER.EVACUATE",
    "$JS.API.ACCOUNT.PURGE.A",
    "$JS.API.ACCOUNT.STREAM.MOVE.A.S1",
    "$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.A.S1",
    "$JS.API.STREAM.TEMPLATE.NAMES",
    "$JS.API.STREAM.FOO",
    "$JS.API.FOO.BAR",
    "$JS.API.STREAM.INFO.S1.extra",
    "$JS.API.CONSUMER.INFO.S1",
    "$JS.API.CONSUMER.DURABLE.CREATE.S1",
]


@pytest.mark.parametrize(("subject", "handler", "response_type", "tokens", "served_by"), INVENTORY)
def test_every_inventory_subject_resolves_to_its_route(
    subject: str, handler: Any, response_type: str, tokens: dict[str, str], served_by: str
) -> None:
    route = ROUTES.find(subject)
    assert route is not None, subject
    assert route.handler is handler
    assert route.response_type == response_type
    assert route.served_by == served_by
    assert route.bind(subject) == tokens


def test_every_route_is_in_the_inventory() -> None:
    resolved = {ROUTES.find(subject) for subject, *_ in INVENTORY}
    assert {route.pattern for route in ROUTES.routes} == {route.pattern for route in resolved if route is not None}


@pytest.mark.parametrize("subject", NOT_ROUTED)
def test_other_subjects_are_not_routed(subject: str) -> None:
    assert ROUTES.find(subject) is None


def test_consumer_creation_checks_the_api_level_after_decoding() -> None:
    creators = (consumers.create_ephemeral, consumers.create_named, consumers.create_durable)
    late = [route for route in ROUTES.routes if not route.level_first]
    cluster_only = (streams.needs_cluster, leaders.consumer_stepdown, leaders.consumer_remove_peer)
    assert {route.handler for route in late} == {*creators, *cluster_only}
    assert all(route.pattern.startswith("$JS.API.CONSUMER.") for route in late)
    info = ROUTES.find("$JS.API.STREAM.INFO.S1")
    assert info is not None and info.level_first


def test_a_pattern_names_its_tokens_and_matches_like_a_subscription() -> None:
    route = Route("$JS.API.X.{stream}.{rest...}", "x_response", None)
    assert route.subject == "$JS.API.X.*.>"
    assert route.response == "io.nats.jetstream.api.v1.x_response"
    assert route.bind("$JS.API.X.S.a.b.c") == {"stream": "S", "rest": "a.b.c"}


# -- the rows agree with each other -------------------------------------------------------------------

GO_ZERO_VALUES = (0, False, None, [], "0001-01-01T00:00:00Z")  # the last: Go's zero time.Time
ROUTED_BY_TYPE = {route.response_type: route for route in ROUTES.routes if route.response_type}


def _subject_of(route: Route) -> str:
    """A subject the row's pattern matches: ``T`` for a token, ``a.b`` for the rest of the subject."""
    return re.sub(r"\{\w+\.\.\.\}", "a.b", re.sub(r"\{\w+\}", "T", route.pattern))


@pytest.mark.parametrize("route", ROUTES.routes, ids=lambda route: route.pattern)
def test_every_row_answers_its_own_subjects_alone(route: Route) -> None:
    subject = _subject_of(route)
    assert ROUTES.find(subject) is route  # no other row overlaps it
    assert ROUTES.declines(subject) == bool(route.declined_prefix)  # no declined prefix shadows another row


@pytest.mark.parametrize("route", ROUTES.routes, ids=lambda route: route.pattern)
def test_who_serves_a_row_matches_its_handler(route: Route) -> None:
    if route.served_by == "api":
        assert route.handler is not None and route.response_type
        assert not route.asset_request and not route.declined_prefix
    elif route.asset_request:  # handed over by the asset, answered by the handler
        assert route.handler is not None and route.response_type
        assert not route.declined_prefix
    else:  # answered by the asset itself, with status messages: nothing for the dispatcher to know
        assert route.handler is None and route.response_type == ""
        assert route.pattern.startswith(route.declined_prefix) and route.declined_prefix
        assert (route.error_extras, route.info_queue, route.offline_answer, route.proposed) == ({}, False, False, "")


@pytest.mark.parametrize("route", ROUTES.routes, ids=lambda route: route.pattern)
def test_rows_of_one_response_type_agree(route: Route) -> None:
    if not route.response_type:
        return
    first = ROUTED_BY_TYPE[route.response_type]
    facts = ("error_extras", "info_queue", "offline_answer", "proposed")
    assert [getattr(route, name) for name in facts] == [getattr(first, name) for name in facts]
    assert route.served_by == first.served_by


@pytest.mark.parametrize("route", ROUTED_BY_TYPE.values(), ids=lambda route: route.response_type)
def test_error_extras_are_go_zero_values_after_type_and_error(route: Route) -> None:
    assert not {"type", "error"} & set(route.error_extras)
    assert all(
        value in GO_ZERO_VALUES and type(value) in (int, bool, type(None), list, str)
        for value in route.error_extras.values()
    )
    paged = route.response_type.endswith(("_names_response", "_list_response"))
    if paged or route.response_type == "stream_info_response":  # nats-server's ApiPaged comes first
        assert list(route.error_extras)[:3] == ["total", "offset", "limit"]
    with pytest.raises(TypeError):
        route.error_extras["more"] = 0  # type: ignore[index]


@pytest.mark.parametrize("route", ROUTED_BY_TYPE.values(), ids=lambda route: route.response_type)
def test_info_lists_and_names_go_to_the_info_queue(route: Route) -> None:
    assert route.info_queue == route.response_type.endswith(("info_response", "_names_response", "_list_response"))


@pytest.mark.parametrize("route", ROUTES.routes, ids=lambda route: route.pattern)
def test_cluster_facts_need_a_stream(route: Route) -> None:
    named = route.bind(_subject_of(route))
    if route.offline_answer or route.proposed:
        assert "stream" in named
    if route.offline_answer:  # an "offline" answer is about one asset: the info of a stream or consumer
        assert route.info_queue and not route.proposed
    if route.proposed == "replicated":  # only a stream's replica count decides
        assert "consumer" not in named


@pytest.mark.parametrize(
    ("subject", "declined"),
    [
        ("$JS.API.DIRECT.GET", True),  # nats-server's ``jsDirectGetPre`` has no trailing dot
        ("$JS.API.DIRECT.GET.S1.a.b", True),
        ("$JS.API.CONSUMER.MSG.NEXT.S1", True),  # no row, still left to the consumer
        ("$JS.API.CONSUMER.MSG.NEXT", False),
        ("$JS.API.CONSUMER.RESET.S1.C1", False),  # handed over, never declined
        ("$JS.API.STREAM.INFO.S1", False),
    ],
)
def test_declined_prefixes(subject: str, declined: bool) -> None:
    assert ROUTES.declines(subject) is declined


# -- the dispatcher, on a JetStream without sockets ---------------------------------------------------


class Client:
    """Requests through the router; replies land in ``self.replies``."""

    def __init__(self, js: service.JetStream) -> None:
        self.router = js.router
        self.replies: list[tuple[str, bytes | None, bytes]] = []
        self.router.subscribe_internal("inbox", lambda s, r, h, p, o: self.replies.append((r, h, p)))

    def request(self, subject: str, body: Any = None, hdr: bytes | None = None) -> bool:
        payload = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        return self.router.publish(subject, "inbox", hdr, payload, None)

    def last(self) -> dict[str, Any]:
        return dict(json.loads(self.replies[-1][2]))


@pytest.fixture
def js() -> Iterator[JetStreamWithApi]:
    broker = Broker(ServerOptions(seed=7), ManualClock(start_ns=1_700_000_000_000_000_000))
    jetstream = JetStreamWithApi(broker, tempfile.mkdtemp(prefix="fakejs-unit-"), own_store=True)
    jetstream.start()
    yield jetstream
    jetstream.stop()


def test_replies_carry_the_route_type_and_are_counted(js: JetStreamWithApi) -> None:
    client = Client(js)
    client.request("$JS.API.STREAM.CREATE.S1", {"name": "S1", "subjects": ["s.>"], "storage": "memory"})
    created = client.last()
    assert created["type"] == "io.nats.jetstream.api.v1.stream_create_response"
    assert created["did_create"] is True
    client.request("$JS.API.STREAM.INFO.NOPE")
    assert client.last() == {
        "type": "io.nats.jetstream.api.v1.stream_info_response",
        "error": {"code": 404, "err_code": 10059, "description": "stream not found"},
        "total": 0,
        "offset": 0,
        "limit": 0,
    }
    assert (js.api_total, js.api_errors) == (2, 1)


def test_named_tokens_reach_the_handler(js: JetStreamWithApi) -> None:
    client = Client(js)
    client.request("$JS.API.STREAM.CREATE.S1", {"name": "S1", "subjects": ["s.>"], "storage": "memory"})
    body = {"stream_name": "S1", "config": {"filter_subject": "s.b", "ack_policy": "explicit"}}
    client.request("$JS.API.CONSUMER.CREATE.S1.C1.s.a", body)
    assert client.last()["error"]["err_code"] == 10131  # the subject's filter is s.a, the body's s.b
    client.request("$JS.API.CONSUMER.CREATE.S1.C1.s.b", body)
    info = client.last()
    assert (info["stream_name"], info["name"], info["config"]["filter_subject"]) == ("S1", "C1", "s.b")


def test_unknown_subjects_are_swallowed_and_asset_subjects_declined(js: JetStreamWithApi) -> None:
    client = Client(js)
    assert client.request("$JS.API.FOO.BAR") is True  # taken, never answered
    assert client.request("$JS.API.CONSUMER.RESET.S1.C1") is True  # no such consumer: silence too
    assert client.replies == []
    # Served by the stream or consumer itself: with none there, nobody takes them.
    assert client.request("$JS.API.DIRECT.GET.S1", {"seq": 1}) is False
    assert client.request("$JS.API.CONSUMER.MSG.NEXT.S1.C1", {"batch": 1}) is False
    assert js.api_total == 0


def test_a_message_get_is_not_counted(js: JetStreamWithApi) -> None:
    client = Client(js)
    client.request("$JS.API.STREAM.CREATE.S1", {"name": "S1", "subjects": ["s.>"], "storage": "memory"})
    js.router.publish("s.a", "", None, b"hello", None)
    client.request("$JS.API.STREAM.MSG.GET.S1", {"seq": 1})
    assert client.last()["message"]["data"] == "aGVsbG8="
    assert js.api_total == 1


def test_a_reset_handed_over_by_the_consumer_is_answered_with_an_empty_reply_to(js: JetStreamWithApi) -> None:
    client = Client(js)
    client.request("$JS.API.STREAM.CREATE.S1", {"name": "S1", "subjects": ["s.>"], "storage": "memory"})
    client.request("$JS.API.CONSUMER.DURABLE.CREATE.S1.C1", {"stream_name": "S1", "config": {"durable_name": "C1"}})
    counted = js.api_total
    client.request("$JS.API.CONSUMER.RESET.S1.C1", b"not json")
    reply_to, _, payload = client.replies[-1]
    assert reply_to == ""
    doc = json.loads(payload)
    assert list(doc) == ["type", "error", "reset_seq"]
    assert (doc["error"]["err_code"], doc["reset_seq"]) == (10025, 0)
    client.request("$JS.API.CONSUMER.RESET.S1.C1")
    assert client.last()["type"] == "io.nats.jetstream.api.v1.consumer_reset_response"
    assert client.last()["name"] == "C1"
    assert js.api_total == counted


def test_the_service_alone_has_no_api() -> None:
    broker = Broker(ServerOptions(seed=7), ManualClock(start_ns=1_700_000_000_000_000_000))
    bare = service.JetStream(broker, tempfile.mkdtemp(prefix="fakejs-unit-"), own_store=True)
    bare.start()
    try:
        assert Client(bare).request("$JS.API.INFO") is False
    finally:
        bare.stop()
