"""What a configuration reload changes: the old and new options compared, as nats-server's diffOptions.

Sans-IO: :func:`diff_options` compares two :class:`ServerOptions` and
returns the changes to apply in nats-server's order, each with the log
line nats-server prints once it applied it (``Reloaded: debug = true``;
the users and accounts always, and TLS whenever it is configured, as
nats-server reloads them every time),
or raises :class:`ReloadRefused` with nats-server's error for an option
it cannot reload (``config reload not supported for Port: old=4222,
new=4223``), or fakejs's own for an option nats-server reloads and fakejs
does not yet.  Nothing is applied here: see :mod:`fakejs.server.reload`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from fakejs.core.cluster_config import ClusterConfig
from fakejs.core.options import ServerOptions
from fakejs.core.reload_errors import NO_CONFIG_FILE, ReloadRefused
from fakejs.core.reload_websocket import websocket_refusal
from fakejs.core.transport_config import TLSConfig
from fakejs.gocompat.gobytes import friendly_bytes
from fakejs.gocompat.gotime import format_duration
from fakejs.gocompat.gourl import GoURLError, parse_host_port

__all__ = ["NO_CONFIG_FILE", "Change", "ReloadRefused", "diff_options"]


@dataclass(frozen=True)
class Change:
    """One reloadable option that changed: its field (``FIELD:PART`` for a part of one), and the line
    logged once it is applied (``""``: none)."""

    field: str
    line: str


def _go_bool(value: object) -> str:
    return "true" if value else "false"


def _go_duration(seconds: float) -> str:
    """Go's Duration.String() for the whole and fractional seconds a ping interval takes."""
    whole = int(seconds)
    if whole == seconds:
        minutes, rest = divmod(whole, 60)
        hours, minutes = divmod(minutes, 60)
        if hours:
            return f"{hours}h{minutes}m{rest}s"
        return f"{minutes}m{rest}s" if minutes else f"{rest}s"
    return f"{seconds:g}s"


def _tls_lines(old: TLSConfig | None, new: TLSConfig | None) -> list[str]:
    """nats-server's tls lines: the timeout when it changed, ``tls = enabled`` on every reload with TLS
    (``disabled`` when it is taken away), then the pins and the handshake-first settings when they changed.

    Its parsed TLS configuration never compares equal to the running one, so
    a file with a ``tls {}`` block always reloads it (new certificates for
    new connections).  Without TLS, its settings are nats-server's defaults.
    """
    if new is None and old is None:
        return []
    enabled = new is not None
    old, new = old or TLSConfig(), new or TLSConfig()
    lines = [f"tls timeout = {new.timeout:g}"] if new.timeout != old.timeout else []
    lines.append("tls = enabled" if enabled else "tls = disabled")
    if set(new.pinned_certs) != set(old.pinned_certs):
        lines.append(f"{len(set(new.pinned_certs))} pinned_certs")
    if new.handshake_first != old.handshake_first:
        lines.append(f"Client TLS handshake first: {_go_bool(new.handshake_first)}")
    if new.handshake_first_fallback != old.handshake_first_fallback:
        delay = format_duration(round(new.handshake_first_fallback * 1e9))
        lines.append(f"Client TLS handshake first fallback delay: {delay}")
    return lines


# The cluster settings fakejs reloads besides its routes.
CLUSTER_RELOADABLE = frozenset(
    {
        "name",
        "username",
        "password",
        "auth_timeout",
        "connect_retries",
        "connect_backoff",
        "advertise",
        "no_advertise",
        "ping_interval",
        "ping_max",
    }
)


