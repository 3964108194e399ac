"""fakejs: a local, JetStream-compatible NATS server in Python, made for testing.

In-process use from async code::

    from fakejs import Server

    async with Server() as server:      # a free port on 127.0.0.1
        nc = await nats.connect(server.url)

and from synchronous code::

    from fakejs import ThreadedServer

    with ThreadedServer() as server:
        ...

The package face only re-exports the public names; it may import every
layer, and nothing inside fakejs imports it (see "How fakejs is built" in
the README for the layers and what each may import).
"""

from fakejs._version import __version__
from fakejs.core.clock import SystemClock
from fakejs.core.options import ServerOptions
from fakejs.server import Server, ThreadedServer
from fakejs.testkit.clock import ManualClock

__all__ = ["ManualClock", "Server", "ServerOptions", "SystemClock", "ThreadedServer", "__version__"]
