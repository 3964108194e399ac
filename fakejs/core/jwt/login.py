"""A client's login in operator mode: the user JWT of its CONNECT checked against the trusted accounts.

:class:`JwtAuthenticator` follows the JWT branch of nats-server's
``processClientOrLeafAuthentication``: the CONNECT's ``jwt`` must be a
user claim, valid now (``exp``, ``nbf``), issued by a trusted account or
by one of its signing keys (then naming the account in
``issuer_account``); the account itself must not have expired; unless the
JWT is a ``bearer_token`` (which the account's ``disallow_bearer``
refuses) the CONNECT's ``sig`` must be the nonce signed with the user's
key; the user must not be revoked, must connect from one of its ``src``
networks, inside its connect ``times`` (:mod:`fakejs.core.jwt.times`) and
with one of its ``allowed_connection_types``.
Each refusal's reason is nats-server's debug line for it (``Refused``; ``Bad
src Ip`` and ``Outside connect times`` are error lines, ``RefusedWithError``), the checks in its order.
A refusal also says whether it came once the user's account was found
(``account_found``): nats-server still calls out to such an account's
authorization service (:mod:`fakejs.core.callout`).
A login becomes a :class:`~fakejs.core.users.User` in the account (named by
its public key) with the JWT's permissions (or, without any, the account's
``default_permissions``) and its ``subs`` and ``payload``
limits (the latter lowered by the account's), and the time it expires.
A user issued by one of the account's scoped signing keys gets the key's
template in place of its own permissions and limits (see
:mod:`fakejs.core.jwt.scoped`).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fakejs.core.auth import verify_signature
from fakejs.core.jwt.claims import PREFIX_BYTE_ACCOUNT, USER, Claims, JwtError, decode_kind, is_key_of
from fakejs.core.jwt.scoped import ScopeError, scoped_user, user_scopes
from fakejs.core.jwt.times import connect_window
from fakejs.core.jwt.trust import AccountClaims, TrustedOperators, claim_limit, resolve
from fakejs.core.jwt.user_validation import sources, user_issues
from fakejs.core.options import ServerOptions
from fakejs.core.sublimits import tighter
from fakejs.core.users import Permissions, ResponsePermission, SubjectPermission, User

NANOSECONDS = 1_000_000_000


@dataclass(frozen=True)
class JwtLogin:
    """An accepted user JWT: the user (in its account) and when the login expires (Unix seconds, 0: never).

    ``issuer_key``: the JWT's issuer (the account or one of its signing keys); ``tags``: the JWT's tags.
    """

    user: User
    expires: int = 0
    # The account JWT's ``exp``: its clients are closed then ('Account Authentication Expired'); 0: never.
    account_expires: int = 0
    issuer_key: str = ""
    tags: tuple[str, ...] = ()


class Refused(Exception):
    """A CONNECT the JWT checks refuse; ``str()`` is the reason nats-server gives in its debug line.

    ``account_found``: the refusal came after the user's account was found
    (the checks of the account, the issuer, the signature, ...); False for
    the user JWT's own checks and the account's lookup.
    """

    error_line = False

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.account_found = False


class RefusedWithError(Refused):
    """A refusal nats-server gives its reason for in an error line, not a debug one (``Bad src Ip``)."""

    error_line = True


def _is_base64(signature: str) -> bool:
    """nats-server reads a CONNECT's ``sig`` as base64url without padding, else as standard base64."""
    for alphabet, padded in ((b"-_", False), (b"+/", True)):
        try:
            text = signature if padded else signature + "=" * (-len(signature) % 4)
            if not padded and "=" in signature:
                continue
            base64.b64decode(text, altchars=alphabet, validate=True)
            return True
        except (binascii.Error, ValueError):
            continue
    return False


def _strings(value: object) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _subject_permission(value: object) -> SubjectPermission | None:
    if not isinstance(value, dict):
        return None
    allow, deny = _strings(value.get("allow")), _strings(value.get("deny"))
    return SubjectPermission(allow, deny) if allow or deny else None


