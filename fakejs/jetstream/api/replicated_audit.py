"""The ``$JS.EVENT.ADVISORY.API`` audit of a JetStream replicated across servers: sent by the server that answers.

As nats-server's, the audit names the server that answered (``server``) and
the requester's ``ClientInfo``.  A client of the answering server is named
in full; a request that reached it over a route (the client is another
server's) is named by its account and that server's name only: nats-server
carries the requester's whole ``ClientInfo`` with the request, which fakejs's
routes do not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.jetstream import advisories

if TYPE_CHECKING:
    from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["audit", "client_info"]


def client_info(js: JetStream, origin: object) -> dict[str, Any]:
    """The requester's ``ClientInfo`` as this server knows it: a client of its own in full; one of another server
    (a request that came over a route) by its account and that server's name only."""
    remote = getattr(origin, "remote_name", None)
    if isinstance(remote, str) and remote:
        return {"acc": js.account_name, "server": remote}
    return advisories.requester_info(js, origin)


def audit(js: JetStream, subject: str, request: bytes, response: bytes, client: Callable[[], dict[str, Any]]) -> None:
    """The ``$JS.EVENT.ADVISORY.API`` audit of an answered request, from this server (when someone listens)."""
    if js.router.has_interest(advisories.AUDIT_SUBJECT):
        advisories.api_audit(js, subject, request, response, client())
