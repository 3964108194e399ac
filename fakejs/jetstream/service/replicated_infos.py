"""Stream infos gathered from the streams' leaders, for the meta leader's ``STREAM.LIST``.

nats-server's meta leader asks each stream's group for its info
(``$JSC.SI.<account>.<stream>``) and lists what came back in time.  Here every
server of a replicated JetStream answers ``$FJMETA.SI.<stream>`` in the system
account for the streams it leads (:class:`StreamInfoAnswers`), and
:func:`gather_infos` asks for several at once, on an inbox of its own, and
waits at most ``timeout`` seconds for them; a stream whose leader did not
answer is left out.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from fakejs.core.router import Router, Subscription
from fakejs.gocompat.gojson import dumps

__all__ = ["INFO_PREFIX", "StreamInfoAnswers", "gather_infos"]

INFO_PREFIX = "$FJMETA.SI."  # fakejs's own: a stream's info, asked of its leader
INBOX_PREFIX = "$FJMETA.INBOX."


class StreamInfoAnswers:
    """This server's answers to ``$FJMETA.SI.<stream>``, for the streams ``info_of`` gives (those it leads)."""

    def __init__(self, router: Router, info_of: Callable[[str], dict[str, Any] | None]) -> None:
        self.router = router
        self.info_of = info_of
        self._subscription: Subscription | None = router.subscribe_internal(INFO_PREFIX + "*", self._asked)

    def _asked(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        info = self.info_of(subject.removeprefix(INFO_PREFIX))
        if info is not None and reply:
            self.router.publish(reply, "", None, dumps(info).encode(), None)
        return True

    def stop(self) -> None:
        if self._subscription is not None:
            self.router.unsubscribe(self._subscription)
            self._subscription = None


async def gather_infos(router: Router, token: str, names: Sequence[str], timeout: float) -> dict[str, dict[str, Any]]:
    """The infos of the streams ``names`` from their leaders (``token``: unique to this request)."""
    if not names:
        return {}
    loop = asyncio.get_running_loop()
    inbox = f"{INBOX_PREFIX}{token}."
    found: dict[str, dict[str, Any]] = {}
    complete = loop.create_future()

    def answered(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        index = subject.removeprefix(inbox)
        if index.isdigit() and int(index) < len(names):
            found.setdefault(names[int(index)], json.loads(payload))
            if len(found) == len(names) and not complete.done():
                complete.set_result(None)
        return True

    subscription = router.subscribe_internal(inbox + "*", answered)
    try:
        for index, name in enumerate(names):
            router.publish(INFO_PREFIX + name, f"{inbox}{index}", None, b"", None)
        try:
            await asyncio.wait_for(asyncio.shield(complete), timeout)
        except TimeoutError:
            pass
    finally:
        router.unsubscribe(subscription)
    return found
