"""Polling a while before sleeping: a client's next request read without waking a sleeping core.

A server process that waits in its event loop's poll with nothing to do
puts its thread to sleep, and the core it ran on may go idle; the next
request then pays for waking them (on a virtual machine a halted vCPU
takes tens of µs to wake, about as long as serving the request).  A client
that makes one request after another (a JetStream publish waiting for its
PubAck, a KV put, a Direct Get) pays that on every request.

:class:`IdleSpin` keeps the loop polling instead, for ``window`` seconds
after the newest client read: a callback queued on every turn of the loop
makes its poll return at once rather than sleep, and a request sent within
the window is read on the next turn.  The polling only takes a core no
other thread of the machine wants: each turn first gives the core away
(``sched_yield``), and the spin ends as soon as the machine has more
runnable threads than this process has cores (the kernel's count in
``/proc/loadavg``, read on each turn: a yield alone does not make way for
threads in another scheduling group, such as a harness's clients beside a
server forked from :mod:`fakejs.warm.forkserver`'s session).  Once a window
passes with no read, the loop sleeps in its poll as before.

The window is measured in real time (``time.perf_counter``): it decides how
the process spends the machine's time, and nothing a client sees, so a
manual clock has no say in it.  Only a server that owns its process's loop
spins (the command line, ``--spin``); one embedded in a test's own loop
never does.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from time import perf_counter

__all__ = ["IdleSpin", "RunQueue", "can_spin", "spin_for"]

LOAD_AVERAGE = "/proc/loadavg"
"""Linux's load averages; the fourth field is ``RUNNABLE/THREADS``, runnable threads counted now."""


class RunQueue:
    """Whether the machine has more runnable threads than this process has cores (``/proc/loadavg``).

    The file is opened once and read again on each call (about 1 µs).
    """

    def __init__(self, path: str = LOAD_AVERAGE) -> None:
        self._file = os.open(path, os.O_RDONLY)
        self.cores = len(os.sched_getaffinity(0))

    def crowded(self) -> bool:
        """Whether threads beyond this one and one per other core are waiting to run."""
        runnable = os.pread(self._file, 128, 0).split()[3].split(b"/")[0]
        return int(runnable) > self.cores


def can_spin() -> bool:
    """Whether this platform can give the core away and count the runnable threads (Linux)."""
    return hasattr(os, "sched_yield") and hasattr(os, "sched_getaffinity") and os.path.exists(LOAD_AVERAGE)


def spin_for(window: float) -> IdleSpin | None:
    """The spin for a ``window`` of seconds (None for 0, or where the polling cannot tell that it is in
    the way: a spin that keeps a core from the machine's other threads costs more than it saves)."""
    return IdleSpin(window, crowded=RunQueue().crowded) if window > 0 and can_spin() else None


class IdleSpin:
    """Keeps its loop polling for ``window`` seconds after the newest :meth:`touch` (a client read).

    One per process: the servers of an in-process cluster share their loop, and so one spin.
    ``crowded`` says whether other threads are waiting for a core (the spin then ends);
    ``now`` and ``give_way`` (the clock the window is measured on, and what each turn does to give
    the core away) are parameters for tests.
    """

    __slots__ = ("_crowded", "_give_way", "_loop", "_now", "_running", "_seen", "_since", "reads", "window")

    def __init__(
        self,
        window: float,
        crowded: Callable[[], bool],
        now: Callable[[], float] = perf_counter,
        give_way: Callable[[], None] | None = None,
    ) -> None:
        self.window = window
        self.reads = 0  # client reads touched so far
        self._seen = 0  # ``reads`` when the current window began
        self._since = 0.0  # when it began
        self._running = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._crowded = crowded
        self._now = now
        self._give_way = give_way if give_way is not None else os.sched_yield

    @property
    def running(self) -> bool:
        """Whether the loop is being kept polling now."""
        return self._running

    def touch(self) -> None:
        """A client's bytes were read: keep polling for another window (starting the spin if it slept)."""
        self.reads += 1
        if self._running:
            return
        self._running = True
        self._seen = self.reads
        self._since = self._now()
        loop = self._loop = asyncio.get_running_loop()
        loop.call_soon(self._turn)

    def _turn(self) -> None:
        """One turn of the loop: a new window after a read, the end after a quiet one or when other
        threads wait for a core, else another turn."""
        now = self._now()
        if self.reads != self._seen:
            self._seen = self.reads
            self._since = now
        elif now - self._since > self.window:
            self._running = False
            return
        if self._crowded():
            self._running = False
            return
        self._give_way()
        loop = self._loop
        assert loop is not None  # set by the touch that started the spin
        loop.call_soon(self._turn)
