"""The ``accounts { NAME { users, jetstream, exports, imports, default_permissions } }`` block.

Follows nats-server's ``parseAccounts`` and ``parseJetStreamForAccount``
(``opts.go``): each account becomes an
:class:`~fakejs.core.account_config.AccountConfig` whose users name it;
``$G`` is reserved, a user name or nkey may appear once across
``authorization`` and every account, and an account's ``jetstream`` is a
boolean, ``enabled``/``disabled`` or a map of limits.  Errors carry
nats-server's texts, positioned where it positions them (its messages about
a whole ``users`` or ``jetstream`` value come without a position).  The
simple form, a list of account names, is accepted too.  Of an account's
``limits`` fakejs serves ``max_subscriptions``.  Keys an account may have
that fakejs does not serve (account nkeys, the other limits, message
tracing) are refused by name; ``mappings`` are read by :mod:`.mappings`.
"""

from __future__ import annotations

from typing import Any

from fakejs.conf import Token
from fakejs.core.account_config import AccountConfig, Export, Import, Mapping
from fakejs.core.accounts import GLOBAL_ACCOUNT
from fakejs.core.auth import decode_public_key
from fakejs.core.configfile import exports
from fakejs.core.configfile.authorization import parse_permissions, parse_users, with_permissions
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.mappings import parse_mappings
from fakejs.core.configfile.message_trace import parse_message_trace
from fakejs.core.configfile.values import Mismatch, go_type, go_value, want
from fakejs.core.jetstream_limits import NO_LIMIT, JetStreamLimits
from fakejs.core.options import ServerOptions
from fakejs.core.users import Permissions, User
from fakejs.gocompat.goflag import go_quote

ACCOUNT_KEY_PREFIX = 0  # nkeys' prefix byte of an account's public key ("A...")

# ``limits { ... }`` keys of an account that fakejs does not enforce: what to call them when refusing.
REFUSED_LIMITS: dict[str, str] = {
    "max_connections": "account connection limits",
    "max_conn": "account connection limits",
    "max_payload": "account payload limits",
    "max_pay": "account payload limits",
    "max_leafnodes": "account leaf node limits",
    "max_leafs": "account leaf node limits",
}

# ``jetstream { ... }`` keys of an account: the limit each sets (sizes and counts are integers).
_LIMIT_KEYS: dict[str, str] = {
    "max_memory": "max_memory",
    "max_mem": "max_memory",
    "mem": "max_memory",
    "memory": "max_memory",
    "max_store": "max_storage",
    "max_file": "max_storage",
    "max_disk": "max_storage",
    "store": "max_storage",
    "disk": "max_storage",
    "max_streams": "max_streams",
    "streams": "max_streams",
    "max_consumers": "max_consumers",
    "consumers": "max_consumers",
    "mem_max_stream_bytes": "memory_max_stream_bytes",
    "memory_max_stream_bytes": "memory_max_stream_bytes",
    "disk_max_stream_bytes": "storage_max_stream_bytes",
    "store_max_stream_bytes": "storage_max_stream_bytes",
    "max_ack_pending": "max_ack_pending",
}
_REQUIRED_KEYS = frozenset({"max_bytes_required", "max_stream_bytes", "max_bytes"})


