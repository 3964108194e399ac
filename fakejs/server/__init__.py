"""The running server: asyncio listeners, the :class:`Server` that assembles every layer, and its thread handle.

``connection`` (one client socket and its session), ``http`` (the HTTP
port for monitoring and the control API), ``server`` (the public
:class:`Server`) and ``threaded`` (:class:`ThreadedServer`, the server on
its own thread).  The only package that touches sockets.  May import every
layer below it (:mod:`fakejs.testkit`, :mod:`fakejs.monitoring`,
:mod:`fakejs.jetstream`, :mod:`fakejs.core`, :mod:`fakejs.protocol`,
:mod:`fakejs.gocompat`).
"""

from fakejs.server.server import Server
from fakejs.server.threaded import ThreadedServer

__all__ = ["Server", "ThreadedServer"]
