"""Authorization callouts (ADR-26): a client's login decided by a service.

With ``authorization { auth_callout {...} }`` every client whose CONNECT does
not name one of ``auth_users`` (and, when ``allowed_accounts`` is given,
whose configured login does not land in another account) is not logged in
by the configuration: :class:`AuthCallouts` publishes an authorization
request (:mod:`fakejs.core.jwt.callout`) on ``$SYS.REQ.USER.AUTH`` in the
callout's account, with a reply subject of the server's own
(``$SYS._INBOX.<8>.<8>``), and waits the login time-out for the answer, as
nats-server's ``processClientOrLeafCallout`` does.  The outcome goes to the
``done`` callback on the next turn of the loop: the account and login the
user JWT makes, or ``None`` with the warning nats-server logs (``""`` for a
time-out, which it reports in a debug line of its own).  A user placed in
the callout's account may not publish to ``$SYS.REQ.USER.AUTH``.  With
``xkey`` the request is sealed for the service's curve key (nkeys' ``xkv1``
box, the server's own curve key in the ``Nats-Server-Xkey`` header and in
``server_id``) and an answer that is not a plain JWT is opened with it.

A client without credentials that became the ``no_auth_user`` is that
user for the callout; a TLS client's request carries ``client_tls``.

In operator mode an account JWT's ``authorization { auth_users,
allowed_accounts, xkey }`` makes the account its own callout: a user JWT
that logs in to it (and is not one of ``auth_users``, user public keys)
has its login decided by the service, whose answer is signed by the
account (or one of its signing keys) and whose user JWT, issued by the
account or by one of ``allowed_accounts`` (``*``: any), or by one of
their signing keys (a scoped one's template applied), places the user in
the issuing account.  The accounts are read as the server holds them at
each login, so an account JWT pushed later changes its callout.  A user
JWT refused after its account was found is called out to ``$G``, as
nats-server does (no service answers there).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from fakejs.core.accounts import Account, Accounts
from fakejs.core.auth import PREFIX_BYTE_USER, Login
from fakejs.core.clientio import WEBSOCKET, TransportDetails
from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.connect import LoginRefusal, Outcome
from fakejs.core.jwt.callout import (
    AUTH_CALLOUT_SUBJECT,
    NONCE_SIZE,
    PREFIX_BYTE_SERVER,
    CalloutRefused,
    CalloutUser,
    Encryption,
    ExternalAuthorization,
    NkeyPair,
    encode,
    external_authorization,
    read_response,
    request_claims,
    scoped_callout_user,
    seal,
)
from fakejs.core.jwt.claims import USER, JwtError, decode_kind
from fakejs.core.jwt.trust import AccountClaims
from fakejs.core.options import NATS_VERSION, ServerOptions
from fakejs.core.users import AuthCallout, Permissions, SubjectPermission
from fakejs.gocompat import gojson, ids

REDACTED = "[REDACTED]"
# The header naming the server's curve key on an encrypted request (nats-server's AuthRequestXKeyHeader).
XKEY_HEADER = "Nats-Server-Xkey"


class CalloutHost(Protocol):
    """What a callout needs of the server (the :class:`~fakejs.core.broker.Broker`)."""

    options: ServerOptions
    accounts: Accounts
    clock: Clock
    random: random.Random
    log: logging.Logger
    server_id: str
    name: str
    xkey_private: bytes

    @property
    def xkey(self) -> str: ...

    @property
    def cluster_name(self) -> str: ...


class CalloutClient(Protocol):
    """What a callout reads of the client logging in."""

    @property
    def cid(self) -> int: ...

    @property
    def host(self) -> str: ...

    @property
    def nonce(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    @property
    def io(self) -> Any: ...


def raw_auth_user(connect: Mapping[str, Any], jwt_key: str = "") -> str:
    """nats-server's ``getRawAuthUser``: the nkey, user name, a user JWT's key, ``[REDACTED]`` for a token, or ``""``."""
    for key in ("nkey", "user"):
        value = connect.get(key)
        if isinstance(value, str) and value:
            return value
    if connect.get("jwt") and jwt_key:
        return jwt_key
    token = connect.get("auth_token")
    return REDACTED if isinstance(token, str) and token else ""


GLOBAL_ACCOUNT = "$G"


@dataclass(frozen=True)
class FailedLoginCallout(AuthCallout):
    """The callout nats-server makes for a user JWT refused after its account was found; ``told`` is that account."""

    told: str = ""


def jwt_account(token: object) -> str:
    """The account a user JWT names (``issuer_account``, else its issuer), read without checks; "" when none."""
    try:
        claims = decode_kind(token, USER) if isinstance(token, str) and token else None
    except JwtError:
        return ""
    if claims is None:
        return ""
    issuer_account = claims.nats.get("issuer_account")
    return issuer_account if isinstance(issuer_account, str) and issuer_account else claims.issuer


def issuer_key(accepted: CalloutUser, target: Account) -> str:
    """An accepted user's ``issuer_key``: the signing key of a JWT naming ``issuer_account``, else the account."""
    issuer_account = accepted.claims.nats.get("issuer_account") if accepted.claims is not None else None
    return accepted.issuer if issuer_account and accepted.issuer else target.name


