"""The route protocol between servers of a cluster, without I/O: bytes in, events out; values in, bytes out.

Servers of one cluster talk over their route port (nats-server's
``route.go``): each sends ``INFO``, the one that dialled sends ``CONNECT``
first, then both announce their interest and forward messages:

* ``RS+ <account> <subject> [<queue> <weight>]`` / ``RS- <account> <subject> [<queue>]``:
  a server has (or no longer has) subscribers on a subject; a queue's
  weight is how many members it has there;
* ``LS+ <origin> <account> <subject> [<queue> <weight>]`` / ``LS- [<origin>] ...``:
  the same for a leaf node's subscription (the origin is its cluster);
* ``RMSG <account> <subject> [+ <reply> <queue>... | | <queue>... | <reply>] <size>``
  and ``HMSG`` with a header size before the size: a message for the
  receiver's subscribers, and for one member of each queue listed;
  ``LMSG <origin> ...`` is an HMSG that came from a leaf node;
* ``PING``/``PONG``, ``+OK`` and ``-ERR``.

Servers are trusted peers, so a line that does not parse is a
:class:`~fakejs.protocol.events.ProtocolViolation` that closes the route
(nats-server logs a parser error and closes it too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from fakejs.gocompat.gojson import dumps
from fakejs.protocol.events import Ok, Ping, Pong, ProtocolViolation

__all__ = [
    "RemoteSub",
    "RemoteUnsub",
    "RouteConnect",
    "RouteError",
    "RouteEvent",
    "RouteInfo",
    "RouteParser",
    "RoutedMsg",
    "connect",
    "info",
    "message_frame",
    "routed_msg",
    "sub",
    "unsub",
]

# Beyond this a control line is not a route's: the peer is broken (nats-server's MAX_CONTROL_LINE
# does not apply to routes, whose RMSG lines list every queue group).
MAX_ROUTE_LINE = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RouteInfo:
    """``INFO {json}``: the remote server, first when the route starts, later to gossip or update."""

    options: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RouteConnect:
    """``CONNECT {json}`` from the server that dialled (its id, cluster name, credentials)."""

    options: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RemoteSub:
    """``RS+``/``LS+``: interest on the remote server; ``weight`` is its queue members (0 without a queue)."""

    account: str
    subject: str
    queue: str
    weight: int
    origin: str = ""  # LS+: the leaf node's cluster


@dataclass(frozen=True, slots=True)
class RemoteUnsub:
    """``RS-``/``LS-``: the remote server lost its last subscriber (or queue member) there."""

    account: str
    subject: str
    queue: str
    origin: str = ""


@dataclass(slots=True)
class RoutedMsg:
    """``RMSG``/``HMSG``/``LMSG``: a message for the receiver's plain subscribers and the listed queues."""

    account: str
    subject: str
    reply: str
    queues: tuple[str, ...]
    headers: bytes | None
    payload: bytes
    origin: str = ""


@dataclass(frozen=True, slots=True)
class RouteError:
    """``-ERR '<text>'`` from the remote server (it is about to close the route)."""

    text: str


RouteEvent = RouteInfo | RouteConnect | RemoteSub | RemoteUnsub | RoutedMsg | RouteError | Ping | Pong | Ok


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _size(token: bytes) -> int:
    return int(token) if token.isdigit() and len(token) <= 10 else -1


