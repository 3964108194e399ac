"""A server on a background thread, for synchronous test code.

::

    with ThreadedServer() as server:
        run_my_app(nats_url=server.url)

The server runs its own asyncio loop on a daemon thread; :meth:`call`
runs a function on that loop (for example to advance a manual clock) and
returns its result.  :attr:`ThreadedServer.errors` lists what the server's
handlers raised, so a synchronous test can fail on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fakejs.core.failures import ServerError
from fakejs.server.server import Server

T = TypeVar("T")


class ThreadedServer:
    """Same arguments as :class:`~fakejs.server.server.Server`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args = args
        self._kwargs = kwargs
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
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
        if self._loop is None:
            return list(server.errors)
        return self.call(lambda: list(server.errors))

    def take_errors(self) -> list[ServerError]:
        """The recorded errors, forgetting them."""
        server = self.server
        if server is None:
            return []
        if self._loop is None:
            return server.take_errors()
        return self.call(server.take_errors)

    def start(self, timeout: float = 10.0) -> ThreadedServer:
        """Start the thread and wait until the server accepts connections."""
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="fakejs-server", daemon=True)
        self._thread.start()
        ready.result(timeout)
        return self

    def _run(self, ready: concurrent.futures.Future[None]) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop

        async def main() -> None:
            self._stopped = asyncio.Event()
            try:
                self.server = Server(*self._args, **self._kwargs)
                await self.server.start()
            except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits in start()
                ready.set_exception(exc)
                return
            ready.set_result(None)
            await self._stopped.wait()
            await self.server.stop()

        try:
            loop.run_until_complete(main())
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def call(self, func: Callable[..., T], *args: Any, timeout: float = 10.0) -> T:
        """Run ``func(*args)`` on the server's loop and return its result."""
        assert self._loop is not None, "server not started"
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(func(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, which raises it
                done.set_exception(exc)

        self._loop.call_soon_threadsafe(run)
        return done.result(timeout)

    def run(self, coro: Awaitable[T], timeout: float = 10.0) -> T:
        """Run a coroutine on the server's loop and return its result."""
        assert self._loop is not None, "server not started"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)  # type: ignore[arg-type]

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and join the thread."""
        if self._loop is None or self._thread is None:
            return
        if self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(timeout)
        self._thread = None
        self._loop = None

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
