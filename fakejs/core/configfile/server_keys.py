"""The scalar top-level keys: addresses, limits, timers, logging, names.

Each handler takes ``(key, token, options, context)``, with nats-server's
meaning, checks and texts (``server.processConfigFileLine``).  A value of
the wrong Go type raises :class:`~fakejs.core.configfile.values.Mismatch`.
Where nats-server turns a zero into its default when the server starts
(``setBaselineOptions``), the default is written here, since
:class:`ServerOptions` holds the value served.
"""

from __future__ import annotations

from collections.abc import Callable

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import duration, go_type, parse_listen, want
from fakejs.core.options import (
    MAX_CONTROL_LINE,
    MAX_PAYLOAD,
    MAX_PENDING,
    ServerOptions,
    client_port,
    monitor_port,
)
from fakejs.gocompat.gotime import NS, format_duration, parse_duration

Handler = Callable[[str, Token, ServerOptions, ConfigContext], None]

INT32_MAX = 2**31 - 1
LAME_DUCK_MINIMUM = 30 * NS
DEFAULT_PING_INTERVAL = 120.0
DEFAULT_PING_MAX = 2
DEFAULT_WRITE_DEADLINE = 10.0
DEFAULT_LAME_DUCK_GRACE = 10.0


def _listen(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    try:
        host, port = parse_listen(token.value)
    except ValueError as exc:
        context.error(token, str(exc))
        return
    options.host = host
    options.port = client_port(port)


def _port(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    options.port = client_port(int(want(token, int)))


def _host(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    options.host = want(token, str)


def _server_name(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    name = want(token, str)
    if " " in name:
        context.error(token, "server name cannot contain spaces")
        return
    options.name = name


def _monitor_listen(attribute: str) -> Handler:
    """``http`` / ``https``: ``host:port`` of the monitoring port (its host shared by both)."""

    def handle(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
        try:
            host, port = parse_listen(token.value)
        except ValueError as exc:
            context.error(token, str(exc))
            return
        options.http_host = host
        setattr(options, attribute, monitor_port(port))

    return handle


def _monitor_port(attribute: str) -> Handler:
    """``http_port`` / ``https_port``: the monitoring port alone."""

    def handle(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
        setattr(options, attribute, monitor_port(int(want(token, int))))

    return handle


def _http_base_path(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    path = want(token, str)
    if path.strip("/"):
        context.refuse(token, f"a monitoring base path (http_base_path {path!r})")


def _flag(attribute: str) -> Handler:
    def handle(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
        setattr(options, attribute, want(token, bool))

    return handle


def _trace_too(attribute: str) -> Handler:
    """trace_verbose and trace_headers: their own setting, and tracing on or off with it."""

    def handle(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
        value = want(token, bool)
        setattr(options, attribute, value)
        options.trace = value

    return handle


def _max_traced_msg_len(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    options.max_traced_msg_len = int(want(token, int))


def _logtime(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    if not want(token, bool):
        context.refuse(token, "log lines without timestamps (logtime: false)")


def _logtime_utc(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    if want(token, bool):
        context.refuse(token, "UTC log timestamps (logtime_utc: true)")


def _text(attribute: str) -> Handler:
    def handle(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
        setattr(options, attribute, want(token, str))

    return handle


def _int32(attribute: str, default: int) -> Handler:
    """max_payload and max_control_line: at most 2^31-1; 0 is the default."""

    def handle(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
        value = int(want(token, int))
        if value > INT32_MAX:
            context.error(token, f"{key} value is too big")
            return
        value = (value + 2**31) % 2**32 - 2**31  # Go's int32 conversion
        setattr(options, attribute, value or default)

    return handle


def _max_pending(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    options.max_pending = int(want(token, int)) or MAX_PENDING


def _max_connections(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    # nats-server: 0 in a file means -1, which refuses every client.
    options.max_connections = int(want(token, int)) or -1


def _max_subscriptions(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    options.max_subscriptions = int(want(token, int))


def _ping_interval(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    ns = duration("ping_interval", token, context)
    if ns is not None:
        options.ping_interval = ns / NS if ns else DEFAULT_PING_INTERVAL


def _ping_max(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    options.ping_max = int(want(token, int)) or DEFAULT_PING_MAX


def _write_deadline(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    ns = duration("write_deadline", token, context)
    if ns is not None:
        options.write_deadline = ns / NS if ns else DEFAULT_WRITE_DEADLINE


def _lame_duck_duration(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    try:
        ns = parse_duration(want(token, str))
    except ValueError as exc:
        context.error(token, f"error parsing lame_duck_duration: {exc}")
        return
    if ns < LAME_DUCK_MINIMUM:
        context.error(token, f"invalid lame_duck_duration of {format_duration(ns)}, minimum is 30 seconds")
        return
    options.lame_duck_duration = ns / NS


def _lame_duck_grace_period(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    try:
        ns = parse_duration(want(token, str))
    except ValueError as exc:
        context.error(token, f"error parsing lame_duck_grace_period: {exc}")
        return
    if ns < 0:
        context.error(token, "invalid lame_duck_grace_period, needs to be positive")
        return
    options.lame_duck_grace_period = ns / NS if ns else DEFAULT_LAME_DUCK_GRACE


def _server_tags(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    value = token.value
    if isinstance(value, str):
        options.server_tags.append(value)
        return
    if not isinstance(value, list):
        context.error(token, f"error parsing tags: unsupported type {go_type(value)}")
        return
    for member in value:
        if not isinstance(member.value, str):
            # nats-server names the Go type of the array member's token here
            context.error(token, "error parsing tags: unsupported type *conf.token where string is expected")
            return
        options.server_tags.append(member.value)


def _no_auth_user(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    options.no_auth_user = want(token, str)


def _system_account_done(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """system_account and system are read before every other key (see :func:`system_account`)."""


def system_account(tree: dict[str, Token], options: ServerOptions, context: ConfigContext) -> None:
    """nats-server reads ``system_account`` (else ``system``) first, as other keys depend on it."""
    token = tree.get("system_account") or tree.get("system")
    if token is None:
        return
    if not isinstance(token.value, str):
        context.error(token, "system account name must be a string")
        return
    # Checked when the server starts (an account the accounts block does not name is missing then).
    options.system_account = token.value


HANDLERS: dict[str, Handler] = {
    "listen": _listen,
    "port": _port,
    "host": _host,
    "net": _host,
    "server_name": _server_name,
    "http": _monitor_listen("http_port"),
    "http_port": _monitor_port("http_port"),
    "monitor_port": _monitor_port("http_port"),
    "https": _monitor_listen("https_port"),
    "https_port": _monitor_port("https_port"),
    "http_base_path": _http_base_path,
    "debug": _flag("debug"),
    "trace": _flag("trace"),
    "trace_verbose": _trace_too("trace_verbose"),
    "trace_headers": _trace_too("trace_headers"),
    "max_traced_msg_len": _max_traced_msg_len,
    "logtime": _logtime,
    "logtime_utc": _logtime_utc,
    "log_file": _text("log_file"),
    "logfile": _text("log_file"),
    "pid_file": _text("pid_file"),
    "pidfile": _text("pid_file"),
    "ports_file_dir": _text("ports_file_dir"),
    "max_payload": _int32("max_payload", MAX_PAYLOAD),
    "max_control_line": _int32("max_control_line", MAX_CONTROL_LINE),
    "max_pending": _max_pending,
    "max_connections": _max_connections,
    "max_conn": _max_connections,
    "max_subscriptions": _max_subscriptions,
    "max_subs": _max_subscriptions,
    "ping_interval": _ping_interval,
    "ping_max": _ping_max,
    "write_deadline": _write_deadline,
    "lame_duck_duration": _lame_duck_duration,
    "lame_duck_grace_period": _lame_duck_grace_period,
    "server_tags": _server_tags,
    "no_auth_user": _no_auth_user,
    "system_account": _system_account_done,
    "system": _system_account_done,
}
