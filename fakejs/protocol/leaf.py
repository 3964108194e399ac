"""The leaf node protocol between a hub and a leaf server, without I/O (nats-server's ``leafnode.go``).

The leaf dials the hub's leaf port; the hub sends ``INFO``, the leaf
answers ``CONNECT``, then both announce their interest and send messages
on one account, so no line names it:

* ``LS+ <subject> [<queue> <weight>]`` / ``LS- <subject> [<queue>]``;
* ``LMSG <subject> [+ <reply> <queue>... | | <queue>... | <reply>] <size>``
  and ``HMSG`` with a header size before the size;
* ``PING``/``PONG``, ``+OK`` and ``-ERR``.

:class:`LeafParser` is the route parser with those lines (its events are
the route's, the account filled in).
"""

from __future__ import annotations

from typing import Any, ClassVar

from fakejs.protocol.route import RouteParser, _encode, message_frame

__all__ = ["LeafParser", "leaf_msg", "leaf_sub", "leaf_unsub"]


class LeafParser(RouteParser):
    """Parses a leaf connection's operations into route events (the bound account in each)."""

    __slots__ = ()

    operations: ClassVar[dict[bytes, Any]] = {
        b"INFO": RouteParser._info,
        b"CONNECT": RouteParser._connect,
        b"-ERR": RouteParser._err,
        b"LS+": RouteParser._sub,
        b"LS-": RouteParser._unsub,
        b"LMSG": RouteParser._msg,
        b"HMSG": RouteParser._hmsg,
    }

    def __init__(self, account: str) -> None:
        super().__init__()
        self.account = account.encode()


def leaf_sub(subject: str, queue: str = "", weight: int = 0) -> bytes:
    """``LS+``: interest on ``subject`` (a queue with ``weight`` members)."""
    if queue:
        return b"LS+ %s %s %d\r\n" % (_encode(subject), _encode(queue), weight)
    return b"LS+ %s\r\n" % _encode(subject)


def leaf_unsub(subject: str, queue: str = "") -> bytes:
    """``LS-``: no more interest on ``subject`` (in ``queue``)."""
    if queue:
        return b"LS- %s %s\r\n" % (_encode(subject), _encode(queue))
    return b"LS- %s\r\n" % _encode(subject)


def leaf_msg(subject: str, reply: str, queues: list[str], headers: bytes | None, payload: bytes) -> bytes:
    """``LMSG`` (``HMSG`` with headers) as nats-server writes it to a leaf connection."""
    return message_frame(b"LMSG ", _encode(subject), reply, queues, headers, payload)
