"""The ``websocket {}`` block (``ws {}``): nats-server's keys, type errors and start checks.

A block without a port (or with ``port: 0``) opens nothing, as in
nats-server: ``ServerOptions.websocket`` stays ``None``.  ``port: -1`` asks
for a free port.  The block's own ``authorization {}``, ``no_auth_user`` and
``user_cookie`` / ``pass_cookie`` / ``token_cookie`` decide how websocket
clients log in (see :func:`fakejs.core.auth.login_rules`); ``ping_interval``
replaces the server's for them.  ``jwt_cookie`` needs trusted operators:
without them the server refuses to start with nats-server's words; with
them fakejs refuses it by name (see :mod:`fakejs.core.configfile.operator`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.tls import tls_block
from fakejs.core.configfile.values import Mismatch, duration, go_type, parse_listen, string_array, want
from fakejs.core.options import ServerOptions
from fakejs.core.transport_config import WebSocketConfig
from fakejs.gocompat.gotime import NS, parse_duration

NOT_A_MAP = "Expected websocket to be a map, got {type}"
ORIGIN_KEYS = frozenset({"allowed_origins", "allowed_origin", "allow_origins", "allow_origin", "origins", "origin"})
COOKIE_KEYS = frozenset({"user_cookie", "pass_cookie", "token_cookie", "jwt_cookie"})
FORBIDDEN_HEADERS = ("host", "content-length", "connection", "upgrade", "nats-no-masking")


def apply(token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """Read the block into ``options.websocket`` (``None`` when it opens no port)."""
    if not isinstance(token.value, dict):
        context.error(token, NOT_A_MAP.format(type=go_type(token.value)))
        return
    config = WebSocketConfig()
    for key, member in token.value.items():
        try:
            _member(key, member, config, context)
        except Mismatch as exc:  # nats-server's parser recovers its own panics: reported at the inner key
            context.error(exc.token, exc.message)
            break
    options.websocket = config if config.port else None


def _member(key: str, member: Token, config: WebSocketConfig, context: ConfigContext) -> None:
    lowered = key.lower()
    value = member.value
    if lowered == "listen":
        try:
            config.host, config.port = parse_listen(value)
        except ValueError as exc:
            context.error(member, str(exc))
    elif lowered == "port":
        config.port = int(want(member, int))
    elif lowered in ("host", "net"):
        config.host = want(member, str)
    elif lowered == "advertise":
        config.advertise = want(member, str)
    elif lowered == "no_tls":
        config.no_tls = want(member, bool)
    elif lowered == "tls":
        config.tls = tls_block(member, context)
    elif lowered == "same_origin":
        config.same_origin = want(member, bool)
    elif lowered in ORIGIN_KEYS:
        config.allowed_origins = string_array("allowed origins", member, context)
    elif lowered == "handshake_timeout":
        config.handshake_timeout = _handshake_timeout(member, context)
    elif lowered in ("compress", "compression"):
        config.compression = want(member, bool)
    elif lowered in ("authorization", "authentication"):
        _simple_auth(member, config, context)
    elif lowered == "no_auth_user":
        config.no_auth_user = want(member, str)
    elif lowered in COOKIE_KEYS:
        setattr(config, lowered, want(member, str))
    elif lowered == "ping_interval":
        ns = duration("ping_interval", member, context)
        config.ping_interval = ns / NS if ns else 0.0
    elif lowered == "headers":
        config.headers = _headers(member, context)
    else:
        context.unknown(key, member)


def _handshake_timeout(token: Token, context: ConfigContext) -> float:
    """Whole seconds, or a Go duration string; seconds (0: no timeout)."""
    value = token.value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return parse_duration(value) / 1e9
        except ValueError as exc:
            context.error(token, str(exc))
            return 0.0
    context.error(token, f"error parsing handshake timeout: unsupported type {go_type(value)}")
    return 0.0


def _headers(token: Token, context: ConfigContext) -> dict[str, str]:
    value = token.value
    if not isinstance(value, dict):
        context.error(token, f"error parsing headers: unsupported type {go_type(value)}")
        return {}
    headers: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item.value, str):
            headers[name] = item.value
        else:
            context.error(item, f"error parsing header key {name}: unsupported type {go_type(item.value)}")
    return headers


def _simple_auth(token: Token, config: WebSocketConfig, context: ConfigContext) -> None:
    """nats-server's ``parseSimpleAuth``: user, pass, token, timeout (seconds; 1 when not a number)."""
    members: Any = token.value
    if not isinstance(members, dict):
        raise Mismatch(
            token, f"interface conversion: interface {{}} is {go_type(members)}, not map[string]interface {{}}"
        )
    for key, member in members.items():
        lowered = key.lower()
        if lowered in ("user", "username"):
            config.username = want(member, str)
        elif lowered in ("pass", "password"):
            config.password = want(member, str)
        elif lowered == "token":
            config.token = want(member, str)
        elif lowered == "timeout":
            value = member.value
            number = isinstance(value, int | float) and not isinstance(value, bool)
            config.auth_timeout = float(value) if number else 1.0
        else:
            context.unknown(key, member)


def websocket_problem(options: ServerOptions, tls_given: bool = False) -> str:
    """nats-server's start checks on the block (``validateWebsocketOptions``): the first failing, or ""."""
    config = options.websocket
    if config is None or not config.port:
        return ""
    if config.tls is None and not config.no_tls and not tls_given:
        return "websocket requires TLS configuration"
    for origin in config.allowed_origins:
        parts = urlsplit(origin)
        if not parts.scheme and not origin.startswith("/"):
            return f'unable to parse allowed origin: parse "{origin}": invalid URI for request'
        if parts.scheme not in ("http", "https"):
            return f'unable to parse allowed origin "{origin}": allowed origins must be absolute URLs with http or https scheme'
        if not parts.netloc:
            return f'unable to parse allowed origin "{origin}": host is required'
    problem = _auth_problem(options, config)
    if problem:
        return problem
    for name in config.headers:
        lowered = name.lower()
        if lowered in FORBIDDEN_HEADERS:
            return f'websocket: invalid header "{name}" not allowed'
        if lowered.startswith("sec-websocket-"):
            return f'websocket: invalid header "{name}", "Sec-WebSocket-" prefix not allowed'
    return ""


def _auth_problem(options: ServerOptions, config: WebSocketConfig) -> str:
    """nats-server's checks of the block's own authentication (after the TLS check, before the origins)."""
    if config.no_auth_user:
        names = {name for user in options.all_users() for name in (user.name, user.nkey) if name}
        if not names:
            return f'no_auth_user: "{config.no_auth_user}" present, but users/nkeys are not defined'
        if config.no_auth_user not in names:
            return (
                f'no_auth_user: "{config.no_auth_user}" not present as user or nkey '
                "in authorization block or account configuration"
            )
    if options.all_users():
        if config.username:
            return "websocket authentication username not compatible with presence of users/nkeys"
        if config.token:
            return "websocket authentication token not compatible with presence of users/nkeys"
    if config.jwt_cookie and not options.trusted_operators:
        return (
            "trusted operators or trusted keys configuration is required "
            f'for JWT authentication via cookie "{config.jwt_cookie}"'
        )
    return ""
