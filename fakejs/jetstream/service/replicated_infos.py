"""What the meta leader asks of the other servers: the streams' infos for ``STREAM.LIST``, each server's usage
for ``$JS.API.INFO``.

nats-server's meta leader asks each stream's group for its info
(``$JSC.SI.<account>.<stream>``) and lists what came back in time, and sums
the usage every server reports of the account.  Here every server of a
replicated JetStream answers, in the system account, ``$FJMETA.SI.<account>.<stream>``
for the streams it leads and ``$FJMETA.USAGE.<account>`` with what its replicas store
(:class:`MetaAnswers`); :func:`ask` sends several requests at once on an
inbox of its own and waits at most ``timeout`` seconds for the answers
expected.  What did not answer in time is left out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from fakejs.core.router import Router, Subscription

__all__ = ["CONSUMER_INFO_PREFIX", "INFO_PREFIX", "USAGE_SUBJECT", "MetaAnswers", "ask"]

INFO_PREFIX = "$FJMETA.SI."  # fakejs's own: a stream's info (``<account>.<stream>``), asked of its leader
CONSUMER_INFO_PREFIX = (
    "$FJMETA.CI."  # fakejs's own: a consumer's info (``<account>.<stream>.<consumer>``), of its leader
)
USAGE_SUBJECT = "$FJMETA.USAGE"  # fakejs's own: what a server's replicas of an account (``.<account>``) store
INBOX_PREFIX = "$FJMETA.INBOX."


class MetaAnswers:
    """This server's answers about ``account``: ``info_of(stream)`` for a stream it leads (``None`` otherwise),
    ``usage()``."""

    def __init__(
        self,
        router: Router,
        account: str,
        info_of: Callable[[str], bytes | None],
        usage: Callable[[], bytes],
        consumer_info_of: Callable[[str, str], bytes | None],
    ) -> None:
        self.router = router
        self._info_prefix = f"{INFO_PREFIX}{account}."
        self._consumer_info_prefix = f"{CONSUMER_INFO_PREFIX}{account}."
        self.info_of = info_of
        self.usage = usage
        self.consumer_info_of = consumer_info_of
        self._subscriptions: list[Subscription] = [
            router.subscribe_internal(self._info_prefix + "*", self._info_asked),
            router.subscribe_internal(self._consumer_info_prefix + "*.*", self._consumer_info_asked),
            router.subscribe_internal(f"{USAGE_SUBJECT}.{account}", self._usage_asked),
        ]

    def _consumer_info_asked(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        stream, _, name = subject.removeprefix(self._consumer_info_prefix).partition(".")
        info = self.consumer_info_of(stream, name)
        if info is not None and reply:
            self.router.publish(reply, "", None, info, None)
        return True

    def _info_asked(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        info = self.info_of(subject.removeprefix(self._info_prefix))
        if info is not None and reply:
            self.router.publish(reply, "", None, info, None)
        return True

    def _usage_asked(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        if reply:
            self.router.publish(reply, "", None, self.usage(), None)
        return True

    def stop(self) -> None:
        for subscription in self._subscriptions:
            self.router.unsubscribe(subscription)
        self._subscriptions = []


async def ask(
    router: Router, token: str, subjects: Sequence[str], expected: int, timeout: float
) -> list[tuple[int, bytes]]:
    """Publish a request on each of ``subjects`` (``token``: unique to this call); the answers, as the index of
    the request and the payload, once ``expected`` came or ``timeout`` seconds passed."""
    if expected <= 0:
        return []
    loop = asyncio.get_running_loop()
    inbox = f"{INBOX_PREFIX}{token}."
    answers: list[tuple[int, bytes]] = []
    complete = loop.create_future()

    def answered(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        index = subject.removeprefix(inbox)
        if index.isdigit() and int(index) < len(subjects):
            answers.append((int(index), payload))
            if len(answers) >= expected and not complete.done():
                complete.set_result(None)
        return True

    subscription = router.subscribe_internal(inbox + "*", answered)
    try:
        for index, subject in enumerate(subjects):
            router.publish(subject, f"{inbox}{index}", None, b"", None)
        try:
            await asyncio.wait_for(asyncio.shield(complete), timeout)
        except TimeoutError:
            pass
    finally:
        router.unsubscribe(subscription)
    return answers
