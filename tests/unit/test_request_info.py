"""The requester's info a request carries over a route (``Nats-Request-Info``): written, then taken out."""

from __future__ import annotations

from typing import Any

from fakejs.core.request_info import ForwardedRequest, RequestInfo
from fakejs.protocol import headers


class Route:
    remote_name = "n1"


def describe(origin: object) -> dict[str, Any] | None:
    return {"acc": "$G", "server": "n1", "kind": "Client"} if origin == "client" else None


INFO = RequestInfo("$JS.API.", describe)
CARRIED = b'NATS/1.0\r\nNats-Request-Info: {"acc":"$G","server":"n1","kind":"Client"}\r\n\r\n'


def test_a_clients_request_carries_its_info_and_other_messages_do_not() -> None:
    assert INFO.sent("$JS.API.INFO", None, "client") == CARRIED
    assert INFO.sent("$JS.API.INFO", None, "route") is None  # not a client of this server
    assert INFO.sent("orders.new", None, "client") is None
    mine = headers.build([("X", "1")])
    assert INFO.sent("$JS.API.INFO", mine, "client") == mine[:-2] + CARRIED[len(b"NATS/1.0\r\n") :]


def test_the_receiver_takes_the_info_out_and_keeps_the_requests_own_headers() -> None:
    route = Route()
    block, origin = INFO.received("$JS.API.INFO", CARRIED, route)
    assert block is None and isinstance(origin, ForwardedRequest)
    assert (origin.client_info, origin.remote_name, origin.route) == (describe("client"), "n1", route)
    mine = headers.build([("X", "1")])
    block, origin = INFO.received("$JS.API.INFO", INFO.sent("$JS.API.INFO", mine, "client") or b"", route)
    assert block == mine and isinstance(origin, ForwardedRequest)


def test_what_is_not_a_request_with_info_passes_as_it_came() -> None:
    route = Route()
    for subject, block in [
        ("orders.new", CARRIED),  # not the API
        ("$JS.API.INFO", headers.build([("X", "1")])),  # no info
        ("$JS.API.INFO", b"NATS/1.0\r\nNats-Request-Info: {not json\r\n\r\n"),
        ("$JS.API.INFO", b"NATS/1.0\r\nNats-Request-Info: [1]\r\n\r\n"),
    ]:
        assert INFO.received(subject, block, route) == (block, route)
