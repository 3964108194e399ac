"""nats-server's answer to a reload that changes the ``websocket {}`` block: refused, with the block as Go prints it.

nats-server reloads nothing of its websocket listener: a change refuses the
reload with ``config reload not supported for Websocket: old={...},
new={...}``, each side its ``WebsocketOpts`` struct printed by Go's ``%v``
(the values in field order, separated by spaces).  Its TLS settings are
left out of the comparison, except ``verify_and_map`` and ``pinned_certs``:
a reload that changes only the websocket's certificates is accepted and
changes nothing (the listener keeps the TLS it started with).  Go prints a
TLS configuration as its address in memory; fakejs prints
:data:`TLS_POINTER` there.
"""

from __future__ import annotations

from dataclasses import replace

from fakejs.core.transport_config import TLSConfig, WebSocketConfig
from fakejs.gocompat.gotime import format_duration

__all__ = ["TLS_POINTER", "go_float", "websocket_refusal"]

# What fakejs prints for Go's address of a configured TLS setting (nats-server prints where it lives).
TLS_POINTER = "0xc000000000"
# nats-server's DEFAULT_HOST, where a configured websocket listener binds when no host is given.
DEFAULT_HOST = "0.0.0.0"


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64: the shortest text, an exponent below 1e-4 and from 1e21."""
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = int(exponent)
    return f"{mantissa}e{'+' if power >= 0 else '-'}{abs(power):02d}"


def _duration(seconds: float) -> str:
    return format_duration(round(seconds * 1e9))


def _go_map(items: dict[str, str]) -> str:
    return "map[" + " ".join(f"{key}:{items[key]}" for key in sorted(items)) + "]"


def _go_struct(config: WebSocketConfig | None) -> str:
    """``WebsocketOpts`` as Go's ``%v`` prints it (the zero struct when there is no websocket listener)."""
    host = DEFAULT_HOST if config is not None else ""
    config = config or WebSocketConfig()
    tls = config.tls
    pinned = {pin: "{}" for pin in tls.pinned_certs} if tls is not None else {}
    values = [
        config.host or host,
        str(config.port),
        config.advertise,
        config.no_auth_user,
        config.jwt_cookie,
        config.user_cookie,
        config.pass_cookie,
        config.token_cookie,
        config.username,
        config.password,
        config.token,
        go_float(config.auth_timeout),
        _go_bool(config.no_tls),
        TLS_POINTER if tls is not None else "<nil>",
        _go_bool(tls is not None and tls.verify_and_map),
        _go_map(pinned),
        _go_bool(config.same_origin),
        "[" + " ".join(config.allowed_origins) + "]",
        _go_bool(config.compression),
        _duration(config.handshake_timeout),
        _duration(config.ping_interval),
        _go_map(config.headers),
        TLS_POINTER if tls is not None else "<nil>",
    ]
    return "{" + " ".join(values) + "}"


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _compared(config: WebSocketConfig | None) -> object:
    """What nats-server compares of the block: everything but the TLS settings other than map and pins."""
    if config is None:
        return None
    tls = config.tls or TLSConfig()
    return replace(config, tls=None), tls.verify_and_map, sorted(set(tls.pinned_certs))


def websocket_refusal(old: WebSocketConfig | None, new: WebSocketConfig | None) -> str:
    """nats-server's error for a websocket change it refuses; ``""`` when the change is only TLS (kept)."""
    if _compared(old) == _compared(new):
        return ""
    return f"config reload not supported for Websocket: old={_go_struct(old)}, new={_go_struct(new)}"
