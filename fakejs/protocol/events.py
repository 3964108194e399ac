"""Events the client-side protocol parser produces.

Each event is one complete client operation.  Events are small frozen
dataclasses so that tests can compare them by value, the way h11 does.
Subjects are ``str``: the wire bytes decoded as UTF-8 with ``surrogateescape``
so that any byte sequence round-trips unchanged to the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Connect:
    """``CONNECT {json}``; ``options`` holds the decoded JSON object."""

    options: dict[str, Any]


@dataclass(slots=True)  # not frozen: built once per publish, and a frozen __init__ costs twice as much
class Pub:
    """``PUB`` or ``HPUB``: one published message.

    ``headers`` is the raw header block (``NATS/1.0...\\r\\n\\r\\n``) for HPUB
    and ``None`` for PUB.  ``payload`` excludes the headers.
    """

    subject: str
    reply: str
    headers: bytes | None
    payload: bytes


@dataclass(frozen=True, slots=True)
class Sub:
    """``SUB subject [queue] sid``; ``queue`` is ``""`` without a queue group."""

    subject: str
    queue: str
    sid: str


@dataclass(frozen=True, slots=True)
class Unsub:
    """``UNSUB sid [max]``; ``max`` is -1 when absent or not a number."""

    sid: str
    max: int


@dataclass(frozen=True, slots=True)
class Ping:
    """``PING``: the peer asks for a ``PONG``."""


@dataclass(frozen=True, slots=True)
class Pong:
    """``PONG``: the answer to a ``PING``."""


@dataclass(frozen=True, slots=True)
class Info:
    """An ``INFO`` sent by a client: accepted and otherwise ignored."""

    options: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Ok:
    """A ``+OK`` sent by a client: accepted and ignored."""


@dataclass(frozen=True, slots=True)
class Notice:
    """A non-fatal ``-ERR`` the server must send while parsing continues.

    nats-server sends ``Invalid Publish Subject`` from inside its parser (in
    pedantic mode) and still delivers the message, so the parser reports it
    as an event that comes before the ``Pub`` it concerns.
    """

    text: str


Event = Connect | Pub | Sub | Unsub | Ping | Pong | Info | Ok | Notice


# Why nats-server closes a connection whose input broke the protocol (as /connz reports it).
CLOSED_PROTOCOL_VIOLATION = "Protocol Violation"
CLOSED_MAX_PAYLOAD = "Maximum Message Payload Exceeded"
CLOSED_MAX_CONTROL_LINE = "Maximum Control Line Exceeded"
CLOSED_PARSE_ERROR = "Parse Error"

# When nats-server logs a violation's error line: before the -ERR it sends, after it, or
# after the connection is closed (its "Client connection closed" line comes first then).
LOGGED_BEFORE_ERR = "before -ERR"
LOGGED_AFTER_ERR = "after -ERR"
LOGGED_AFTER_CLOSE = "after close"


class ProtocolViolation(Exception):
    """The client broke the protocol; the connection must be closed.

    ``err`` is the ``-ERR`` text nats-server sends before closing, or
    ``None`` when it closes the connection without a word (bad arguments,
    malformed CONNECT JSON, HPUB without header support...).  ``reason`` is
    nats-server's error line for it (``processPub Parse Error: "foo"``),
    ``closed`` the reason the connection closes with and ``logged`` when the
    error line comes (one of the ``LOGGED_*`` values).
    """

    def __init__(
        self,
        err: str | None,
        reason: str,
        closed: str = CLOSED_PROTOCOL_VIOLATION,
        logged: str = LOGGED_AFTER_ERR,
    ) -> None:
        super().__init__(reason)
        self.err = err
        self.reason = reason
        self.closed = closed
        self.logged = logged


# Texts nats-server sends with -ERR for parser-level violations.
ERR_UNKNOWN_OP = "Unknown Protocol Operation"
ERR_MAX_CONTROL_LINE = "maximum control line exceeded"
ERR_MAX_PAYLOAD = "Maximum Payload Violation"
ERR_AUTHORIZATION = "Authorization Violation"
ERR_INVALID_PUBLISH_SUBJECT = "Invalid Publish Subject"
