"""The top-level ``authorization`` block: a single user and password, or a token, and the timeout.

A small first version (``user``/``username``, ``password``/``pass``,
``token``, ``timeout``); ``users``, permissions and nkeys come with the
authorization work, which replaces this module keeping :func:`apply`'s
signature.  Until then those keys refuse to start, naming themselves.
"""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import Mismatch, go_type, want
from fakejs.core.options import ServerOptions
from fakejs.gocompat.gotime import parse_duration

TIMEOUT_WARNING_SECONDS = 60.0
DEFAULT_AUTH_TIMEOUT = 2.0
NIL_DEREFERENCE = "runtime error: invalid memory address or nil pointer dereference"
_NOT_YET = {
    "users": "several users (authorization { users })",
    "default_permission": "permissions (authorization { default_permissions })",
    "default_permissions": "permissions (authorization { default_permissions })",
    "permissions": "permissions (authorization { permissions })",
    "auth_callout": "auth callout (authorization { auth_callout })",
    "auth_hook": "auth callout (authorization { auth_hook })",
    "proxy_required": "trusted proxies (authorization { proxy_required })",
}


def apply(token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """Set the options an ``authorization`` block gives, reporting to ``context`` as nats-server does."""
    if not isinstance(token.value, dict):
        context.error(
            token, f"interface conversion: interface {{}} is {go_type(token.value)}, not map[string]interface {{}}"
        )
        context.error(token, NIL_DEREFERENCE)
        return
    block = token.value
    user = password = secret = ""
    timeout: float | None = None
    for key, member in block.items():
        lowered = key.lower()
        try:
            if lowered in ("user", "username"):
                user = want(member, str)
            elif lowered in ("pass", "password"):
                password = want(member, str)
            elif lowered == "token":
                secret = want(member, str)
            elif lowered == "timeout":
                timeout = _timeout(key, member, context)
                if timeout is None:
                    return
            elif lowered in _NOT_YET:
                context.refuse(member, _NOT_YET[lowered])
            else:
                context.unknown(key, member)
        except Mismatch as exc:
            # nats-server recovers at the member, then trips over the block it never finished
            context.error(member, exc.message)
            context.error(token, NIL_DEREFERENCE)
            return
    if (user or password) and secret:
        context.error(token, "Cannot have a user/pass and token")
        return
    options.user, options.password, options.token = user, password, secret
    if timeout is not None:
        options.auth_timeout = timeout or DEFAULT_AUTH_TIMEOUT


def _timeout(key: str, member: Token, context: ConfigContext) -> float | None:
    value = member.value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        context.error(member, "error parsing authorization config, 'timeout' wrong type")
        return None
    if isinstance(value, str):
        try:
            seconds = parse_duration(value) / 1e9
        except ValueError as exc:
            context.error(member, f"error parsing authorization config, 'timeout' {exc}")
            return None
    else:
        seconds = float(value)
    if seconds > TIMEOUT_WARNING_SECONDS:
        context.warning(
            member,
            f'invalid use of field "{key}": timeout of {value} ({seconds:f} seconds) is high, consider keeping it '
            "under 60 seconds. possibly caused by unquoted duration; use '1m' instead of 1m, for example",
        )
    return seconds
