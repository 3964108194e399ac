"""Monitoring documents (``/healthz``, ``/varz``), shaped like nats-server's.

Only the documents live here; :mod:`fakejs.server.server` serves them over HTTP.
Harnesses poll ``/healthz`` for readiness and tools read ``/varz``, so the
field names and units (nanosecond durations, RFC 3339 times) follow the
real server.  ``/connz`` and ``/subsz`` live in :mod:`fakejs.monitoring.connz`,
``/jsz`` in :mod:`fakejs.monitoring.jsz`, ``/routez`` in
:mod:`fakejs.monitoring.routez`; :data:`ENDPOINTS` maps every path, and
:data:`REFUSED_PATHS` names the paths nats-server serves and fakejs does not
(answered 501 with the feature's name, not the 404 of an unknown path).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from fakejs._version import __version__
from fakejs.core.broker import Broker
from fakejs.core.cluster_config import ROUTE_TLS_TIMEOUT
from fakejs.core.options import API_LEVEL, GIT_COMMIT, NATS_VERSION, PROTO, RUNTIME, SYSTEM_ACCOUNT, ServerOptions
from fakejs.core.tls_files import certificate_not_after
from fakejs.core.transport_config import TLSConfig
from fakejs.gocompat import gojson
from fakejs.gocompat.gotime import NS, rfc3339
from fakejs.gocompat.gourl import GoURLError, parse_url
from fakejs.monitoring.accountz import accountz_endpoint, accstatz, gatewayz
from fakejs.monitoring.connz import connz, subsz
from fakejs.monitoring.health import healthz
from fakejs.monitoring.jsz import jsz
from fakejs.monitoring.leafz import leaf_varz, leafnode_count, leafz, server_traffic
from fakejs.monitoring.query import go_uptime
from fakejs.monitoring.routez import routez
from fakejs.monitoring.source import MonitoredServer


def go_duration_short(seconds: float) -> str:
    """nats-server's uptime format: ``1d2h3m4s``."""
    return go_uptime(int(seconds * NS))


def varz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
    broker = server.broker
    opts = broker.options
    doc: dict[str, Any] = {
        "server_id": broker.server_id,
        "server_name": broker.name,
        "version": NATS_VERSION,
        "proto": PROTO,
        "git_commit": GIT_COMMIT,
        "go": RUNTIME,
        "host": opts.host,
        "port": broker.port,
        **_varz_tls(opts),
        **_varz_connect_urls(broker),
        "max_connections": opts.max_connections,
        **({"max_subscriptions": opts.max_subscriptions} if opts.max_subscriptions else {}),
        "ping_interval": int(opts.ping_interval * NS),
        "ping_max": opts.ping_max,
        "http_host": opts.http_host or opts.host,
        # nats-server echoes the configured port: -1 when it picked a free one.
        "http_port": _configured_port(opts.http_port),
        "http_base_path": "",
        "https_port": _configured_port(opts.https_port),
        "auth_timeout": opts.auth_timeout,
        "max_control_line": opts.max_control_line,
        "max_payload": opts.max_payload,
        "max_pending": opts.max_pending,
        "cluster": _cluster_varz(broker),
        "gateway": {},
        "leaf": leaf_varz(broker.leafs),
        "mqtt": {},
        "websocket": _websocket_varz(server),
    }
    if opts.auth_required:
        doc["auth_required"] = True
    if opts.server_tags:
        doc["tags"] = list(opts.server_tags)
    if broker.jetstream_enabled:
        config: dict[str, Any] = {"store_dir": opts.store_dir}
        if opts.jetstream_domain:
            config["domain"] = opts.jetstream_domain
        doc["jetstream"] = {"config": config, "stats": {"api": {"level": API_LEVEL}}}
    else:
        doc["jetstream"] = {}
    doc.update(_varz_counters(server))
    return 200, doc


