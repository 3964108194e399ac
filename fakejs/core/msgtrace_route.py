"""Message tracing across a route: the trace event of the server a traced message was sent on to.

The server a traced message entered the cluster on sends it on to each
other server that has interest with a ``Nats-Trace-Hop`` header (``1``,
``2``...; see :meth:`~fakejs.core.msgtrace.MessageTrace.forward`) and
records an ``eg`` event of kind 1 (a route) naming that server and the
hop.  The server that receives it traces it too, as nats-server does, and
sends its own event to the same destination, in the message's account on
that server: its ``request`` shows the hop header (and counts it in
``msgsize``), its ``in`` event is of kind 1, names the sending server and
the route's connection id, and its egress events are its own clients'.
A trace-only message is sent on too, and is not delivered there either.
Sampling (``traceparent``) is decided where the message entered: a
message the sampling left out arrives with ``Nats-Trace-Dest: trace
disabled``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakejs.core.msgtrace import (
    ROUTER_KIND,
    TraceSource,
    TracingServer,
    begin_trace,
    may_trace,
    publish_traced,
)

if TYPE_CHECKING:
    from fakejs.core.accounts import Account
    from fakejs.core.router import RouteOwner

__all__ = ["publish_routed_traced"]


def publish_routed_traced(
    broker: TracingServer,
    link: RouteOwner,
    account: Account,
    message: tuple[str, str, tuple[str, ...], bytes | None, bytes],
) -> bool:
    """Trace a message a route brought, if its headers ask for it; whether it was handled here.

    ``broker`` gives the clock, log, accounts and the event's ``server``
    block; ``link`` is the route (its ``rid`` and the remote server's
    name); ``message`` is ``(subject, reply, queues, headers, payload)``.
    When ``False`` (no trace asked), the caller delivers the message as usual.
    """
    subject, reply, queues, headers, payload = message
    if headers is None or not may_trace(headers):
        return False
    source = TraceSource(ROUTER_KIND, link.rid, link.remote_name, account, link, broker, None)
    skip, trace, headers = begin_trace(source, subject, headers, len(headers) + len(payload))
    if trace is None:
        if not skip:
            account.router.publish_routed(subject, reply, queues, headers, payload, link)
        return True
    router = account.router

    def publish() -> str:
        router.publish_routed(subject, reply, queues, headers, payload, link)
        return ""

    publish_traced(broker, trace, publish)
    return True
