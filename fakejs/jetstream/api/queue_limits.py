"""nats-server's JetStream API queue limits (``jetstream { request_queue_limit, info_queue_limit }``).

nats-server hands every ``$JS.API`` request it serves to one of two queues
(the info queue for account, stream and consumer info, names and lists:
the routes marked ``info_queue``; the request queue for the rest) and, when
the queue holds as many requests as its limit after the push, drops them
all: no reply, no audit, the warning ``JetStream API queue limit reached,
dropping N requests`` (``JetStream API info queue ...``; at most once a
second) and
``$JS.EVENT.ADVISORY.API.LIMIT_REACHED`` in the system account
(:func:`~fakejs.jetstream.advisories.api_limit_reached`).

fakejs answers each request as it arrives, so its queue holds only that
one: a limit of 1 drops every request of that queue, any other limit none.
The request limit defaults to 10,000 and the info limit to the request
limit, as on nats-server.
"""

from __future__ import annotations

from typing import Protocol

from fakejs.core.options import ServerOptions

__all__ = ["DEFAULT_REQUEST_QUEUE_LIMIT", "QueueHost", "dropped"]

# nats-server's ``JSDefaultRequestQueueLimit``.
DEFAULT_REQUEST_QUEUE_LIMIT = 10_000
# One warning a second for both queues: nats-server rate-limits the format, not the text.
WARNING_FORMAT = "%s limit reached, dropping %d requests"
# How many requests fakejs's queue holds when it looks: the one it is about to answer.
PENDING = 1


class QueueHost(Protocol):
    """What the check reads: the server's options and its rate-limited log."""

    @property
    def options(self) -> ServerOptions: ...

    def rate_limited_warning(self, text: str, key: str = "") -> None: ...


def _limits(options: ServerOptions) -> tuple[int, int]:
    """(request queue limit, info queue limit), defaults applied as nats-server does."""
    request = options.jetstream_request_queue_limit
    request = request if request > 0 else DEFAULT_REQUEST_QUEUE_LIMIT
    info = options.jetstream_info_queue_limit
    return request, info if info > 0 else request


def dropped(host: QueueHost, info: bool) -> int:
    """How many requests the queue of this request (the info queue or the request queue) drops now
    (0: it is answered), the warning logged."""
    request_limit, info_limit = _limits(host.options)
    limit = info_limit if info else request_limit
    if limit > PENDING:
        return 0
    queue = "JetStream API info queue" if info else "JetStream API queue"
    host.rate_limited_warning(WARNING_FORMAT % (queue, PENDING), key=WARNING_FORMAT)
    return PENDING