def _cluster_lines(old: ClusterConfig | None, new: ClusterConfig | None) -> list[str]:
    """``cluster`` for new settings; nats-server's refusal of a new host or port, or of a bad ``advertise``.

    A new pool size or compression, which nats-server also reloads, fakejs
    refuses by name; the routes have a line of their own
    (:func:`_routes_lines`).
    """
    # No cluster is nats-server's empty one: turning clustering on or off is a new host.
    old = old if old is not None else ClusterConfig(host="", port=0)
    new = new if new is not None else ClusterConfig(host="", port=0)
    if old.host != new.host:
        raise ReloadRefused(f"{NOT_SUPPORTED}cluster host: old={old.host}, new={new.host}")
    if old.port != new.port:
        raise ReloadRefused(f"{NOT_SUPPORTED}cluster port: old={old.port}, new={new.port}")
    if new.advertise:
        try:
            parse_host_port(new.advertise, 0)
        except GoURLError as exc:
            raise ReloadRefused(f"invalid Cluster.Advertise value of {new.advertise}, err={exc}") from None
    changed = [item.name for item in fields(ClusterConfig) if getattr(old, item.name) != getattr(new, item.name)]
    for name in changed:
        if name not in CLUSTER_RELOADABLE and name != "routes":
            raise ReloadRefused(f"config reload of cluster {name} is not supported by fakejs yet")
    return ["cluster"] if set(changed) & CLUSTER_RELOADABLE else []


def _routes_lines(old: ClusterConfig | None, new: ClusterConfig | None) -> list[str]:
    """``cluster routes`` when the routes changed (nats-server keeps them beside the cluster's settings)."""
    return ["cluster routes"] if (old.routes if old else []) != (new.routes if new else []) else []


# Reloadable options in nats-server's order (its Options struct), with their "Reloaded:" line; a key
# "FIELD:PART" is a part of a field that nats-server keeps in a place of its own.
RELOADABLE: dict[str, Callable[[Any, Any], list[str]]] = {
    "trace": lambda _, value: [f"trace = {_go_bool(value)}"],
    "debug": lambda _, value: [f"debug = {_go_bool(value)}"],
    "trace_verbose": lambda _, value: [f"trace_verbose = {_go_bool(value)}"],
    "trace_headers": lambda _, value: [f"trace_headers = {_go_bool(value)}"],
    "max_connections": lambda _, value: [f"max_connections = {value}"],
    "users": lambda _, __: ["authorization users"],
    "accounts": lambda _, __: ["accounts"],
    "default_sentinel": lambda _, value: [f"default_sentinel = {value}"],
    "user": lambda _, __: ["authorization username"],
    "password": lambda _, __: ["authorization password"],
    "token": lambda _, __: ["authorization token"],
    "ping_interval": lambda _, value: [f"ping_interval = {_go_duration(value)}"],
    "ping_max": lambda _, value: [f"ping_max = {value}"],
    "auth_timeout": lambda _, value: [f"authorization timeout = {value:g}"],
    "max_control_line": lambda _, value: [f"max_control_line = {value}"],
    "max_payload": lambda _, value: [f"max_payload = {value}"],
    "cluster": lambda old, new: _cluster_lines(old, new),
    "jetstream": lambda _, __: ["JetStream"],
    "jetstream_max_memory": lambda _, value: [f"JetStream max_mem_store = {friendly_bytes(value)}"],
    "jetstream_max_store": lambda _, value: [f"JetStream max_file_store = {friendly_bytes(value)}"],
    # nats-server's JetStreamLimits: one line for the four batch limits (see BATCH_LIMITS).
    "jetstream_batch_inflight_per_stream": lambda _, __: ["JetStream limits"],
    "jetstream_batch_inflight_total": lambda _, __: [""],
    "jetstream_batch_max_msgs": lambda _, __: [""],
    "jetstream_batch_timeout": lambda _, __: [""],
    "store_dir": lambda _, __: [""],
    # No line when the pid file is taken away: nats-server writes nothing then.
    "pid_file": lambda _, value: [f"pid_file = {value}"] if value else [""],
    "ports_file_dir": lambda _, value: [f"ports_file_dir = {value}"],
    "log_file": lambda _, value: [f"log_file = {value}"],
    "cluster:routes": lambda old, new: _routes_lines(old, new),
    "tls": lambda old, new: _tls_lines(old, new),
    "write_deadline": lambda _, value: [f"write_deadline = {_go_duration(value)}"],
    "max_traced_msg_len": lambda _, value: [f"max_traced_msg_len = {value}"],
    "server_tags": lambda _, __: ["tags"],
}

