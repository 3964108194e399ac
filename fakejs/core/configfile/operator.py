"""Operator (JWT) mode keys: ``operator``, ``resolver`` and ``resolver_preload``, as nats-server's opts.go reads them.

``operator`` (or ``operators``, ``root``, ``roots``, ``root_operator``,
``root_operators``) is a JWT or a path to a file holding one, or a list of
them; ``resolver`` is ``MEMORY`` (or ``MEM``) or a ``{ type: full | cache }``
directory resolver (:mod:`~fakejs.core.configfile.resolver_directory`); its
``URL(...)`` form is refused by name.  ``resolver_preload`` maps account
public keys to account JWTs; ``resolver_pinned_accounts`` names the only
accounts whose users may log in; ``default_sentinel`` is the user JWT of a
client that brings none.  :func:`preloaded_accounts` turns the trusted
preloaded accounts into configured accounts once the whole file is read.
"""

from __future__ import annotations

import os

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.resolver_directory import directory_resolver
from fakejs.core.configfile.values import go_type
from fakejs.core.jwt.account_configs import account_configs, unserved_features
from fakejs.core.jwt.claims import ACCOUNT, OPERATOR, USER, JwtError, decode, decode_kind, parse_decorated_jwt
from fakejs.core.jwt.scoped import has_empty_permissions, user_scopes
from fakejs.core.jwt.trust import TrustedOperators, resolve
from fakejs.core.options import ServerOptions

MEMORY = "MEMORY"
RESOLVER_FORMS = 'should be MEM or  URL("url") or a map containing dir and type state=[FULL|CACHE])'


def _operator_jwt(text: str) -> str:
    """nats-server's ``ReadOperatorJWT``: the JWT itself, or the text of the file it names."""
    try:
        claims = decode(text.strip())
    except JwtError:
        claims = None
    if claims is not None:
        if claims.kind != OPERATOR:
            raise JwtError(f"not {OPERATOR} claim")
        return text.strip()
    try:
        with open(text, encoding="utf-8") as file:
            contents = file.read()
    except OSError as exc:
        raise JwtError(f"open {text}: {os.strerror(exc.errno or 2).lower()}") from None
    token = parse_decorated_jwt(contents)  # an operator file may be decorated as nsc writes it
    decode_kind(token, OPERATOR)
    return token.strip()


