"""The advisories of a replicated stream or consumer that lost its quorum, as nats-server publishes them.

``$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.<stream>``
(``io.nats.jetstream.advisory.v1.stream_quorum_lost``) and
``$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.<stream>.<consumer>``
(``consumer_quorum_lost``): the group's servers as ``PeerInfo`` and the
domain, sent by the server whose replica has no quorum -- in the asset's
account, then in that server's system account with the ``account`` named
after the timestamp (nats-server's ``sendStreamLostQuorumAdvisory`` and
``sendConsumerLostQuorumAdvisory``; both copies carry the same id).
"""

from __future__ import annotations

from typing import Any

from fakejs.core.empty_reply import EMPTY_REPLY
from fakejs.core.router import Router
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.advisories import PREFIX, Publisher, domain_field, typed_event

__all__ = ["consumer_quorum_lost", "stream_quorum_lost"]


def stream_quorum_lost(
    js: Publisher, routers: tuple[Router, Router | None], stream: str, replicas: list[dict[str, Any]]
) -> None:
    """``stream_quorum_lost``, through ``routers``: the sending server's account and system account."""
    doc = {**typed_event(js, "stream_quorum_lost"), "stream": stream, "replicas": replicas, **domain_field(js)}
    _send_twice(js, routers, f"{PREFIX}STREAM.QUORUM_LOST.{stream}", doc)


def consumer_quorum_lost(
    js: Publisher, routers: tuple[Router, Router | None], stream: str, consumer: str, replicas: list[dict[str, Any]]
) -> None:
    """``consumer_quorum_lost``, through ``routers``: the sending server's account and system account."""
    doc = {
        **typed_event(js, "consumer_quorum_lost"),
        "stream": stream,
        "consumer": consumer,
        "replicas": replicas,
        **domain_field(js),
    }
    _send_twice(js, routers, f"{PREFIX}CONSUMER.QUORUM_LOST.{stream}.{consumer}", doc)


def _send_twice(js: Publisher, routers: tuple[Router, Router | None], subject: str, doc: dict[str, Any]) -> None:
    """In the account (unless it is the system account), then in the system account naming the account."""
    account, system = routers
    if system is not account and account.has_interest(subject):
        account.publish(subject, EMPTY_REPLY, None, dumps(doc).encode())
    if system is None or not system.has_interest(subject):
        return
    head = {key: doc.pop(key) for key in ("type", "id", "timestamp")}
    system.publish(subject, EMPTY_REPLY, None, dumps({**head, "account": js.account_name, **doc}).encode())
