"""The requester's identity a request carries to another server of the cluster (nats-server's ``Nats-Request-Info``).

nats-server's JetStream API is a service its accounts import from the
system account; the import writes the requester's ``ClientInfo`` into the
request as a ``Nats-Request-Info`` header (``ClientInfoHdr``), so that the
server answering it, maybe another one of the cluster, knows who asked (its
API audit names the client in full).  fakejs's servers answer the API in the
account itself: an account's router given a :class:`RequestInfo` writes the
header into the copy of such a request it sends over a route, and the
receiving server's route link takes it out again before any subscriber sees
the message, handing the requester's info on as the message's origin
(:class:`ForwardedRequest`).  A subscriber of the account on the other server
gets the request as it was sent, as nats-server's account copy has no header.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakejs.gocompat.gojson import dumps
from fakejs.protocol import headers as header_block

__all__ = ["HEADER", "ForwardedRequest", "RequestInfo"]

HEADER = "Nats-Request-Info"


class ForwardedRequest:
    """The origin of a request another server sent on with its requester's info: the route it came over
    (``route``, named by ``remote_name``) and the requester's ``ClientInfo`` as that server described it."""

    __slots__ = ("client_info", "route")

    def __init__(self, route: object, client_info: dict[str, Any]) -> None:
        self.route = route
        self.client_info = client_info

    @property
    def remote_name(self) -> str:
        """The name of the server the request came from (the route's other end)."""
        return str(getattr(self.route, "remote_name", "") or "")


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """Which requests of an account carry their requester's info across the routes (subjects starting with
    ``prefix``), and ``describe``: the ``ClientInfo`` of a message's origin, or ``None`` for an origin that is
    not a client of this server (nothing is written then)."""

    prefix: str
    describe: Callable[[object], dict[str, Any] | None]

    def sent(self, subject: str, headers: bytes | None, origin: object) -> bytes | None:
        """The headers of the copy of a message sent over a route: with the requester's info for a request."""
        if not subject.startswith(self.prefix):
            return headers
        client_info = self.describe(origin)
        if client_info is None:
            return headers
        return header_block.set_value(headers, HEADER, dumps(client_info))

    def received(self, subject: str, headers: bytes, route: object) -> tuple[bytes | None, object]:
        """The headers a route brought, without the requester's info, and the message's origin: the route,
        or a :class:`ForwardedRequest` when the info came with it."""
        if not subject.startswith(self.prefix):
            return headers, route
        carried = header_block.get(headers, HEADER)
        if carried is None:
            return headers, route
        try:
            client_info = json.loads(carried)
        except ValueError:
            return headers, route
        if not isinstance(client_info, dict):
            return headers, route
        return header_block.remove(headers, HEADER) or None, ForwardedRequest(route, client_info)
