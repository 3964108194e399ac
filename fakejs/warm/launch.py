"""The ``fakejs`` command's front door: the server forked by a warm process, or started here.

A harness that execs ``fakejs`` per test would pay, per test, for Python
importing fakejs.  So the first ``fakejs`` a process (the harness) runs
starts as always, and starts beside it a forkserver (:mod:`fakejs.warm.forkserver`):
a process that has fakejs imported and forks a server for each ``fakejs``
that same harness runs next.  Such a launcher hands the forked server its
command line, working directory, environment, umask, pid and standard
streams, passes on every signal it gets (``SIGTERM``, ``SIGHUP``, ...),
and ends as the server ended: with its exit status, or killed by the same
signal.  Killed itself (``SIGKILL``), it takes the server with it.  What the
harness sees (output, exit status, ports file, pid file, log lines' pid)
is what a server started here would give.

``FAKEJS_FORKSERVER=0`` starts every server here; so does a launcher that
is not on Linux, runs as a container's first process, runs under
interpreter options (``-X importtime``, ``-W``, ...) or under a profiler or
a tracer (``python -m cProfile``, coverage).
"""

from __future__ import annotations

import _socket
import os
import signal
import sys

from fakejs.warm import wire

# What a harness may send a server (nats-server's signals); each is passed on.
FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
SWITCH = "FAKEJS_FORKSERVER"


def main() -> int:
    """The ``fakejs`` command (and ``python -m fakejs``)."""
    if not _warm_starts_allowed():
        return _start_here(spawn_forkserver=False)
    launch = Launch(wire.address(os.getppid()))
    served = launch.run()
    if served is None:
        return _start_here(spawn_forkserver=True, pending=launch.pending)
    os._exit(served)  # nothing of this process's own to flush or finalise: the harness sees the end at once


def _warm_starts_allowed() -> bool:
    if os.environ.get(SWITCH, "1").lower() in ("0", "off", "no", "false"):
        return False
    if sys.platform != "linux" or os.getpid() == 1 or not hasattr(os, "pidfd_open"):
        return False
    plain = sys.flags.optimize == 0 and not sys.flags.dev_mode and not sys.flags.isolated
    watched = sys.getprofile() is not None or sys.gettrace() is not None  # a profiler or coverage measures this process
    return plain and not watched and not sys.warnoptions and not sys._xoptions


class Launch:
    """One server started by the forkserver: the request, then signals passed on until its end."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.server_pid = 0
        self.pending: list[int] = []
        self._previous: dict[int, object] = {}
        self._lifeline = -1  # the writing end of the lifeline, open until this process ends

    def run(self) -> int | None:
        """The server's exit status mirrored, or None when no forkserver would start it."""
        for forwarded in FORWARDED:  # before asking: a harness may signal as soon as it reads the ready line
            self._previous[forwarded] = signal.signal(forwarded, self._forward)
        connection = self._connect()
        if connection is None:
            self._restore()
            return None
        try:
            kind, pid = wire.read_reply(connection)
            if kind != wire.STARTED:
                self._restore()
                return None
            self.server_pid = pid
            for pending in self.pending:
                os.kill(pid, pending)
            self.pending.clear()
            kind, status = wire.read_reply(connection)
        finally:
            connection.close()
        if kind != wire.EXITED:  # the forkserver was killed: wait for the server itself
            return _wait_unreported(pid)
        return _mirror(status)

    def _connect(self) -> _socket.socket | None:
        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            connection.connect(self.address)
            if not wire.peer_is_this_user(connection):
                connection.close()
                return None
            lifeline_read, self._lifeline = os.pipe()  # the writing end lives as long as this process
            request = {
                "argv": sys.argv,
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "umask": _umask(),
                "pid": os.getpid(),
            }
            descriptors = [0, 1, 2, lifeline_read]
            rights = [
                (_socket.SOL_SOCKET, _socket.SCM_RIGHTS, b"".join(fd.to_bytes(4, sys.byteorder) for fd in descriptors))
            ]
            connection.sendmsg([wire.encode_request(request)], rights)
            os.close(lifeline_read)
        except OSError:
            connection.close()
            return None
        return connection

    def _forward(self, number: int, frame: object) -> None:
        if self.server_pid:
            try:
                os.kill(self.server_pid, number)
            except ProcessLookupError:
                pass
        else:
            self.pending.append(number)

    def _restore(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mirror(status: int) -> int:
    """End as the server ended: its exit status, or killed by its signal."""
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return code
    if -code in FORWARDED:
        signal.signal(-code, signal.SIG_DFL)  # passed on until now
    os.kill(os.getpid(), -code)
    return 128 - code  # a signal whose default is not to end the process


def _wait_unreported(pid: int) -> int:
    """The forkserver ended before the server: wait for the server's end, its status unknown."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return 1
    import select  # only a launcher whose forkserver died before its server needs it

    select.select([descriptor], [], [])
    os.close(descriptor)
    return 1


def _start_here(spawn_forkserver: bool, pending: list[int] | None = None) -> int:
    """The server started in this process (and, when asked, a forkserver beside it for the next one)."""
    if spawn_forkserver:
        _spawn_forkserver()
    for number in pending or ():
        signal.raise_signal(number)
    from fakejs.cli import main as start  # the whole server: only a start without the forkserver imports it

    return start()


def _spawn_forkserver() -> None:
    """A forkserver for this harness's next ``fakejs``, in a session of its own, its streams on /dev/null."""
    command = [sys.executable, "-m", "fakejs.warm.forkserver", str(os.getppid())]
    quiet = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    try:
        os.posix_spawn(sys.executable, command, os.environ, file_actions=quiet, setsid=True)
    except OSError:
        pass  # no warm starts then; this one is unaffected
