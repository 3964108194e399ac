"""From a parsed file to :class:`ServerOptions`: the top-level key switch, and the checks at start.

:func:`load_file` and :func:`load_text` parse (``fakejs.conf`` raises
:class:`~fakejs.conf.ConfigError` for the format), then walk the top-level
keys in file order (nats-server walks a Go map, in no fixed order; with
several errors only the order of its lines differs).  ``system_account`` is
read first, as nats-server does.  Keys nats-server knows and fakejs does not
serve are refused by name; keys nobody knows are nats-server's ``unknown
field`` error unless a ``$variable`` reference used them.
:func:`start_problem` holds the checks nats-server makes when the server is
created (``validateOptions``), which ``-t`` does not make.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fakejs.conf import ConfigError, Token, Tree, digest, parse, parse_file
from fakejs.core import auth
from fakejs.core.configfile import accounts, authorization, cluster, jetstream_keys, mappings, operator, tls, websocket
from fakejs.core.configfile.callout import check_allowed_accounts
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.listeners import (
    BLOCK_ALIASES,
    BLOCKS,
    Unserved,
    apply_block,
    listener_problems,
    notices,
    settle_leafnodes,
)
from fakejs.core.configfile.server_keys import HANDLERS, Handler, system_account
from fakejs.core.configfile.values import Mismatch, want
from fakejs.core.jwt.claims import PREFIX_BYTE_ACCOUNT, is_key_of
from fakejs.core.jwt.trust import TrustedOperators
from fakejs.core.options import SYSTEM_ACCOUNT, ServerOptions
from fakejs.gocompat.gotime import format_duration

# Top-level keys nats-server serves and fakejs does not: what to call them when refusing.
REFUSED: dict[str, str] = {
    "client_advertise": "client advertise URLs for clusters",
    "ocsp": "OCSP stapling",
    "ocsp_cache": "OCSP stapling",
    "logfile_size_limit": "log file rotation",
    "log_size_limit": "log file rotation",
    "logfile_max_num": "log file rotation",
    "log_max_num": "log file rotation",
    "syslog": "syslog logging",
    "remote_syslog": "remote syslog logging",
    "prof_port": "the profiling port",
    "prof_block_rate": "the profiling port",
    "proxy_protocol": "the PROXY protocol",
    "proxies": "trusted proxies",
    "max_sub_tokens": "a maximum of subject tokens",
    "max_subscription_tokens": "a maximum of subject tokens",
    "max_closed_clients": "a size for the closed connections list",
    "write_timeout": "write timeout policies",
    "no_header_support": "turning message headers off",
    "server_metadata": "server metadata",
    "feature_flags": "feature flags",
    "default_js_domain": "JetStream domains per account",
    "resolver_tls": "TLS for the URL account resolver",
    "trusted": "trusted keys without an operator JWT",
    "trusted_keys": "trusted keys without an operator JWT",
}

# Booleans that change nothing fakejs does: read (with nats-server's type check) and accepted.
IGNORED_BOOLEANS = frozenset(
    {
        "disable_sublist_cache",
        "no_sublist_cache",
        "no_system_account",
        "no_system",
        "no_sys_acc",
    }
)
IGNORED_INTEGERS = frozenset({"connect_error_reports", "reconnect_error_reports"})
NO_SYSTEM_ACCOUNT_FOR_RESOLVER = (
    "using nats based account resolver - the system account needs to be specified in configuration or the operator jwt"
)


class ConfigFileError(ConfigError):
    """A configuration file the server refuses to start with; ``str()`` is the whole report."""

    def __init__(self, message: str, context: ConfigContext) -> None:
        super().__init__(message)
        self.context = context


@dataclass
class Loaded:
    """A configuration file's options, what the walk reported, and the file's ``-t`` digest."""

    options: ServerOptions
    context: ConfigContext
    digest: str = ""
    unserved: Unserved = field(default_factory=Unserved)

    def problem_text(self) -> str:
        """What a server refusing this file prints after ``<program>: `` (empty: it starts)."""
        context = self.context
        if context.errors:
            return context.report()
        if context.refusals:
            return "".join(line + "\n" for line in context.refusals)
        return ""


def base_options() -> ServerOptions:
    """What a file starts from: nats-server's defaults (JetStream off), on fakejs's address."""
    return ServerOptions(jetstream=False)


def apply_tree(tree: Tree, options: ServerOptions, context: ConfigContext, path: str = "") -> Unserved:
    """Set ``options`` from a parsed file, reporting to ``context``; returns the unserved listeners."""
    unserved = Unserved()
    if not tree:
        context.warnings.append(f"{path}: config has no values or is empty")
    system_account(tree, options, context)
    for key, token in tree.items():
        try:
            _apply_key(key, token, options, context, unserved)
        except Mismatch as exc:
            context.error(exc.token, exc.message)
    check_allowed_accounts(options, context)
    settle_leafnodes(options, unserved)
    context.notices.extend(notices(unserved))
    operator.preloaded_accounts(tree, options, context)
    if options.tls is not None and not _sets_auth_timeout(tree):
        options.auth_timeout = options.tls.default_auth_timeout
    return unserved


def _sets_auth_timeout(tree: Tree) -> bool:
    """Whether the file gives the login time itself (``authorization { timeout }``)."""
    for key, token in tree.items():
        if key.lower() == "authorization" and isinstance(token.value, dict):
            return any(member.lower() == "timeout" for member in token.value)
    return False


def _apply_key(key: str, token: Token, options: ServerOptions, context: ConfigContext, unserved: Unserved) -> None:
    lowered = key.lower()
    handler: Handler | None = HANDLERS.get(lowered) or operator.HANDLERS.get(lowered)
    if handler is not None:
        handler(key, token, options, context)
    elif lowered == "jetstream":
        jetstream_keys.apply(key, token, options, context)
    elif lowered in ("store_dir", "storedir"):
        jetstream_keys.store_dir(key, token, options, context)
    elif lowered == "tls":
        options.tls = tls.tls_block(token, context)
    elif lowered == "allow_non_tls":
        options.allow_non_tls = want(token, bool)
    elif lowered == "authorization":
        authorization.apply(token, options, context)
    elif lowered == "accounts":
        accounts.apply(token, options, context)
    elif lowered in ("mappings", "maps"):
        mappings.apply_global(token, options, context)
    elif lowered in ("websocket", "ws"):
        websocket.apply(token, options, context)
    elif lowered == "cluster":
        unserved.cluster = cluster.apply(token, options, context)
    elif lowered in BLOCKS or lowered in BLOCK_ALIASES:
        apply_block(BLOCK_ALIASES.get(lowered, lowered), token, options, context, unserved)
    elif lowered in REFUSED:
        context.refuse(token, f"{REFUSED[lowered]} ({key})")
    elif lowered == "no_fast_producer_stall":
        if want(token, bool):
            context.refuse(token, f"turning the fast producer stall off ({key})")
    elif lowered in IGNORED_BOOLEANS:
        want(token, bool)
    elif lowered in IGNORED_INTEGERS:
        want(token, int)
    else:
        context.unknown(key, token)


def _load(tree: Tree, path: str, base: ServerOptions | None) -> Loaded:
    options = base if base is not None else base_options()
    context = ConfigContext()
    unserved = apply_tree(tree, options, context, path)
    return Loaded(options, context, digest(tree), unserved)


def load_file(path: str, base: ServerOptions | None = None) -> Loaded:
    """Parse and map a file (``ConfigError`` for the format); the caller decides what the report means."""
    return _load(parse_file(path), path, base)


def load_text(text: str, path: str = "", base: ServerOptions | None = None) -> Loaded:
    """:func:`load_file` for text; ``path`` names it in messages and anchors includes."""
    return _load(parse(text, path), path, base)


def start_problem(options: ServerOptions, unserved: Unserved | None = None) -> str:
    """nats-server's checks when a server is created (not made by ``-t``): the first failing, or ""."""
    duration_ns = round(options.lame_duck_duration * 1e9)
    grace_ns = round(options.lame_duck_grace_period * 1e9)
    if duration_ns > 0 and grace_ns >= duration_ns:
        return (
            f"lame duck grace period ({format_duration(grace_ns)}) should be strictly lower than "
            f"lame duck duration ({format_duration(duration_ns)})"
        )
    if options.max_payload > options.max_pending:
        return f"max_payload ({options.max_payload}) cannot be higher than max_pending ({options.max_pending})"
    if " " in options.name:
        return "server name cannot contain spaces"
    problem = auth.validate(options) or operator_problem(options)
    if problem:
        return problem
    problem = listener_problems(options, unserved) if unserved is not None else ""
    if problem:
        return problem
    return system_account_problem(options)


