"""The ``/connz`` and ``/subsz`` monitoring documents, shaped like nats-server's.

``nats server report connections``, dashboards and test harnesses read
these, so field names, JSON tags, what is left out when empty, defaults
(1024 entries a page), sort orders and the ``400`` texts for bad options
follow nats-server.  Times are RFC 3339, durations Go's text (``rtt``) or
nats-server's ``1h2m3s`` (``uptime``, ``idle``).

A server without accounts has every client in the global account
``$G``; the ``$SYS`` account of nats-server exists but holds no clients
here.  JetStream's own subscriptions are listed by ``/subsz`` under
``$G`` with client id 0 (nats-server gives its internal clients ids of
their own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakejs.core.session import ClientSession
from fakejs.core.subjects import SubscriptionIndex, is_valid_literal_subject, matches
from fakejs.gocompat.gotime import rfc3339
from fakejs.monitoring.leafz import open_leaf_records
from fakejs.monitoring.query import (
    DEFAULT_LIST_SIZE,
    GLOBAL_ACCOUNT,
    SYSTEM_ACCOUNT,
    BadRequest,
    Query,
    go_float,
    page_bounds,
)
from fakejs.monitoring.records import ConnRecord, auth_user, sub_detail
from fakejs.monitoring.source import MonitoredServer

# Connection states /connz filters on.
OPEN, CLOSED, ALL = "open", "closed", "all"

SORT_OPTIONS = frozenset(
    (
        "cid",
        "start",
        "subs",
        "pending",
        "msgs_to",
        "msgs_from",
        "bytes_to",
        "bytes_from",
        "last",
        "idle",
        "uptime",
        "stop",
        "reason",
        "rtt",
    )
)


# Sort option -> (key, descending).
_SORT_KEYS: dict[str, tuple[Callable[[ConnRecord], Any], bool]] = {
    "subs": (lambda r: len(r.subs), True),
    "pending": (lambda r: r.pending, True),
    "msgs_to": (lambda r: r.out_msgs, True),
    "msgs_from": (lambda r: r.in_msgs, True),
    "bytes_to": (lambda r: r.out_bytes, True),
    "bytes_from": (lambda r: r.in_bytes, True),
    "last": (lambda r: r.last_ns, True),
    "idle": (lambda r: r.last_ns, False),  # most idle first: the oldest activity
    "stop": (lambda r: r.stop_ns, True),
    "reason": (lambda r: r.reason, False),
    "rtt": (lambda r: r.rtt_ns, True),
}


def _sort(records: list[ConnRecord], order: str, now_ns: int) -> None:
    """Order as nats-server does: cid, uptime and reason ascending, the rest descending (ties by cid)."""
    records.sort(key=lambda r: r.cid)
    if order == "uptime":
        records.sort(key=lambda r: (r.stop_ns or now_ns) - r.start_ns)
    elif order in _SORT_KEYS:
        key, descending = _SORT_KEYS[order]
        records.sort(key=key, reverse=descending)


def _decode_state(query: Query) -> str:
    text = query.text("state")
    if not text:
        return OPEN
    state = {"open": OPEN, "closed": CLOSED, "any": ALL, "all": ALL}.get(text.lower())
    if state is None:
        raise BadRequest(f"Error decoding state for {text}")
    return state


def _decode_subs(query: Query) -> str:
    if query.text("subs").lower() == "detail":
        return "detail"
    return "list" if query.bool("subs") else ""


@dataclass(frozen=True, slots=True)
class _ConnzQuery:
    """The options of one ``/connz`` request, decoded and checked."""

    order: str
    auth: bool
    subs: str
    offset: int
    limit: int
    cid: int
    state: str
    user: str
    account: str
    mqtt_client: str


def _decode_connz(params: dict[str, list[str]]) -> _ConnzQuery:
    """Decode ``/connz`` options; raises :class:`BadRequest` with nats-server's text."""
    query = Query(params)
    order = query.text("sort") or "cid"
    auth = query.bool("auth")
    subs = _decode_subs(query)
    offset = query.int("offset")
    limit = query.int("limit")
    cid = query.uint("cid")
    state = _decode_state(query)
    if order not in SORT_OPTIONS:
        raise BadRequest(f"invalid sorting option: {order}")
    if limit <= 0:
        limit = DEFAULT_LIST_SIZE
    if order in ("stop", "reason") and state != CLOSED:
        raise BadRequest(f"sort by {order} only valid on closed connections")
    if cid > 0:
        limit = 1
    text = query.text
    return _ConnzQuery(
        order, auth, subs, max(offset, 0), limit, cid, state, text("user"), text("acc"), text("mqtt_client")
    )


