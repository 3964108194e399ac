"""The ``/jsz`` monitoring document, shaped like nats-server's ``JSInfo``.

Operators and ``nats server report jetstream``-style tools read it for
JetStream usage: totals for the server, and on request per-account detail
down to streams (``streams=1``), consumers (``consumers=1``) and their
configurations (``config=1``).  A standalone nats-server counts every
stream and consumer as its own leader and reports no meta cluster; so
does this one.  Every account with JetStream counts (``$G`` alone when no
accounts are configured), its detail listed by name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fakejs.core.options import API_LEVEL
from fakejs.gocompat.gotime import rfc3339
from fakejs.jetstream import JetStreamWithApi
from fakejs.jetstream.consumer.registry import consumers_of
from fakejs.jetstream.service import replicated_monitoring
from fakejs.monitoring.query import GLOBAL_ACCOUNT, BadRequest, Query
from fakejs.monitoring.source import MonitoredServer

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.stream.stream import Stream

# nats-server reports the store directory it uses under the configured one.
STORE_SUBDIR = "jetstream"
# Go's sync interval default (2 minutes), in nanoseconds.
SYNC_INTERVAL_NS = 120_000_000_000
# The server-wide JetStream limits nats-server 2.15 reports by default.
DEFAULT_LIMITS = {"default_max_consumers": 1000}
# An account without JetStream limits reserves "unlimited": -1 as a Go uint64.
UNLIMITED_RESERVATION = 2**64 - 1


@dataclass(frozen=True, slots=True)
class _JszQuery:
    """The options of one ``/jsz`` request, decoded."""

    accounts: bool
    streams: bool
    consumers: bool
    direct: bool
    config: bool
    offset: int
    limit: int
    leader_only: bool
    raft: bool
    account: str


def _decode_jsz(params: dict[str, list[str]]) -> _JszQuery:
    """Decode ``/jsz`` options; raises :class:`BadRequest` with nats-server's text."""
    query = Query(params)
    accounts = query.bool("accounts")
    streams = query.bool("streams")
    consumers = query.bool("consumers")
    direct = query.bool("direct-consumers")
    config = query.bool("config")
    offset = query.int("offset")
    limit = query.int("limit")
    leader_only = query.bool("leader-only")
    raft = query.bool("raft")
    query.bool("stream-leader-only")  # decoded for its error; a standalone server leads every stream
    account = query.text("acc")
    if consumers:
        streams = True
    if streams and not account:
        accounts = True
    return _JszQuery(
        accounts, streams, consumers, direct, config, max(offset, 0), limit or 1024, leader_only, raft, account
    )


def jsz(server: MonitoredServer, params: dict[str, list[str]]) -> tuple[int, Any]:
    """``/jsz``: JetStream usage, with optional account, stream and consumer detail."""
    try:
        q = _decode_jsz(params)
    except BadRequest as err:
        return 400, str(err)
    broker = server.broker
    now = rfc3339(broker.clock.time_ns())
    jetstreams = sorted(server.account_jetstreams, key=lambda j: j.account.name)
    if not jetstreams or not broker.jetstream_enabled:
        if q.leader_only:
            return 400, "filtered response: not leader"
        return 200, _disabled(broker.server_id, now)
    doc = _usage(jetstreams, broker.server_id, now)
    all_streams = [stream for js in jetstreams for stream in js.streams.values()]
    doc["streams"] = len(all_streams)
    if q.raft and all_streams:
        doc["streams_leader"] = len(all_streams)
    states = [stream.state() for stream in all_streams]
    doc["consumers"] = sum(state["consumer_count"] for state in states)
    if q.raft:
        public = sum(1 for stream in all_streams for c in stream.consumers.values() if not c.config["direct"])
        if public:
            doc["consumers_leader"] = public
    doc["messages"] = sum(state["messages"] for state in states)
    doc["bytes"] = sum(state["bytes"] for state in states)
    replicated = jetstreams[0].replicated_api
    if replicated is not None:
        doc["ha_assets"] = replicated_monitoring.ha_assets(replicated.domain)
        if (meta := replicated_monitoring.meta_cluster(replicated.domain)) is not None:
            doc["meta_cluster"] = meta
    # An account shows when named, or when listing accounts, a page of them (a negative
    # limit means no paging).
    if q.account:
        shown = [js for js in jetstreams if js.account.name == q.account]
    elif q.accounts:
        shown = jetstreams[q.offset :] if q.limit < 0 else jetstreams[q.offset : q.offset + q.limit]
    else:
        shown = []
    if shown:
        doc["account_details"] = [_account_detail(js, q.streams, q.consumers, q.direct, q.config) for js in shown]
    doc["total"] = len(jetstreams)
    return 200, doc