def client_tls(details: TransportDetails) -> dict[str, Any] | None:
    """nats-io/jwt's ``ClientTLS`` of a TLS client: version, cipher, its certificate's verified chain; None: not TLS."""
    if not details.tls_version:
        return None
    tls: dict[str, Any] = {"version": details.tls_version, "cipher": details.tls_cipher}
    if details.tls_verified_chain:
        tls["verified_chains"] = [list(details.tls_verified_chain)]
    return tls


def as_no_auth_user(connect: Mapping[str, Any], login: Login | None) -> Mapping[str, Any]:
    """The CONNECT as nats-server sees it once a client without credentials became the ``no_auth_user``.

    (nats-server writes the user's name and password, or its nkey, into the
    client's options: the callout's request and ``auth_users`` see them.)
    """
    if login is None or not login.anonymous or login.user is None:
        return connect
    user = login.user
    if user.nkey:
        return {**connect, "nkey": user.nkey}
    return {**connect, "user": user.name, "pass": user.password}


class AuthCallouts:
    """The authorization callouts of one server: ``options.auth_callout``, or its accounts' ``authorization``.

    In operator mode ``claims`` gives the accounts the server has made (by
    public key, as the JWT logins see them, updates included): an account
    whose JWT has external authorization is its own callout, and the keys
    that may issue its users are itself and its signing keys.
    """

    def __init__(
        self,
        host: CalloutHost,
        server_key: NkeyPair,
        config: AuthCallout | None = None,
        claims: Callable[[], Mapping[str, AccountClaims]] | None = None,
    ) -> None:
        self.host = host
        self.server_key = server_key
        self.config = config
        self.claims = claims or dict

    def external(self, key: str) -> ExternalAuthorization | None:
        """The external authorization of the account ``key``'s JWT as the server holds it now, or None."""
        account = self.claims().get(key)
        if account is None:
            return None
        return external_authorization(account.claims.nats, account.signing_keys | account.scoped_keys)

    def policy(
        self, connect: Mapping[str, Any], result: tuple[Account, Login] | None, refusal: LoginRefusal | None = None
    ) -> AuthCallout | None:
        """The callout that decides this CONNECT's login after the configured one, or None (nats-server's choice).

        ``refusal`` is why an operator-mode JWT login failed (:class:`~fakejs.core.jwt.login.Refused`).
        """
        config = self.config
        if config is None:  # operator mode: a user JWT's login to an account with external authorization
            if result is None:
                return self._failed_login_policy(connect, refusal)
            if result[1].user is None:
                return None
            external, name = self.external(result[0].name), result[0].name
            if external is None or result[1].user.nkey in external.auth_users:
                return None
            return AuthCallout(name, name, external.auth_users, external.allowed_accounts, external.xkey)
        landed = result[0].name if result is not None else "$G"
        if landed != "$G" and config.allowed_accounts and landed not in config.allowed_accounts:
            return None
        shown = as_no_auth_user(connect, result[1] if result is not None else None)
        return None if raw_auth_user(shown) in config.auth_users else config

    def _failed_login_policy(self, connect: Mapping[str, Any], refusal: LoginRefusal | None) -> AuthCallout | None:
        """A user JWT refused after its account was found: a callout when the account asks for one.

        As nats-server, the request then goes to the client's account before
        any login, ``$G``, where no service answers: the client waits the
        login time-out, and the account is told of the refusal.
        """
        if refusal is None or not refusal.account_found:
            return None
        account = jwt_account(connect.get("jwt"))
        external = self.external(account)
        if external is None or raw_auth_user(connect) in external.auth_users:
            return None
        return FailedLoginCallout(GLOBAL_ACCOUNT, GLOBAL_ACCOUNT, told=account)

    @staticmethod
    def shown(connect: Mapping[str, Any], prior: Login | None) -> Mapping[str, Any]:
        """The CONNECT as the callout sees it: :func:`as_no_auth_user`."""
        return as_no_auth_user(connect, prior)

    @staticmethod
    def told_account(policy: AuthCallout) -> str:
        """The account told when ``policy`` refuses a login: the callout's, or the failed login's."""
        return policy.told if isinstance(policy, FailedLoginCallout) else policy.account

    def start(
        self,
        client: CalloutClient,
        connect: Mapping[str, Any],
        policy: AuthCallout,
        done: Callable[[Outcome], None],
        prior: Login | None = None,
    ) -> None:
        """Send the request for ``client``; ``done`` gets the outcome later (never from within this call).

        ``prior`` is the login the credentials made before the callout (an operator-mode user JWT's).
        """
        host = self.host
        connect = as_no_auth_user(connect, prior)
        account = host.accounts.get(policy.account)
        if account is None:
            warning = f"No valid account {_quoted(policy.account)} for auth callout request: account missing"
            host.log.warning("%s", warning)
            host.clock.call_soon(done, (None, ""))
            return
        user_key = NkeyPair(host.random.randbytes(32), PREFIX_BYTE_USER)
        inbox = f"$SYS._INBOX.{ids.token(host.random, ids.BASE62, 8)}.{ids.token(host.random, ids.BASE62, 8)}"
        exchange = _Exchange(self, policy, account, user_key.public_key, done)
        exchange.name_tag = prior.name_tag if prior is not None else ""
        exchange.subscription = account.router.subscribe_internal(inbox, exchange.on_reply)
        timeout = host.options.auth_timeout
        exchange.timer = host.clock.call_later(timeout, exchange.on_timeout)
        server = self.server_info(policy)
        jwt_key = prior.user.nkey if prior is not None and prior.user is not None else ""
        client_info = self.client_info(client, connect, jwt_key)
        tls = client_tls(client.io.details)
        claims = request_claims(policy.issuer, server, user_key.public_key, client_info, connect, tls)
        now = host.clock.time_ns() // 1_000_000_000
        payload = encode({**claims, "iat": now, "exp": int(now + timeout)}, self.server_key).encode()
        headers = None
        if policy.xkey:  # sealed for the service, which learns the server's key from the header
            payload = seal(payload, host.xkey_private, policy.xkey, host.random.randbytes(NONCE_SIZE))
            headers = f"NATS/1.0\r\n{XKEY_HEADER}: {host.xkey}\r\n\r\n".encode()
        account.router.publish(AUTH_CALLOUT_SUBJECT, inbox, headers, payload)

    def encryption(self, policy: AuthCallout) -> Encryption | None:
        """The keys of an encrypted callout (``xkey``), else None."""
        return Encryption(self.host.xkey_private, policy.xkey) if policy.xkey else None

    def server_info(self, policy: AuthCallout) -> dict[str, Any]:
        """nats-io/jwt's ``ServerID`` of this server."""
        host = self.host
        info: dict[str, Any] = {"name": host.name, "host": host.options.host, "id": host.server_id}
        info["version"] = NATS_VERSION
        if cluster := host.cluster_name:
            info["cluster"] = cluster
        if tags := host.options.server_tags:
            info["tags"] = list(tags)
        if policy.xkey:
            info["xkey"] = host.xkey
        return info

    @staticmethod
    def client_info(client: CalloutClient, connect: Mapping[str, Any], jwt_key: str = "") -> dict[str, Any]:
        """nats-io/jwt's ``ClientInformation`` of the client logging in (``fillClientInfo``), empty fields left out."""
        details: TransportDetails = client.io.details
        name = connect.get("name")
        info: dict[str, Any] = {
            "host": client.host,
            "id": client.cid,
            "user": raw_auth_user(connect, jwt_key),
            "name": name if isinstance(name, str) else "",
            "kind": "Client",
            "type": "websocket" if details.connection_type == WEBSOCKET else "nats",
        }
        if connect.get("sig"):
            info["nonce"] = client.nonce
        return {k: v for k, v in info.items() if v}

    def login_of(self, accepted: CalloutUser, callout_account: Account, name_tag: str) -> Outcome:
        """The account and login an accepted user JWT makes (config mode: its ``aud`` names the account).

        In operator mode the account must know the JWT's issuer (itself or one of its signing keys).
        """
        host = self.host
        user = accepted.user
        target = host.accounts.get(user.account)
        if target is None:
            return None, (
                f"No valid account {_quoted(user.account)} for auth callout response on account "
                f"{_quoted(callout_account.name)}: account missing"
            )
        if self.config is None:
            account = self.claims().get(target.name)
            if account is None or accepted.issuer not in account.signing_keys | account.scoped_keys | {target.name}:
                return None, f"User JWT issuer {_quoted(accepted.issuer)} is not known"
            if accepted.issuer in account.scoped_keys:
                try:
                    user = scoped_callout_user(accepted, account)
                except CalloutRefused as refused:
                    return None, str(refused)
        login = Login(user, True, expires=accepted.expires, name_tag=name_tag, issuer_key=issuer_key(accepted, target))
        return self.guarded((target, login)), ""

    def refusals_to(self) -> str:
        """The account told of logins refused without a callout: configuration mode's callout account.

        (nats-server: a refused login in configuration mode is reported in the callout's account.)
        """
        return self.config.account if self.config is not None else ""

    def guarded(self, result: tuple[Account, Login] | None) -> tuple[Account, Login] | None:
        """A login to a callout's account with ``$SYS.REQ.USER.AUTH`` denied to publish (``mergeDenyPermissions``).

        As nats-server, for every login a callout rules on, its ``auth_users`` included.
        """
        if result is None or result[1].user is None:
            return result
        callout_account = self.config.account if self.config is not None else ""
        if result[0].name != callout_account and (self.config is not None or self.external(result[0].name) is None):
            return result
        account, login = result
        assert login.user is not None
        user = replace(login.user, permissions=_denied_callout_subject(login.user.permissions))
        kept = (login.expires, login.name_tag, login.account_expires, login.issuer_key, login.tags)
        return account, Login(user, login.signed, login.anonymous, *kept)


