"""An asyncio loop on a daemon thread, serving one thing between its start and its stop.

:class:`~fakejs.server.threaded.ThreadedServer` (a server) and
:class:`~fakejs.server.threaded_cluster.ThreadedCluster` (a cluster of
them) give synchronous code what runs on an event loop: the loop lives on
its own thread, :meth:`LoopThread.start` runs the thing's start there and
waits for it, :meth:`LoopThread.call` and :meth:`LoopThread.run` hand it a
function or a coroutine and wait for the result, and :meth:`LoopThread.stop`
runs its stop and joins the thread.

Code already running on that thread (a condition checked there, a fault's
action, a timer) may use the same handle: :meth:`LoopThread.call` then runs
the function at once, and what would wait for the thread itself
(:meth:`LoopThread.run`, :meth:`LoopThread.stop`) fails at once, saying why,
instead of hanging until its timeout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from fakejs.testkit.conditions import describe

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

    def on_loop_thread(self) -> bool:
        """Whether the caller runs on the loop's own thread (where waiting for the loop would wait forever)."""
        thread = self._thread
        return thread is not None and thread.ident == threading.get_ident()

    def call(self, func: Callable[..., T], *args: Any, timeout: float) -> T:
        """Run ``func(*args)`` on the loop and return its result (or raise what it raised).

        From the loop's own thread it runs at once, in the caller's turn.
        """
        loop = self.running_loop()
        if self.on_loop_thread():
            return func(*args)
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(func(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, which raises it
                done.set_exception(exc)

        loop.call_soon_threadsafe(run)
        return self._result(done, timeout, describe(func))

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run a coroutine on the loop and return its result."""
        name = f"{getattr(coro, '__qualname__', 'a coroutine')}()"
        if self.on_loop_thread():
            coro.close()  # never to run: no warning that it was never awaited
            raise RuntimeError(
                f"cannot wait for {name} on the {self.what}'s own thread, which would have to run it: "
                "await it there instead"
            )
        if self.loop is None:
            coro.close()
        future = asyncio.run_coroutine_threadsafe(coro, self.running_loop())
        return self._result(future, timeout, name)

    def _result(self, future: concurrent.futures.Future[T], timeout: float, what: str) -> T:
        """The future's result; past ``timeout``, an error that says what did not finish (it may still run later)."""
        try:
            return future.result(timeout)
        except TimeoutError:
            if not future.done():
                raise TimeoutError(
                    f"{what} did not finish within {timeout:g} s on the {self.what}'s thread "
                    "(something there blocks its event loop, or waits for what never comes)"
                ) from None
            raise

    def stop(self, timeout: float) -> None:
        """Run the thing's stop and join the thread (nothing to do if it never started)."""
        thread, loop, stopped = self._thread, self.loop, self._stopped
        if thread is None:
            return
        if self.on_loop_thread():
            raise RuntimeError(f"cannot stop the {self.what} from its own thread: stop it from the test")
        if loop is not None and stopped is not None:
            loop.call_soon_threadsafe(stopped.set)
        thread.join(timeout)
        self._thread = None