def operator_problem(options: ServerOptions) -> str:
    """nats-server's start errors (``validateTrustedOperators``) for ``default_sentinel``
    (:func:`~fakejs.core.configfile.operator.sentinel_problem`), for ``accounts`` configured beside trusted
    operators, for a ``system_account`` no operator JWT names when some name one, for a full or
    cache resolver without a system account (in the configuration or the first operator's JWT) to ask in,
    and for a ``resolver_pinned_accounts`` entry that is not an account's public key."""
    problem = operator.sentinel_problem(options)
    if problem:
        return problem
    if options.trusted_operators and any(a.name not in options.resolver_preload for a in options.accounts):
        return "operators do not allow Accounts to be configured directly"
    if options.trusted_operators and options.system_account:
        named = [
            claims.nats.get("system_account")
            for claims in TrustedOperators.from_jwts(options.trusted_operators).operators
        ]
        if any(named) and options.system_account not in named:
            return "system_account in config and operator JWT must be identical"
    if options.trusted_operators and options.resolver_directory is not None and not options.system_account:
        first = TrustedOperators.from_jwts(options.trusted_operators[:1]).operators
        if not first or not first[0].nats.get("system_account"):
            return NO_SYSTEM_ACCOUNT_FOR_RESOLVER
    for key in options.resolver_pinned_accounts or () if options.trusted_operators else ():
        if not is_key_of(key, PREFIX_BYTE_ACCOUNT):
            return f'pinned account key "{key}" is not a valid public account nkey'
    return ""


