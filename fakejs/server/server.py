"""The public :class:`Server`: assembles every layer and serves it on asyncio listeners.

The NATS port hands each accepted socket to a
:class:`~fakejs.server.connection.Connection` (and its
:class:`~fakejs.core.session.ClientSession`); the HTTP port serves the
monitoring documents and the control API (:mod:`fakejs.server.http`).
The server implements the small interfaces the layers below ask for:
:class:`~fakejs.testkit.host.ServerActions` (the test kit),
:class:`~fakejs.monitoring.source.MonitoredServer` (monitoring) and
:class:`~fakejs.server.connection.Listener` (connections).  Everything a
server handler raises is recorded in :attr:`Server.errors`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.broker import Broker
from fakejs.core.clientio import SERVER_SHUTDOWN
from fakejs.core.clock import Clock, SystemClock
from fakejs.core.failures import ServerError
from fakejs.core.options import ServerOptions
from fakejs.core.reload_errors import NO_CONFIG_FILE, ReloadRefused
from fakejs.monitoring.records import ClosedConnections
from fakejs.monitoring.system import SystemRequests
from fakejs.protocol import writer as wire
from fakejs.server import start_lines
from fakejs.server.connection import OutputBatch
from fakejs.server.jetstreams import AccountJetStreams
from fakejs.server.listeners import Listeners
from fakejs.testkit.access import ControlAccess
from fakejs.testkit.clock import ManualClock
from fakejs.testkit.conditions import not_met
from fakejs.testkit.control_subjects import ControlSubjects
from fakejs.testkit.faults import Faults
from fakejs.testkit.timeline import Timeline, TimelineFilter
from fakejs.testkit.transcript import Transcript

if TYPE_CHECKING:
    from fakejs.core.accounts import Account
    from fakejs.core.leaf.link import LeafLink
    from fakejs.jetstream import JetStreamWithApi
    from fakejs.server.http import Reply, Request
    from fakejs.server.idle_spin import IdleSpin
    from fakejs.server.leafport import LeafPort
    from fakejs.server.routes import RoutePort
    from fakejs.testkit.conformance import Conformance, ConformanceReport
    from fakejs.testkit.control import Controller

__all__ = ["Server"]


class Server:
    """A fakejs server running on the current asyncio loop.

    ::

        async with Server() as server:          # port 0: a free port
            nc = await nats.connect(server.url)

    Keyword arguments are :class:`~fakejs.core.options.ServerOptions` fields
    (``seed=N`` makes every random choice repeat); ``clock`` may be a
    :class:`~fakejs.testkit.clock.ManualClock` for virtual time.
    """

    def __init__(self, options: ServerOptions | None = None, *, clock: Clock | None = None, **settings: Any) -> None:
        if options is None:
            settings.setdefault("port", 0)
            options = ServerOptions(**settings)
        elif settings:
            raise TypeError("give either options or keyword settings, not both")
        self.options = options
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.faults = Faults(self.clock)
        # Called when a reload changes debug or trace: the command line's log handler follows them.
        self.on_logging_reload: Callable[[ServerOptions], None] | None = None
        # Reads the configuration file (and the flags over it) again for a reload; None: no file to read.
        self.read_options: Callable[[], ServerOptions] | None = None
        self.broker = Broker(options, self.clock, self.faults)
        self.closed_connections = ClosedConnections()
        self.broker.on_client_closed.append(self.closed_connections)
        self.broker.on_leaf_closed.append(self._keep_closed_leaf)
        self.accepting = False
        # The global account's JetStream (None when it has none); every account's in ``jetstreams``.
        self.jetstream: JetStreamWithApi | None = None
        self.jetstreams = AccountJetStreams(self.broker)
        self._control_subjects: ControlSubjects | None = None
        self._system: SystemRequests | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.listeners = Listeners(self, options, self._http_response)
        self.http_requests: dict[str, int] = {}
        self._kept_store: str | None = None  # JetStream store directory carried over a restart
        self.transcripts: dict[int, Transcript] = {}
        # The client conformance watch, when asked for: every session reports its traffic to it.
        self.conformance_watch: Conformance | None = None
        if options.conformance:
            # Only a server asked to watch its clients loads the conformance rules
            from fakejs.testkit.conformance import Conformance

            self.conformance_watch = Conformance(self.clock)
            self.broker.tap = self.conformance_watch
        # What the server did, newest last (options.timeline events; 0: nothing recorded).
        self.recorded = Timeline(self.clock, options.timeline)
        # Set by an in-process cluster on its nodes: every node's timeline, merged (fakejs.server.cluster_timeline).
        self.cluster_timeline: Callable[[TimelineFilter], dict[str, Any]] | None = None
        if self.recorded:
            self._record_timeline()
        self._control: Controller | None = None
        # What the controller wires into the faults, wired before it exists: a fault installed
        # straight on ``server.faults`` runs its action through the controller, made on demand.
        self.faults.run_action = lambda action, args, context: self.control.run(action, args, context)
        self.faults.soon = lambda callback, *args: self.loop.call_soon(callback, *args)
        self.faults.record_error = self.broker.record_error
        self.control_access = ControlAccess(options)
        self.finished = asyncio.Event()  # set when lame duck mode has shut the server down, or it refused to run
        self.broker.on_refusal = self.finished.set
        self.activity = 0  # reads from clients; an idle server lets an autojump clock move
        # Set by the command line (``--spin``): the loop polls a while after each client read (fakejs.server.idle_spin).
        self.idle_spin: IdleSpin | None = None
        self.output_batch = OutputBatch()
        self._autojump: asyncio.Task[None] | None = None
        self.routes: RoutePort | None = None  # the route port, in a cluster
        self.leaf_port: LeafPort | None = None  # the leaf port and remotes, with ``leafnodes``

    def _record_timeline(self) -> None:
        """Give every recording point the timeline (see :mod:`fakejs.core.recorder`)."""
        recorded = self.recorded
        self.broker.timeline = recorded
        self.faults.recorder = recorded
        if self.conformance_watch is not None:
            self.conformance_watch.recorder = recorded

        def connected(client: Any) -> None:
            opts = client.opts
            recorded.record(
                "client.connect",
                client=client.cid,
                name=client.name,
                account=client.account.name,
                lang=opts.get("lang", ""),
                version=opts.get("version", ""),
            )

        def closed(client: Any, subs: Any) -> None:
            recorded.record("client.disconnect", client=client.cid, name=client.name, reason=client.close_reason)

        self.broker.on_client_connected.append(connected)
        self.broker.on_client_closed.append(closed)

    def _clock_advanced(self, seconds: float) -> None:
        self.recorded.record("clock.advance", seconds=seconds)

    def timeline(
        self,
        stream: str | None = None,
        consumer: str | None = None,
        client: int | None = None,
        kind: str | None = None,
        since: int | None = None,
    ) -> list[dict[str, Any]]:
        """What the server did, as JSON-able dicts, oldest first (see docs/guide/timeline.md).

        Filters: a stream's or consumer's name, a client id, an event kind
        (``"deliver"``) or family (``"pull"``: every ``pull.*``), and
        ``since`` (server clock ns: events at or after it).
        """
        return self.recorded.events(TimelineFilter(stream, consumer, client, kind, since))

    def timeline_document(self, **filters: Any) -> dict[str, Any]:
        """What a timeline page shows: the events, the ring's size and what it dropped (the filters are ``timeline()``'s)."""
        return self.recorded.document(TimelineFilter(**filters))

    def timeline_page(self, title: str = "", **filters: Any) -> str:
        """The timeline as one self-contained HTML page (see docs/guide/timeline.md); the filters are ``timeline()``'s."""
        # The page's template comes with the first page asked for
        from fakejs.testkit.timeline_page import render

        return render(self.timeline_document(**filters), title)

    def _keep_closed_leaf(self, link: LeafLink, account: Account) -> None:
        """The broker's callback that keeps each closed leaf connection for ``/connz?state=closed``."""
        # Only a server whose leaf connection closed loads the leaf records of /leafz
        from fakejs.monitoring.leafz import leaf_record

        self.closed_connections.add(leaf_record(link, account, closed=True))

    @property
    def control(self) -> Controller:
        """The controller (clock, faults, actions, scenarios, reset), made the first time it is asked for."""
        if self._control is None:
            # The controller, and what it reaches, comes with the first control request
            from fakejs.testkit.control import Controller

            self._control = Controller(self)
        return self._control

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "server not started"
        return self._loop

    @property
    def port(self) -> int:
        return self.broker.port

    @property
    def host(self) -> str:
        host = self.options.host
        return "127.0.0.1" if host in ("", "0.0.0.0", "::") else host

    @property
    def url(self) -> str:
        host = self.host
        if ":" in host:
            host = f"[{host}]"
        return f"nats://{host}:{self.port}"

    @property
    def http_port(self) -> int | None:
        return self.listeners.http_port

    @property
    def http_scheme(self) -> str:
        """``https`` when the monitoring port serves TLS (``https_port``), else ``http``."""
        return self.listeners.http_scheme

    @property
    def ports_file(self) -> str | None:
        """The ports file written at start (``ports_file_dir``), until the server stops."""
        return self.listeners.ports_file

    @property
    def websocket_url(self) -> str | None:
        """``ws://host:port`` (``wss://`` over TLS) of the websocket port, when there is one."""
        return self.listeners.websocket_url

    @property
    def http_url(self) -> str | None:
        port = self.http_port
        return None if port is None else f"{self.http_scheme}://{self.host}:{port}"

    # -- what went wrong inside ------------------------------------------------------------

    @property
    def errors(self) -> list[ServerError]:
        """Exceptions raised by server handlers (internal subscriptions, timers, faults, control), oldest first."""
        return self.broker.errors

    def take_errors(self) -> list[ServerError]:
        """The recorded errors, forgetting them (for a test that provokes one on purpose)."""
        return self.broker.failures.take()

    # -- Listener (for connections) ---------------------------------------------------------

    def client_activity(self) -> None:
        self.activity += 1
        spin = self.idle_spin
        if spin is not None:
            spin.touch()

    def new_transcript(self, cid: int) -> Transcript | None:
        if not self.options.transcripts:
            return None
        transcript = self.transcripts[cid] = Transcript(cid)
        return transcript

    # -- start and stop -----------------------------------------------------------------------

    async def start(self) -> None:
        """Listen and serve; returns once the server accepts connections."""
        self._loop = asyncio.get_running_loop()
        self.clock.bind(self._loop)
        self.clock.add_error_sink(self.broker.record_error)
        clock = self.clock
        if self.recorded and isinstance(clock, ManualClock) and self._clock_advanced not in clock.on_advance:
            clock.on_advance.append(self._clock_advanced)
        self.broker.events.started()
        options = self.options
        log = self.broker.log
        start_lines.log_starting(log, self.broker)
        await self.listeners.open_monitoring()  # before JetStream, as nats-server opens it
        if options.jetstream:
            self._start_jetstream()
        # The system account's requests ($SYS.REQ.>) and its periodic STATSZ.
        self._system = SystemRequests(self)
        self._system.reload = self.reload
        if self.broker.cluster is None:  # accounts a resolver makes or changes get their JetStream
            self._system.resolver.follow_jetstream(self._follow_account_jetstreams)
        if options.control:
            self._control_subjects = ControlSubjects(lambda: self.control, self.broker)
        self.broker.port = await self.listeners.open_client_port()
        self.accepting = True
        await self.listeners.open_websocket()
        await self._open_routes()
        await self._open_leafs()
        clock = self.clock
        if isinstance(clock, ManualClock) and clock.autojump_threshold is not None and self._autojump is None:
            self._autojump = self._loop.create_task(self._autojump_loop(clock, clock.autojump_threshold))
        log.info("Listening for client connections on %s:%d", options.host or "0.0.0.0", self.port)
        self.listeners.write_ports_file(self.port)
        log.info("Server is ready")
        start_lines.log_fakejs_facts(log, self._facts())

    def _facts(self) -> start_lines.Facts:
        clock = self.clock
        autojump = clock.autojump_threshold if isinstance(clock, ManualClock) else None
        options = self.options
        return start_lines.Facts(
            clock=start_lines.clock_fact(autojump, isinstance(clock, ManualClock)),
            seed=options.seed,
            control=options.control,
            control_token=bool(options.control_token),
            clients_guarded=options.auth_required,
            http_url=self.http_url,
            temporary_store=self.jetstreams.temporary_store,
            loop=start_lines.loop_name(self.loop),
        )

    async def _open_routes(self) -> None:
        """The route port, when the server is in a cluster (after the client port: its URLs travel)."""
        cluster = self.broker.cluster
        if cluster is None:
            return
        # Only a server in a cluster loads the route port
        from fakejs.server.routes import RoutePort, client_connect_urls

        if self.routes is None:
            self.routes = RoutePort(self.broker, cluster)
        await self.routes.open(client_connect_urls(self.options.host, self.port))
        self.broker.cluster_port = self.routes.port

    async def _open_leafs(self) -> None:
        """The leaf port and the remotes, when ``leafnodes`` is configured."""
        leafs = self.broker.leafs
        if leafs is None:
            return
        # Only a server with leaf nodes loads the leaf port
        from fakejs.server.leafport import LeafPort

        if self.leaf_port is None:
            self.leaf_port = LeafPort(self.broker, leafs)
        await self.leaf_port.open()

    @property
    def account_jetstreams(self) -> list[JetStreamWithApi]:
        """Every account's JetStream, for monitoring."""
        return list(self.jetstreams.by_account.values())

    def _follow_account_jetstreams(self) -> None:
        """The accounts' JetStream after their JWTs changed: started, stopped, given their new limits."""
        self.jetstreams.follow_accounts()
        self.jetstreams.follow_limits()

    def _start_jetstream(self) -> None:
        """JetStream for each account that has it (on the store kept over a restart, if any)."""
        store_dir = self._kept_store if self._kept_store is not None else self.options.store_dir
        # A store fakejs made itself (no store_dir given) is removed when the server stops for good.
        self.jetstream = self.jetstreams.start(store_dir, owned=not self.options.store_dir)
        self._kept_store = None

    def _stop_jetstream(self, keep_store: bool = False) -> None:
        if not self.jetstreams.by_account:
            return
        if keep_store:
            self._kept_store = self.jetstreams.store_dir()
        self.jetstreams.stop(keep_store)
        self.jetstream = None

    async def stop(self, keep_store: bool = False, crash: bool = False) -> None:
        """Stop listening and close every client connection (``keep_store``: a restart follows;
        ``crash``: as after nats-server's SIGKILL, without the system account's SHUTDOWN event)."""
        if not self.listeners.serving:
            return
        if self._autojump is not None and not keep_store:
            self._autojump.cancel()
            self._autojump = None
        log = self.broker.log
        log.info("Initiating Shutdown...")
        self.broker.events.shutting_down(announce=not crash)
        self.accepting = False
        self.listeners.stop_accepting()
        if self.routes is not None:  # the other servers forget this one at once (no RS- for each subject)
            await self.routes.close()
        if self.leaf_port is not None:
            await self.leaf_port.close()
            self.leaf_port = None
        if self._control_subjects is not None:
            self._control_subjects.close()
            self._control_subjects = None
        if self._system is not None:
            self._system.stop()
            self._system = None
        self._stop_jetstream(keep_store)
        for client in list(self.broker.clients.values()):
            client.close(SERVER_SHUTDOWN)
        if isinstance(self.clock, ManualClock) and self._clock_advanced in self.clock.on_advance:
            self.clock.on_advance.remove(self._clock_advanced)
        self.broker.events.stop()
        await self.listeners.close()
        start_lines.log_stopped(log)
        if not keep_store:
            self.clock.remove_error_sink(self.broker.record_error)
        log.info("Server Exiting..")

    # -- a view inside (fakejs only) ---------------------------------------------------

    def state(self, messages: int = 100) -> dict[str, Any]:
        """Clients, streams with their messages, consumers with pending acks and waiting pulls, faults."""
        return self.control.state(messages)

    def consumer_state(self, stream: str, consumer: str) -> dict[str, Any]:
        return self.control.consumer_state(stream, consumer)

    def transcript(self, client: int | str) -> Transcript:
        """The protocol bytes of a connection (by client id or name); needs ``transcripts=True``."""
        if not self.options.transcripts:
            raise RuntimeError("start the server with transcripts=True to record connections")
        for cid, transcript in self.transcripts.items():
            session = self.broker.clients.get(cid)
            if cid == client or (session is not None and session.name == client):
                return transcript
        raise KeyError(f"no transcript for client {client!r}")

    def conformance(self) -> ConformanceReport:
        """The rules clients broke so far (``conformance=True``; see :mod:`fakejs.testkit.conformance`)."""
        # The rules come with the watch (conformance=True); a report is asked of a watched server
        from fakejs.testkit.conformance import ConformanceReport

        if self.conformance_watch is None:
            return ConformanceReport(watched=False)
        return self.conformance_watch.report()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait until ``predicate()`` is truthy (checked as the server works); returns its value.

        ``timeout`` is real seconds: it bounds a test, it is not server time.
        """
        deadline = self.loop.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if self.loop.time() >= deadline:
                raise not_met(predicate, f"{timeout:g} s", value)
            await asyncio.sleep(0.002)

    # -- ServerActions (for the test kit) ------------------------------------------------------

    async def restart(self, down_for: float = 0.0) -> None:
        """Stop, stay down for ``down_for`` seconds of server time, start on the same ports.

        File-backed streams and consumers come back from the store, as after
        a real restart; memory streams do not.  Clients see the connection
        drop and reconnect to the same URL.
        """
        self.listeners.pin_ports(self.port)
        if self.routes is not None and self.options.cluster is not None:
            self.options.cluster.port = self.routes.port
        self.broker.lame_duck = False
        await self.stop(keep_store=True)
        if down_for > 0:
            await self._sleep(down_for)
        await self.start()

    def reload(self, options: ServerOptions | None = None) -> None:
        """Apply new options to the running server, as nats-server's config reload (:mod:`fakejs.server.reload`).

        Without ``options`` the configuration file is read again (``read_options``, which the
        command line sets).  Raises :class:`~fakejs.core.reload_errors.ReloadRefused` (the
        running options kept) when the file cannot be read or an option cannot be reloaded.
        """
        # Only a reload loads its steps
        from fakejs.server.reload_steps import ReloadSteps

        if options is None:
            error = NO_CONFIG_FILE
            if self.read_options is not None and self.options.config_file:
                try:
                    options = self.read_options()
                except ReloadRefused as refused:
                    error = str(refused)
            if options is None:
                raise ReloadRefused(error)
        ReloadSteps(self, options).run(self.on_logging_reload)

    def switch_jetstream(self, on: bool) -> None:
        """JetStream turned off or on by a reload (nats-server's DisableJetStream and restartJetStream)."""
        if not on:
            self._stop_jetstream()
            self.broker.jetstream_enabled = False
        elif not self.jetstreams.by_account:
            self.broker.log.info("Restarting JetStream")
            self._start_jetstream()

    async def lame_duck(self, duration: float | None = None, grace: float | None = None) -> None:
        """nats-server's lame duck mode, on the server clock.

        Stop accepting connections and shut JetStream down, tell every client
        that reads async INFO (``"ldm": true``), wait the grace period, close
        the clients one by one spread over the rest of ``duration`` (at most
        a second apart), then shut down.
        """
        options = self.options
        duration = options.lame_duck_duration if duration is None else duration
        grace = options.lame_duck_grace_period if grace is None else grace
        if not self.listeners.serving or self.broker.lame_duck:
            return
        log = self.broker.log
        log.info("Entering lame duck mode, stop accepting new clients")
        self.broker.lame_duck = True
        self.broker.events.lame_duck()
        if self.broker.cluster is not None:
            self.broker.cluster.lame_duck()
        self.accepting = False
        self.listeners.stop_accepting()
        self._stop_jetstream()
        clients = [c for c in self.broker.clients.values() if not c.closed]
        for client in clients:
            if client.protocol >= 1:
                client.send(wire.info(self.broker.info_fields(client)))
        if clients:
            await self._sleep(grace)
            log.info("Closing existing clients")
            spread = max(duration - grace, 1.0)
            interval = min(spread / len(clients), 1.0)
            for i, client in enumerate(clients):
                client.close(SERVER_SHUTDOWN)
                if i < len(clients) - 1:
                    await self._sleep(self.broker.random.uniform(interval / 2, interval))
        await self.stop()
        self.finished.set()

    async def _autojump_loop(self, clock: ManualClock, threshold: float) -> None:
        """Jump the manual clock to its next timer whenever clients stay quiet for ``threshold``."""
        seen = -1
        while True:
            await asyncio.sleep(threshold)  # real time: this is what decides that virtual time may move
            if self.activity == seen:
                try:
                    clock.jump()
                except Exception as exc:  # noqa: BLE001 - recorded on the server; time keeps moving for the others
                    self.broker.record_error("autojump of the manual clock", exc)
            seen = self.activity

    async def _sleep(self, seconds: float) -> None:
        """Wait on the server clock (virtual time under a manual clock)."""
        done = self.loop.create_future()

        def wake() -> None:
            if not done.done():
                done.set_result(None)

        self.clock.call_later(seconds, wake)
        await done

    # -- HTTP --------------------------------------------------------------------------------

    def _http_response(self, request: Request) -> Reply:
        """The control API under ``/fakejs/``; monitoring documents for the rest."""
        # The monitoring documents and the control API come with the first HTTP request
        from fakejs.monitoring import endpoints as monitor
        from fakejs.server import control_http
        from fakejs.server.http import TEXT, Reply

        path = request.target.split("?", 1)[0].rstrip("/")
        if self.options.control and control_http.is_control_path(path):
            return control_http.answer(self.control, self.control_access, request, path)
        # nats-server's monitoring answers whatever the method (a POST to /varz gets /varz).
        status, ctype, body = monitor.respond(self, request.target)
        if status == 404:
            return Reply.text(404, body.decode())
        if ctype == TEXT:  # an endpoint's refusal: Go sniffs the type, written after the length
            return Reply(status, body, late_headers=[("Content-Type", ctype)])
        return Reply(status, body, [("Content-Type", ctype)])

    async def __aenter__(self) -> Server:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
