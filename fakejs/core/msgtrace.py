"""Message tracing: the trace event nats-server sends for a message with ``Nats-Trace-Dest``.

A client that publishes with the header ``Nats-Trace-Dest: <subject>``
gets one JSON document on that subject, in its own account, telling what
the server did with the message (nats-server's ``MsgTraceEvent``):

* ``server``: the system message header of the server;
* ``request``: the message's headers (every value, names as sent) and its
  size (headers and payload);
* ``events``: ``in`` (ingress: who published, in which account, on which
  subject), ``sm`` (the account's subject mapping changed the subject),
  ``si``/``se`` (a service import or stream export carried it to another
  account) and one ``eg`` (egress) per subscription it reached or would
  have reached, with the reason when it was not delivered.

``Nats-Trace-Only`` (``true``, ``on`` or ``1``, in any case) traces the
message without delivering it.  A ``traceparent`` header (W3C trace
context) whose flags have the sampled bit is traced to the account's
``msg_trace { dest }``, for the ``sampling`` percentage of messages.

Only messages with headers are looked at (:func:`may_trace`, one scan of
the header block); the fan-out of a traced message runs through
:meth:`MessageTrace.deliver` instead of the router's own delivery, and
what it sends to the other servers of a cluster through
:meth:`MessageTrace.forward`: an ``eg`` event of kind 1 and a
``Nats-Trace-Hop`` header, so that the other server traces it in turn
(:mod:`fakejs.core.msgtrace_route`).  The event is compressed as the
publisher's ``Accept-Encoding`` asks (:mod:`fakejs.core.msgtrace_encoding`).
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.core.msgtrace_encoding import encode_event
from fakejs.core.subjects import is_valid_literal_subject
from fakejs.gocompat import gojson
from fakejs.gocompat.gotime import rfc3339
from fakejs.protocol import headers as hdrs
from fakejs.protocol.writer import go_quote

if TYPE_CHECKING:
    import logging

    from fakejs.core.accounts import Account, Accounts
    from fakejs.core.clock import Clock
    from fakejs.core.router import RouteOwner, Router, Subscription

__all__ = [
    "MessageTrace",
    "TraceRequest",
    "TraceSource",
    "TracedClient",
    "TracingServer",
    "begin_trace",
    "may_trace",
    "publish_traced",
    "read_trace_request",
    "replace_header",
    "start_trace",
]

TRACE_DEST = "Nats-Trace-Dest"
TRACE_ONLY = "Nats-Trace-Only"
TRACE_HOP = "Nats-Trace-Hop"
# An obsolete header: a message carrying it is not traced (nats-server logs it and disables the trace).
TRACE_ORIGIN_ACCOUNT = "Nats-Trace-Origin-Account"
ACCEPT_ENCODING = "Accept-Encoding"
# What nats-server writes into ``Nats-Trace-Dest`` to stop a message being traced (not a valid subject).
TRACE_DISABLED = "trace disabled"
TRACE_PARENT = b"traceparent"

# Connection kinds as nats-server numbers them (``kind`` in the events).
CLIENT_KIND = 0
ROUTER_KIND = 1

ERROR_NO_ECHO = "Not delivered because of no echo"
ERROR_SUBSCRIPTION_DENIES = "Not delivered because subscription denies this subject"
ERROR_SUBSCRIPTION_CLOSED = "Not delivered because subscription is closed"
ERROR_AUTO_UNSUBSCRIBE_EXCEEDED = "Not delivered because auto-unsubscribe exceeded"

_HINT = re.compile(rb"Nats-Trace-Dest|traceparent", re.IGNORECASE)
_TRACE_ONLY_VALUES = frozenset({"1", "true", "on"})


# A router's own delivery to one subscription (``Router._deliver_own``, unbound): a trace takes it over.
RouterDelivery = Callable[["Router", "Subscription", str, str, "bytes | None", bytes, object], bool]


class TracingServer(Protocol):
    """The server a message is traced on (the broker): its clock, log, accounts and seeded generator,
    and the ``server`` block of the events it sends."""

    @property
    def clock(self) -> Clock: ...

    @property
    def log(self) -> logging.Logger: ...

    @property
    def accounts(self) -> Accounts: ...

    @property
    def random(self) -> random.Random: ...

    def trace_server_info(self) -> dict[str, Any]: ...


class TracedClient(Protocol):
    """A client connection as a trace names it (nats-server's ``client``): its ``cid``, name, account and server."""

    @property
    def cid(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def account(self) -> Account: ...

    @property
    def broker(self) -> TracingServer: ...


def may_trace(headers: bytes) -> bool:
    """Whether a header block may ask for a trace (a cheap scan before :func:`read_trace_request`)."""
    return _HINT.search(headers) is not None


class TraceRequest:
    """What a message's headers ask for: the headers as a map, the destination (if given), trace only."""

    __slots__ = ("accept_encoding", "dest", "external", "headers", "hop", "origin_account", "trace_only")

    def __init__(self, headers: dict[str, list[str]], external: bool) -> None:
        self.headers = headers
        # Only ``traceparent`` asked: the account's ``msg_trace`` decides where (and whether) to trace.
        self.external = external
        self.dest = "" if external else _first(headers, TRACE_DEST)
        self.trace_only = not external and _first(headers, TRACE_ONLY).lower() in _TRACE_ONLY_VALUES
        self.origin_account = _first(headers, TRACE_ORIGIN_ACCOUNT)
        # Set by the server that sent the message on over a route (``1``, ``1.2``...).
        self.hop = _first(headers, TRACE_HOP)
        self.accept_encoding = _first(headers, ACCEPT_ENCODING)


def _first(headers: dict[str, list[str]], name: str) -> str:
    values = headers.get(name)
    return values[0] if values else ""


def _sampled(value: bytes) -> bool:
    """Whether a ``traceparent`` value (version-trace id-parent id-flags) has the sampled flag."""
    parts = value.split(b"-")
    if len(parts) != 4 or len(parts[3]) != 2:
        return False
    try:
        return int(parts[3], 16) & 1 == 1
    except ValueError:
        return False


def read_trace_request(block: bytes) -> TraceRequest | None:
    """The trace a header block asks for (nats-server's ``genHeaderMapIfTraceHeadersPresent``), or ``None``.

    Header names keep their case; a line without a value is left out; a
    destination of ``trace disabled`` turns tracing off.
    """
    if not block.startswith(b"NATS/1.0"):
        return None
    lines = block.split(b"\r\n")[1:]
    headers: dict[str, list[str]] = {}
    dest_found = parent_found = False
    for line in lines:
        name, colon, value = line.partition(b":")
        value = value.strip(b" \t")
        if not colon or not name or not value:
            continue
        if not parent_found and name.lower() == TRACE_PARENT:
            parent_found = _sampled(value)
        elif not dest_found and name == b"Nats-Trace-Dest":
            if value == TRACE_DISABLED.encode():
                return None
            dest_found = True
        text = name.decode("utf-8", "surrogateescape")
        headers.setdefault(text, []).append(value.decode("utf-8", "surrogateescape"))
    if not dest_found and not parent_found:
        return None
    return TraceRequest(headers, external=not dest_found)


def sample(percent: int, rng: random.Random) -> bool:
    """nats-server's ``sample``: a percentage outside 1..99 traces every message."""
    if percent <= 0 or percent >= 100:
        return True
    return rng.randrange(100) <= percent


class TraceSource:
    """Where a traced message came in: a client's connection, or a route from another server.

    ``label`` prefixes the log lines (the connection as nats-server names
    it); ``rng`` is given for a client only: sampling is decided on the
    server the message entered the cluster on.
    """

    __slots__ = ("account", "cid", "clock", "kind", "label", "log", "name", "rng")

    def __init__(
        self,
        kind: int,
        cid: int,
        name: str,
        account: Account,
        label: object,
        broker: TracingServer,
        rng: random.Random | None,
    ) -> None:
        self.kind, self.cid, self.name, self.account, self.label = kind, cid, name, account, label
        self.clock: Clock = broker.clock
        self.log = broker.log
        self.rng = rng


def replace_header(block: bytes, key: str, value: str) -> bytes:
    """nats-server's ``setHeader``: every ``key`` line removed, then ``key: value`` appended."""
    return hdrs.add(hdrs.remove(block, key) or None, key, value)


def start_trace(
    client: TracedClient, subject: str, headers: bytes, size: int
) -> tuple[bool, MessageTrace | None, bytes]:
    """Begin tracing a client's message (nats-server's ``initMsgTrace``): see :func:`begin_trace`."""
    broker = client.broker
    source = TraceSource(CLIENT_KIND, client.cid, client.name, client.account, client, broker, broker.random)
    return begin_trace(source, subject, headers, size)


def begin_trace(
    source: TraceSource, subject: str, headers: bytes, size: int
) -> tuple[bool, MessageTrace | None, bytes]:
    """Begin tracing a message: ``(skip, trace, headers)``.

    ``trace`` is ``None`` when the message is not traced; ``skip`` says a
    trace-only message whose trace cannot be made is dropped; ``headers``
    are the message's, with ``Nats-Trace-Dest: trace disabled`` when the
    message goes on untraced (an obsolete ``Nats-Trace-Origin-Account``, a
    ``traceparent`` the sampling left out), so that no other server traces it.
    """
    request = read_trace_request(headers)
    if request is None:
        return False, None, headers
    if not request.external and not request.dest:
        return request.trace_only, None, headers
    if request.origin_account:
        source.log.error(
            "%s - Message tracing disabled because of header %s with value=%s",
            source.label,
            go_quote(TRACE_ORIGIN_ACCOUNT),
            go_quote(request.origin_account),
        )
        if not request.trace_only:
            headers = replace_header(headers, TRACE_DEST, TRACE_DISABLED)
        return request.trace_only, None, headers
    account = source.account
    dest = request.dest
    if request.external:
        dest = account.trace_dest
        if not dest:
            return False, None, headers
        if source.rng is not None and not sample(account.trace_sampling, source.rng):
            return False, None, replace_header(headers, TRACE_DEST, TRACE_DISABLED)
    if not is_valid_literal_subject(dest):
        source.log.error(
            "%s - Destination %s is not valid, won't be able to trace events", source.label, go_quote(dest)
        )
        return request.trace_only, None, headers
    trace = MessageTrace(source.clock, account, dest, request.trace_only)
    trace.hop = request.hop if source.kind != CLIENT_KIND else ""
    trace.compression = request.accept_encoding
    trace.ingress(request, size, source, subject)
    return False, trace, headers


def publish_traced(broker: TracingServer, trace: MessageTrace, publish: Callable[[], str]) -> None:
    """Run ``publish`` (the checks and fan-out, returning an error text) traced, then send the event."""
    trace.install(broker.accounts)
    try:
        error = publish()
    finally:
        trace.uninstall()
    if error:
        trace.ingress_error(error)
    trace.send(broker.trace_server_info())


class MessageTrace:
    """The trace of one message (nats-server's ``msgTrace``): its events, built as the server handles it.

    ``deliver`` replaces the router's delivery for the fan-out of the
    traced message (see :meth:`install`), adding an egress event for each
    client subscription and leaving the message out when trace only.
    """

    def __init__(self, clock: Clock, account: Account, dest: str, trace_only: bool) -> None:
        self.clock = clock
        self.account = account
        self.dest = dest
        self.trace_only = trace_only
        self.request: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self._installed: list[Router] = []
        self._beyond_import = 0
        self._jetstream: dict[str, Any] = {}
        # The hop this server is (``Nats-Trace-Hop`` of a routed message; "" where the message entered).
        self.hop = ""
        # How many times the message was sent on to another server (``hops``).
        self.hops = 0
        # The publisher's ``Accept-Encoding``: how the event is compressed.
        self.compression = ""

    def _event(self, kind: str) -> dict[str, Any]:
        event: dict[str, Any] = {"type": kind, "ts": rfc3339(self.clock.time_ns())}
        self.events.append(event)
        return event

    def ingress(self, request: TraceRequest, size: int, source: TraceSource, subject: str) -> None:
        """The ``request`` block and the ``in`` event: who sent the message and the subject it used."""
        # Go writes a map's keys sorted.
        self.request = {"header": dict(sorted(request.headers.items()))}
        if size:
            self.request["msgsize"] = size
        event = self._event("in")
        event.update(kind=source.kind, cid=source.cid)
        if source.name:
            event["name"] = source.name
        event.update(acc=self.account.name, subj=subject)

    def ingress_error(self, error: str) -> None:
        """The server refused the message (publish permissions): the ``in`` event says why."""
        self.events[0]["error"] = error

    def mapped(self, to: str) -> None:
        """``sm``: the account's mapping changed the subject to ``to``."""
        self._event("sm")["to"] = to

    def service_import(self, account: str, from_subject: str, to_subject: str) -> None:
        """``si``: a service import carried the request into ``account``."""
        event = self._event("si")
        event["acc"], event["from"], event["to"] = account, from_subject, to_subject

    def stream_export(self, account: str, to_subject: str) -> None:
        """``se``: a stream export carried the message to the importing ``account``."""
        self._event("se").update(acc=account, to=to_subject)

    def jetstream(self, stream: str) -> None:
        """``js``: the message reached a stream (completed by :meth:`jetstream_stored` or :meth:`jetstream_error`)."""
        self._jetstream = self._event("js")
        self._jetstream["stream"] = stream

    def jetstream_stored(self, subject: str, no_interest: bool) -> None:
        """The stream took the message under ``subject`` (``no_interest``: interest retention kept nothing)."""
        event = self._jetstream
        event["ts"] = rfc3339(self.clock.time_ns())
        event["subject"] = subject
        if no_interest:
            event["nointerest"] = True

    def jetstream_error(self, error: str) -> None:
        """The stream refused the message."""
        self._jetstream["error"] = error

    def egress(self, client: TracedClient, sub: Subscription, error: str = "") -> None:
        """``eg``: the message went (or, with ``error``, did not go) to a client's subscription."""
        event = self._event("eg")
        event.update(kind=CLIENT_KIND, cid=client.cid)
        if client.name:
            event["name"] = client.name
        account = client.account.name
        if account != self.account.name:
            event["acc"] = account
        event["sub"] = sub.subject
        if sub.queue:
            event["queue"] = sub.queue
        if error:
            event["error"] = error

    # -- the fan-out ---------------------------------------------------------------------

    def install(self, accounts: Accounts) -> None:
        """Route the traced message's fan-out, in every account, through :meth:`deliver` and :meth:`forward`."""
        for account in accounts:
            self._take_over(account.router)

    def _take_over(self, router: Router) -> None:
        router._deliver = self._delivery_for(router)
        router._forward = self.forward
        self._installed.append(router)

    def uninstall(self) -> None:
        """Give every router its own delivery back."""
        for router in self._installed:
            router._deliver = router._deliver_own
            router._forward = router._forward_own
        self._installed.clear()

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """The routers' own delivery meanwhile: what is sent is no part of the trace (a stream's PubAck)."""
        routers = list(self._installed)
        self.uninstall()
        try:
            yield
        finally:
            for router in routers:
                self._take_over(router)

    def forward(
        self,
        route: RouteOwner,
        account: str,
        subject: str,
        reply: str,
        queues: list[str],
        headers: bytes | None,
        payload: bytes,
    ) -> None:
        """Send the message on to another server with its hop (nats-server's ``setHopHeader``), an ``eg`` event.

        The other server traces it in turn (see
        :mod:`fakejs.core.msgtrace_route`); a trace-only message goes too,
        and is not delivered there either.
        """
        if self._beyond_import:  # no events past an import (see deliver): the message goes on as it is
            route.forward(account, subject, reply, queues, headers, payload)
            return
        hop = self.route_egress(route)
        route.forward(account, subject, reply, queues, replace_header(headers or b"", TRACE_HOP, hop), payload)

    def route_egress(self, route: RouteOwner) -> str:
        """``eg`` of kind 1: the message goes on over ``route`` (its ``rid``, the remote's name); the new hop."""
        self.hops += 1
        hop = f"{self.hop}.{self.hops}" if self.hop else str(self.hops)
        event = self._event("eg")
        event.update(kind=ROUTER_KIND, cid=route.rid)
        if route.remote_name:
            event["name"] = route.remote_name
        event["hop"] = hop
        return hop

    def _delivery_for(self, router: Router) -> Any:
        own = type(router)._deliver_own

        def deliver(
            sub: Subscription, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object
        ) -> bool:
            return self.deliver(router, own, sub, subject, (reply, headers, payload, origin))

        return deliver

    def deliver(
        self, router: Router, own: RouterDelivery, sub: Subscription, subject: str, message: tuple[Any, ...]
    ) -> bool:
        """One subscription's share of the traced fan-out (nats-server's ``deliverMsg`` with a trace)."""
        owner = sub.owner
        if not hasattr(owner, "cid"):  # an internal subscription: imports carry the trace on
            hop = owner.trace_hop
            if hop is None:
                return False if self.trace_only else bool(own(router, sub, subject, *message))
            # Past an import or a stream nats-server records no egress: the message goes on (unless
            # trace only) untold, and a stream's PubAck is no part of the trace.
            self._beyond_import += 1
            try:
                handled = hop(self, router.routed_subject or subject, *message)
                return bool(own(router, sub, subject, *message)) if handled is None else bool(handled)
            finally:
                self._beyond_import -= 1
        if self._beyond_import:
            return True if self.trace_only else bool(own(router, sub, subject, *message))
        origin = message[3]
        if owner is origin and not owner.echo:
            self.egress(owner, sub, ERROR_NO_ECHO)
            return False
        if owner.denies is not None and owner.denies(subject, sub.queue):
            self.egress(owner, sub, ERROR_SUBSCRIPTION_DENIES)
            return False
        if sub.closed:
            self.egress(owner, sub, ERROR_SUBSCRIPTION_CLOSED)
            return False
        if self.trace_only:
            self.egress(owner, sub, "")
            return True
        if sub.max and sub.delivered >= sub.max:
            self.egress(owner, sub, ERROR_AUTO_UNSUBSCRIBE_EXCEEDED)
        delivered = bool(own(router, sub, subject, *message))
        if delivered:
            self.egress(owner, sub, "")
        return delivered

    # -- the event ------------------------------------------------------------------------

    def document(self, server: dict[str, Any]) -> bytes:
        """The trace event as nats-server writes it (``server`` is the system message header)."""
        event: dict[str, Any] = {"server": server, "request": self.request}
        if self.hops:
            event["hops"] = self.hops
        event["events"] = self.events
        return gojson.dumps(event).encode()

    def send(self, server: dict[str, Any]) -> None:
        """Publish the trace event on its destination, in the publisher's account (compressed if it asked)."""
        headers, payload = encode_event(self.document(server), self.compression)
        self.account.router.publish(self.dest, "", headers, payload)
