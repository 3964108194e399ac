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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fakejs.core.subjects import SubscriptionIndex, is_valid_literal_subject, matches
from fakejs.gocompat.gotime import NS, format_duration, rfc3339
from fakejs.monitoring.query import (
    DEFAULT_LIST_SIZE,
    GLOBAL_ACCOUNT,
    SYSTEM_ACCOUNT,
    BadRequest,
    Query,
    go_float,
    go_uptime,
    page_bounds,
)

if TYPE_CHECKING:
    from fakejs.core.router import Subscription
    from fakejs.core.session import ClientSession
    from fakejs.server.server import Server

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

# What nats-server shows instead of a token (it never echoes secrets).
REDACTED = "[REDACTED]"


def sub_detail(sub: Subscription, account: bool) -> dict[str, Any]:
    """One subscription as nats-server's ``SubDetail`` (``account`` adds the account fields)."""
    doc: dict[str, Any] = {"account": GLOBAL_ACCOUNT, "account_tag": GLOBAL_ACCOUNT} if account else {}
    doc["subject"] = sub.subject
    if sub.queue:
        doc["qgroup"] = sub.queue
    doc["sid"] = sub.sid
    doc["msgs"] = sub.delivered
    if sub.max:
        doc["max"] = sub.max
    doc["cid"] = getattr(sub.owner, "cid", 0)  # internal (JetStream) subscriptions have no client
    return doc


def auth_user(opts: dict[str, Any]) -> str:
    """The identity a client authenticated with, as nats-server reports it (tokens redacted)."""
    if opts.get("nkey"):
        return str(opts["nkey"])
    if opts.get("user"):
        return str(opts["user"])
    if opts.get("auth_token"):
        return REDACTED
    return ""


@dataclass(slots=True)
class ConnRecord:
    """What /connz reports about one connection, open (taken per request) or closed (kept at close)."""

    cid: int
    ip: str
    port: int
    start_ns: int
    last_ns: int
    rtt_ns: int
    pending: int
    in_msgs: int
    out_msgs: int
    in_bytes: int
    out_bytes: int
    name: str
    lang: str
    version: str
    user: str
    subs: list[dict[str, Any]] = field(default_factory=list)
    stop_ns: int = 0
    reason: str = ""

    @classmethod
    def of(cls, client: ClientSession, subs: Iterable[Subscription], closed: bool = False) -> ConnRecord:
        """Snapshot ``client``; subscriptions of a closed one carry their account, as in nats-server."""
        opts = client.opts
        # The session keeps activity on the monotonic clock; report it as wall time.
        last_ns = client.started_ns + int((client.last_activity - client.started) * NS)
        return cls(
            cid=client.cid,
            ip=client.host if client.port else "",
            port=client.port,
            start_ns=client.started_ns,
            last_ns=last_ns,
            rtt_ns=_rtt_ns(client.rtt),
            pending=client.out_size + client.io.write_buffer_size(),
            in_msgs=client.in_msgs,
            out_msgs=client.out_msgs,
            in_bytes=client.in_bytes,
            out_bytes=client.out_bytes,
            name=str(opts.get("name") or ""),
            lang=str(opts.get("lang") or ""),
            version=str(opts.get("version") or ""),
            user=auth_user(opts),
            subs=[sub_detail(sub, account=closed) for sub in subs],
        )

    @classmethod
    def closed(cls, client: ClientSession, subs: list[Subscription]) -> ConnRecord:
        """The record nats-server keeps for ``/connz?state=closed`` when a client goes."""
        record = cls.of(client, subs, closed=True)
        record.stop_ns = client.stopped_ns or client.broker.clock.time_ns()
        record.reason = client.close_reason
        return record

    def render(self, now_ns: int, subs: str, auth: bool) -> dict[str, Any]:
        """The ``ConnInfo`` document; ``subs`` is "", "list" or "detail"."""
        end = self.stop_ns or now_ns
        doc: dict[str, Any] = {
            "cid": self.cid,
            "kind": "Client",
            "type": "nats",
            "ip": self.ip,
            "port": self.port,
            "start": rfc3339(self.start_ns),
            "last_activity": rfc3339(self.last_ns),
        }
        if self.stop_ns:
            doc["stop"] = rfc3339(self.stop_ns)
        if self.reason:
            doc["reason"] = self.reason
        doc["rtt"] = format_duration(self.rtt_ns)
        doc["uptime"] = go_uptime(end - self.start_ns)
        doc["idle"] = go_uptime(end - self.last_ns)
        doc["pending_bytes"] = self.pending
        doc["in_msgs"] = self.in_msgs
        doc["out_msgs"] = self.out_msgs
        doc["in_bytes"] = self.in_bytes
        doc["out_bytes"] = self.out_bytes
        doc["subscriptions"] = len(self.subs)
        for key in ("name", "lang", "version"):
            value = getattr(self, key)
            if value:
                doc[key] = value
        if auth and self.user:
            doc["authorized_user"] = self.user
        if self.subs:
            if subs == "detail":
                doc["subscriptions_list_detail"] = self.subs
            elif subs == "list":
                doc["subscriptions_list"] = [detail["subject"] for detail in self.subs]
        if auth and not self.stop_ns:
            # Open clients show their account's tag (its name); closed ones kept none.
            doc["name_tag"] = GLOBAL_ACCOUNT
        return doc