def operator(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """``operator``: one JWT (or file), or a list of them; each must be an operator's claim.

    With exactly one operator, its JWT's ``system_account`` is the server's when the
    configuration names none (``system_account`` is read before every other key).
    """
    del key
    values = token.value if isinstance(token.value, list) else [token]
    for value in values:
        if not isinstance(value.value, str):
            context.error(token, f"error parsing operators: unsupported type {go_type(value.value)}")
            return
        try:
            options.trusted_operators.append(_operator_jwt(value.value))
        except JwtError as exc:
            context.error(token, f"error parsing operator JWT: {exc}")
            return
    if len(options.trusted_operators) == 1 and not options.system_account:
        # one trusted operator names the system account unless the configuration already does
        options.system_account = decode(options.trusted_operators[0]).nats.get("system_account") or ""


def resolver(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """``resolver``: MEMORY and the full and cache directory resolvers are served; ``URL(...)`` is refused by name."""
    value = token.value
    if isinstance(value, dict):
        if not directory_resolver(token, options, context):
            context.error(token, f"error parsing account resolver, {RESOLVER_FORMS}")
    elif isinstance(value, str):
        if value.upper() in ("MEM", MEMORY):
            options.account_resolver = MEMORY
        elif value.upper().startswith("URL("):
            context.refuse(token, f"the URL account resolver ({key}; fakejs serves MEMORY, full and cache resolvers)")
        else:
            context.error(token, f"error parsing account resolver, {RESOLVER_FORMS}")
    else:
        context.error(token, f"error parsing operator resolver, wrong type {go_type(value)}")


def resolver_preload(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """``resolver_preload { <account public key>: <account JWT> }``: each value must be an account JWT."""
    del key
    if not isinstance(token.value, dict):
        context.error(token, "preload should be a map of account_public_key:account_jwt")
        return
    for name, member in token.value.items():
        if not isinstance(member.value, str):
            context.error(member, "preload map value should be a string JWT")
            continue
        try:
            decode_kind(member.value, ACCOUNT)
        except JwtError:
            context.error(member, "invalid account JWT")
            continue
        options.resolver_preload[name] = member.value


def resolver_pinned_accounts(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """``resolver_pinned_accounts``: an account public key or a list of them (checked at the start)."""
    del key
    value = token.value
    if isinstance(value, str):
        options.resolver_pinned_accounts = [value]
    elif isinstance(value, list):
        options.resolver_pinned_accounts = []
        for member in value:
            if isinstance(member.value, str):
                options.resolver_pinned_accounts.append(member.value)
            else:
                unsupported = go_type(member.value)
                context.error(
                    member, f"error parsing resolver_pinned_accounts: unsupported type in array {unsupported}"
                )
    else:
        context.error(token, f"error parsing resolver_pinned_accounts: unsupported type {go_type(value)}")


def default_sentinel(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """``default_sentinel``: a user JWT (checked at the start, :func:`sentinel_problem`)."""
    del key
    if not isinstance(token.value, str):
        context.error(token, f"interface conversion: interface {{}} is {go_type(token.value)}, not string")
        return
    options.default_sentinel = token.value


def sentinel_problem(options: ServerOptions) -> str:
    """nats-server's start errors for ``default_sentinel``: it needs operators, and must be a bearer user JWT.

    A user JWT that is not a bearer token passes when it names an ``issuer_account`` and has empty
    permissions (a user of a scoped signing key, checked at its login).
    """
    token = options.default_sentinel
    if not token:
        return ""
    if not options.trusted_operators:
        return "default sentinel requires operators and accounts"
    try:
        claims = decode_kind(token, USER)
    except JwtError:
        return "default sentinel JWT not valid"
    scoped = bool(claims.nats.get("issuer_account")) and has_empty_permissions(claims.nats)
    if not claims.nats.get("bearer_token") and not scoped:
        return "default sentinel must be a bearer token"
    return ""


HANDLERS = {
    "operator": operator,
    "operators": operator,
    "root": operator,
    "roots": operator,
    "root_operator": operator,
    "root_operators": operator,
    "resolver": resolver,
    "account_resolver": resolver,
    "accounts_resolver": resolver,
    "resolver_preload": resolver_preload,
    "resolver_pinned_accounts": resolver_pinned_accounts,
    "default_sentinel": default_sentinel,
}


def preloaded_accounts(tree: dict[str, Token], options: ServerOptions, context: ConfigContext) -> None:
    """Operator mode's start: the trusted preloaded accounts become configured accounts (named by key).

    Refused by name: operator mode without a resolver (the URL resolver), a scoped signing
    key's template with a trusted proxy, what :func:`~fakejs.core.jwt.account_configs.unserved_features`
    names, tiered limits in a cluster, and a websocket ``jwt_cookie``.  ``accounts`` beside operators is nats-server's
    start error (see :func:`~fakejs.core.configfile.load.start_problem`).
    """
    if not options.trusted_operators or context.errors:
        return
    first = next(t for k, t in tree.items() if k.lower() in HANDLERS and HANDLERS[k.lower()] is operator)
    if options.websocket is not None and options.websocket.jwt_cookie:
        block = next((t for k, t in tree.items() if k.lower() in ("websocket", "ws")), first)
        context.refuse(block, "user JWTs from a websocket cookie (websocket { jwt_cookie })")
    if not options.account_resolver:
        if not any(k.lower() in ("resolver", "account_resolver", "accounts_resolver") for k in tree):
            context.refuse(first, "operator (JWT) mode without resolver: MEMORY (the URL account resolver)")
        return
    trusted = TrustedOperators.from_jwts(options.trusted_operators)
    accounts = resolve(trusted, options.resolver_preload)
    for name, account in accounts.items():
        for scope in user_scopes(account.claims.nats).values():
            for unserved in scope.unserved():
                context.refuse(first, f"{unserved} in a scoped signing key's template (account {name})")
        for feature in unserved_features(account):
            context.refuse(first, f"{feature} (account {name} in resolver_preload)")
    configs = account_configs(accounts)
    if options.cluster is not None and any(config.tiers for config in configs):
        context.refuse(first, "tiered JetStream limits of account JWTs (tiered_limits) in a cluster")
    options.accounts.extend(configs)
