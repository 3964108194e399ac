"""``/leafz`` and ``/varz``'s ``leaf`` section: the leaf connections and the ``leafnodes {}`` block, as nats-server shows them.

``/leafz`` lists every leaf connection that is up (``?acc=`` only those bound
to one account), in nats-server's ``LeafInfo`` field order; ``subscriptions``
counts the interest the remote told (``?subs=1`` lists its subjects).
fakejs does not compress leaf connections (``compression`` says ``off``);
``rtt`` is the round trip of the link's last PING, ``0s`` before its first
PONG, as nats-server.  Messages a leaf connection takes in or sends count in
``/varz``'s ``in_msgs``/``out_msgs`` (not the ``_client_`` ones):
:func:`server_traffic`.  ``/varz``'s ``leaf`` has the
leaf port (``host``, ``port``, ``auth_timeout``, ``tls_timeout``) and the
remotes (``local_account``, the URLs' hosts, ``deny``), empty fields left out.
``/connz`` lists leaf connections too (:func:`leaf_record`): ``kind``
``Leafnode``, the hub naming the leaf's server and version, as nats-server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from fakejs.core.stats import Stats
from fakejs.core.tls_files import certificate_not_after
from fakejs.gocompat.gotime import NS, format_duration, rfc3339
from fakejs.monitoring.query import BadRequest, Query
from fakejs.monitoring.records import ConnRecord, auth_user, rtt_ns, sub_detail

if TYPE_CHECKING:
    from fakejs.core.accounts import Account
    from fakejs.core.leaf.leafs import Leafs
    from fakejs.core.leaf.link import LeafLink
    from fakejs.monitoring.source import MonitoredServer

__all__ = [
    "leaf_record",
    "leaf_varz",
    "leafnode_count",
    "leafz",
    "leafz_document",
    "open_leaf_records",
    "server_traffic",
]

# nats-server's default leaf TLS timeout (shown whether or not the port has TLS) and login timeout.
LEAF_TLS_TIMEOUT = 2


def server_traffic(clients: Stats, leafs: Leafs | None) -> Stats:
    """nats-server's server-wide message counts: what clients and leaf connections took in and were sent."""
    total = Stats()
    total.slow_consumers = clients.slow_consumers
    extra = leafs.traffic if leafs is not None else Stats()
    total.in_msgs, total.in_bytes = clients.in_msgs + extra.in_msgs, clients.in_bytes + extra.in_bytes
    total.out_msgs, total.out_bytes = clients.out_msgs + extra.out_msgs, clients.out_bytes + extra.out_bytes
    return total


def leafz(server: MonitoredServer, query: dict[str, list[str]] | None = None) -> tuple[int, Any]:
    """The ``/leafz`` endpoint: ``subs`` (a Go boolean, 400 with Go's text otherwise) and ``acc``."""
    params = Query(query or {})
    try:
        subs = params.bool("subs")
    except BadRequest as bad:
        return 400, str(bad)
    return 200, leafz_document(server, subs, params.text("acc"))


def leafz_document(server: MonitoredServer, subs: bool = False, account: str = "") -> dict[str, Any]:
    """nats-server's ``Leafz``: ``server_id``, ``now``, ``leafnodes`` (the count) and ``leafs``."""
    broker = server.broker
    leafs = broker.leafs
    links = [] if leafs is None else [link for link in leafs.links if link.up and link.interest is not None]
    if account:
        links = [link for link in links if link.account == account]
    entries = [_leaf_info(link, subs) for link in links]
    head = {"server_id": broker.server_id, "now": rfc3339(broker.clock.time_ns())}
    return {**head, "leafnodes": len(entries), "leafs": entries}


def _leaf_info(link: LeafLink, subs: bool) -> dict[str, Any]:
    host, port = link.io.remote_address
    told = link.interest.remote_subscriptions(link) if link.interest is not None else []
    doc: dict[str, Any] = {
        "id": link.lid,
        "name": link.remote_name,
        "is_spoke": link.spoke,
        "account": link.account,
        "ip": host,
        "port": port,
        "rtt": format_duration(rtt_ns(link.rtt)),
        "in_msgs": link.in_msgs,
        "out_msgs": link.out_msgs,
        "in_bytes": link.in_bytes,
        "out_bytes": link.out_bytes,
        "subscriptions": len(told),
    }
    if subs and told:
        doc["subscriptions_list"] = [sub.subject for sub in told]
    doc["compression"] = "off"
    return doc