def _cluster_varz(broker: Broker) -> dict[str, Any]:
    """nats-server's ``ClusterOptsVarz`` (empty fields left out): the route port and the routes' hosts."""
    config = broker.options.cluster
    if config is None:
        return {}
    fields: list[tuple[str, Any]] = [
        ("name", broker.cluster_name),
        ("addr", config.host),
        ("cluster_port", broker.cluster_port or config.port),
        ("auth_timeout", _go_float(config.auth_timeout)),
        ("urls", [_route_host(route) for route in config.routes]),
        ("tls_timeout", _go_float(ROUTE_TLS_TIMEOUT)),
        ("pool_size", config.pool_size),
    ]
    return {key: value for key, value in fields if value}


def _route_host(route: str) -> str:
    """A route URL's ``host:port``, as nats-server lists its routes (user information left out)."""
    try:
        return parse_url(route).host
    except GoURLError:
        return ""


def _varz_connect_urls(broker: Broker) -> dict[str, list[str]]:
    """``connect_urls``: what the INFO of this server's clients lists (left out while that has none)."""
    cluster = broker.cluster
    urls = cluster.client_urls() if cluster is not None else []
    return {"connect_urls": urls} if urls else {}


def _varz_tls(opts: ServerOptions) -> dict[str, Any]:
    """``/varz``'s TLS flags after the port, as nats-server places them."""
    tls = opts.tls
    if tls is None:
        return {}
    fields: dict[str, Any] = {}
    if not opts.allow_non_tls:
        fields["tls_required"] = True
    if tls.verify:
        fields["tls_verify"] = True
    return fields


def _websocket_varz(server: MonitoredServer) -> dict[str, Any]:
    """nats-server's ``WebsocketOptsVarz``: the block's settings (empty fields left out), the port it listens on."""
    broker = server.broker
    config = broker.options.websocket
    if config is None or broker.websocket_info is None:
        return {}
    host, port, _ = broker.websocket_info
    fields: list[tuple[str, Any]] = [
        ("host", host),
        ("port", port),
        ("advertise", config.advertise),
        ("handshake_timeout", int(config.handshake_timeout * NS)),
        ("no_tls", config.no_tls),
        ("same_origin", config.same_origin),
        ("allowed_origins", list(config.allowed_origins)),
        ("compression", config.compression),
    ]
    doc = {key: value for key, value in fields if value}
    doc.update(_cert_not_after(config.tls))
    return doc


def _go_float(value: float) -> float | int:
    """A float64 as Go's JSON writes it: ``2``, not ``2.0``."""
    return int(value) if float(value).is_integer() else value


def _varz_counters(server: MonitoredServer) -> dict[str, Any]:
    """The second half of ``/varz``: times, process figures and message counters."""
    broker = server.broker
    stats = broker.stats  # the clients' (the ``_client_`` counts)
    total = server_traffic(stats, broker.leafs)
    cluster = broker.cluster
    now_ns = broker.clock.time_ns()
    return {
        "tls_timeout": _go_float(broker.options.tls.timeout if broker.options.tls is not None else 2),
        "write_deadline": int(broker.options.write_deadline * NS),
        "start": rfc3339(broker.started_ns),
        "now": rfc3339(now_ns),
        "uptime": go_duration_short((now_ns - broker.started_ns) / NS),
        "mem": rss_bytes(),
        "cores": os.cpu_count() or 1,
        "gomaxprocs": os.cpu_count() or 1,
        "cpu": 0,
        "connections": len(broker.clients),
        "total_connections": broker.total_connections,
        "routes": sum(1 for _ in cluster.route_links()) if cluster is not None else 0,
        "remotes": len(cluster.peers) if cluster is not None else 0,
        "leafnodes": leafnode_count(broker.leafs),
        "in_msgs": total.in_msgs,
        "in_bytes": total.in_bytes,
        "in_client_msgs": stats.in_msgs,
        "in_client_bytes": stats.in_bytes,
        "out_msgs": total.out_msgs,
        "out_bytes": total.out_bytes,
        "out_client_msgs": stats.out_msgs,
        "out_client_bytes": stats.out_bytes,
        "slow_consumers": stats.slow_consumers,
        "stale_connections": 0,
        "stalled_clients": 0,
        "subscriptions": sum(account.router.index.count for account in broker.accounts),
        "http_req_stats": dict(server.http_requests),
        "config_load_time": rfc3339(broker.started_ns),
        "system_account": broker.options.system_account or SYSTEM_ACCOUNT,
        **_pinned_failures(broker),
        "slow_consumer_stats": {"clients": stats.slow_consumers, "routes": 0, "gateways": 0, "leafs": 0},
        **_cert_not_after(broker.options.tls),
        "fakejs": {"version": __version__},
    }