def apply(token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """Map the value of the top-level ``accounts`` key onto ``options.accounts``."""
    value = token.value
    if isinstance(value, list):
        _names(value, options, context)
    elif isinstance(value, dict):
        known = options.all_users()
        taken = {u.nkey or u.name for u in known}
        for name, entry in value.items():
            account = _account(name, entry, options, context, taken)
            if account is not None:
                options.accounts.append(account)
        if not context.errors:  # nats-server judges imports across accounts only once every account parsed
            for text in exports.check_imports(options.accounts):
                context.error(token, text)


def _names(items: list[Token], options: ServerOptions, context: ConfigContext) -> None:
    seen: set[str] = set()
    for item in items:
        name = item.value
        if not isinstance(name, str):
            context.error(item, f"interface conversion: interface {{}} is {go_type(name)}, not string")
            return
        if name == GLOBAL_ACCOUNT:
            context.error(item, f'"{name}" is a Reserved Account')
        elif name in seen:
            context.error(item, f"Duplicate Account Entry: {name}")
        else:
            seen.add(name)
            options.accounts.append(AccountConfig(name))


class _Parts:
    def __init__(self) -> None:
        self.users: list[User] = []
        self.users_token: Token | None = None
        self.defaults: Permissions | None = None
        self.jetstream: JetStreamLimits | None = None
        self.exports: tuple[Export, ...] = ()
        self.imports: tuple[Import, ...] = ()
        self.mappings: tuple[Mapping, ...] = ()
        self.max_subscriptions = NO_LIMIT
        self.message_trace: tuple[str, int] = ("", 0)


def _account(
    name: str, entry: Token, options: ServerOptions, context: ConfigContext, taken: set[str]
) -> AccountConfig | None:
    if entry.used_variable:
        return None
    if not isinstance(entry.value, dict):
        context.error(entry, "Expected map entries for accounts")
        return None
    if name == GLOBAL_ACCOUNT:
        context.error(entry, f'"{name}" is a Reserved Account')
        return None
    parts = _Parts()
    for key, value in entry.value.items():
        _account_key(key, value, parts, context)
    users = parts.users
    if users and parts.users_token is not None:
        if options.user:
            context.error(parts.users_token, "Can not have a single user/pass and accounts")
            users = []
        elif options.token:
            context.error(parts.users_token, "Can not have a token and accounts")
            users = []
    if parts.defaults is not None:
        users = [u if u.permissions is not None else with_permissions(u, parts.defaults) for u in users]
    kept: list[User] = []
    for user in users:
        ident = user.nkey or user.name
        if ident in taken and parts.users_token is not None:
            kind, shown = ("nkey", user.nkey) if user.nkey else ("user", user.name)
            context.error(parts.users_token, f'Duplicate {kind} "{shown}" detected')
            continue
        taken.add(ident)
        kept.append(User(user.name, user.password, user.nkey, user.permissions, name, user.connection_types))
    return AccountConfig(
        name,
        tuple(kept),
        parts.jetstream,
        {},
        parts.exports,
        parts.imports,
        parts.mappings,
        max_subscriptions=parts.max_subscriptions,
        message_trace=parts.message_trace,
    )


def _account_key(key: str, value: Token, parts: _Parts, context: ConfigContext) -> None:
    field = key.lower()
    if field == "users":
        parts.users_token = value
        if not isinstance(value.value, list):
            # nats-server has the value without its position here.
            context.errors.append(f"Expected users field to be an array, got {go_value(value)}")
            return
        parts.users = parse_users(value, context) or []
    elif field == "jetstream":
        parts.jetstream = jetstream_limits(value, context)
    elif field == "default_permissions":
        parts.defaults = parse_permissions(value, context)
    elif field == "exports":
        parts.exports = exports.apply_exports(value, context)
    elif field == "imports":
        parts.imports = exports.apply_imports(value, context)
    elif field in ("mappings", "maps"):
        parts.mappings = parse_mappings(value, context)
    elif field == "limits":
        _limits(value, parts, context)
    elif field in ("msg_trace", "trace_dest"):
        parts.message_trace = parse_message_trace(value, key, context)
    elif field == "nkey":
        nkey = value.value
        if not isinstance(nkey, str) or decode_public_key(nkey, ACCOUNT_KEY_PREFIX) is None:
            context.error(value, f"Not a valid public nkey for an account: {_quote(go_value(value))}")
            return
        context.refuse(value, "account nkeys (nkey)")
    else:
        context.unknown(key, value)


def _limits(token: Token, parts: _Parts, context: ConfigContext) -> None:
    """An account's ``limits { }`` (nats-server's ``parseAccountLimits``); a type error ends the block."""
    if not isinstance(token.value, dict):
        context.error(token, f"Expected account limits to be a map/struct, got {go_value(token)}")
        return
    try:
        for key, item in token.value.items():
            field = key.lower()
            if field in ("max_subscriptions", "max_subs"):
                parts.max_subscriptions = _go_int32(int(want(item, int)))
            elif field in REFUSED_LIMITS:
                want(item, int)
                context.refuse(item, f"{REFUSED_LIMITS[field]} ({key})")
            elif not item.used_variable:
                context.error(item, f"Unknown field {_quote(key)} parsing account limits")
    except Mismatch as mismatch:
        context.error(mismatch.token, mismatch.message)


def _go_int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def jetstream_limits(token: Token, context: ConfigContext) -> JetStreamLimits | None:
    """An account's ``jetstream`` value: its limits (all -1 when just enabled), or None when off."""
    value = token.value
    if isinstance(value, bool):
        return JetStreamLimits() if value else None
    if isinstance(value, str):
        mode = value.lower()
        if mode in ("enabled", "enable"):
            return JetStreamLimits()
        if mode not in ("disabled", "disable"):
            context.errors.append(f"Expected 'enabled' or 'disabled' for string value, got '{value}'")
        return None
    if not isinstance(value, dict):
        context.errors.append(f"Expected map, bool or string to define JetStream, got {go_type(value)}")
        return None
    limits: dict[str, Any] = {}
    for key, item in value.items():
        field = key.lower()
        setting = item.value
        if field in _LIMIT_KEYS:
            if not isinstance(setting, int) or isinstance(setting, bool):
                context.error(item, f"Expected a parseable size for {_quote(key)}, got {go_value(item)}")
                return None
            limits[_LIMIT_KEYS[field]] = setting
        elif field in _REQUIRED_KEYS:
            if not isinstance(setting, bool):
                context.error(item, f"Expected a parseable bool for {_quote(key)}, got {go_value(item)}")
                return None
            limits["max_bytes_required"] = setting
        elif field == "cluster_traffic":
            if not isinstance(setting, str):
                reason = f"Expected either 'system' or 'owner' string value for {_quote(key)}, got {go_value(item)}"
                context.error(item, reason)
                return None
            if setting not in ("system", "", "owner"):
                context.error(item, f"Expected 'system' or 'owner' string value for {_quote(key)}, got {setting}")
                return None
        else:
            context.unknown(key, item)
    return JetStreamLimits(**limits)


def _quote(text: str) -> str:
    return go_quote(text)
