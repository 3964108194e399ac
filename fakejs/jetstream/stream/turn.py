"""A replicated stream's turn: its publishes one at a time, in the order they came, taken at once when free.

Like :class:`asyncio.Lock`, a :class:`Turn` serves those waiting for it in
order; unlike it, a caller that finds it free may take it without awaiting
(:meth:`Turn.take_now`), so that a publish stored by a quorum within the call
that proposed it (an in-process cluster's exchange delivers at once) is
answered within that call, with no task and no step of the event loop.  A
release hands the turn straight to the first caller still waiting, so that
nobody takes it in between.
"""

from __future__ import annotations

import asyncio
from collections import deque
from types import TracebackType

__all__ = ["Turn"]


class Turn:
    """One holder at a time; ``async with`` waits its turn, :meth:`take_now` takes a free one."""

    def __init__(self) -> None:
        self._held = False
        self._waiting: deque[asyncio.Future[None]] = deque()  # whoever waits is behind a holder

    def locked(self) -> bool:
        return self._held

    def take_now(self) -> bool:
        """Take the turn if it is free (``True``); nobody waits for a free turn."""
        if self._held:
            return False
        self._held = True
        return True

    async def take(self) -> None:
        """Take the turn, after those who came before."""
        if self.take_now():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the turn as it was cancelled: it passes on
            elif waiter in self._waiting:
                self._waiting.remove(waiter)
            raise

    def release(self) -> None:
        """Hand the turn to the first caller still waiting, or leave it free."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the turn is its own from now on
                return
        self._held = False

    async def __aenter__(self) -> None:
        await self.take()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.release()
