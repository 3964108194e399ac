"""Events the client-side protocol parser produces.

Each event is one complete client operation.  Events are small value classes
that tests compare by value, the way h11 does (equal when of one class with
equal fields, and shown as ``Sub(subject='a', queue='', sid='1')``): plain
classes on a shared base rather than dataclasses, as a dataclass is compiled
at import and every start imports this module.
Subjects are ``str``: the wire bytes decoded as UTF-8 with ``surrogateescape``
so that any byte sequence round-trips unchanged to the wire.
"""

from __future__ import annotations

from typing import Any, ClassVar


class _Value:
    """An event's value semantics: equal to an event of its class with equal fields, shown with its fields."""

    # The fields, in order (as a dataclass names them for ``match``).  Both are declared ``ClassVar``
    # in every class so that the compiled build (see setup.py) keeps them as class attributes.
    __slots__: ClassVar[tuple[str, ...]] = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, _Value):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((self.__class__, self._values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__match_args__, self._values(), strict=True))
        return f"{self.__class__.__qualname__}({fields})"


class Connect(_Value):
    """``CONNECT {json}``; ``options`` holds the decoded JSON object."""

    __match_args__: ClassVar[tuple[str, ...]] = ("options",)
    __slots__: ClassVar[tuple[str, ...]] = __match_args__

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options


class Pub(_Value):
    """``PUB`` or ``HPUB``: one published message.

    ``headers`` is the raw header block (``NATS/1.0...\\r\\n\\r\\n``) for HPUB
    and ``None`` for PUB.  ``payload`` excludes the headers.
    """

    __match_args__: ClassVar[tuple[str, ...]] = ("subject", "reply", "headers", "payload")
    __slots__: ClassVar[tuple[str, ...]] = __match_args__

    def __init__(self, subject: str, reply: str, headers: bytes | None, payload: bytes) -> None:
        self.subject = subject
        self.reply = reply
        self.headers = headers
        self.payload = payload


class Sub(_Value):
    """``SUB subject [queue] sid``; ``queue`` is ``""`` without a queue group."""

    __match_args__: ClassVar[tuple[str, ...]] = ("subject", "queue", "sid")
    __slots__: ClassVar[tuple[str, ...]] = __match_args__

    def __init__(self, subject: str, queue: str, sid: str) -> None:
        self.subject = subject
        self.queue = queue
        self.sid = sid


class Unsub(_Value):
    """``UNSUB sid [max]``; ``max`` is -1 when absent or not a number."""

    __match_args__: ClassVar[tuple[str, ...]] = ("sid", "max")
    __slots__: ClassVar[tuple[str, ...]] = __match_args__

    def __init__(self, sid: str, max: int) -> None:
        self.sid = sid
        self.max = max


class Ping(_Value):
    """``PING``: the peer asks for a ``PONG``."""

    __slots__ = ()


class Pong(_Value):
    """``PONG``: the answer to a ``PING``."""

    __slots__ = ()


class Info(_Value):
    """An ``INFO`` sent by a client: accepted and otherwise ignored."""

    __match_args__: ClassVar[tuple[str, ...]] = ("options",)
    __slots__: ClassVar[tuple[str, ...]] = __match_args__

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options


class Ok(_Value):
    """A ``+OK`` sent by a client: accepted and ignored."""

    __slots__ = ()


class Notice(_Value):
    """A non-fatal ``-ERR`` the server must send while parsing continues.

    nats-server sends ``Invalid Publish Subject`` from inside its parser (in
    pedantic mode) and still delivers the message, so the parser reports it
    as an event that comes before the ``Pub`` it concerns.
    """

    __match_args__: ClassVar[tuple[str, ...]] = ("text",)
    __slots__: ClassVar[tuple[str, ...]] = __match_args__

    def __init__(self, text: str) -> None:
        self.text = text


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
