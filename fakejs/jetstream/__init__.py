"""JetStream: streams, consumers and their ``$JS.API``, for one account.

``config`` (stream and consumer configurations: their fields, defaults,
validation, update rules), ``storage`` (message store, file journals),
``stream`` (publishing, limits, retention, expiry, Direct Get),
``consumer`` (a consumer and its parts), ``raft`` (the replicated log
of clustered groups, sans-IO), ``replication`` (a group's members on the
servers of a cluster, driving the replicated log over the routes),
``cluster`` (the meta group's replicated state: assignments, its entries,
its leader's requests, and the placement rules),
``service`` (an account's JetStream: its streams and consumers, their
administration and persistence) and ``api`` (the route table: handlers decode, call the
domain, encode).  ``errors``, ``status`` and ``advisories`` hold every
error, status line and advisory text; ``quorum_advisories`` the advisories
of a replicated stream or consumer that lost its quorum, ``internal_client``
the server's own clients that send ``$JS.API`` requests, ``apilevel`` the
``Nats-Required-Api-Level`` check and ``enums`` the enumerations as read
from JSON.  May import :mod:`fakejs.core`,
:mod:`fakejs.protocol` and :mod:`fakejs.gocompat`; inside, ``api`` sits on
``service``, which sits on ``cluster`` over ``consumer`` over ``stream`` over ``storage``
and ``config``; ``raft`` sits beside them and imports none of fakejs but
:mod:`fakejs.gocompat`; ``replication`` sits between ``stream`` and them, and
imports of JetStream only ``raft``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.jetstream import service
from fakejs.jetstream.api import JetStreamApi, attach_api

if TYPE_CHECKING:
    from fakejs.core.accounts import Account
    from fakejs.core.broker import Broker
    from fakejs.core.jetstream_limits import JetStreamLimits
    from fakejs.core.replicated_jetstream import ReplicatedJetStream
    from fakejs.core.router import Router
    from fakejs.jetstream.api.replicated import ReplicatedApi
    from fakejs.jetstream.service.replicated_meta import MetaMember
    from fakejs.jetstream.stream.batch_limits import BatchLimits
    from fakejs.jetstream.stream.stream import Stream, StreamConsumer


class JetStreamWithApi(service.JetStream):
    """An account's JetStream answering its ``$JS.API``: the service
    (:class:`~fakejs.jetstream.service.JetStream`) with the API layer (:class:`JetStreamApi`) attached.

    With ``replicated`` (set by code only), the JetStream is this server's share of one replicated across the
    cluster's servers, and :class:`~fakejs.jetstream.api.replicated.ReplicatedApi` answers in place of the
    single server's API (``api`` is then ``None``); ``meta`` is the server's member of the meta group, shared by
    its accounts (none: the account's JetStream runs its own).
    """

    def __init__(
        self,
        broker: Broker,
        store_dir: str = "",
        own_store: bool | None = None,
        account: Account | None = None,
        limits: JetStreamLimits | None = None,
        batch_limits: BatchLimits | None = None,
        router: Router | None = None,
        replicated: ReplicatedJetStream | None = None,
        meta: MetaMember | None = None,
    ) -> None:
        super().__init__(broker, store_dir, own_store, account, limits, batch_limits, router)
        self.api: JetStreamApi | None = None
        self.replicated_api: ReplicatedApi | None = None
        if replicated is None:
            self.api = attach_api(self)
        else:
            # Only a replicated JetStream loads its front end
            from fakejs.jetstream.api.replicated import ReplicatedApi

            self.replicated_api = ReplicatedApi(self, replicated, meta)
            self.attach(self.replicated_api)

    def consumer_acked(self, stream: Stream, consumer: StreamConsumer, seq: int) -> None:
        """A replicated stream's removals are its leader's, from the replicated acks (``AckRetention``)."""
        if self.replicated_api is None:
            super().consumer_acked(stream, consumer, seq)

    def remove_consumer(self, stream: Stream, consumer: StreamConsumer, cause: str = "api") -> None:
        """A replicated consumer going on its own (inactive) is removed by the meta group, on every replica."""
        if self.replicated_api is None:
            super().remove_consumer(stream, consumer, cause)
        else:
            self.replicated_api.domain.consumer_gone(stream.name, consumer.name)

    def cluster_section(self, stream: str, consumer: str = "") -> dict[str, Any] | None:
        if self.replicated_api is not None:
            return self.replicated_api.domain.cluster_section(stream, consumer)
        return super().cluster_section(stream, consumer)


__all__ = ["JetStreamWithApi"]
