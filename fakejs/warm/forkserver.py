"""A warm process: fakejs imported once, a server forked from it for each ``fakejs`` a harness runs.

Started by a launcher (:mod:`fakejs.warm.launch`) as
``python -m fakejs.warm.forkserver PARENT_PID``, in a session of its own
with its streams on ``/dev/null``.  It serves the launchers whose parent
is ``PARENT_PID`` (a harness), and ends once that process has ended, or
after :data:`IDLE_SECONDS` without a request, in both cases when the last
server it forked has ended.  It refuses to fork from code older than the
files on disk (a changed source file: the launcher then starts its server
itself, and a new forkserver takes over).

A forked server takes its launcher's standard streams, command line,
working directory, environment, umask and pid (:func:`fakejs.core.process.known_as`),
runs :func:`fakejs.cli.main` as a process started by the command would, and
ends with ``os._exit`` once its streams and logs are flushed: what the
forkserver had (its exit handlers, its idle sockets) is not its to run.
"""

from __future__ import annotations

import gc
import importlib
import io
import marshal
import os
import pkgutil
import select
import socket
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from fakejs.core import process
from fakejs.warm import wire

# A forkserver with no request for this long and no server running ends.
IDLE_SECONDS = 300.0
# How long a launcher may take to send its request once connected.
RECEIVE_SECONDS = 5.0
# The longest request a launcher sends (its environment is most of it).
MAX_REQUEST = 1 << 20


@dataclass
class SourceFiles:
    """The fakejs source files a process has imported, and their modification times then."""

    times: dict[str, int] = field(default_factory=dict)

    @classmethod
    def loaded(cls, package: str = "fakejs") -> SourceFiles:
        files = SourceFiles()
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if path and (name == package or name.startswith(package + ".")):
                files.times[path] = _modified(path)
        return files

    def changed(self) -> bool:
        """Whether any of them changed (or went) on disk since."""
        return any(_modified(path) != then for path, then in self.times.items())


def _modified(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


@dataclass
class _Running:
    """A forked server: its pid, and its launcher's connection for the exit status."""

    pid: int
    connection: socket.socket


class Forkserver:
    """Accepts launchers, forks a server for each, reports each server's end to its launcher."""

    def __init__(self, listener: socket.socket, harness: int, sources: SourceFiles) -> None:
        self.listener: socket.socket | None = listener
        self.harness = harness  # a pidfd: readable once the harness has ended
        self.sources = sources
        self.running: dict[int, _Running] = {}  # by pidfd
        self.last_request = time.monotonic()

    def run(self) -> None:
        while self.listener is not None or self.running:
            watched = [*self.running, self.harness] + ([self.listener.fileno()] if self.listener else [])
            ready, _, _ = select.select(watched, [], [], self._idle_left())
            if not ready and not self.running:
                self._stop_listening()
            for descriptor in ready:
                if descriptor == self.harness:
                    self._stop_listening()
                elif descriptor in self.running:
                    self._report_end(descriptor)
                else:
                    self._accept()

    def _idle_left(self) -> float | None:
        if self.running or self.listener is None:
            return None
        return max(0.0, IDLE_SECONDS - (time.monotonic() - self.last_request))

    def _stop_listening(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None

    def _accept(self) -> None:
        assert self.listener is not None
        connection, _ = self.listener.accept()
        self.last_request = time.monotonic()
        connection.settimeout(RECEIVE_SECONDS)  # a launcher that stalls does not stall the others
        try:
            request, descriptors = _receive(connection)
        except (OSError, ValueError, EOFError):
            connection.close()
            return
        connection.settimeout(None)
        if self.sources.changed():
            self._stop_listening()  # a new forkserver, with the new code, takes the address
            _refuse(connection, descriptors)
            return
        try:
            pid = os.fork()
        except OSError:  # no process to be had: the launcher starts its server itself
            _refuse(connection, descriptors)
            return
        if pid == 0:
            self._become_server(request, descriptors)
        _close_all(descriptors)
        self.running[os.pidfd_open(pid)] = _Running(pid, connection)
        _send(connection, wire.reply(wire.STARTED, pid))

    def _report_end(self, descriptor: int) -> None:
        running = self.running.pop(descriptor)
        os.close(descriptor)
        _, status = os.waitpid(running.pid, 0)
        _send(running.connection, wire.reply(wire.EXITED, status))
        running.connection.close()

    def _become_server(self, request: dict[str, object], descriptors: Sequence[int]) -> None:
        """In the forked child: let go of the forkserver's descriptors, then be the launcher's server."""
        self._stop_listening()
        os.close(self.harness)
        for descriptor, running in self.running.items():
            os.close(descriptor)
            running.connection.close()
        os._exit(serve_request(request, descriptors))


def _receive(connection: socket.socket) -> tuple[dict[str, object], list[int]]:
    """One launcher's request and the descriptors beside it (see :mod:`fakejs.warm.wire`)."""
    if not wire.peer_is_this_user(connection):
        raise ValueError("another user")
    data, descriptors, _, _ = socket.recv_fds(connection, MAX_REQUEST, wire.PASSED_DESCRIPTORS)
    if len(descriptors) != wire.PASSED_DESCRIPTORS:
        _close_all(descriptors)
        raise ValueError("descriptors missing")
    while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], "big"):
        chunk = connection.recv(MAX_REQUEST)
        if not chunk:
            _close_all(descriptors)
            raise EOFError
        data += chunk
    request = marshal.loads(data[8:])
    if not isinstance(request, dict):
        _close_all(descriptors)
        raise ValueError("not a request")
    return request, descriptors


