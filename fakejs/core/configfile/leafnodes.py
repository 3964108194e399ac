"""``leafnodes {}``: the leaf port's settings and the remotes, onto :class:`~fakejs.core.leaf_config.LeafConfig`.

Served: ``listen``/``host``/``port``, ``advertise``, ``no_advertise``,
``authorization { user password timeout account users }`` (a leaf without a
leaf user logs in as a client would, with the server's token or users),
``authorization { nkey }``, ``tls`` (``handshake_first`` too, without a fallback
delay on the leaf port), ``reconnect``, and remotes with ``url``/``urls``
(not WebSocket), ``account``, ``credentials``, ``nkey``, ``tls``,
``deny_imports``/``deny_exports``, ``no_randomize`` and ``hub: false``.  Everything else refuses
to start, naming the setting.
"""

from __future__ import annotations

import os
from typing import Any

from fakejs.conf import Token
from fakejs.core.auth import is_user_seed, is_valid_public_user_key
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.tls import tls_block
from fakejs.core.configfile.values import duration, go_type, want
from fakejs.core.jwt.claims import PREFIX_BYTE_ACCOUNT, is_key_of
from fakejs.core.leaf_config import LeafConfig, LeafRemote, LeafUser
from fakejs.core.options import ServerOptions
from fakejs.core.transport_config import TLSConfig
from fakejs.gocompat.gotime import NS
from fakejs.protocol.writer import go_quote

__all__ = ["leaf_accounts_problem", "leaf_member"]


def _config(options: ServerOptions) -> LeafConfig:
    if options.leafnodes is None:
        options.leafnodes = LeafConfig()
    return options.leafnodes


def leaf_member(key: str, member: Token, options: ServerOptions, context: ConfigContext) -> bool:
    """Apply one key of the block that fakejs serves; False when it is not one (refused by the caller)."""
    config = _config(options)
    lowered = key.lower()
    if lowered in ("advertise", "leafnode_advertise"):
        config.advertise = want(member, str)
    elif lowered == "no_advertise":
        config.no_advertise = bool(want(member, bool))
    elif lowered in ("reconnect", "reconnect_delay", "reconnect_interval"):
        nanos = duration(key, member, context)
        if nanos is not None:
            config.reconnect = nanos / NS
    elif lowered == "authorization":
        _authorization(member, config, context)
    elif lowered == "remotes":
        _remotes(member, config, context)
    elif lowered == "tls":
        config.tls = _tls(member, context, port=True)
    else:
        return False
    return True


def _authorization(token: Token, config: LeafConfig, context: ConfigContext) -> None:
    value: dict[str, Token] = want(token, dict)
    for key, member in value.items():
        lowered = key.lower()
        if lowered in ("user", "username"):
            config.username = want(member, str)
        elif lowered == "password":
            config.password = want(member, str)
        elif lowered == "nkey":
            config.nkey = want(member, str)
            if not is_valid_public_user_key(config.nkey):
                context.error(member, "Not a valid public nkey for leafnode authorization")
        elif lowered == "token":
            context.unknown(key, member)  # nats-server's leaf authorization has none (a token is the clients')
        elif lowered == "account":
            config.account = want(member, str)
        elif lowered == "users":
            config.users.extend(_users(member, context))
        elif lowered == "timeout":
            config.auth_timeout = (
                float(member.value) if isinstance(member.value, (int, float)) else float(want(member, int))
            )
        else:
            context.refuse(member, f"leaf node connections (leafnodes {{ authorization {{ {key} }} }})")


def _users(token: Token, context: ConfigContext) -> list[LeafUser]:
    """nats-server's ``parseLeafUsers``: each a ``user``, ``password`` and ``account``."""
    users: list[LeafUser] = []
    for item in want(token, list):
        if not isinstance(item.value, dict):
            context.error(item, f"Expected user entry to be a map/struct, got {go_type(item.value)}")
            continue
        fields: dict[str, str] = {}
        for key, member in item.value.items():
            lowered = key.lower()
            field = {"username": "user", "pass": "password"}.get(lowered, lowered)
            if field in ("user", "password", "account"):
                fields[field] = want(member, str)
            elif field == "proxy_required":
                context.refuse(member, "trusted proxies (proxy_required)")
            else:
                context.unknown(key, member)
        users.append(LeafUser(fields.get("user", ""), fields.get("password", ""), fields.get("account", "")))
    return users


def _subjects(token: Token) -> list[str]:
    value: Any = token.value
    return [want(item, str) for item in value] if isinstance(value, list) else [want(token, str)]