def _usage(jetstreams: list[JetStreamWithApi], server_id: str, now: str) -> dict[str, Any]:
    """The head of ``JSInfo``: usage, reservations, API counters and configuration, over the accounts."""
    memory = storage = reserved_memory = reserved_storage = 0
    for js in jetstreams:
        used = js.usage()
        reserved = js.reservations()
        memory, storage = memory + used[0], storage + used[1]
        reserved_memory, reserved_storage = reserved_memory + reserved[0], reserved_storage + reserved[1]
    js = jetstreams[0]
    return {
        "memory": memory,
        "storage": storage,
        "reserved_memory": reserved_memory,
        "reserved_storage": reserved_storage,
        "accounts": len(jetstreams),
        "ha_assets": 0,
        "api": {
            "level": API_LEVEL,
            "total": sum(j.api_total for j in jetstreams),
            "errors": sum(j.api_errors for j in jetstreams),
        },
        "server_id": server_id,
        "now": now,
        "config": {
            "max_memory": js.max_memory,
            "max_storage": js.max_storage,
            "store_dir": os.path.join(_server_store(js), STORE_SUBDIR),
            "sync_interval": SYNC_INTERVAL_NS,
            **({"domain": js.domain} if js.domain else {}),
            "strict": True,
        },
        "limits": dict(DEFAULT_LIMITS),
    }


def _server_store(js: JetStreamWithApi) -> str:
    """The server's store directory: ``$G``'s own, or two levels above another account's."""
    if js.account.name == GLOBAL_ACCOUNT:
        return js.store_dir
    return os.path.dirname(os.path.dirname(js.store_dir))


def _disabled(server_id: str, now: str) -> dict[str, Any]:
    """What nats-server answers when JetStream is off."""
    return {
        "memory": 0,
        "storage": 0,
        "reserved_memory": 0,
        "reserved_storage": 0,
        "accounts": 0,
        "ha_assets": 0,
        "api": {"level": 0, "total": 0, "errors": 0},
        "server_id": server_id,
        "now": now,
        "disabled": True,
        "config": {"max_memory": 0, "max_storage": 0},
        "streams": 0,
        "consumers": 0,
        "messages": 0,
        "bytes": 0,
        "total": 0,
    }


def _account_detail(js: JetStreamWithApi, streams: bool, consumers: bool, direct: bool, config: bool) -> dict[str, Any]:
    """``AccountDetail`` for one account (its limits are what it reserves; -1 is "unlimited")."""
    memory, storage = js.usage()
    name = js.account.name
    limits = js.limits
    detail: dict[str, Any] = {
        "name": name,
        "id": name,
        "memory": memory,
        "storage": storage,
        "reserved_memory": limits.max_memory if limits.max_memory >= 0 else UNLIMITED_RESERVATION,
        "reserved_storage": limits.max_storage if limits.max_storage >= 0 else UNLIMITED_RESERVATION,
        "accounts": 0,
        "ha_assets": 0,
        "api": {"level": 0, "total": js.api_total, "errors": js.api_errors},
    }
    if streams:
        found = [
            _stream_detail(s, consumers, direct, config) for s in sorted(js.streams.values(), key=lambda s: s.name)
        ]
        if found:
            detail["stream_detail"] = found
    return detail


def _stream_detail(stream: Stream, consumers: bool, direct: bool, config: bool) -> dict[str, Any]:
    """``StreamDetail``: the stream's info without the server's dynamic metadata or timestamp."""
    info = stream.info(cluster=True, dynamic_metadata=False)
    detail: dict[str, Any] = {"name": stream.name, "created": info["created"], "cluster": info["cluster"]}
    if config:
        detail["config"] = info["config"]
    detail["state"] = info["state"]
    if consumers:
        ordered = sorted(consumers_of(stream).values(), key=lambda c: c.name)
        public = [_consumer_detail(c, config) for c in ordered if not c.config["direct"]]
        if public:
            detail["consumer_detail"] = public
        if direct:
            hidden = [_consumer_detail(c, config) for c in ordered if c.config["direct"]]
            if hidden:
                detail["direct_consumer_detail"] = hidden
    for key in ("mirror", "sources"):
        if key in info:
            detail[key] = info[key]
    return detail


def _consumer_detail(consumer: Consumer, config: bool) -> dict[str, Any]:
    """The consumer's info without dynamic metadata; its config only when asked for."""
    info = consumer.info(dynamic_metadata=False)
    if not config:
        info.pop("config", None)
    return info
