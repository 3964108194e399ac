"""What an account without JetStream hears on ``$JS.API``, on a server whose JetStream is on.

nats-server answers each API request of such an account with the
endpoint's response type and ``JetStream not enabled for account`` (503,
10039), its list endpoints with their empty paging fields too; requests no
endpoint matches are swallowed, and the subjects a stream or consumer
serves itself (Direct Get, pull requests) have no responder at all.
"""

from __future__ import annotations

from typing import Any

from fakejs.core.router import Router, Subscription
from fakejs.jetstream.api.dispatch import encode, error_doc
from fakejs.jetstream.errors import api_error


def serve_disabled(router: Router, local_only: bool = False) -> Subscription:
    """Answer ``$JS.API.>`` on ``router`` as for an account without JetStream (unsubscribe to stop).

    ``local_only``: in a cluster, each server answers its own clients (the others are not told).
    """
    error = api_error("JSNotEnabledForAccountErr")

    def answer(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> bool:
        # The route table comes with the first request, as for an account with JetStream (start-up time)
        from fakejs.jetstream.api.routes import ROUTES

        if ROUTES.declines(subject):
            return False
        route = ROUTES.find(subject)
        if route is None:
            return True
        if route.served_by != "api":
            return False
        if reply:
            router.publish(reply, "", None, encode(error_doc(route, error)), None)
        return True

    return router.subscribe_internal("$JS.API.>", answer, local_only=local_only)