def _pinned_failures(broker: Broker) -> dict[str, int]:
    """``pinned_account_fails``: logins refused for an account ``resolver_pinned_accounts`` leaves out (0: left out)."""
    failures = broker.jwt_logins.pinned_failures if broker.jwt_logins is not None else 0
    return {"pinned_account_fails": failures} if failures else {}


def _cert_not_after(tls: TLSConfig | None) -> dict[str, str]:
    """``tls_cert_not_after``: when the port's certificate expires (left out without TLS, as Go's omitzero)."""
    if tls is None or not tls.cert_file:
        return {}
    expiry = certificate_not_after(tls.cert_file)
    return {} if expiry is None else {"tls_cert_not_after": rfc3339(expiry)}


def rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        return 0


# An endpoint answers (status, document); a ``str`` document is a plain-text
# answer, which is how nats-server rejects bad query options (status 400).
Endpoint = Callable[[MonitoredServer, dict[str, list[str]]], tuple[int, Any]]

ENDPOINTS: dict[str, Endpoint] = {
    "/healthz": healthz,
    "/varz": varz,
    "/connz": connz,
    "/subsz": subsz,
    "/jsz": jsz,
    "/routez": routez,
    "/subscriptionsz": subsz,  # nats-server's other name for /subsz
    "/accountz": accountz_endpoint,
    "/accstatz": accstatz,
    "/gatewayz": gatewayz,
    "/leafz": leafz,
    "/ipqueuesz": lambda server, query: (200, {}),  # no internal queues to list
    "/raftz": lambda server, query: (404, "No Raft nodes registered"),
}

# Paths nats-server serves and fakejs does not: refused naming the feature (501), never a bare 404.
REFUSED_PATHS: dict[str, str] = {
    "/": "the monitoring home page",
    "/stacksz": "Go stacks",
    "/debug/vars": "Go runtime variables",
}


def refusal(path: str) -> str:
    """The plain-text answer to a path of :data:`REFUSED_PATHS`."""
    return f"{path} ({REFUSED_PATHS[path]}): not supported by fakejs yet\n"


# Go's encoder escapes HTML-special characters and line separators, and
# writes invalid UTF-8 (here: lone surrogates) as U+FFFD.
_GO_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}
_SURROGATE = re.compile("[\\ud800-\\udfff]")


def go_indent(doc: Any) -> bytes:
    """``json.MarshalIndent(doc, "", "  ")``: how nats-server writes its monitoring documents."""
    text = json.dumps(doc, indent=2, ensure_ascii=False).translate(_GO_ESCAPES)
    return _SURROGATE.sub("\\\\ufffd", text).encode()


def respond(server: MonitoredServer, target: str) -> tuple[int, str, bytes]:
    """Answer a GET for ``target``: (status, content type, body)."""
    path, _, raw_query = target.partition("?")
    if len(path) > 1:
        path = path.rstrip("/")
    endpoint = ENDPOINTS.get(path)
    if endpoint is None and path in REFUSED_PATHS:
        return 501, "text/plain; charset=utf-8", refusal(path).encode()
    if endpoint is None:
        return 404, "text/plain; charset=utf-8", b"404 page not found\n"
    server.http_requests[path] = server.http_requests.get(path, 0) + 1
    status, doc = endpoint(server, parse_qs(raw_query))
    if isinstance(doc, str):
        return status, "text/plain; charset=utf-8", doc.encode()
    # nats-server indents every document but the health check.
    if path == "/healthz":
        return status, "application/json", gojson.dumps(doc).encode()
    return status, "application/json", go_indent(doc)


def _configured_port(port: int | None) -> int:
    """A monitoring port as configured: 0 for none, -1 when a free one was asked for."""
    if port is None:
        return 0
    return port if port else -1