def connz(server: MonitoredServer, params: dict[str, list[str]]) -> tuple[int, Any]:
    """``/connz``: open and recently closed client and leaf connections, filtered, sorted and paged."""
    try:
        q = _decode_connz(params)
    except BadRequest as err:
        return 400, str(err)
    broker = server.broker
    now_ns = broker.clock.time_ns()
    doc: dict[str, Any] = {
        "server_id": broker.server_id,
        "now": rfc3339(now_ns),
        "num_connections": 0,
        "total": 0,
        "offset": q.offset,
        "limit": q.limit,
        "connections": [],
    }
    members = list(broker.clients.values())
    leafs = open_leaf_records(server) if q.state != CLOSED else []
    if q.account:
        leafs = [record for record in leafs if record.account == q.account]
        if broker.accounts.get(q.account) is None and q.account != SYSTEM_ACCOUNT:
            # nats-server answers an unknown account with an unfilled document.
            doc["server_id"], doc["connections"] = "", None
            return 200, doc
        members = [client for client in members if client.account.name == q.account]
    closed = list(server.closed_connections) if q.state != OPEN else []
    total = (len(members) + len(leafs) if q.state != CLOSED else 0) + len(closed)
    if q.account:
        # Closed clients of the global account are kept without an account name,
        # so nats-server's account filter never matches them.
        kept = [r for r in closed if r.account == q.account and r.account != GLOBAL_ACCOUNT]
        total -= len(closed) - len(kept)
        closed = kept
    doc["total"] = total
    records = _selected(q, broker.clients, members, closed)
    records += [r for r in leafs if _leaf_selected(q, r)]
    _sort(records, q.order, now_ns)
    start, end = page_bounds(q.offset, q.limit, len(records))
    doc["connections"] = [record.render(now_ns, q.subs, q.auth) for record in records[start:end]]
    doc["num_connections"] = len(doc["connections"])
    return 200, doc


def _leaf_selected(q: _ConnzQuery, record: ConnRecord) -> bool:
    """The ``cid``, ``user`` and ``mqtt_client`` filters on an open leaf connection."""
    return (q.cid <= 0 or record.cid == q.cid) and (not q.user or record.user == q.user) and not q.mqtt_client


def _selected(
    q: _ConnzQuery, clients: dict[int, ClientSession], members: list[ClientSession], closed: list[ConnRecord]
) -> list[ConnRecord]:
    """The records the ``cid``, ``user`` and ``mqtt_client`` filters keep (open ones snapshot now)."""
    opened: list[ClientSession] = []
    if q.cid > 0:
        client = clients.get(q.cid) if q.state != CLOSED else None
        if client is not None:
            opened, closed = [client], []
        else:
            closed = [record for record in closed if record.cid == q.cid]
    elif q.state != CLOSED:
        opened = [c for c in members if (not q.user or auth_user(c.opts) == q.user) and not q.mqtt_client]
    closed = [record for record in closed if (not q.user or record.user == q.user) and not q.mqtt_client]
    return [ConnRecord.of(client, client.subs.values()) for client in opened] + closed


def subsz(server: MonitoredServer, params: dict[str, list[str]]) -> tuple[int, Any]:
    """``/subsz``: subscription index statistics and, with ``subs=1``, the subscriptions (``test`` filters)."""
    query = Query(params)
    try:
        listed = query.bool("subs")
        offset = query.int("offset")
        limit = query.int("limit")
    except BadRequest as err:
        return 400, str(err)
    test, account = query.text("test"), query.text("acc")
    offset = max(offset, 0)
    if limit <= 0:
        limit = DEFAULT_LIST_SIZE
    if test and not is_valid_literal_subject(test):
        return 400, f"invalid test subject, must be valid publish subject: {test}"

    broker = server.broker
    # Only the global account has subscriptions; $SYS exists but is empty, as in nats-server.
    found = broker.accounts.get(account or GLOBAL_ACCOUNT)
    index = found.router.index if found is not None else None
    doc: dict[str, Any] = {"server_id": broker.server_id, "now": rfc3339(broker.clock.time_ns())}
    doc.update(_index_stats(index))
    doc.update({"total": 0, "offset": offset, "limit": limit})
    if listed:
        details = []
        if index is not None:
            details = [
                sub_detail(sub, account=True, name=found.name if found is not None else GLOBAL_ACCOUNT)
                for sub in index.all()
                if not test or matches(sub.subject, test)
            ]
        start, end = page_bounds(offset, limit, len(details))
        if end > start:
            doc["subscriptions_list"] = details[start:end]
        doc["total"] = len(details)
    return 200, doc


def _index_stats(index: SubscriptionIndex | None) -> dict[str, Any]:
    """nats-server's ``SublistStats`` for the subscription index (all zero for ``None``)."""
    if index is None:
        count = inserts = removes = matched = hits = cached = largest = fanout = 0
    else:
        count, inserts, removes, matched, hits = (
            index.count,
            index.inserts,
            index.removes,
            index.matches,
            index.cache_hits,
        )
        cached, largest, fanout = index.cache_fanout()
    return {
        "num_subscriptions": count,
        "num_cache": cached,
        "num_inserts": inserts,
        "num_removes": removes,
        "num_matches": matched,
        "cache_hit_rate": go_float(hits / matched) if matched else 0,
        "max_fanout": largest,
        "avg_fanout": go_float(fanout / cached) if fanout else 0,
    }