class RouteParser:
    """Incremental parser of route operations: :meth:`receive_data`, then :meth:`next_event` until ``None``."""

    __slots__ = ("_buf", "_pending", "_pos", "account")

    # Each operation's parser (a leaf connection's parser has its own: :mod:`fakejs.protocol.leaf`).
    operations: ClassVar[dict[bytes, Any]] = {}

    def __init__(self) -> None:
        # A route dedicated to one account (``route_account``) leaves the account out of every line.
        self.account = b""
        self._buf = bytearray()
        self._pos = 0
        # A message whose control line is parsed, waiting for its body: (event, header size, size).
        self._pending: tuple[RoutedMsg, int, int] | None = None

    def receive_data(self, data: bytes) -> None:
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += data

    def next_event(self) -> RouteEvent | None:
        """The next complete operation, or ``None`` when more bytes are needed."""
        if self._pending is not None:
            return self._body()
        buf = self._buf
        newline = buf.find(b"\n", self._pos)
        if newline < 0:
            if len(buf) - self._pos > MAX_ROUTE_LINE:
                raise ProtocolViolation(None, "route control line too long")
            return None
        line = bytes(buf[self._pos : newline]).rstrip(b"\r")
        self._pos = newline + 1
        op, _, arg = line.partition(b" ")
        op = op.upper()
        if op == b"PING":
            return Ping()
        if op == b"PONG":
            return Pong()
        if op == b"+OK":
            return Ok()
        handler = self.operations.get(op)
        if handler is None:
            raise ProtocolViolation(None, f"unknown route operation {_text(op)!r}")
        event: RouteEvent = handler(self, arg.strip())
        if isinstance(event, RoutedMsg):
            return self._body()
        return event

    # -- operations ------------------------------------------------------------

    def _json(self, arg: bytes) -> dict[str, Any]:
        try:
            value = json.loads(arg)
        except ValueError:
            raise ProtocolViolation(None, "route INFO/CONNECT is not JSON") from None
        if not isinstance(value, dict):
            raise ProtocolViolation(None, "route INFO/CONNECT is not a JSON object")
        return value

    def _info(self, arg: bytes) -> RouteInfo:
        return RouteInfo(self._json(arg))

    def _connect(self, arg: bytes) -> RouteConnect:
        return RouteConnect(self._json(arg))

    def _err(self, arg: bytes) -> RouteError:
        return RouteError(_text(arg).strip("'"))

    def _args(self, arg: bytes, leaf: bool) -> tuple[bytes, list[bytes]]:
        """The origin (LS+/LS-) and the fields, the account first (added on a dedicated route)."""
        args = arg.split()
        origin = b""
        if leaf:  # every server of 2.10+ says ``lnocu``: LS- names the origin too
            if not args:
                raise ProtocolViolation(None, "leaf interest without origin")
            origin, args = args[0], args[1:]
        if self.account:
            args.insert(0, self.account)
        return origin, args

    def _sub(self, arg: bytes, leaf: bool = False) -> RemoteSub:
        origin, args = self._args(arg, leaf)
        if len(args) == 2:
            return RemoteSub(_text(args[0]), _text(args[1]), "", 0, _text(origin))
        if len(args) in (3, 4):
            weight = _size(args[3]) if len(args) == 4 else 1
            if weight < 0:
                raise ProtocolViolation(None, "remote queue subscription with a bad weight")
            return RemoteSub(_text(args[0]), _text(args[1]), _text(args[2]), max(weight, 1), _text(origin))
        raise ProtocolViolation(None, f"remote subscription parse error: {_text(arg)!r}")

    def _leaf_sub(self, arg: bytes) -> RemoteSub:
        return self._sub(arg, leaf=True)

    def _unsub(self, arg: bytes, leaf: bool = False) -> RemoteUnsub:
        origin, args = self._args(arg, leaf)
        if len(args) == 2:
            return RemoteUnsub(_text(args[0]), _text(args[1]), "", _text(origin))
        if len(args) == 3:
            return RemoteUnsub(_text(args[0]), _text(args[1]), _text(args[2]), _text(origin))
        raise ProtocolViolation(None, "remote unsubscription parse error")

    def _leaf_unsub(self, arg: bytes) -> RemoteUnsub:
        return self._unsub(arg, leaf=True)

    def _msg(self, arg: bytes, with_headers: bool = False, origin: bytes = b"") -> RoutedMsg:
        args = arg.split()
        if self.account:
            args.insert(0, self.account)
        sizes = 2 if with_headers else 1
        if len(args) < 2 + sizes:
            raise ProtocolViolation(None, "routed message parse error")
        account, subject, middle = args[0], args[1], args[2:-sizes]
        reply = b""
        queues: list[bytes] = []
        if len(middle) == 1:
            reply = middle[0]
        elif middle:
            indicator, rest = middle[0], middle[1:]
            if indicator == b"+":
                reply, queues = rest[0], rest[1:]
            elif indicator == b"|":
                queues = rest
            else:
                raise ProtocolViolation(None, "routed message with a bad reply indicator")
        size = _size(args[-1])
        header_size = _size(args[-2]) if with_headers else 0
        if size < 0 or header_size < 0 or header_size > size:
            raise ProtocolViolation(None, "routed message with a bad size")
        event = RoutedMsg(
            _text(account), _text(subject), _text(reply), tuple(_text(q) for q in queues), None, b"", _text(origin)
        )
        self._pending = (event, header_size if with_headers else -1, size)
        return event

    def _hmsg(self, arg: bytes) -> RoutedMsg:
        return self._msg(arg, with_headers=True)

    def _lmsg(self, arg: bytes) -> RoutedMsg:
        # ``LMSG <origin> <account> <subject> ...``: always with a header size, even an empty one.
        origin, _, rest = arg.strip().partition(b" ")
        return self._msg(rest, with_headers=True, origin=origin)

    def _body(self) -> RoutedMsg | None:
        assert self._pending is not None
        event, header_size, size = self._pending
        buf = self._buf
        start = self._pos
        if len(buf) - start < size + 2:
            return None
        if buf[start + size : start + size + 2] != b"\r\n":
            raise ProtocolViolation(None, "routed message body not followed by CRLF")
        body = bytes(buf[start : start + size])
        self._pos = start + size + 2
        self._pending = None
        if header_size >= 0:
            event.headers, event.payload = body[:header_size], body[header_size:]
        else:
            event.payload = body
        return event