def permissions(nats: Mapping[str, Any]) -> Permissions | None:
    """A user claim's ``pub``, ``sub`` and ``resp`` as fakejs permissions (None: unrestricted)."""
    publish, subscribe = _subject_permission(nats.get("pub")), _subject_permission(nats.get("sub"))
    resp = nats.get("resp")
    response = None
    if isinstance(resp, dict):
        response = ResponsePermission(int(resp.get("max", 0)), int(resp.get("ttl", 0)) / NANOSECONDS)
    if publish is None and subscribe is None and response is None:
        return None
    return Permissions(publish, subscribe, response)


def default_permissions(account: AccountClaims) -> Permissions | None:
    """The account JWT's ``default_permissions``: a user JWT without permissions of its own gets them."""
    defaults = account.claims.nats.get("default_permissions")
    return permissions(defaults) if isinstance(defaults, dict) else None


def source_allowed(sources: tuple[str, ...], host: str) -> bool:
    """nats-server's ``validateSrc``: no ``src`` allows every address, else one network must hold ``host``."""
    if not sources:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in sources:
        for network in entry.split(","):
            try:
                if address in ipaddress.ip_network(network.strip(), strict=False):
                    return True
            except ValueError:
                continue
    return False


class JwtAuthenticator:
    """The user JWT checks of one server in operator mode, over the accounts its resolver holds."""

    def __init__(self, accounts: Mapping[str, AccountClaims], pinned: frozenset[str] | None = None) -> None:
        self.accounts = dict(accounts)
        # ``resolver_pinned_accounts`` (with the system account): the only accounts users log in to; None: any.
        self.pinned = pinned
        # ``default_sentinel``: the user JWT of a client that brings no valid one ("": none).
        self.sentinel = ""
        # Logins refused for an account not pinned (nats-server's ``pinnedAccFail``, /varz ``pinned_account_fails``).
        self.pinned_failures = 0
        # An account not made yet, asked of the server's resolver (a full or cache resolver's directory).
        self.lookup: Callable[[str], AccountClaims | None] = lambda key: None

    def login(self, connect: Mapping[str, Any], nonce: bytes, host: str, connection_type: str, now: float) -> JwtLogin:
        """The login the CONNECT's ``jwt`` and ``sig`` make; :class:`Refused` with the reason otherwise.

        The checks come in nats-server's order, each refusal with its debug line.
        A CONNECT without a valid user JWT logs in with the ``default_sentinel``, if any.
        """
        claims = self._claims(self._token(connect), now)
        account = self._issuing_account(claims)
        try:
            return self._account_login(connect, nonce, host, connection_type, now, claims, account)
        except Refused as refused:
            refused.account_found = True
            raise

    def _account_login(
        self,
        connect: Mapping[str, Any],
        nonce: bytes,
        host: str,
        connection_type: str,
        now: float,
        claims: Claims,
        account: AccountClaims,
    ) -> JwtLogin:
        """The checks once the user's account is found (nats-server's ``LookupAccount``), in its order."""
        self._check_issuer(claims, account)
        nats = self._scoped(account, claims) if claims.issuer in account.scoped_keys else claims.nats
        if account.claims.time_problem(now):
            raise Refused("Account JWT has expired")
        if nats.get("bearer_token") and account.limits.get("disallow_bearer"):
            raise Refused("Account does not allow bearer tokens")
        types = tuple(t.upper() for t in _strings(nats.get("allowed_connection_types")))
        if types and connection_type not in types:
            raise Refused("Connection type not allowed")
        if not nats.get("bearer_token"):
            self._check_signature(connect, nonce, claims.subject)
        if account.revoked(claims.subject, claims.issued_at):
            raise Refused("User authentication revoked")
        if not source_allowed(tuple(sources(nats.get("src"))), host):
            raise RefusedWithError(f"Bad src Ip {host}")
        allowed_now, valid_for = connect_window(nats, now)
        if not allowed_now:
            raise RefusedWithError("Outside connect times")
        user = User(
            name=claims.name,
            nkey=claims.subject,
            permissions=permissions(nats) or default_permissions(account),
            account=account.public_key,
            connection_types=types,
            max_subscriptions=claim_limit(nats, "subs"),
            max_payload=tighter(claim_limit(nats, "payload"), claim_limit(account.limits, "payload")),
        )
        window_end = round(now + valid_for) if valid_for else 0  # a range ends on a whole second
        expires = min((t for t in (claims.expires, window_end) if t), default=0)
        return JwtLogin(user, expires, account.claims.expires, claims.issuer, _strings(claims.nats.get("tags")))

    def _token(self, connect: Mapping[str, Any]) -> object:
        """The CONNECT's ``jwt``, or the ``default_sentinel`` when it is no user JWT (then the client's, as on nats-server)."""
        token = connect.get("jwt")
        if not self.sentinel:
            return token
        try:
            decode_kind(token, USER) if isinstance(token, str) else None
        except JwtError:
            token = None
        if isinstance(token, str) and token:
            return token
        if isinstance(connect, dict):  # the client's options hold the sentinel from now on (``c.opts.JWT``)
            connect["jwt"] = self.sentinel
        return self.sentinel

    @staticmethod
    def _claims(token: object, now: float) -> Claims:
        """The CONNECT's user JWT decoded and valid now (nats-io/jwt's ``Validate``: times, subjects, networks)."""
        try:
            claims = decode_kind(token, USER) if isinstance(token, str) and token else None
        except JwtError:
            claims = None
        if claims is None:
            raise Refused("Authentication requires a user JWT")
        if claims.nats.get("proxy_required"):
            raise Refused("proxy connection required")
        issues = [*claims.time_problems(now), *user_issues(claims.nats)]
        if issues:
            raise Refused(f"User JWT no longer valid: &{{Issues:[{' '.join(issues)}]}}")
        return claims

    def _issuing_account(self, claims: Claims) -> AccountClaims:
        """The account the user JWT names (``issuer_account``, else its issuer), made or looked up."""
        issuer_account = claims.nats.get("issuer_account")
        key = issuer_account if isinstance(issuer_account, str) and issuer_account else claims.issuer
        if not is_key_of(key, PREFIX_BYTE_ACCOUNT):
            raise Refused("User JWT issuer is not an account")
        if self.pinned is not None and key not in self.pinned:
            self.pinned_failures += 1
            raise Refused(f"Account {key} not listed as operator pinned account")
        account = self.accounts.get(key) or self.lookup(key)
        if account is None:
            raise Refused("Account JWT lookup error: account missing")
        return account

    @staticmethod
    def _check_issuer(claims: Claims, account: AccountClaims) -> None:
        """The user's issuer must be the account or one of its signing keys (scoped ones included)."""
        if claims.issuer != account.public_key and claims.issuer not in account.signing_keys | account.scoped_keys:
            raise Refused("User JWT issuer is not known")

    @staticmethod
    def _scoped(account: AccountClaims, claims: Claims) -> dict[str, Any]:
        """The user claim with the template of the scoped signing key that issued it."""
        scope = user_scopes(account.claims.nats).get(claims.issuer)
        if scope is None:
            raise Refused("User JWT is not valid")
        try:
            return scoped_user(scope, claims, account.claims)
        except ScopeError as exc:
            raise Refused(str(exc)) from None

    @staticmethod
    def _check_signature(connect: Mapping[str, Any], nonce: bytes, user_key: str) -> None:
        signature = connect.get("sig")
        if not isinstance(signature, str) or not signature:
            raise Refused("Signature missing")
        if not _is_base64(signature):
            raise Refused("Signature not valid base64")
        if not verify_signature(user_key, nonce, signature):
            raise Refused("Signature not verified")


def jwt_logins(options: ServerOptions) -> JwtAuthenticator | None:
    """The JWT checks of a server in operator mode (trusted operators configured), else None."""
    if not options.trusted_operators:
        return None
    trusted = TrustedOperators.from_jwts(options.trusted_operators)
    pinned = options.resolver_pinned_accounts
    if pinned and options.system_account:  # the system account's users always log in
        pinned = [*pinned, options.system_account]
    logins = JwtAuthenticator(resolve(trusted, options.resolver_preload), None if pinned is None else frozenset(pinned))
    logins.sentinel = options.default_sentinel
    return logins