def leaf_record(link: LeafLink, account: Account | None, closed: bool = False) -> ConnRecord:
    """What ``/connz`` shows of a leaf connection (closed: as kept once it closed)."""
    host, port = link.io.remote_address
    told = link.interest.remote_subscriptions(link) if link.interest is not None else []
    options = link.connect_options
    record = ConnRecord(
        cid=link.lid,
        ip=host,
        port=port,
        start_ns=link.started_ns,
        last_ns=link.started_ns + int((link.last_in - link.started) * NS),
        rtt_ns=rtt_ns(link.rtt),
        pending=link.output.size,
        in_msgs=link.in_msgs,
        out_msgs=link.out_msgs,
        in_bytes=link.in_bytes,
        out_bytes=link.out_bytes,
        name=str(options.get("name") or ""),
        lang="",
        version=str(options.get("version") or ""),
        user=auth_user(options),
        subs=[sub_detail(sub, account=closed, name=link.account) for sub in told],
        account=link.account,
        account_name_tag=(account.name_tag or account.name) if account is not None else link.account,
        kind="Leafnode",
    )
    if closed:
        record.stop_ns, record.reason = link.stopped_ns, link.close_reason
    return record


def open_leaf_records(server: MonitoredServer) -> list[ConnRecord]:
    """The leaf connections up, as ``/connz`` shows them."""
    broker = server.broker
    leafs = broker.leafs
    if leafs is None:
        return []
    return [
        leaf_record(link, broker.accounts.get(link.account))
        for link in leafs.links
        if link.up and link.interest is not None
    ]


def leafnode_count(leafs: Leafs | None) -> int:
    """``/varz``'s ``leafnodes``: the leaf connections up."""
    return 0 if leafs is None else leafs.num_leafs


def leaf_varz(leafs: Leafs | None) -> dict[str, Any]:
    """nats-server's ``LeafNodeOptsVarz``: the leaf port (when it listens) and the remotes."""
    if leafs is None:
        return {}
    config = leafs.config
    doc: dict[str, Any] = {}
    if config.port is not None:
        doc["host"] = config.host or "0.0.0.0"  # nats-server's default leaf host
        if leafs.port:
            doc["port"] = leafs.port
        doc["auth_timeout"] = _go_float(leafs.auth_timeout)
        tls = config.tls
        doc["tls_timeout"] = _go_float(tls.timeout) if tls is not None else LEAF_TLS_TIMEOUT
        if tls is not None:
            doc["tls_required"] = True
            if tls.verify:
                doc["tls_verify"] = True
    remotes = []
    for remote in config.remotes:
        entry: dict[str, Any] = {"local_account": remote.account or "$G"}
        if remote.tls_wanted:
            entry["tls_timeout"] = _go_float(remote.tls.timeout if remote.tls is not None else LEAF_TLS_TIMEOUT)
        hosts = [_url_host(url) for url in remote.urls]
        if hosts:
            entry["urls"] = hosts
        deny: dict[str, list[str]] = {}
        if remote.deny_exports:
            deny["exports"] = list(remote.deny_exports)
        if remote.deny_imports:
            deny["imports"] = list(remote.deny_imports)
        if deny:
            entry["deny"] = deny
        remotes.append(entry)
    if remotes:
        doc["remotes"] = remotes
    if config.port is not None and config.tls is not None and config.tls.cert_file:
        expiry = certificate_not_after(config.tls.cert_file)
        if expiry is not None:
            doc["tls_cert_not_after"] = rfc3339(expiry)
    return doc


def _url_host(url: str) -> str:
    """Go's ``url.URL.Host``: the host and port, without the credentials."""
    netloc = urlsplit(url if "://" in url else f"nats://{url}").netloc
    return netloc.rpartition("@")[2]


def _go_float(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
