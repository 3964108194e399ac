"""One client connection's protocol logic, without the socket.

A :class:`ClientSession` takes bytes (:meth:`ClientSession.data_received`),
runs them through the sans-IO parser, applies each operation the way
nats-server's ``client.go`` does, and queues outgoing frames.  The socket
layer supplies a :class:`ClientIO` to flush them and to hang up; timers
(ping interval, stale detection, authentication timeout) run on the
server's clock.  What a session needs from the server that accepted it is
the small :class:`SessionHost` interface (the broker implements it); its
subscriptions live in the router of its account.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from fakejs.core.accounts import Account, Accounts
from fakejs.core.auth import NONCE_RAW_LEN, Login, LoginRules, new_nonce
from fakejs.core.clientio import (
    AUTH_TIMEOUT,
    CLIENT_CLOSED,
    MAX_CONNECTIONS_EXCEEDED,
    SERVER_SHUTDOWN,
    SLOW_CONSUMER_PENDING,
    STALE_CONNECTION,
    UNFLUSHED_REASONS,
    WEBSOCKET,
    ClientIO,
    TransportDetails,
)
from fakejs.core.clock import TimerHandle
from fakejs.core.connect import ConnectHandler, LoginHost
from fakejs.core.empty_reply import EMPTY_REPLY
from fakejs.core.hooks import WireTap
from fakejs.core.jetstream_limits import NO_LIMIT
from fakejs.core.keepalive import Keepalive
from fakejs.core.msgtrace import MessageTrace, may_trace, publish_traced, start_trace
from fakejs.core.options import ServerOptions
from fakejs.core.permissions import PermissionChecker
from fakejs.core.publish_refusals import no_responders, publish_violation, reply_violation
from fakejs.core.read_deferrals import ReadDeferrals
from fakejs.core.router import InvalidSubject, Subscription
from fakejs.core.stats import Stats
from fakejs.core.subjects import RESERVED_REPLY_PREFIXES, is_reserved_reply
from fakejs.core.sublimits import apply_limits, at_limit, refuse_subscription, subscribe_violation
from fakejs.core.trace import ProtocolTrace
from fakejs.core.violations import end_for_violation
from fakejs.protocol import writer
from fakejs.protocol.connect import DEFAULT_CLIENT_OPTS
from fakejs.protocol.events import (
    Connect,
    Info,
    Notice,
    Ok,
    Ping,
    Pong,
    ProtocolViolation,
    Pub,
    Sub,
    Unsub,
)
from fakejs.protocol.parser import Parser

ERR_AUTH_TIMEOUT = "Authentication Timeout"
ERR_STALE = "Stale Connection"
ERR_INVALID_SUBJECT = "Invalid Subject"
SYS_QUEUE_GROUP = "_sys_"  # the queue group nats-server keeps for its own subscriptions: no client may join it

# Fast producers are held back while a consumer they feed is over 3/4 of max_pending: up to 2 ms per
# message (5 ms once it is over the limit) and at most 10 ms per read, as nats-server's stall gate does.
STALL_SHORT = 0.002
STALL_LONG = 0.005
STALL_PER_READ = 0.010
# Queued output this large is written at once: the client reads a long batch as it is made.  What a read
# produces first goes out sooner (the client starts on it while the rest is made), then in larger writes.
FIRST_EARLY_WRITE = 2 * 1024
EARLY_WRITE = 8 * 1024

TOO_MANY_CONNECTIONS = "maximum connections exceeded"  # nats-server's ErrTooManyConnections


class SessionHost(LoginHost, Protocol):
    """What a session needs from the server that accepted it (:class:`~fakejs.core.broker.Broker`)."""

    options: ServerOptions
    random: random.Random
    stats: Stats
    accounts: Accounts
    clients: dict[int, ClientSession]  # the registered clients, counted against max_connections
    tap: WireTap | None  # what clients send and are sent, when the test kit watches them
    deferrals: ReadDeferrals  # what handlers put off while a client's read is applied

    def next_client_id(self) -> int: ...

    def add_client(self, client: ClientSession) -> None: ...

    def remove_client(self, client: ClientSession, subs: Iterable[Subscription] = ()) -> None: ...

    def info_fields(self, client: ClientSession | None = None, connect_info: bool = False) -> dict[str, Any]: ...

    @property
    def nonce_required(self) -> bool:
        """Whether INFO carries a nonce for the client to sign (nkey users)."""
        ...

    def login_rules(self, details: TransportDetails) -> LoginRules:
        """How a client on this kind of connection logs in (may it skip CONNECT? how long has it?)."""
        ...

    def trace_server_info(self) -> dict[str, Any]:
        """The ``server`` block of a message trace event (the system messages' header)."""
        ...


class ClientSession:
    """Protocol state of one client connection.

    Until CONNECT says otherwise the session belongs to the global account
    (a server without authentication accepts messages before CONNECT).
    CONNECT and the login are handled by its :class:`~fakejs.core.connect.ConnectHandler`.
    """

    broker: SessionHost

    def __init__(self, broker: SessionHost, io: ClientIO, host: str = "", port: int = 0, kind: str = "Client") -> None:
        self.broker = broker
        self.io = io
        self.account: Account = broker.accounts.default
        self.cid = broker.next_client_id()
        self.host = host
        self.port = port
        self.kind = kind
        options = broker.options
        self.parser = Parser(max_control_line=options.max_control_line, max_payload=options.max_payload)
        # nats-server's trace lines for this connection (-V, trace: true); None when not traced.
        self.trace: ProtocolTrace | None = None
        if options.trace:
            self.trace = ProtocolTrace(broker.log, self, options.max_traced_msg_len, options.trace_headers)
            self.parser.trace = self.trace.incoming
        # What nats-server's log lines name the client by once CONNECT is accepted (its ``ncs``).
        self.label = ""
        rules = broker.login_rules(io.details)
        self.parser.auth_pending = rules.required
        # A no_auth_user lets a client skip CONNECT: its first other operation logs it in (telnet demos).
        self._login_on_first_op = rules.required and rules.implicit_login
        if self._login_on_first_op:
            self.parser.auth_pending = False
        self.opts: dict[str, Any] = dict(DEFAULT_CLIENT_OPTS)
        self.echo = True
        self.verbose = True
        self.headers = False
        self.no_responders = False
        self.protocol = 0
        self.connect_received = False
        self.first_pong_sent = False
        self.subs: dict[str, Subscription] = {}
        self.max_subs = NO_LIMIT  # subscriptions allowed (see fakejs.core.sublimits)
        # Authentication: the nonce INFO asked to sign, the login CONNECT made, and its permissions
        # (None: unrestricted).  ``denies`` is set once deliveries must be checked against
        # the subscribe deny list (the router asks it before delivering).
        self.nonce = ""
        self.login: Login | None = None
        self.perms: PermissionChecker | None = None
        self.denies: Callable[[str, str], bool] | None = None
        self.closed = False
        self.close_reason = ""
        self.stopped_ns = 0
        self.paused = False
        self.stall_budget = STALL_PER_READ
        self.out: list[bytes] = []
        self.out_size = 0
        self.early_write_at = FIRST_EARLY_WRITE  # queued output written before the turn's end, at this size
        self.in_msgs = 0
        self.in_bytes = 0
        self.out_msgs = 0
        self.out_bytes = 0
        clock = broker.clock
        self.started = clock.monotonic()
        self.started_ns = clock.time_ns()
        self.last_activity = self.started
        self.last_in = 0.0
        self.keepalive = Keepalive(self, clock, options, broker.random)
        self._auth_timer: TimerHandle | None = None
        self.connecting = ConnectHandler(self)
        self._handlers: dict[type, Callable[[Any], object]] = {
            Pub: self._on_pub,
            Sub: self._on_sub,
            Unsub: self._on_unsub,
            Ping: self._on_ping,
            Pong: self._on_pong,
            Connect: self.connecting.on_connect,
            Notice: self._on_notice,
            Info: _ignore,
            Ok: _ignore,
        }

    def __repr__(self) -> str:
        return f"{self.host}:{self.port} - {'wid' if self.websocket else 'cid'}:{self.cid}{self.label}"

    @property
    def websocket(self) -> bool:
        """The client speaks through WebSocket frames (nats-server names it ``wid:N`` in its log)."""
        return self.io.details.connection_type == WEBSOCKET

    @property
    def name(self) -> str:
        return str(self.opts.get("name", ""))

    @property
    def subscription_count(self) -> int:
        return len(self.subs)

    @property
    def rtt(self) -> float:
        """The last measured round-trip time in seconds (0 before CONNECT)."""
        return self.keepalive.rtt

    def start(self) -> None:  # greet the client with INFO and start the timers
        if self.register():
            self.greet()
            self.start_timers()

    def register(self) -> bool:
        """Count the client in (a TLS handshake may come before :meth:`greet`); False: no room, closed."""
        broker = self.broker
        limit = broker.options.max_connections
        if limit < 0 or (limit > 0 and len(broker.clients) >= limit):  # greeted, told there is no room, closed
            self.greet()
            broker.log.error("%s - %s", self, TOO_MANY_CONNECTIONS)
            return self.refuse(TOO_MANY_CONNECTIONS, MAX_CONNECTIONS_EXCEEDED)
        broker.add_client(self)
        if broker.nonce_required:
            self.nonce = new_nonce(broker.random.randbytes(NONCE_RAW_LEN))
        return True

    def greet(self) -> None:
        self.send(writer.info(self.broker.info_fields(self)))

    def start_timers(self) -> None:
        """The login and keepalive timers (after the TLS handshake, as nats-server starts them).

        The client is in the global account until it logs in: that account's limits apply.
        """
        broker = self.broker
        if (rules := broker.login_rules(self.io.details)).required:
            self._auth_timer = broker.clock.call_later(rules.timeout, self._auth_timeout)
        self.keepalive.start()
        broker.log.debug("%s - Client connection created", self)
        apply_limits(self, broker.options, broker.clock, broker.log)

    def close(self, reason: str = CLIENT_CLOSED, abort: bool = False) -> None:
        """Close the connection; pending output is still written unless ``abort``."""
        if self.closed:
            return
        if reason in UNFLUSHED_REASONS:
            self.drop_output()
        self.closed = True
        self.close_reason = reason
        self._cancel_timers()
        self.stopped_ns = self.broker.clock.time_ns()
        router = self.account.router
        final_subs = list(self.subs.values())  # /connz?state=closed still lists them
        for sub in final_subs:
            router.unsubscribe(sub)
        self.subs.clear()
        self.broker.remove_client(self, final_subs)
        tap = self.broker.tap
        if tap:
            tap.closed(self)
        if abort:
            self.io.abort()
        else:
            self.io.close()
        self.broker.log.debug("%s - Client connection closed: %s", self, reason)
        if self.trace is not None and reason != SERVER_SHUTDOWN:  # a server going down removes nothing
            for sub in final_subs:
                self.trace.removed(sub.sid)

    def connection_lost(self) -> None:
        """The peer went away."""
        self.close(CLIENT_CLOSED, abort=True)

    def _cancel_timers(self) -> None:
        self.keepalive.cancel()
        self.stop_auth_timer()

    def stop_auth_timer(self) -> None:
        if self._auth_timer is not None:
            self._auth_timer.cancel()
            self._auth_timer = None

    def refuse(self, error: str, reason: str) -> bool:
        """Tell the client why (``-ERR``) and close it; False, for the check that refused."""
        self.send_err(error)
        self.close(reason)
        return False

    # -- output ----------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        """Queue a frame; the socket layer writes queued frames in order."""
        if self.closed:
            return
        if self.trace is not None:
            self.trace.outgoing(frame)
        if not self.out:
            self.io.want_flush()
        self.out.append(frame)
        self.out_size += len(frame)
        if self.out_size >= self.early_write_at:
            self.early_write_at = EARLY_WRITE
            self.io.write_early()

    def send_err(self, text: str) -> None:
        self.send(writer.err(text))

    def drop_output(self) -> None:
        """Forget what is queued (nats-server closes some clients without flushing it)."""
        self.out.clear()
        self.out_size = 0

    def take_output(self) -> bytes:
        """Everything queued, as one buffer (called by the socket layer)."""
        if not self.out:
            return b""
        data = self.out[0] if len(self.out) == 1 else b"".join(self.out)
        self.out.clear()
        self.out_size = 0
        return data

    def deliver(
        self, sub: Subscription, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object
    ) -> None:
        """Queue ``MSG``/``HMSG`` for a subscription of this client."""
        subject_bytes = subject.encode("utf-8", "surrogateescape")
        reply_bytes = reply.encode("utf-8", "surrogateescape")
        size = len(payload)
        if headers is not None and self.headers:
            empty = reply is EMPTY_REPLY
            frame = writer.hmsg(subject_bytes, sub.sid_bytes, None if empty else reply_bytes, headers, payload)
            size += len(headers)
        elif reply_bytes:  # writer.msg(), without the call
            frame = b"MSG %s %s %s %d\r\n%s\r\n" % (subject_bytes, sub.sid_bytes, reply_bytes, size, payload)
        elif reply is EMPTY_REPLY:
            frame = writer.msg(subject_bytes, sub.sid_bytes, None, payload)
        else:
            frame = b"MSG %s %s %d\r\n%s\r\n" % (subject_bytes, sub.sid_bytes, size, payload)
        if self.closed:
            return
        tap = self.broker.tap
        if tap:
            tap.delivered(self, sub.subject, subject, reply, headers, payload)
        self.out_msgs += 1
        self.out_bytes += size
        stats = self.broker.stats
        stats.out_msgs += 1
        stats.out_bytes += size
        if self.trace is not None:  # send(frame), without the call
            self.trace.outgoing(frame)
        out = self.out
        if not out:
            self.io.want_flush()
        out.append(frame)
        self.out_size += len(frame)
        if self.out_size >= self.early_write_at:
            self.early_write_at = EARLY_WRITE
            self.io.write_early()
        perms = self.perms
        if reply and perms is not None and perms.tracks_replies:
            perms.received_reply(reply, self.broker.clock.monotonic())
        pending = self.out_size + self.io.write_buffer_size()
        max_pending = self.broker.options.max_pending
        if pending > max_pending:
            self.slow_consumer(SLOW_CONSUMER_PENDING)
        elif pending > max_pending // 4 * 3 and isinstance(origin, ClientSession) and origin is not self:
            origin.stall(STALL_LONG if pending >= max_pending else STALL_SHORT)

    def stall(self, seconds: float) -> None:
        """Hold back this (producing) client for a moment, within its per-read budget."""
        if self.paused or self.stall_budget <= 0 or self.closed:
            return
        seconds = min(seconds, self.stall_budget)
        self.stall_budget -= seconds
        self.paused = True
        self.io.pause_reading(seconds)

    def resume(self) -> None:
        """End a stall: carry on with what was already received."""
        if self.paused:
            self.paused = False
            self._process()

    def slow_consumer(self, reason: str) -> None:
        """Cut off a client that does not read fast enough, as nats-server does."""
        broker = self.broker
        broker.stats.slow_consumers += 1
        if reason == SLOW_CONSUMER_PENDING:
            detail = f"MaxPending of {broker.options.max_pending} Exceeded"
        else:
            detail = f"WriteDeadline of {broker.options.write_deadline} exceeded"
        broker.log.info("%s - Slow Consumer Detected: %s", self, detail)
        self.out.clear()
        self.out_size = 0
        self.close(reason, abort=True)

    def drop_subscriptions(self) -> None:
        router = self.account.router
        for sub in list(self.subs.values()):
            sub.max = 0
            router.unsubscribe(sub)
        self.subs.clear()

    def limit_reached(self, sub: Subscription, exceeded: bool) -> None:
        if exceeded:
            self.broker.log.debug("%s - Auto-unsubscribe limit [%d] exceeded", self, sub.max)
        else:
            self.broker.log.debug("%s - Auto-unsubscribe limit of %d reached for sid '%s'", self, sub.max, sub.sid)

    def remove_subscription(self, sub: Subscription) -> None:
        if self.subs.get(sub.sid) is sub:
            del self.subs[sub.sid]
            if self.trace is not None:
                self.trace.removed(sub.sid)

    # -- input -----------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        """Parse and apply everything the client sent."""
        if self.closed:
            return
        self.parser.receive_data(data)
        self.stall_budget = STALL_PER_READ
        self.early_write_at = FIRST_EARLY_WRITE
        if not self.paused:
            self._process()

    def _process(self) -> None:
        parser = self.parser
        handlers = self._handlers
        activity = False
        deferrals = self.broker.deferrals
        deferrals.reading += 1
        try:
            while not self.closed and not self.paused:
                event = parser.next_event()
                if event is None:
                    break
                kind = type(event)
                if self._login_on_first_op:
                    self._login_on_first_op = False
                    if kind is not Connect and not self.connecting.implicit_login():
                        return
                if kind is Pub or kind is Sub or kind is Unsub:
                    activity = True
                handlers[kind](event)
        except ProtocolViolation as violation:
            end_for_violation(self, violation, self.broker.log)
        finally:
            deferrals.reading -= 1
            if deferrals.queued and not deferrals.reading:  # the read is applied: its output out, then the rest
                if self.out and not self.closed:
                    self.io.write_early()
                deferrals.run()
        if activity:
            self.last_in = self.last_activity = self.broker.clock.monotonic()

    def _on_pub(self, event: Pub, traced: MessageTrace | None = None) -> str:
        """Count a message in, check and route it; returns the error text of a refused one ("" once routed).

        A message whose headers ask for a trace comes back here with its
        ``traced`` (see :func:`~fakejs.core.msgtrace.publish_traced`).
        """
        payload = event.payload
        headers = event.headers
        if traced is None:
            size = len(payload) + (len(headers) if headers is not None else 0)
            self.in_msgs += 1
            self.in_bytes += size
            stats = self.broker.stats
            stats.in_msgs += 1
            stats.in_bytes += size
            if headers is not None and may_trace(headers):
                skip, started, headers = start_trace(self, event.subject, headers, size)
                event = Pub(event.subject, event.reply, headers, event.payload)
                if started is not None:
                    publish_traced(self.broker, started, lambda: self._on_pub(event, started))
                if skip or started is not None:
                    return ""
        router = self.account.router
        subject = event.subject if router.mappings is None else router.map_published(event.subject)
        if subject != event.subject and traced is not None:
            traced.mapped(subject)
        if self.trace is not None:
            if subject != event.subject:
                self.trace.mapped(event.subject, subject)
            self.trace.published(headers, payload)
        if len(subject) > 5 and subject.startswith("_GR_."):
            return publish_violation(self, subject, self.broker.log)
        perms = self.perms
        if perms is not None and perms.checks_publish and not perms.can_publish(subject, self.broker.clock.monotonic()):
            return publish_violation(self, subject, self.broker.log)
        if subject.startswith("$NRG."):
            return publish_violation(self, subject, self.broker.log)
        reply = event.reply
        if reply and reply.startswith(RESERVED_REPLY_PREFIXES) and is_reserved_reply(reply):
            return reply_violation(self, reply, self.broker.log)
        if self.verbose:
            self.send(writer.OK)
        tap = self.broker.tap
        if tap:
            tap.published(self, subject, reply, headers, payload)
        if (deferrals := self.broker.deferrals).queued:  # work a message on this subject could see is done first
            deferrals.before(subject)
        delivered = router.publish(subject, reply, headers, payload, self)
        if not delivered and reply and self.no_responders:
            no_responders(self, router, subject, reply)
        return ""

    def _on_sub(self, event: Sub) -> None:
        perms = self.perms
        if event.queue == SYS_QUEUE_GROUP or (
            perms is not None and not perms.can_subscribe(event.subject, event.queue)
        ):
            subscribe_violation(self, event.subject, event.queue, event.sid, self.broker.log)
            return
        if at_limit(self):
            refuse_subscription(self, self.broker.clock, self.broker.log)
            return
        if perms is not None and perms.denies and self.denies is None:
            self.denies = perms.delivery_denied
        existing = self.subs.get(event.sid)
        if existing is None:
            sub = Subscription(event.subject, event.queue, event.sid, self)
            try:
                self.account.router.subscribe(sub)
            except InvalidSubject:
                self.send_err(ERR_INVALID_SUBJECT)
                return
            self.subs[event.sid] = sub
            tap = self.broker.tap
            if tap:
                tap.subscribed(self, event.subject)
        if self.verbose:
            self.send(writer.OK)

    def _on_unsub(self, event: Unsub) -> None:
        if self.verbose:  # nats-server acknowledges before it removes the subscription
            self.send(writer.OK)
        sub = self.subs.get(event.sid)
        if sub is not None:
            if event.max > 0 and event.max > sub.delivered:
                sub.max = event.max
            else:
                sub.max = 0
                del self.subs[event.sid]
                self.account.router.unsubscribe(sub)
                if self.trace is not None:
                    self.trace.removed(sub.sid)

    def _on_ping(self, event: Ping) -> None:
        faults = self.broker.faults
        if faults and faults.fire("client.ping", cid=self.cid, name=self.name):
            return  # a stalled server: no PONG
        self.send(writer.PONG)
        self.last_in = self.broker.clock.monotonic()
        if self.connect_received and not self.first_pong_sent:
            self.first_pong_sent = True
            if self.protocol >= 1:
                self.send(writer.info(self.broker.info_fields(self, connect_info=True)))

    def _on_pong(self, event: Pong) -> None:
        self.keepalive.pong()

    def _on_notice(self, event: Notice) -> None:
        self.send_err(event.text)

    # -- timers ----------------------------------------------------------------

    def _auth_timeout(self) -> None:
        self._auth_timer = None
        if not self.connect_received and not self.closed:
            self.refuse(ERR_AUTH_TIMEOUT, AUTH_TIMEOUT)

    def debug(self, text: str) -> None:
        self.broker.log.debug("%s - %s", self, text)

    def stale(self) -> None:
        """Too many PINGs went unanswered (called by the keepalive)."""
        self.broker.log.debug("%s - Stale Client Connection - Closing", self)
        # nats-server queues this -ERR without tracing it.
        trace, self.trace = self.trace, None
        self.send_err(ERR_STALE)
        self.trace = trace
        self.close(STALE_CONNECTION)


def _ignore(event: Any) -> None:
    pass