class _Exchange:
    """One request under way: its reply subscription and time-out, until the first of them."""

    def __init__(
        self,
        callouts: AuthCallouts,
        policy: AuthCallout,
        account: Account,
        user_nkey: str,
        done: Callable[[Outcome], None],
    ) -> None:
        self.callouts = callouts
        self.policy = policy
        self.name_tag = ""  # the login's before the callout (an operator-mode sentinel user's name)
        self.account = account
        self.user_nkey = user_nkey
        self.done = done
        self.subscription: Any = None
        self.timer: TimerHandle | None = None
        self.finished = False

    def _finish(self, outcome: Outcome) -> None:
        self.finished = True
        if self.timer is not None:
            self.timer.cancel()
        self.account.router.unsubscribe(self.subscription)
        self.callouts.host.clock.call_soon(self.done, outcome)

    def on_reply(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        if self.finished:
            return
        callouts = self.callouts
        host = callouts.host
        try:
            accepted = read_response(
                payload,
                user_nkey=self.user_nkey,
                server_id=host.server_id,
                account=self.account.name,
                issuer=self.policy.issuer,
                now=host.clock.time_ns() / 1e9,
                encryption=callouts.encryption(self.policy),
                external=callouts.external(self.account.name) if callouts.config is None else None,
            )
        except CalloutRefused as refused:
            self._finish((None, str(refused)))
            return
        self._finish(callouts.login_of(accepted, self.account, self.name_tag))

    def on_timeout(self) -> None:
        if self.finished:
            return
        self.timer = None
        log = self.callouts.host.log
        log.debug("Authorization callout response not received in time on account %s", _quoted(self.account.name))
        self._finish((None, ""))


def _denied_callout_subject(permissions: Permissions | None) -> Permissions:
    """nats-server's ``mergeDenyPermissions(pub, $SYS.REQ.USER.AUTH)`` for a user of the callout's account."""
    permissions = permissions or Permissions()
    publish = permissions.publish or SubjectPermission()
    return replace(permissions, publish=replace(publish, deny=(*publish.deny, AUTH_CALLOUT_SUBJECT)))


def _quoted(text: str) -> str:
    return gojson.dumps(text)


def callout_server_key(rng: random.Random) -> NkeyPair:
    """The server's own nkey (``s.kp``): its public key is the server id that callouts are answered for."""
    return NkeyPair(rng.randbytes(32), PREFIX_BYTE_SERVER)


def operator_callouts(
    host: CalloutHost, server_key: NkeyPair, claims: Callable[[], Mapping[str, AccountClaims]]
) -> AuthCallouts:
    """The callouts of an operator-mode server: those of its accounts (``AccountClaims``) whose JWTs ask for one.

    ``claims`` gives the accounts as the server holds them at each login: an
    account JWT updated later adds, changes or removes its callout.
    """
    return AuthCallouts(host, server_key, claims=claims)
