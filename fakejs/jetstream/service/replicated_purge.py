"""``$JS.API.ACCOUNT.PURGE.<account>`` in a JetStream replicated across servers: the meta leader removes an
account's streams and consumers.

As nats-server's ``jsLeaderAccountPurgeRequest`` in a cluster: the request is
heard in the system account only (other accounts get no answer).  Every server
whose JetStream runs refuses a name with a path separator with 10051
``account name can not contain path separators`` (nats-server checks it before
it asks whether it leads); otherwise only the meta leader answers: 10008 while
it still applies the log it had at start, else it proposes the removal of each
of the account's consumers and then of its stream, logs ``Purge request for
account <name> (streams: <n>, consumer: <n>, hasAccount: <true when it had
streams>)`` and answers ``{"initiated": true}`` without waiting for them to be
applied.  Each answer is audited in the system account, as
``SERVER.REMOVE``'s is.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from fakejs.jetstream.cluster import RemoveConsumer, RemoveStream, encode_entry
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.replication import system_router
from fakejs.jetstream.service.replicated_remove import MetaShare, system_answer

if TYPE_CHECKING:
    from fakejs.core.router import Subscription

__all__ = ["PURGE_SUBJECT", "AccountPurge"]

PURGE_SUBJECT = "$JS.API.ACCOUNT.PURGE.*"
PURGE_TYPE = "io.nats.jetstream.api.v1.account_purge_response"


class PurgeShare(MetaShare, Protocol):
    """What a purge needs of the server's member of ``_meta_``: the requests of :class:`MetaShare`, and whether it
    still applies the log it had at start."""

    def recovering(self) -> bool: ...


class AccountPurge:
    """A server's subscription to account purges in its system account (see the module docstring)."""

    def __init__(self, share: PurgeShare) -> None:
        self.share = share
        self._subscription: Subscription | None = None

    def start(self) -> None:
        self._subscription = system_router(self.share.broker).subscribe_internal(PURGE_SUBJECT, self._purge)

    def stop(self) -> None:
        if self._subscription is not None:
            system_router(self.share.broker).unsubscribe(self._subscription)
            self._subscription = None

    def _purge(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        share = self.share
        if not share.broker.jetstream_enabled:
            return True  # a removed server's JetStream is disabled: nats-server's says nothing
        account = subject.split(".", 4)[4]
        answer = system_answer(share, reply, subject, payload)
        if "/" in account or "\\" in account:
            error = api_error("JSStreamGeneralErrorF", err="account name can not contain path separators")
            answer({"type": PURGE_TYPE, "error": error.to_dict()})
            return True
        if not share.is_meta_leader or share.group is None:
            return True
        if share.recovering():
            answer({"type": PURGE_TYPE, "error": api_error("JSClusterNotAvailErr").to_dict()})
            return True
        state = share.machine.state
        streams = [stream for (owner, _), stream in state.streams.items() if owner == account]
        consumers = 0
        for stream in streams:
            for consumer in list(state.consumers_of(account, stream.name)):
                self._propose(RemoveConsumer(account, stream.name, consumer.name))
                consumers += 1
            self._propose(RemoveStream(account, stream.name))
        share.broker.log.info(
            "Purge request for account %s (streams: %d, consumer: %d, hasAccount: %s)",
            account,
            len(streams),
            consumers,
            "true" if streams else "false",
        )
        answer({"type": PURGE_TYPE, "initiated": True})
        return True

    def _propose(self, entry: RemoveStream | RemoveConsumer) -> None:
        """Propose ``entry`` without waiting for it (a purge is answered once proposed, as nats-server's is)."""
        assert self.share.group is not None
        future = self.share.group.propose(encode_entry(entry))
        future.add_done_callback(_retrieved)


def _retrieved(future: asyncio.Future[int]) -> None:
    """A removal lost with its leader is not proposed again, as nats-server's is not."""
    if not future.cancelled():
        future.exception()
