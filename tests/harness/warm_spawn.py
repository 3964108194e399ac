"""``fakejs`` processes spawned as a harness spawns them, and who holds their sockets.

``Started`` runs the command and reads its log up to the ready line;
``spawn_each`` is a fixture body that kills what still runs at the end.
``serving``/``start_forkserver`` tell whether this process's forkserver
listens (the first ``fakejs`` run here starts it), and
``listening_inode``/``holders`` whether a server was forked by it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from fakejs.warm import wire
from fakejs.warm.launch import SWITCH

FAKEJS = [sys.executable, "-m", "fakejs"]
LIMIT = 30.0
NO_FORKSERVER = {**os.environ, SWITCH: "0"}


def serving(parent: int | None = None) -> bool:
    """Whether the forkserver for launchers of ``parent`` (this process) listens."""
    name = "@" + wire.address(os.getpid() if parent is None else parent)[1:]
    with open("/proc/net/unix") as table:
        return any(line.rstrip().endswith(name) for line in table)


def until(condition: object, what: str) -> None:
    """Wait (up to ``LIMIT`` seconds) until ``condition()`` holds."""
    deadline = time.monotonic() + LIMIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"still not {what}"
        time.sleep(0.02)


def start_forkserver() -> None:
    """This process's forkserver, listening (the first ``fakejs`` run here starts it)."""
    if not serving():
        subprocess.run([*FAKEJS, "-v"], check=True, capture_output=True)
        until(serving, "serving")


class Started:
    """A ``fakejs`` spawned as a harness does; ``ready()`` reads its output until the ready line."""

    def __init__(self, *arguments: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        self.process = subprocess.Popen([*FAKEJS, *arguments], stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
        self.lines: list[str] = []
        self.port = 0

    def ready(self) -> Started:
        self.lines.append(self.read_until("Server is ready"))
        listening = [line for line in self.lines[0].splitlines() if "Listening for client connections on" in line]
        assert listening, self.lines
        self.port = int(listening[0].rsplit(":", 1)[1])
        self.lines = self.lines[0].splitlines()
        return self

    def read_until(self, text: str) -> str:
        """What the server writes up to the line holding ``text``."""
        assert self.process.stderr is not None
        lines = []
        for line in self.process.stderr:
            lines.append(line)
            if text in line:
                return "".join(lines)
        raise AssertionError(f"no {text!r} in {''.join(lines)}")

    def stop(self, how: int = signal.SIGTERM) -> str:
        """The signal sent to the launcher; the rest of what the server wrote."""
        self.process.send_signal(how)
        assert self.process.stderr is not None
        rest = self.process.stderr.read()
        self.process.wait(LIMIT)
        return rest


def listening_inode(port: int) -> int:
    """The inode of the socket listening on ``port`` (0 when none does)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                    return int(fields[9])
    return 0


def holders(inode: int) -> list[int]:
    """The pids holding the socket ``inode``."""
    found = []
    wanted = f"socket:[{inode}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == wanted for fd in descriptors):
                found.append(int(pid))
        except OSError:
            continue
    return found


def spawn_each() -> Iterator[Callable[..., Started]]:
    """A fixture's body: spawns a ``fakejs`` and waits until it is ready; what still runs at the end is killed."""
    spawned: list[Started] = []

    def start(*arguments: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Started:
        spawned.append(Started(*arguments, env=env, cwd=cwd))
        return spawned[-1].ready()

    yield start
    for server in spawned:
        if server.process.poll() is None:
            server.process.kill()  # the launcher: its server goes with it
            server.process.wait(LIMIT)