def _remotes(token: Token, config: LeafConfig, context: ConfigContext) -> None:
    items: list[Token] = want(token, list)
    for item in items:
        if not isinstance(item.value, dict):
            context.error(item, f"Expected remote leafnode entry to be a map/struct, got {go_type(item.value)}")
            continue
        config.remotes.append(_remote(item.value, context))


def _remote(value: dict[str, Token], context: ConfigContext) -> LeafRemote:
    remote = LeafRemote()
    for key, member in value.items():
        lowered = key.lower()
        if lowered in ("url", "urls"):
            urls: Any = member.value
            if isinstance(urls, list):
                remote.urls.extend(want(url, str) for url in urls)
            else:
                remote.urls.append(want(member, str))
            if any(url.lower().startswith(("ws://", "wss://")) for url in remote.urls):
                context.refuse(member, f"leaf node connections over WebSocket ({key})")
        elif lowered in ("account", "local"):
            remote.account = want(member, str)
        elif lowered in ("deny_imports", "deny_import"):
            remote.deny_imports.extend(_subjects(member))
        elif lowered in ("deny_exports", "deny_export"):
            remote.deny_exports.extend(_subjects(member))
        elif lowered in ("no_randomize", "dont_randomize"):
            remote.no_randomize = bool(want(member, bool))
        elif lowered in ("creds", "credentials"):
            if remote.nkey:
                context.error(member, "Remote leafnode can not have both creds and nkey defined")
                continue
            remote.credentials = os.path.expanduser(want(member, str))
        elif lowered in ("nkey", "seed"):
            seed = want(member, str)
            if not is_user_seed(seed):
                context.error(member, f"Remote leafnode nkey is not a valid seed: {go_quote(seed)}")
                continue
            if remote.credentials:
                context.error(member, "Remote leafnode can not have both creds and nkey defined")
                continue
            remote.nkey = seed
        elif lowered == "tls":
            remote.tls = _tls(member, context, port=False)
        elif lowered == "hub":
            remote.hub = bool(want(member, bool))
        else:
            context.refuse(member, f"leaf node connections (leafnodes {{ remotes [ {{ {key} }} ] }})")
    return remote


def _tls(token: Token, context: ConfigContext, port: bool) -> TLSConfig | None:
    """A ``tls {}`` of the leaf port (a certificate required) or of a remote.

    ``handshake_first`` is served: the TLS handshake before the hub's INFO.  A
    fallback delay (``auto`` or a duration) means the same on a remote, as in
    nats-server (a remote always starts the handshake); on the leaf port, where
    nats-server would take a silent leaf in plain text after the delay, it is refused.
    """
    config = tls_block(token, context, certificate_required=port)
    if config is None or not config.handshake_first_fallback:
        return config
    if port:
        context.refuse(
            token,
            "leaf node connections falling back to plain text after a delay (leafnodes { tls { handshake_first } })",
        )
        return None
    config.handshake_first_fallback = 0.0
    return config


def leaf_accounts_problem(options: ServerOptions) -> str:
    """nats-server's ``validateLeafNode`` check that the accounts bound exist; the first missing, or ""."""
    config = options.leafnodes
    if config is None:
        return ""
    if options.trusted_operators:
        return _operator_mode_problem(config)
    known = {account.name for account in options.accounts} | {"", "$G"}
    if not options.system_account:
        known.add("$SYS")
    named = [(config.account, "authorization")]
    named += [(user.account, "authorization") for user in config.users if user.account]
    named += [(remote.account, "remote") for remote in config.remotes]
    for account, where in named:
        if account not in known:
            return f"cannot find local account {go_quote(account)} specified in leafnode {where}"
    return ""


# nats-server's text for a remote whose ``account`` is not an account's public key in operator mode.
REMOTE_ACCOUNT_KEY_REQUIRED = (
    "operator mode requires account nkeys in remotes. "
    "Please add an `account` key to each remote in your `leafnodes` section, to assign it to an account. "
    "Each account value should be a 56 character public key, starting with the letter 'A'"
)


def _operator_mode_problem(config: LeafConfig) -> str:
    """``validateLeafNode`` in operator mode: no leaf users, accounts named by their public keys."""
    if config.users:
        return "operator mode does not allow specifying users in leafnode config"
    if any(not is_key_of(remote.account, PREFIX_BYTE_ACCOUNT) for remote in config.remotes):
        return REMOTE_ACCOUNT_KEY_REQUIRED
    if config.port and config.account and not is_key_of(config.account, PREFIX_BYTE_ACCOUNT):
        return "operator mode and non account nkeys are incompatible"
    return ""