def _refuse(connection: socket.socket, descriptors: Sequence[int]) -> None:
    """Tell the launcher to start its server itself, and let go of what it sent."""
    _send(connection, wire.reply(wire.REFUSED, 0))
    _close_all(descriptors)
    connection.close()


def _send(connection: socket.socket, data: bytes) -> None:
    try:
        connection.sendall(data)
    except OSError:
        pass  # the launcher is gone (killed): its server went with it


def _close_all(descriptors: Sequence[int]) -> None:
    for descriptor in descriptors:
        os.close(descriptor)


def serve_request(request: dict[str, object], descriptors: Sequence[int]) -> int:
    """Be the server the launcher asked for; its exit status."""
    stdin, stdout, stderr, lifeline = descriptors
    for target, descriptor in enumerate((stdin, stdout, stderr)):
        os.dup2(descriptor, target)
        os.close(descriptor)
    _follow_launcher(lifeline)
    _take_over(request)
    from fakejs.cli import main  # loaded already (import_server_modules); here for the name
    from fakejs.cli.process_end import end_process  # loaded already, as main

    try:
        status = main()  # the launcher's command line, as the fakejs script runs it
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    except BaseException:  # noqa: BLE001  as an uncaught exception ends a process: printed, status 1
        traceback.print_exc()
        status = 1
    end_process(status)  # the exit handlers and output flushed
    return status


def _take_over(request: dict[str, object]) -> None:
    """The launcher's process, as far as a server can tell: its streams, place, environment, pid."""
    os.chdir(str(request["cwd"]))
    os.umask(int(request["umask"]))  # type: ignore[call-overload]
    environment = request["env"]
    assert isinstance(environment, dict)
    os.environ.clear()
    os.environ.update(environment)
    time.tzset()
    sys.argv = list(request["argv"])  # type: ignore[call-overload]
    process.known_as(int(request["pid"]))  # type: ignore[call-overload]
    if isinstance(sys.stdout, io.TextIOWrapper):  # fd 1 is the launcher's now: a terminal's output goes by lines
        sys.stdout.reconfigure(line_buffering=os.isatty(1))


def _follow_launcher(lifeline: int) -> None:
    """End this process, at once and as ``SIGKILL`` would, when the launcher ends without waiting."""

    def watch() -> None:
        os.read(lifeline, 1)  # only end of file: the launcher never writes
        os.kill(os.getpid(), 9)

    threading.Thread(target=watch, name="fakejs-launcher-lifeline", daemon=True).start()


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m fakejs.warm.forkserver PARENT_PID``: serve that harness's launchers."""
    harness_pid = int((sys.argv[1:] if argv is None else argv)[0])
    try:
        harness = os.pidfd_open(harness_pid)
    except ProcessLookupError:
        return
    address = wire.address(harness_pid)
    starting = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        starting.bind(address + "-starting")  # one forkserver per address: the others stop here
    except OSError:
        return
    os.chdir("/")
    import_server_modules()
    gc.collect()
    gc.freeze()  # the forked servers' collector leaves these alone: fewer copied pages
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(address)  # launchers until now started their servers themselves
    except OSError:
        return
    listener.listen(64)
    starting.close()
    Forkserver(listener, harness, SourceFiles.loaded()).run()


# The packages whose modules a server may run (every one is imported before the first fork).
SERVER_PACKAGES = (
    "fakejs.cli",
    "fakejs.server",
    "fakejs.testkit",
    "fakejs.monitoring",
    "fakejs.jetstream",
    "fakejs.core",
    "fakejs.protocol",
    "fakejs.conf",
    "fakejs.gocompat",
)


# Modules from outside fakejs a forked server imports when they are installed (the event loop).
OPTIONAL_MODULES = ("uvloop",)


def import_server_modules() -> None:
    """Every module of :data:`SERVER_PACKAGES`, and of :data:`OPTIONAL_MODULES` those installed: what any server
    forked from here may import is loaded once."""
    for package in SERVER_PACKAGES:
        for module in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
            _import_if_installed(module.name)
    for name in OPTIONAL_MODULES:
        _import_if_installed(name)


def _import_if_installed(name: str) -> None:
    try:
        importlib.import_module(name)
    except ImportError:
        pass  # an optional extra not installed: its users import (and fail) as they would anyway


if __name__ == "__main__":
    main()