# The batch limits, one JetStreamLimits setting in nats-server: when one changes, all four are reloaded.
BATCH_LIMITS = (
    "jetstream_batch_inflight_per_stream",
    "jetstream_batch_inflight_total",
    "jetstream_batch_max_msgs",
    "jetstream_batch_timeout",
)

# nats-server reloads its users and accounts on every reload (they never compare equal), and logs so.
ALWAYS = frozenset({"users", "accounts"})

# Options nats-server refuses to reload, by their Go field name (what its error names).
NOT_RELOADABLE: dict[str, str] = {
    "host": "Host",
    "port": "Port",
    "name": "ServerName",
    "max_subscriptions": "MaxSubs",
    "system_account": "SystemAccount",
    "http_host": "HTTPHost",
    "http_port": "HTTPPort",
    "https_port": "HTTPSPort",
    "max_pending": "MaxPending",
    "allow_non_tls": "AllowNonTLS",
    "no_auth_user": "NoAuthUser",
    "jetstream_domain": "JetStreamDomain",
    "lame_duck_duration": "LameDuckDuration",
    "lame_duck_grace_period": "LameDuckGracePeriod",
}

# JetStream settings nats-server refuses, with its Go field name and how it shows fakejs's value.
JETSTREAM_KEPT: dict[str, tuple[str, Callable[[ServerOptions], str]]] = {
    "jetstream_strict": ("NoJetStreamStrict", lambda options: _go_bool(not options.jetstream_strict)),
    "jetstream_unique_tag": ("JetStreamUniqueTag", lambda options: options.jetstream_unique_tag),
    "jetstream_max_catchup": ("JetStreamMaxCatchup", lambda options: str(options.jetstream_max_catchup)),
    "jetstream_request_queue_limit": ("JetStreamRequestQueueLimit", lambda options: str(_request_limit(options))),
    # Unset, it is the request queue's limit.
    "jetstream_info_queue_limit": (
        "JetStreamInfoQueueLimit",
        lambda options: str(options.jetstream_info_queue_limit or _request_limit(options)),
    ),
    "jetstream_max_buffered_msgs": ("StreamMaxBufferedMsgs", lambda options: str(options.jetstream_max_buffered_msgs)),
    "jetstream_max_buffered_size": ("StreamMaxBufferedSize", lambda options: str(options.jetstream_max_buffered_size)),
    "jetstream_sync_interval": (
        "SyncInterval",
        lambda options: _go_duration(
            120.0 if options.jetstream_sync_interval is None else options.jetstream_sync_interval
        ),
    ),
    "jetstream_sync_always": ("SyncAlways", lambda options: _go_bool(options.jetstream_sync_always)),
}
# nats-server's DEFAULT_JS_API_REQUEST_QUEUE_LIMIT, its request queue's limit when none is configured.
DEFAULT_REQUEST_QUEUE_LIMIT = 10_000


def _request_limit(options: ServerOptions) -> int:
    return options.jetstream_request_queue_limit or DEFAULT_REQUEST_QUEUE_LIMIT


# nats-server's own errors for JetStream settings it keeps (see _jetstream_refusal).
JETSTREAM_FIELDS = frozenset({"store_dir", "jetstream_max_memory", "jetstream_max_store", "jetstream"})
# Where JetStream keeps what it stores, and how much.
STORE_FIELDS = JETSTREAM_FIELDS - {"jetstream"}
NOT_SUPPORTED = "config reload not supported for "

# Not configuration: what the command line or the process sets beside the file.
IGNORED = frozenset({"config_file", "config_digest", "warn_temporary_store", "jetstream_replicated"})


def _go_value(value: object) -> str:
    if isinstance(value, bool):
        return _go_bool(value)
    return "" if value is None else str(value)


def _jetstream_refusal(name: str, old: Any, new: Any) -> str:
    """nats-server's errors for a JetStream store directory or limit changed while JetStream runs."""
    if name == "store_dir":
        return NOT_SUPPORTED + ("jetstream storage dir" if not new else "jetstream storage directory")
    if old == -1:
        return NOT_SUPPORTED + "jetstream dynamic max memory and store"
    if new == -1:
        return NOT_SUPPORTED + "jetstream max memory and max store"
    return NOT_SUPPORTED + "decreasing jetstream max memory and store"


