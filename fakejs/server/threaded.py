"""A server on a background thread, for synchronous test code.

::

    with ThreadedServer() as server:
        run_my_app(nats_url=server.url)

The server runs its own asyncio loop on a daemon thread; :meth:`call`
runs a function on that loop (for example to advance a manual clock) and
returns its result; called from that loop's own thread, it runs the
function at once.  :attr:`ThreadedServer.errors` lists what the server's
handlers raised, so a synchronous test can fail on it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from fakejs.core.failures import ServerError
from fakejs.server.loop_thread import LoopThread
from fakejs.server.server import Server

T = TypeVar("T")


class ThreadedServer:
    """Same arguments as :class:`~fakejs.server.server.Server`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args = args
        self._kwargs = kwargs
        self._thread = LoopThread("server", "fakejs-server")
        self.server: Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None, "server not started"
        return self.server.url

    @property
    def port(self) -> int:
        assert self.server is not None, "server not started"
        return self.server.port

    @property
    def errors(self) -> list[ServerError]:
        """Exceptions the server's handlers raised (see :attr:`Server.errors`), oldest first."""
        server = self.server
        if server is None:
            return []
        if self._thread.loop is None:
            return list(server.errors)
        return self.call(lambda: list(server.errors))

    def take_errors(self) -> list[ServerError]:
        """The recorded errors, forgetting them."""
        server = self.server
        if server is None:
            return []
        if self._thread.loop is None:
            return server.take_errors()
        return self.call(server.take_errors)

    def start(self, timeout: float = 10.0) -> ThreadedServer:
        """Start the thread and wait until the server accepts connections."""

        async def begin() -> None:
            self.server = Server(*self._args, **self._kwargs)
            await self.server.start()

        async def end() -> None:
            assert self.server is not None
            await self.server.stop()

        self._thread.start(begin, end, timeout)
        return self

    def on_server_thread(self) -> bool:
        """Whether the caller is code the server's own thread runs (a timer, a fault's action, a :meth:`call`)."""
        return self._thread.on_loop_thread()

    def call(self, func: Callable[..., T], *args: Any, timeout: float = 10.0) -> T:
        """Run ``func(*args)`` on the server's loop and return its result (at once if already there)."""
        return self._thread.call(func, *args, timeout=timeout)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        """Run a coroutine on the server's loop and return its result (not from that loop: await it there)."""
        return self._thread.run(coro, timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and join the thread."""
        self._thread.stop(timeout)

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
