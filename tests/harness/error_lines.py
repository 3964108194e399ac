"""The ``[ERR]`` lines a server logs about its clients: fakejs's from its logger, nats-server's from its log."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

from tests.harness.targets import RealTarget, Target

Handler = TypeVar("Handler", bound=logging.Handler)


@contextmanager
def collecting(handler: Handler, level: int | None = None) -> Iterator[Handler]:
    """``handler`` on the ``fakejs`` logger while the block runs, the logger's level lowered to ``level`` if given."""
    logger = logging.getLogger("fakejs")
    before = logger.level
    logger.addHandler(handler)
    if level is not None:
        logger.setLevel(level)
    try:
        yield handler
    finally:
        logger.setLevel(before)
        logger.removeHandler(handler)


class ErrorLines(logging.Handler):
    """The error lines about one kind of client (``cid`` for NATS clients, ``wid`` for WebSocket ones).

    Installed on the ``fakejs`` logger, it keeps fakejs's lines as they are
    logged; :meth:`of` reads nats-server's from its log instead.
    """

    def __init__(self, kind: str) -> None:
        super().__init__(logging.ERROR)
        self.fake_line = re.compile(rf" - {kind}:\d+ - (.*)$")
        self.real_line = re.compile(rf"\[ERR\] 127\.0\.0\.1:\d+ - {kind}:\d+ - (.*)$")
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = self.fake_line.search(record.getMessage())
        if found:
            self.lines.append(found.group(1))

    def of(self, target: Target) -> list[str]:
        """The lines ``target`` logged so far (after the client's address and id)."""
        if isinstance(target, RealTarget):
            assert target.process is not None
            log = target.process.log_text().splitlines()
            return [found.group(1) for line in log if (found := self.real_line.search(line))]
        return list(self.lines)


def error_lines_of(kind: str) -> AbstractContextManager[ErrorLines]:
    """Collect fakejs's error lines about ``kind`` clients while the block runs."""
    return collecting(ErrorLines(kind))


class ClientLines(ErrorLines):
    """The debug and error lines about one kind of client (nats-server's ``[DBG]`` and ``[ERR]``), under ``debug: true``."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.setLevel(logging.DEBUG)
        self.real_line = re.compile(rf"\[(?:DBG|ERR)\] 127\.0\.0\.1:\d+ - {kind}:\d+ - (.*)$")


def client_lines_of(kind: str) -> AbstractContextManager[ClientLines]:
    """Collect fakejs's debug and error lines about ``kind`` clients while the block runs.

    An in-process server logs as the ``fakejs`` logger's level allows: the block lowers it to debug, as
    ``fakejs -D`` does.
    """
    return collecting(ClientLines(kind), logging.DEBUG)