def system_account_problem(options: ServerOptions) -> str:
    """nats-server's start error when ``system_account`` names an account that is not configured."""
    name = options.system_account
    if name and name != SYSTEM_ACCOUNT and all(account.name != name for account in options.accounts):
        return "error resolving system account: account missing"
    return ""


def options_from_config(
    text: str | None = None, path: str | None = None, *, log: Callable[[str], None] | None = None
) -> ServerOptions:
    """The options a configuration (``text``, or the file at ``path``) gives, for an in-process server.

    Raises :class:`~fakejs.conf.ConfigError` for the format and
    :class:`ConfigFileError` (with nats-server's report, or fakejs's
    refusals) for options it would not start with.  Warnings and notices go
    to ``log`` when given.  As with nats-server, JetStream is on only if the
    configuration says so, and without ``port`` the port is 4222 (write
    ``port: -1`` for a free one).
    """
    if text is None:
        if path is None:
            raise TypeError("give the configuration text or a path")
        loaded = load_file(path)
    else:
        loaded = load_text(text, path or "")
    message = loaded.problem_text() or start_problem(loaded.options, loaded.unserved)
    if message:
        raise ConfigFileError(message.rstrip("\n"), loaded.context)
    if log is not None:
        for line in loaded.context.warnings + loaded.context.notices:
            log(line)
    return loaded.options
