"""The ``cluster {}`` block: a route port, the routes dialled, the cluster's name and login.

nats-server's ``parseCluster`` reads each key with its own checks and
texts; a value of the wrong type panics and ends the block there (the
error reported at that key).  The block fills a :class:`FileCluster`: the
settings, and the port as the file gave it (0: no route port; -1: a free
one), because the command line's route flags are laid over the file
before the server knows whether it listens for routes (see
:mod:`fakejs.cli.cluster_flags`).  :func:`settled` turns that into the
``ServerOptions.cluster`` a server starts with, with nats-server's
defaults.  TLS, permissions, pinned accounts, write deadlines and s2
compression are refused by name; ``accounts`` (pinned accounts, each on
a route of its own) is served.
"""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.cluster_config import ClusterConfig, FileCluster, settled
from fakejs.core.configfile import authorization
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import Mismatch, duration, go_type, parse_listen, string_array, want
from fakejs.core.options import SYSTEM_ACCOUNT, ServerOptions
from fakejs.gocompat.goflag import go_quote
from fakejs.gocompat.gotime import NS, parse_duration
from fakejs.gocompat.gourl import GoURLError, parse_url

# Compression modes fakejs serves (routes are never compressed), as nats-server spells them.
COMPRESSION_OFF = frozenset({"off", "disabled", "false"})
# Modes nats-server accepts that compress: refused by name.
COMPRESSION_S2 = frozenset(
    {"on", "enabled", "true", "auto", "s2_auto", "fast", "s2_fast", "better", "s2_better", "best", "s2_best"}
)
ROUTE_MAX_PING_INTERVAL_TEXT = "30s"
_REFUSED = {
    "tls": "TLS between routes",
    "permissions": "route permissions",
    "write_deadline": "a route write deadline",
    "write_timeout": "a route write timeout policy",
}


def apply(token: Token, options: ServerOptions, context: ConfigContext) -> FileCluster:
    """Read the block into ``options.cluster``; returns the file's cluster for the command line's flags."""
    cluster = FileCluster()
    if not isinstance(token.value, dict):
        context.error(token, f"Expected map to define cluster, got {go_type(token.value)}")
        return cluster
    for key, member in token.value.items():
        try:
            _member(key, member, cluster, context)
        except Mismatch as exc:  # nats-server recovers the panic: the block ends there
            context.error(exc.token, exc.message)
            break
    options.cluster = settled(cluster.config, cluster.port)
    return cluster


def _member(key: str, member: Token, cluster: FileCluster, context: ConfigContext) -> None:
    config = cluster.config
    lowered = key.lower()
    if lowered == "name":
        name = want(member, str)
        if " " in name:
            context.error(member, "cluster name cannot contain spaces")
        else:
            config.name = name
    elif lowered == "listen":
        try:
            config.host, cluster.port = parse_listen(member.value)
        except ValueError as exc:
            context.error(member, str(exc))
    elif lowered == "port":
        cluster.port = int(want(member, int))
    elif lowered in ("host", "net"):
        config.host = want(member, str)
    elif lowered == "authorization":
        _authorization(member, config, context)
    elif lowered == "routes":
        config.routes = _routes(want(member, list), context)
    elif lowered in ("cluster_advertise", "advertise"):
        config.advertise = want(member, str)
    elif lowered == "no_advertise":
        config.no_advertise = want(member, bool)
    elif lowered == "connect_retries":
        config.connect_retries = int(want(member, int))
    elif lowered == "connect_backoff":
        config.connect_backoff = want(member, bool)
    elif lowered == "pool_size":
        config.pool_size = int(want(member, int))
    elif lowered == "accounts":
        config.accounts = string_array("accounts", member, context)
    elif lowered == "compression":
        _compression(key, member, config, context)
    elif lowered == "ping_interval":
        _ping_interval(member, config, context)
    elif lowered == "ping_max":
        config.ping_max = int(want(member, int))
    elif lowered in _REFUSED:
        _refused(lowered, key, member, context)
    else:
        context.unknown(key, member)


def _authorization(member: Token, config: ClusterConfig, context: ConfigContext) -> None:
    """The route login: one user and password, and the time a route has to log in."""
    block = authorization.parse_nested(member, context)
    if block is None:
        return
    if block.users is not None:
        context.error(member, "Cluster authorization does not allow multiple users")
    elif block.token:
        context.error(member, "Cluster authorization does not support tokens")
    else:
        config.username, config.password, config.auth_timeout = block.user, block.password, block.timeout
        if block.defaults is not None:
            context.refuse(member, "route permissions (cluster { authorization { permissions } })")


