"""The NATS client protocol without I/O: bytes in, events out; values in, bytes out.

``parser`` (the client side of the protocol, parsed) produces ``events``;
``writer`` writes server-to-client frames byte for byte, ``headers`` reads
and writes header blocks, ``connect`` holds the ``CONNECT`` and ``INFO``
bodies, ``route`` the route protocol between servers of a cluster, and ``leaf``
the leaf node protocol between a hub and a leaf.

Nothing in this package imports asyncio or touches a socket, so every rule
can be tested by feeding bytes -- whole, one at a time, or with trailing
data -- and reading events back.
"""

from fakejs.protocol import headers, writer
from fakejs.protocol.events import Connect, Event, Info, Notice, Ok, Ping, Pong, ProtocolViolation, Pub, Sub, Unsub
from fakejs.protocol.parser import Parser

__all__ = [
    "Connect",
    "Event",
    "Info",
    "Notice",
    "Ok",
    "Parser",
    "Ping",
    "Pong",
    "ProtocolViolation",
    "Pub",
    "Sub",
    "Unsub",
    "headers",
    "writer",
]