RouteParser.operations = {
    b"INFO": RouteParser._info,
    b"CONNECT": RouteParser._connect,
    b"-ERR": RouteParser._err,
    b"RS+": RouteParser._sub,
    b"RS-": RouteParser._unsub,
    b"LS+": RouteParser._leaf_sub,
    b"LS-": RouteParser._leaf_unsub,
    b"RMSG": RouteParser._msg,
    b"HMSG": RouteParser._hmsg,
    b"LMSG": RouteParser._lmsg,
}


# -- writing ------------------------------------------------------------------------


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def info(fields: dict[str, Any]) -> bytes:
    """``INFO {...}\\r\\n`` between servers (Go's JSON, no blank before CRLF on a route)."""
    return b"INFO " + dumps(fields).encode() + b"\r\n"


def connect(fields: dict[str, Any]) -> bytes:
    return b"CONNECT " + dumps(fields).encode() + b"\r\n"


def _scope(account: str, subject: str) -> bytes:
    """``<account> <subject>``, or the subject alone on a route dedicated to the account (``account`` empty)."""
    return _encode(account) + b" " + _encode(subject) if account else _encode(subject)


def sub(account: str, subject: str, queue: str = "", weight: int = 0) -> bytes:
    """``RS+``: this server now has interest on ``subject`` (a queue with ``weight`` members)."""
    if queue:
        return b"RS+ %s %s %d\r\n" % (_scope(account, subject), _encode(queue), weight)
    return b"RS+ %s\r\n" % _scope(account, subject)


def leaf_sub(origin: str, account: str, subject: str, queue: str = "", weight: int = 0) -> bytes:
    """``LS+``: a leaf connection of the cluster ``origin`` has interest here on ``subject``."""
    return b"LS+ " + _encode(origin) + b" " + sub(account, subject, queue, weight)[4:]


def leaf_unsub(origin: str, account: str, subject: str, queue: str = "") -> bytes:
    """``LS-``: that interest went (the origin named, as every server of 2.10+ reads it)."""
    return b"LS- " + _encode(origin) + b" " + unsub(account, subject, queue)[4:]


def unsub(account: str, subject: str, queue: str = "") -> bytes:
    """``RS-``: this server has no more interest on ``subject`` (in ``queue``)."""
    if queue:
        return b"RS- %s %s\r\n" % (_scope(account, subject), _encode(queue))
    return b"RS- %s\r\n" % _scope(account, subject)


def routed_msg(
    account: str, subject: str, reply: str, queues: list[str] | tuple[str, ...], headers: bytes | None, payload: bytes
) -> bytes:
    """``RMSG``/``HMSG`` as nats-server writes them: ``+ reply q...`` or ``| q...`` when queues are named.

    ``account`` empty: a route dedicated to the message's account.
    """
    return message_frame(b"RMSG ", _scope(account, subject), reply, queues, headers, payload)


def message_frame(
    verb: bytes, scope: bytes, reply: str, queues: list[str] | tuple[str, ...], headers: bytes | None, payload: bytes
) -> bytes:
    """A message between servers: ``<verb><scope> [+ reply q... | | q... | reply] <size>``, ``HMSG`` with headers.

    ``verb`` is ``RMSG `` on a route, ``LMSG `` on a leaf connection; ``scope``
    the subject, on a route behind its account unless the route is dedicated to it.
    """
    parts = [scope]
    if queues:
        parts.append(b"+" if reply else b"|")
        if reply:
            parts.append(_encode(reply))
        parts.extend(_encode(queue) for queue in queues)
    elif reply:
        parts.append(_encode(reply))
    if headers is not None:
        parts.append(b"%d %d" % (len(headers), len(headers) + len(payload)))
        return b"HMSG " + b" ".join(parts) + b"\r\n" + headers + payload + b"\r\n"
    parts.append(b"%d" % len(payload))
    return verb + b" ".join(parts) + b"\r\n" + payload + b"\r\n"
