"""Watch the logs for tracebacks: bad input must be answered, never logged as a crash.

:func:`no_tracebacks` collects every log record that carries an exception
(``exc_info``) or a ``Traceback`` text from the ``fakejs`` and ``asyncio``
loggers while its block runs, and fails the block if there is any.  The
fuzz tests wrap each example in it, alongside the server's own error list.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

WATCHED = ("fakejs", "asyncio")


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or "Traceback" in record.getMessage():
            self.records.append(record)


@contextmanager
def no_tracebacks() -> Iterator[list[logging.LogRecord]]:
    """Fail if anything logs an exception while the block runs."""
    collector = _Collector()
    loggers = [logging.getLogger(name) for name in WATCHED]
    for logger in loggers:
        logger.addHandler(collector)
    try:
        yield collector.records
    finally:
        for logger in loggers:
            logger.removeHandler(collector)
    lines = [f"{r.name}: {r.getMessage()}" for r in collector.records]
    assert not lines, "tracebacks logged:\n" + "\n".join(lines)
