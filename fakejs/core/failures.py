"""What went wrong inside the server: the failures of its own handlers, kept for the test.

For a test tool a swallowed exception is the worst outcome: the client
times out and nobody learns why.  So every place where the server runs its
own code on behalf of an event (an internal subscription, a timer callback,
a fault action, a control request, a connection's input) hands an exception
it cannot let through to :meth:`Failures.record`: it is logged with its
traceback and kept, and the test kit (the pytest plugin, the thread handle)
fails the test that was running.
"""

from __future__ import annotations

import logging
import traceback


class ServerError:
    """One exception a server handler raised: where it ran, the exception, its formatted traceback.

    A plain class: a dataclass costs its import, and every start imports this module.
    """

    __slots__ = ("exception", "time_ns", "traceback", "where")

    def __init__(self, where: str, exception: BaseException, traceback: str, time_ns: int) -> None:
        self.where = where
        self.exception = exception
        self.traceback = traceback
        self.time_ns = time_ns

    def __repr__(self) -> str:
        return f"ServerError(where={self.where!r}, exception={self.exception!r}, time_ns={self.time_ns})"

    def __str__(self) -> str:
        return f"{self.where}: {self.exception!r}"


class Failures:
    """The failures of one server, in the order they happened."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.errors: list[ServerError] = []

    def record(self, where: str, exc: BaseException, time_ns: int = 0) -> None:
        """Log ``exc`` with its traceback and keep it (once, however many paths report it)."""
        if any(error.exception is exc for error in self.errors):
            return
        self.log.error("%s failed: %r", where, exc, exc_info=exc)
        text = "".join(traceback.format_exception(exc))
        self.errors.append(ServerError(where, exc, text, time_ns))

    def take(self) -> list[ServerError]:
        """The recorded failures, forgetting them (a test that provoked one on purpose)."""
        taken = list(self.errors)
        self.errors.clear()
        return taken


def report(errors: list[ServerError]) -> str:
    """Failures with their tracebacks, as a test failure message."""
    parts = [f"{len(errors)} exception(s) inside the fakejs server:"]
    for error in errors:
        parts.append(f"--- {error.where}\n{error.traceback.rstrip()}")
    return "\n".join(parts)
