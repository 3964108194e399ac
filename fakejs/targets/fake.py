"""The fakejs test handle: a fakejs server on its own thread.

:class:`FakeJS` serves synchronous tests and async ones (on any event loop)
alike: ``url``, the clock (``advance``, ``advance_to_next``, ``advance_until``),
faults and actions (``control``), introspection (``state``,
``consumer_state``, ``transcript``, ``wait_for``) and a fast ``reset``.
Every method may also be called from code that runs on the server thread
(a ``wait_for`` predicate, a fault's action): it then runs at once.  :class:`~fakejs.targets.real.RealNatsServer` has the
same shape for a real ``nats-server`` process, so a suite can prove its own
parity; there the fakejs-only parts raise :class:`FakeOnly`, which the pytest
plugin turns into a skip.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import tempfile
import time
from collections.abc import Callable
from typing import Any

from fakejs.core.configfile import options_from_config
from fakejs.core.failures import ServerError
from fakejs.core.log import get_logger
from fakejs.core.options import ServerOptions
from fakejs.core.transport_config import TLSConfig
from fakejs.server.threaded import ThreadedServer
from fakejs.targets.certificates import TestTLS, required
from fakejs.testkit.certs import CertificateFiles, TestCertificates
from fakejs.testkit.clock import ManualClock
from fakejs.testkit.conditions import not_met
from fakejs.testkit.conformance import ConformanceReport
from fakejs.testkit.control import Controller
from fakejs.testkit.faults import Fault
from fakejs.testkit.introspection import Transcript


class FakeOnly(RuntimeError):
    """A fakejs-only feature was used against a real nats-server."""


class FakeJS:
    """A fakejs server on a background thread."""

    kind = "fake"

    def __init__(
        self,
        *,
        clock: str = "real",
        autojump: float | None = None,
        scenario: str = "",
        config: str | None = None,
        config_file: str | None = None,
        tls: Any = None,
        **options: Any,
    ) -> None:
        self.manual = clock == "manual"
        self._clock = ManualClock(autojump_threshold=autojump) if self.manual else None
        # ``tls=True`` / ``"verify"``: certificates made for this server (a TLSConfig is used as given)
        self.tls: TestTLS | None = None
        self._tls_dir = ""
        if tls is not None and tls is not False:
            if isinstance(tls, TLSConfig):
                options["tls"] = tls
            else:
                self._tls_dir = tempfile.mkdtemp(prefix="fakejs-tls-")
                self.tls = TestTLS(tls, self._tls_dir)
                options["tls"] = self.tls.server_config()
        if config is None and config_file is None:
            options.setdefault("port", 0)
            self._thread = ThreadedServer(clock=self._clock, **options)
        else:
            # nats-server's configuration file (text, or a file): its port is the configuration's
            self._thread = ThreadedServer(configured(config, config_file, options), clock=self._clock)
        self._scenario = scenario

    def start(self) -> FakeJS:
        self._thread.start()
        if self._scenario:
            self.call(lambda: self.server.control.start_scenario(path=self._scenario))
        return self

    def stop(self) -> None:
        self._thread.stop()
        if self._tls_dir:
            shutil.rmtree(self._tls_dir, ignore_errors=True)

    # -- TLS (``tls=True`` / ``"verify"``) -------------------------------------------------

    @property
    def certificates(self) -> TestCertificates:
        """The CA, server and client certificates as PEM files (``ca_file``, ``client_cert_file``, ...)."""
        return required(self.tls).certificates

    def client_ssl_context(self, client: bool | CertificateFiles | None = None) -> ssl.SSLContext:
        """A client context trusting this server's CA (with the client certificate under ``"verify"``)."""
        return required(self.tls).client_ssl_context(client)

    @property
    def server(self) -> Any:
        return self._thread.server

    @property
    def url(self) -> str:
        return self._thread.url

    @property
    def port(self) -> int:
        return self._thread.port

    @property
    def leaf_url(self) -> str:
        """The URL a leaf's remote dials (``leafnodes { port }`` configured); raises when there is no leaf port."""
        leaf_port = self.server.leaf_port
        if leaf_port is None or not leaf_port.port:
            raise FakeOnly("this server has no leaf port (leafnodes { port } is not configured)")
        return f"nats://127.0.0.1:{leaf_port.port}"

    def take_errors(self) -> list[ServerError]:
        """Exceptions the server's own handlers raised since the last call (running or stopped)."""
        return self._thread.take_errors()

    def call(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run ``func(*args)`` on the server thread (where server state may be touched)."""
        return self._thread.call(func, *args)

    # -- clock -------------------------------------------------------------------------

    def advance(self, seconds: float) -> int:
        """Move the manual clock forward, firing every timer due; returns how many fired."""
        return int(self.call(self._manual_clock("advance").advance, seconds))

    def advance_to_next(self) -> float | None:
        """Move the manual clock to its next timer that does work, firing everything due by then.

        Returns the seconds moved (``None``: nothing is pending); see
        :meth:`fakejs.ManualClock.advance_to_next`.
        """
        seconds: float | None = self.call(self._manual_clock("advance_to_next").advance_to_next)
        return seconds

    def advance_until(self, predicate: Callable[[], Any], limit: float = 3600.0) -> float:
        """Move the manual clock timer by timer until ``predicate()`` (run on the server thread) holds.

        Returns the seconds moved; at most ``limit`` seconds of virtual time
        pass before :class:`TimeoutError`.  See :meth:`fakejs.ManualClock.advance_until`.
        """
        clock = self._manual_clock("advance_until")
        return float(self.call(clock.advance_until, predicate, limit))

    def _manual_clock(self, method: str) -> ManualClock:
        if self._clock is None:
            raise FakeOnly(f"{method}() needs a manual clock: use clock='manual'")
        return self._clock

    def now(self) -> float:
        return float(self.call(self.server.clock.monotonic))

    # -- faults and actions ----------------------------------------------------------------

    @property
    def control(self) -> _ControlProxy:
        """Controller methods, each run on the server thread: ``fjs.control.delete_consumer("S", "C")``."""
        return _ControlProxy(self)

    def fault(self, **spec: Any) -> Fault:
        fault: Fault = self.call(lambda: self.server.control.add_fault(**spec))
        return fault

    def scenario(self, name_or_path: str) -> dict[str, Any]:
        return dict(self.call(lambda: self.server.control.start_scenario(path=name_or_path)))

    def reset(self) -> None:
        """Back to an empty server (no streams, faults or clients), for reuse between tests."""
        self.call(lambda: self.server.control.reset(clients=True))

    # -- introspection ------------------------------------------------------------------------

    def state(self, messages: int = 100) -> dict[str, Any]:
        return dict(self.call(self.server.state, messages))

    def consumer_state(self, stream: str, consumer: str) -> dict[str, Any]:
        return dict(self.call(self.server.consumer_state, stream, consumer))

    def transcript(self, client: int | str) -> Transcript:
        transcript: Transcript = self.call(self.server.transcript, client)
        return transcript

    def timeline(self, **filters: Any) -> list[dict[str, Any]]:
        """What the server did, as JSON-able dicts, oldest first (``stream``, ``consumer``, ``client``, ``kind``,
        ``since`` filter them; see :meth:`fakejs.server.server.Server.timeline`)."""
        events: list[dict[str, Any]] = self.call(lambda: self.server.timeline(**filters))
        return events

    def timeline_document(self, **filters: Any) -> dict[str, Any]:
        """What a timeline page shows (see :meth:`fakejs.server.server.Server.timeline_document`)."""
        found: dict[str, Any] = self.call(lambda: self.server.timeline_document(**filters))
        return found

    def timeline_page(self, title: str = "", **filters: Any) -> str:
        """The timeline as one self-contained HTML page (the filters are ``timeline()``'s; see
        :meth:`fakejs.server.server.Server.timeline_page`)."""
        page: str = self.call(lambda: self.server.timeline_page(title, **filters))
        return page

    def conformance(self) -> ConformanceReport:
        """The rules this server's clients broke (needs ``conformance=True`` or ``--fakejs-conformance``)."""
        report: ConformanceReport = self.call(self.server.conformance)
        return report

    def expect_conformance(self, stream: str, consumer: str, *, consume: bool = False, ack_sync: bool = False) -> None:
        """Tell the conformance watch how a consumer is used (a consume loop; AckSync acks)."""
        self.call(lambda: self.server.control.expect_conformance(stream, consumer, consume=consume, ack_sync=ack_sync))

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.002) -> Any:
        """Wait (in the caller's event loop) until ``predicate()``, run on the server thread, is truthy; returns it.

        ``predicate`` may use this handle (``lambda: fakejs_server.state()["streams"]``).
        Past ``timeout`` (real seconds), :class:`TimeoutError` names the
        predicate and the value it last gave.
        """
        deadline = time.monotonic() + timeout
        while not (value := self._check(predicate, deadline, timeout)):
            await asyncio.sleep(interval)
        return value

    def wait_until(self, predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.002) -> Any:
        """:meth:`wait_for` for synchronous tests (never from the server thread, which it would stop)."""
        if self._thread.on_server_thread():
            raise RuntimeError(
                "wait_until() on the server thread would block the server it waits for: "
                "check the condition once there, or await wait_for()"
            )
        deadline = time.monotonic() + timeout
        while not (value := self._check(predicate, deadline, timeout)):
            time.sleep(interval)
        return value

    def _check(self, predicate: Callable[[], Any], deadline: float, timeout: float) -> Any:
        value = self.call(predicate)
        if not value and time.monotonic() >= deadline:
            raise not_met(predicate, f"{timeout:g} s", value)
        return value


def configured(text: str | None, path: str | None, overrides: dict[str, Any]) -> ServerOptions:
    """Options from configuration text or a file (``ConfigError`` as nats-server refuses it), then ``overrides``."""
    options = options_from_config(text, path, log=get_logger().warning)
    for name, value in overrides.items():
        if not hasattr(options, name):
            raise TypeError(f"unknown server option {name!r}")
        setattr(options, name, value)
    return options


class _ControlProxy:
    def __init__(self, handle: FakeJS) -> None:
        self._handle = handle

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(Controller, name, None)
        if method is None or name.startswith("_"):
            raise AttributeError(name)
        server = self._handle.server

        def run(*args: Any, **kwargs: Any) -> Any:
            return self._handle.call(lambda: getattr(server.control, name)(*args, **kwargs))

        return run
