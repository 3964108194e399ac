"""Blocks of features fakejs does not serve: gateway, leafnodes, mqtt, and the keys alike.

A block that only opens a listener (``listen``, ``host``, ``port``; a
gateway's ``name``) is accepted with a notice saying the listener is not
served -- the nats.js harness's default configuration has a
``leafnodes { listen }`` block no test of a single server uses (the
``websocket {}`` block is served: :mod:`fakejs.core.configfile.websocket`).
The ``cluster {}`` block is read by :mod:`fakejs.core.configfile.cluster`.
Everything that would make such a block do something (``remotes``, ``gateways``, TLS,
authorization, ...) refuses to start, naming the setting.  nats-server's own
checks still apply first: a block that is not a map, a ``listen`` it cannot
parse, an unknown field, a value of the wrong type (reported at the inner
key: these parsers of nats-server recover their own panics), and its start
checks (websocket without TLS, MQTT without JetStream, a gateway without a
name, JetStream in a cluster) in :func:`listener_problems`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakejs.conf import Token
from fakejs.core.cluster_checks import jetstream_problem
from fakejs.core.cluster_config import FileCluster
from fakejs.core.configfile.cluster import compression_problem, pinned_accounts_problem
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.leafnodes import leaf_accounts_problem, leaf_member
from fakejs.core.configfile.values import Mismatch, go_type, parse_listen, want
from fakejs.core.configfile.websocket import websocket_problem
from fakejs.core.leaf_config import LeafConfig
from fakejs.core.options import ServerOptions


@dataclass(frozen=True)
class Block:
    """One of nats-server's listener blocks: its error texts and which of its keys are only a listener."""

    feature: str
    not_a_map: str  # nats-server's text for a value that is not a map, with {type}
    known: frozenset[str]  # every key nats-server reads in the block
    name_error: str = ""  # the block's ``name`` check (spaces), if it has a name


_LISTEN = frozenset({"listen", "port", "host", "net"})

BLOCKS: dict[str, Block] = {
    "gateway": Block(
        "gateways",
        "Expected gateway to be a map, got {type}",
        _LISTEN
        | {
            "name",
            "authorization",
            "tls",
            "advertise",
            "connect_retries",
            "connect_backoff",
            "gateways",
            "reject_unknown",
            "reject_unknown_cluster",
            "write_deadline",
            "write_timeout",
        },
        "gateway name cannot contain spaces",
    ),
    "leafnodes": Block(
        "leaf node connections",
        "Expected map to define a leafnode, got {type}",
        _LISTEN
        | {
            "authorization",
            "remotes",
            "reconnect",
            "reconnect_delay",
            "reconnect_interval",
            "dial_timeout",
            "tls",
            "leafnode_advertise",
            "advertise",
            "no_advertise",
            "min_version",
            "minimum_version",
            "compression",
            "isolate_leafnode_interest",
            "isolate",
            "write_deadline",
            "write_timeout",
        },
    ),
    "mqtt": Block(
        "MQTT clients",
        "Expected mqtt to be a map, got {type}",
        _LISTEN
        | {
            "tls",
            "authorization",
            "authentication",
            "no_auth_user",
            "ack_wait",
            "ackwait",
            "js_api_timeout",
            "api_timeout",
            "max_ack_pending",
            "max_pending",
            "max_inflight",
            "js_domain",
            "stream_replicas",
            "consumer_replicas",
            "consumer_memory_storage",
            "consumer_inactive_threshold",
            "consumer_auto_cleanup",
            "reject_qos2_publish",
            "downgrade_qos2_subscribe",
        },
    ),
}

# The other spellings nats-server accepts for a block's key.
BLOCK_ALIASES = {"leaf": "leafnodes"}


@dataclass
class Listener:
    """What an accepted listener-only block asked for (checked at start as nats-server does)."""

    kind: str
    host: str = ""
    port: int = 0
    name: str = ""
    token: Token | None = None


@dataclass
class Unserved:
    """The listener-only blocks of one file, for the start checks and the notices."""

    listeners: dict[str, Listener] = field(default_factory=dict)
    # The file's cluster {} as written, for the command line's route flags to be laid over.
    cluster: FileCluster | None = None


def apply_block(kind: str, token: Token, options: ServerOptions, context: ConfigContext, unserved: Unserved) -> None:
    block = BLOCKS[kind]
    if not isinstance(token.value, dict):
        context.error(token, block.not_a_map.format(type=go_type(token.value)))
        return
    listener = unserved.listeners.setdefault(kind, Listener(kind, token=token))
    for key, member in token.value.items():
        try:
            if kind == "leafnodes" and key.lower() in block.known and leaf_member(key, member, options, context):
                continue
            _member(kind, block, key, member, listener, context)
        except Mismatch as exc:  # these parsers recover their own panics: reported at the inner key
            context.error(exc.token, exc.message)
            return


def _member(kind: str, block: Block, key: str, member: Token, listener: Listener, context: ConfigContext) -> None:
    lowered = key.lower()
    if lowered not in block.known:
        context.unknown(key, member)
        return
    if lowered == "listen":
        try:
            listener.host, listener.port = parse_listen(member.value)
        except ValueError as exc:
            context.error(member, str(exc))
    elif lowered == "port":
        listener.port = int(want(member, int))
    elif lowered in ("host", "net"):
        listener.host = want(member, str)
    elif lowered == "name" and block.name_error:
        name = want(member, str)
        if " " in name:
            context.error(member, block.name_error)
        listener.name = name
    else:
        context.refuse(member, f"{block.feature} ({kind} {{ {key} }})")


def listener_problems(options: ServerOptions, unserved: Unserved) -> str:
    """nats-server's start checks on these blocks and JetStream (``validateOptions``); the first failing, or ""."""
    listeners = unserved.listeners
    gateway = listeners.get("gateway")
    if gateway is not None and (gateway.name or gateway.port):
        if not gateway.name:
            return "gateway has no name"
        if not gateway.port:
            return f'gateway "{gateway.name}" has no port specified (select -1 for random port)'
    mqtt = listeners.get("mqtt")
    if mqtt is not None and mqtt.port:
        clustered = options.cluster is not None or (gateway is not None and gateway.port)
        leaf = listeners.get("leafnodes")
        if not options.jetstream and not clustered and not (leaf is not None and leaf.port):
            return "mqtt requires JetStream to be enabled if running in standalone mode"
    leafnodes = options.leafnodes
    if leafnodes is not None and (problem := leaf_accounts_problem(options)):
        return problem
    problem = pinned_accounts_problem(options) or compression_problem(options) or jetstream_problem(options)
    if problem:
        return problem
    return websocket_problem(options)


def settle_leafnodes(options: ServerOptions, unserved: Unserved) -> None:
    """The leaf port of ``leafnodes { listen }`` onto the block's served settings (a listen alone serves it too)."""
    leaf = unserved.listeners.get("leafnodes")
    if leaf is not None and (leaf.port or leaf.host or options.leafnodes is not None):
        options.leafnodes = options.leafnodes or LeafConfig()
        if leaf.port or leaf.host:
            options.leafnodes.host, options.leafnodes.port = leaf.host, leaf.port


def notices(unserved: Unserved) -> list[str]:
    """One log line per accepted listener that fakejs does not open."""
    lines = []
    for kind, listener in unserved.listeners.items():
        if kind != "leafnodes" and (listener.port or listener.host):
            where = f"{listener.host or '0.0.0.0'}:{listener.port}"
            lines.append(f"{kind} listener ({where}) accepted from the configuration file but not served by fakejs")
    return lines
