"""``authorization { auth_callout {...} }``: an authorization callout, onto :class:`ServerOptions`.

Follows nats-server's ``parseAuthCallout`` in ``opts.go``: ``issuer`` (an
account public key), ``account``/``acc`` (``$G`` unless given),
``auth_users``/``users`` and ``allowed_accounts`` (arrays of names),
``xkey``/``key`` (a curve public key), with its texts for a bad value, an
unknown field, a missing issuer or missing users (reported at the last
field read), and, once the whole file is read, an ``allowed_accounts``
entry that names no configured account (``auth_callout allowed account
"B" not found in configured accounts``, without a position).
"""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.auth import decode_public_key
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import go_value
from fakejs.core.jwt.claims import PREFIX_BYTE_ACCOUNT
from fakejs.core.options import ServerOptions
from fakejs.core.users import AuthCallout
from fakejs.gocompat.curvekeys import PREFIX_BYTE_CURVE
from fakejs.gocompat.goflag import go_quote


def _names(token: Token, context: ConfigContext, what: str) -> tuple[str, ...] | None:
    if not isinstance(token.value, list):
        context.error(token, f"Expected {what} field to be an array, got *conf.token")
        return None
    return tuple(str(entry.value) for entry in token.value)


def parse_auth_callout(token: Token, context: ConfigContext) -> AuthCallout | None:
    """The ``auth_callout`` block, or None (with the error reported) when nats-server would refuse it."""
    members = token.value
    if not isinstance(members, dict):
        context.error(token, f"Expected authorization callout to be a map/struct, got {go_value(members)}")
        return None
    issuer = account = xkey = ""
    auth_users: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    last = token
    for key, value in members.items():
        last = value
        field = key.lower()
        if field == "issuer":
            issuer = str(value.value)
            if decode_public_key(issuer, PREFIX_BYTE_ACCOUNT) is None:
                context.error(value, f"Expected callout user to be a valid public account nkey, got {go_quote(issuer)}")
                return None
        elif field in ("account", "acc"):
            account = str(value.value)
        elif field in ("auth_users", "users"):
            names = _names(value, context, "auth_users")
            if names is None:
                return None
            auth_users += names
        elif field in ("xkey", "key"):
            xkey = str(value.value)
            if decode_public_key(xkey, PREFIX_BYTE_CURVE) is None:
                context.error(value, f"Expected callout xkey to be a valid public xkey, got {go_quote(xkey)}")
                return None
        elif field == "allowed_accounts":
            names = _names(value, context, "allowed accounts")
            if names is None:
                return None
            allowed += names
        elif not value.used_variable:
            context.error(value, f"Unknown field {go_quote(key)} parsing authorization callout")
    if not issuer:
        context.error(last, "Authorization callouts require an issuer to be specified")
        return None
    if not auth_users:
        context.error(last, "Authorization callouts require authorized users to be specified")
        return None
    return AuthCallout(issuer, account or "$G", auth_users, allowed, xkey)


def check_allowed_accounts(options: ServerOptions, context: ConfigContext) -> None:
    """nats-server's check once the file is read: each ``allowed_accounts`` entry is a configured account."""
    callout = options.auth_callout
    if callout is None:
        return
    configured = {account.name for account in options.accounts}
    for name in callout.allowed_accounts:
        if name not in configured:
            context.errors.append(f"auth_callout allowed account {go_quote(name)} not found in configured accounts")