def _rtt_ns(seconds: float) -> int:
    """nats-server's reported RTT: whole microseconds below a millisecond, nanoseconds otherwise."""
    ns = int(seconds * NS)
    if 1_000 < ns < 1_000_000:
        ns -= ns % 1_000
    return ns


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


def connz(server: Server, params: dict[str, list[str]]) -> tuple[int, Any]:
    """``/connz``: open and recently closed client connections, filtered, sorted and paged."""
    query = Query(params)
    try:
        order = query.text("sort") or "cid"
        auth = query.bool("auth")
        subs = _decode_subs(query)
        offset = query.int("offset")
        limit = query.int("limit")
        cid = query.uint("cid")
        state = _decode_state(query)
    except BadRequest as err:
        return 400, str(err)
    user, account, mqtt_client = query.text("user"), query.text("acc"), query.text("mqtt_client")
    if order not in SORT_OPTIONS:
        return 400, f"invalid sorting option: {order}"
    offset = max(offset, 0)
    if limit <= 0:
        limit = DEFAULT_LIST_SIZE
    if order in ("stop", "reason") and state != CLOSED:
        return 400, f"sort by {order} only valid on closed connections"
    if cid > 0:
        limit = 1

    broker = server.broker
    now_ns = broker.clock.time_ns()
    doc: dict[str, Any] = {
        "server_id": broker.server_id,
        "now": rfc3339(now_ns),
        "num_connections": 0,
        "total": 0,
        "offset": offset,
        "limit": limit,
        "connections": [],
    }
    members = list(broker.clients.values())
    if account and account != GLOBAL_ACCOUNT:
        if account != SYSTEM_ACCOUNT:
            # nats-server answers an unknown account with an unfilled document.
            doc["server_id"], doc["connections"] = "", None
            return 200, doc
        members = []
    closed = list(broker.closed_clients) if state != OPEN else []
    total = (len(members) if state != CLOSED else 0) + len(closed)
    if account:
        # Closed clients of the global account are kept without an account name,
        # so nats-server's account filter never matches them.
        total -= len(closed)
        closed = []
    doc["total"] = total

    opened: list[ClientSession] = []
    if cid > 0:
        client = broker.clients.get(cid) if state != CLOSED else None
        if client is not None:
            opened, closed = [client], []
        else:
            closed = [record for record in closed if record.cid == cid]
    elif state != CLOSED:
        opened = [c for c in members if (not user or auth_user(c.opts) == user) and not mqtt_client]
    closed = [record for record in closed if (not user or record.user == user) and not mqtt_client]

    records = [ConnRecord.of(client, client.subs.values()) for client in opened] + closed
    _sort(records, order, now_ns)
    start, end = page_bounds(offset, limit, len(records))
    doc["connections"] = [record.render(now_ns, subs, auth) for record in records[start:end]]
    doc["num_connections"] = len(doc["connections"])
    return 200, doc


def subsz(server: Server, params: dict[str, list[str]]) -> tuple[int, Any]:
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
    index = broker.router.index
    counted = not account or account == GLOBAL_ACCOUNT
    doc: dict[str, Any] = {"server_id": broker.server_id, "now": rfc3339(broker.clock.time_ns())}
    doc.update(_index_stats(index if counted else None))
    doc.update({"total": 0, "offset": offset, "limit": limit})
    if listed:
        details = []
        if counted:
            details = [sub_detail(sub, account=True) for sub in index.all() if not test or matches(sub.subject, test)]
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
