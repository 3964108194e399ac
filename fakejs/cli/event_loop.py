"""The command-line server's event loop: uvloop where it is installed, asyncio's own otherwise.

``--loop`` (default from ``$FAKEJS_LOOP``) chooses: ``auto`` (the default:
uvloop when it can be imported, else asyncio's loop), ``uvloop`` (refused
at start when it is not installed) or ``asyncio``.  uvloop, a loop on
libuv, spends about half of what asyncio's own loop spends on each read and
write; a client waiting on a reply (a request, a JetStream publish, an ack)
sees its round trip shorter by that much.  What the server does is the same
on both: the choice is the process's, and an embedded server runs on its
host's loop.

``--spin`` (default from ``$FAKEJS_SPIN``, else 250): the microseconds the
loop keeps polling after a client's read before it sleeps
(:mod:`fakejs.server.idle_spin`); 0 lets it sleep at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

LOOP_VARIABLE = "FAKEJS_LOOP"
AUTO = "auto"
UVLOOP = "uvloop"
ASYNCIO = "asyncio"
CHOICES = (AUTO, UVLOOP, ASYNCIO)

Result = TypeVar("Result")
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_problem(choice: str) -> str:
    """Why ``--loop choice`` cannot be served ("" when it can)."""
    if choice not in CHOICES:
        return f"--loop must be auto, uvloop or asyncio, not {choice!r}"
    if choice == UVLOOP and _uvloop_factory() is None:
        return "--loop uvloop: uvloop is not installed (pip install uvloop)"
    return ""


def loop_factory(choice: str) -> LoopFactory | None:
    """What makes the chosen loop (None: asyncio's own)."""
    if choice == ASYNCIO:
        return None
    return _uvloop_factory()


def run(main: Coroutine[Any, Any, Result], choice: str = AUTO) -> Result:
    """``asyncio.run(main)`` on the chosen loop."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(main)


def _uvloop_factory() -> LoopFactory | None:
    try:
        import uvloop  # optional: a wheel for CPython on Linux and macOS (see pyproject.toml)
    except ImportError:
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


SPIN_VARIABLE = "FAKEJS_SPIN"
DEFAULT_SPIN = "250"
"""``--spin``'s default window, µs: longer than a client library's own work between two requests
(nats-py spends about 100-140 µs of its own on a JetStream publish)."""


def spin_problem(text: str) -> str:
    """Why ``--spin text`` cannot be served ("" when it can): a whole number of microseconds, 0 or more."""
    if not text.isdigit():
        return f"--spin must be a whole number of microseconds (0: never spin), not {text!r}"
    return ""


def spin_window(text: str) -> float:
    """``--spin``'s window in seconds (0.0: the loop sleeps as soon as it has nothing to do)."""
    return int(text) / 1_000_000
