"""An asyncio loop on a daemon thread, serving one thing between its start and its stop.

:class:`~fakejs.server.threaded.ThreadedServer` (a server) and
:class:`~fakejs.server.threaded_cluster.ThreadedCluster` (a cluster of
them) give synchronous code what runs on an event loop: the loop lives on
its own thread, :meth:`LoopThread.start` runs the thing's start there and
waits for it, :meth:`LoopThread.call` and :meth:`LoopThread.run` hand it a
function or a coroutine and wait for the result, and :meth:`LoopThread.stop`
runs its stop and joins the thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """The thread and loop; ``what`` names the thing served in errors ("server not started")."""

    def __init__(self, what: str, thread_name: str) -> None:
        self.what = what
        self.thread_name = thread_name
        # The loop while the thing runs (None before its start succeeded and after the loop ended).
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None

    def start(
        self,
        begin: Callable[[], Awaitable[None]],
        end: Callable[[], Awaitable[None]],
        timeout: float,
        end_if_refused: bool = False,
    ) -> None:
        """Run ``begin()`` on a new thread's loop and wait for it; ``end()`` runs at :meth:`stop`.

        What ``begin`` raises is raised here (after ``end()`` if
        ``end_if_refused``); the thread then ends on its own.
        """
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._serve, args=(ready, begin, end, end_if_refused), name=self.thread_name, daemon=True
        )
        self._thread.start()
        ready.result(timeout)

    def _serve(
        self,
        ready: concurrent.futures.Future[None],
        begin: Callable[[], Awaitable[None]],
        end: Callable[[], Awaitable[None]],
        end_if_refused: bool,
    ) -> None:
        loop = asyncio.new_event_loop()

        async def main() -> None:
            self._stopped = asyncio.Event()
            try:
                await begin()
            except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits in start()
                if end_if_refused:
                    await end()
                ready.set_exception(exc)
                return
            self.loop = loop
            ready.set_result(None)
            await self._stopped.wait()
            await end()

        try:
            loop.run_until_complete(main())
        finally:
            self.loop = None
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def running_loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            raise RuntimeError(f"{self.what} not started")
        return self.loop

    def call(self, func: Callable[..., T], *args: Any, timeout: float) -> T:
        """Run ``func(*args)`` on the loop and return its result (or raise what it raised)."""
        loop = self.running_loop()
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(func(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, which raises it
                done.set_exception(exc)

        loop.call_soon_threadsafe(run)
        return done.result(timeout)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run a coroutine on the loop and return its result."""
        if self.loop is None:
            coro.close()  # never to run: no warning that it was never awaited
        return asyncio.run_coroutine_threadsafe(coro, self.running_loop()).result(timeout)

    def stop(self, timeout: float) -> None:
        """Run the thing's stop and join the thread (nothing to do if it never started)."""
        thread, loop, stopped = self._thread, self.loop, self._stopped
        if thread is None:
            return
        if loop is not None and stopped is not None:
            loop.call_soon_threadsafe(stopped.set)
        thread.join(timeout)
        self._thread = None