def _routes(entries: list[Token], context: ConfigContext) -> list[str]:
    """nats-server's ``parseURLs``: duplicates warned about and dropped, unparsable URLs reported."""
    routes: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        try:
            text = want(entry, str)
        except Mismatch as exc:  # parseURLs recovers its own panic: the rest of the list is skipped
            context.error(exc.token, exc.message)
            break
        if text in seen:
            context.warning(entry, f'invalid use of field "{text}": Duplicate route entry detected')
            continue
        seen.add(text)
        trimmed = text.strip()
        try:
            parse_url(trimmed)
        except GoURLError:
            context.error(entry, f"error parsing route url [{go_quote(trimmed)}]")
            continue
        routes.append(trimmed)
    return routes


def _compression(key: str, member: Token, config: ClusterConfig, context: ConfigContext) -> None:
    """nats-server's ``parseCompression``: a mode string, a boolean, or ``{ mode, rtt_thresholds }``."""
    value = member.value
    mode: str | None
    if isinstance(value, bool):
        mode = "off" if not value else "s2_fast"
    elif isinstance(value, str):
        mode = value
    elif isinstance(value, dict):
        mode = _compression_map(value, context)
    else:
        context.error(member, f'field "{key}" should be a boolean or a structure, got {go_type(value)}')
        return
    if mode is None:
        return
    if mode.lower() in COMPRESSION_S2:
        context.refuse(member, "route compression (cluster { compression })")
        return
    config.compression = _served_mode(mode)


def _served_mode(mode: str) -> str:
    """ "accept" (also for no mode: nats-server's default) or "off"; any other text is kept for the start check."""
    lowered = mode.lower()
    if lowered in ("", "accept"):
        return "accept"
    if lowered in COMPRESSION_OFF or lowered in ("not supported", "not_supported"):
        return "off"
    return mode


def _compression_map(members: dict[str, Token], context: ConfigContext) -> str | None:
    mode = ""
    for key, member in members.items():
        lowered = key.lower()
        try:
            if lowered == "mode":
                mode = want(member, str)
            elif lowered in ("rtt_thresholds", "thresholds", "rtts", "rtt"):
                for threshold in want(member, list):
                    try:
                        parse_duration(want(threshold, str))
                    except ValueError as exc:
                        context.error(member, str(exc))
                        return None
            elif not member.used_variable:
                context.error(member, f'unknown field "{key}"')
                return None
        except Mismatch as exc:
            context.error(exc.token, exc.message)
            return None
    return mode


def _ping_interval(member: Token, config: ClusterConfig, context: ConfigContext) -> None:
    interval = duration("ping_interval", member, context)
    if interval is None:
        return
    config.ping_interval = interval / NS
    if interval > 30 * NS:
        context.warning(
            member, f"Cluster 'ping_interval' will reset to {ROUTE_MAX_PING_INTERVAL_TEXT} which is the max for routes"
        )


def _refused(lowered: str, key: str, member: Token, context: ConfigContext) -> None:
    """Settings fakejs does not serve on routes: nats-server's own value checks first, then the refusal."""
    if lowered == "write_deadline" and duration("write_deadline", member, context) is None:
        return
    if lowered == "write_timeout" and want(member, str) not in ("default", "close", "retry"):
        context.error(member, "write_timeout must be 'default', 'close' or 'retry'")
        return
    context.refuse(member, f"{_REFUSED[lowered]} (cluster {{ {key} }})")


def pinned_accounts_problem(options: ServerOptions) -> str:
    """nats-server's start check on ``cluster { accounts }`` (the system account is pinned too, last)."""
    cluster = options.cluster
    if cluster is None or not cluster.accounts:
        return ""
    if cluster.pool_size < 0:
        return "pool_size cannot be negative if pinned accounts are specified"
    system = options.system_account or SYSTEM_ACCOUNT
    pinned = cluster.accounts if system in cluster.accounts else [*cluster.accounts, system]
    duplicate = next((name for index, name in enumerate(pinned) if name in pinned[:index]), None)
    if duplicate is None:
        return ""
    listed = " ".join(go_quote(name) for name in pinned)
    return f"found duplicate account name {go_quote(duplicate)} in pinned accounts list [{listed}]"


def compression_problem(options: ServerOptions) -> str:
    """nats-server's start check on the compression mode (the modes it knows are sorted out when read)."""
    cluster = options.cluster
    if cluster is None or cluster.compression in ("accept", "off"):
        return ""
    return f"unsupported compression mode {go_quote(cluster.compression)}"
