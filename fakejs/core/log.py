"""Log lines in nats-server's shape: ``[pid] 2026/01/02 15:04:05.000000 [INF] text``.

Harnesses that exec ``nats-server`` often wait for ``Server is ready`` or
scrape the listen line, so fakejs writes the same lines through Python's
``logging`` (logger ``fakejs``).  In-process servers only log when the
application configures logging; the CLI installs :func:`configure`.
"""

from __future__ import annotations

import logging
import re
import sys
import time

from fakejs.core.process import process_id

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

_LEVEL_TAGS = {
    TRACE: "TRC",
    logging.DEBUG: "DBG",
    logging.INFO: "INF",
    logging.WARNING: "WRN",
    logging.ERROR: "ERR",
    logging.CRITICAL: "FTL",
}


class NatsFormatter(logging.Formatter):
    """nats-server's line: ``[pid] date time.microseconds [LVL] text`` (local time)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(record.created))
        micros = int((record.created % 1) * 1_000_000)
        tag = _LEVEL_TAGS.get(record.levelno, "INF")
        return f"[{process_id()}] {stamp}.{micros:06d} [{tag}] {record.getMessage()}"


class RepeatFilter:
    """nats-server's rate-limited log lines (``RateLimitWarnf``): the same text at most once an interval.

    Times are the caller's (the server's clock), in seconds.
    """

    # Remembered texts beyond which the stale ones are forgotten.
    PRUNE_AT = 1000

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self._logged: dict[str, float] = {}

    def allow(self, text: str, now: float) -> bool:
        """Whether ``text`` may be logged at ``now`` (it is then remembered)."""
        last = self._logged.get(text)
        if last is not None and now - last < self.interval:
            return False
        if len(self._logged) >= self.PRUNE_AT:
            self._logged = {line: at for line, at in self._logged.items() if now - at < self.interval}
        self._logged[text] = now
        return True


# A byte that was not UTF-8, kept by ``surrogateescape`` as a lone surrogate.
_UNDECODABLE = re.compile("[\udc80-\udcff]")


class UndecodableBytesFilter(logging.Filter):
    """Writes a subject's undecodable bytes as ``\\xNN`` in the line's text.

    Subjects keep such bytes as lone surrogates (``surrogateescape``); a
    record holding one cannot be encoded as UTF-8, so any handler that
    serialises it (a test runner shipping captured logs between processes,
    a UTF-8 stream) would fail on it.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if not text.isascii() and _UNDECODABLE.search(text):
            record.msg = _UNDECODABLE.sub(lambda found: "\\x%02x" % (ord(found.group()) - 0xDC00), text)
            record.args = None
        return True


def get_logger(name: str = "fakejs") -> logging.Logger:
    return logging.getLogger(name)


if not any(isinstance(installed, UndecodableBytesFilter) for installed in get_logger().filters):
    get_logger().addFilter(UndecodableBytesFilter())


def configure(debug: bool = False, trace: bool = False, log_file: str = "") -> None:
    """Install the nats-server style handler on the ``fakejs`` logger."""
    logger = get_logger()
    handler: logging.Handler
    # A log file takes any text (a traced subject may hold undecodable bytes).
    handler = (
        logging.FileHandler(log_file, errors="backslashreplace") if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(NatsFormatter())
    for previous in logger.handlers:  # a reload or a reopen replaces the log file
        previous.close()
    if trace and not debug:  # -V without -D: protocol traces, no debug lines (nats-server's levels are flags)
        handler.addFilter(lambda record: record.levelno != logging.DEBUG)
    logger.handlers[:] = [handler]
    logger.propagate = False
    level = logging.INFO
    if debug:
        level = logging.DEBUG
    if trace:
        level = TRACE
    logger.setLevel(level)