def _check_jetstream(old: ServerOptions, new: ServerOptions, changed: list[str]) -> bool:
    """Raise nats-server's error for a JetStream change it refuses; whether the limits change quietly.

    While JetStream runs and stays on, only raised limits reload (logged);
    when it is off, or turned off by this reload, the store directory and
    limits follow the file without a line.
    """
    if "jetstream" in changed and (old.cluster is not None or new.cluster is not None):
        raise ReloadRefused(
            "config reload of jetstream (turning it on or off) in a cluster is not supported by fakejs yet"
        )
    if not old.jetstream or not new.jetstream:
        return True
    for name in ("jetstream_max_memory", "jetstream_max_store", "store_dir"):
        if name not in changed:
            continue
        before, after = getattr(old, name), getattr(new, name)
        if name == "store_dir" or before == -1 or after == -1 or after < before:
            raise ReloadRefused(_jetstream_refusal(name, before, after))
    return False


def _refusal(name: str, old: ServerOptions, new: ServerOptions) -> ReloadRefused:
    if name == "websocket":
        return ReloadRefused(websocket_refusal(old.websocket, new.websocket))
    if name in JETSTREAM_KEPT:
        go_name, shown = JETSTREAM_KEPT[name]
        return ReloadRefused(f"{NOT_SUPPORTED}{go_name}: old={shown(old)}, new={shown(new)}")
    if name in NOT_RELOADABLE:
        go_name = NOT_RELOADABLE[name]
        before, after = _go_value(getattr(old, name)), _go_value(getattr(new, name))
        return ReloadRefused(f"{NOT_SUPPORTED}{go_name}: old={before}, new={after}")
    return ReloadRefused(f"config reload of {name} is not supported by fakejs yet")


def _account_jetstream_refusal(old: ServerOptions, new: ServerOptions) -> ReloadRefused | None:
    """What fakejs keeps of the accounts' JetStream: their tiers, and all of it in a cluster.

    An account's JetStream turned on or off, or given new limits, reloads
    where accounts are configured before and after; a server with no
    accounts (only the global account's JetStream) keeps it so.
    """
    before = {config.name: (config.jetstream, config.tiers) for config in old.accounts}
    after = {config.name: (config.jetstream, config.tiers) for config in new.accounts}
    for name in sorted(before.keys() | after.keys()):
        (was, tiers_before), (now, tiers_after) = before.get(name, (None, {})), after.get(name, (None, {}))
        if (was, tiers_before) == (now, tiers_after):
            continue
        if tiers_before != tiers_after or new.cluster is not None or not before or not after:
            return ReloadRefused(f"config reload of the JetStream of account {name} is not supported by fakejs yet")
    return None


def diff_options(old: ServerOptions, new: ServerOptions) -> list[Change]:
    """The reloadable changes from ``old`` to ``new`` in nats-server's order, or :class:`ReloadRefused`."""
    changed = [f.name for f in fields(ServerOptions) if f.name not in IGNORED]
    changed = [name for name in changed if getattr(old, name) != getattr(new, name)]
    if "websocket" in changed and not websocket_refusal(old.websocket, new.websocket):
        changed.remove("websocket")  # only its TLS: nats-server keeps the listener as it is
    if set(changed) & set(BATCH_LIMITS):
        changed += [name for name in BATCH_LIMITS if name not in changed]
    names = {name.split(":")[0] for name in RELOADABLE}
    refusal = _account_jetstream_refusal(old, new) if "accounts" in changed else None
    if refusal is not None:
        raise refusal
    for name in changed:
        if name not in names:
            raise _refusal(name, old, new)
    quiet = _check_jetstream(old, new, changed) if set(changed) & JETSTREAM_FIELDS else False
    changes: list[Change] = []
    for name, lines in RELOADABLE.items():
        field = name.split(":")[0]
        if field in changed or field in ALWAYS or (field == "tls" and new.tls is not None):
            texts = [""] if quiet and field in STORE_FIELDS else lines(getattr(old, field), getattr(new, field))
            changes.extend(Change(name, "Reloaded: " + line if line else "") for line in texts)
    return changes
