"""The ``$JS.EVENT.ADVISORY.API`` audit of a JetStream replicated across servers: sent by the server that answers.

As nats-server's, the audit names the server that answered (``server``) and
the requester's ``ClientInfo``.  A request that reached the answering server
over a route brings its requester's ``ClientInfo`` as the server it arrived
on described it (:mod:`fakejs.core.request_info`, nats-server's
``Nats-Request-Info``): :func:`request_info` is what an account's router
writes into the copies it sends.  A request routed without it (none of
fakejs's servers sends one so) is named by its account and the other
server's name only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.request_info import ForwardedRequest, RequestInfo
from fakejs.core.session import ClientSession
from fakejs.jetstream import advisories
from fakejs.jetstream.internal_client import InternalClient

if TYPE_CHECKING:
    from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["API_PREFIX", "audit", "client_info", "request_info"]

API_PREFIX = "$JS.API."  # the subjects of the API a request of which carries its requester's info


def request_info(js: JetStream) -> RequestInfo:
    """What the account's router writes into an API request it sends over a route: the requester's
    ``ClientInfo`` (a client of this server's, or this server's own internal client's)."""

    def describe(origin: object) -> dict[str, Any] | None:
        if isinstance(origin, (ClientSession, InternalClient)):
            return advisories.requester_info(js, origin)
        return None

    return RequestInfo(API_PREFIX, describe)


def client_info(js: JetStream, origin: object) -> dict[str, Any]:
    """The requester's ``ClientInfo`` as this server knows it: a client of its own in full, and one of another
    server as that server described it (else by its account and that server's name only)."""
    if isinstance(origin, ForwardedRequest):
        return dict(origin.client_info)
    remote = getattr(origin, "remote_name", None)
    if isinstance(remote, str) and remote:
        return {"acc": js.account_name, "server": remote}
    return advisories.requester_info(js, origin)


def audit(js: JetStream, subject: str, request: bytes, response: bytes, client: Callable[[], dict[str, Any]]) -> None:
    """The ``$JS.EVENT.ADVISORY.API`` audit of an answered request, from this server (when someone listens)."""
    if js.router.has_interest(advisories.AUDIT_SUBJECT):
        advisories.api_audit(js, subject, request, response, client())
