"""fakejs: a local, JetStream-compatible NATS server in Python, made for testing.

In-process use from async code::

    from fakejs import Server

    async with Server() as server:      # a free port on 127.0.0.1
        nc = await nats.connect(server.url)

and from synchronous code::

    from fakejs import ThreadedServer

    with ThreadedServer() as server:
        ...
"""

__version__ = "0.1.0"

from fakejs.clock import ManualClock, SystemClock  # noqa: E402
from fakejs.options import ServerOptions  # noqa: E402
from fakejs.server import Server  # noqa: E402
from fakejs.threaded import ThreadedServer  # noqa: E402

__all__ = ["ManualClock", "Server", "ServerOptions", "SystemClock", "ThreadedServer", "__version__"]
