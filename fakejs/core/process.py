"""The process id a harness knows this server by (where nats-server writes ``os.Getpid()``).

A server started by ``fakejs`` usually runs in a process forked for it by
a warm process (:mod:`fakejs.warm`), while the harness holds the launcher's
pid: the one it spawned, signals and looks for in ports file names, pid
files and log lines.  The forked server is told that pid once, before it
starts; everything else is this process's own.
"""

from __future__ import annotations

import os

_known_as = 0


def process_id() -> int:
    """The pid the harness spawned: the launcher's for a forked server, else this process's own."""
    return _known_as or os.getpid()


def known_as(pid: int) -> None:
    """From now on this process answers to ``pid`` (a forked server, for its launcher's)."""
    global _known_as
    _known_as = pid
