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
    TRACE_HOP,
    MessageTrace,
    TraceSource,
    TracingServer,
    begin_trace,
    may_trace,
    publish_traced,
    replace_header,
)

if TYPE_CHECKING:
    from fakejs.core.accounts import Account
    from fakejs.core.router import RouteOwner

__all__ = ["hand_over", "publish_routed_traced"]


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


def hand_over(
    trace: MessageTrace,
    broker: TracingServer,
    links: tuple[RouteOwner, RouteOwner],
    account: Account,
    message: tuple[str, bytes | None, bytes],
) -> tuple[MessageTrace | None, bytes]:
    """The trace a server hands a message over to, as if the message had crossed the route to it.

    A cluster whose servers share one JetStream stores a message where it
    arrived; nats-server sends it to the stream leader's server, which
    traces the ``js`` event.  ``links`` are the route from the arrival
    server to ``broker`` (the leader's, for the ``eg`` event) and back (for
    the leader's ``in`` event); ``message`` is ``(subject, headers,
    payload)``.  Returns the leader's trace (``None`` when its headers no
    longer ask for one) and the headers with the hop, as the leader stores them.
    """
    out, back = links
    subject, headers, payload = message
    hop = trace.route_egress(out)
    routed = replace_header(headers or b"", TRACE_HOP, hop)
    source = TraceSource(ROUTER_KIND, back.rid, back.remote_name, account, back, broker, None)
    _, leader_trace, routed = begin_trace(source, subject, routed, len(routed) + len(payload))
    return leader_trace, routed
