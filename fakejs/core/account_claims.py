"""An operator-mode server's accounts following their JWTs: looked up on demand, updated and deleted live.

:class:`ResolvedAccounts` is the account resolver of a running server in
operator mode.  With a full or cache resolver its JWTs live in a directory
(:class:`~fakejs.core.jwt.directory.DirectoryStore`), where the preloaded
ones are stored at the start; a user of an account the server has not
made yet logs in once the directory holds a trusted JWT for it (the accounts
its imports name are made with it when the directory holds them); when it
does not, the login waits while the cluster's other servers are asked
(:mod:`fakejs.core.account_fetch`).  A new JWT
for an account in use is applied as nats-server's ``UpdateAccountClaims``:
the accounts are configured again through
:func:`~fakejs.core.account_reload.reconfigure_accounts` (the one way
accounts change on a running server), then each of the account's clients,
oldest first, is closed when it is beyond the new ``conn`` limit
(``maximum account active connections exceeded``), takes on the new
``subs`` and ``payload`` limits and the new ``exp`` (its account's expiry
moves, or goes), and is closed when the JWT revokes its user (``User
Authentication Revoked``).  A deleted account's clients are
told their account expired and closed (``removeCb``).  The accounts'
JetStream follows (started, given new limits, stopped) through
:attr:`ResolvedAccounts.follow_jetstream`, which the running server sets;
where it does not (a cluster), the server says so in an error line, as it does for
what :func:`~fakejs.core.jwt.account_configs.unserved_features` names.  Every
account made from a JWT is configured again at each change, so imports of a
new or changed exporter are wired as at the start.  A reload keeps the
accounts looked up since the start (:func:`keep_resolved_accounts`,
:func:`carry_over_logins`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fakejs.core.account_fetch import AccountFetch, ClusterFetch
from fakejs.core.account_reload import reconfigure_accounts
from fakejs.core.clientio import AUTH_EXPIRED, MAX_ACCOUNT_CONNECTIONS_EXCEEDED
from fakejs.core.clock import TimerHandle
from fakejs.core.connect import ERR_MAX_ACCOUNT_CONNECTIONS, follow_account_expiry, limit_payload
from fakejs.core.jetstream_limits import NO_LIMIT
from fakejs.core.jwt.account_configs import account_configs, unserved_features
from fakejs.core.jwt.account_validation import invalid
from fakejs.core.jwt.claims import ACCOUNT, USER, Claims, JwtError, decode_kind
from fakejs.core.jwt.directory import DirectoryStore, StoreError
from fakejs.core.jwt.login import Refused
from fakejs.core.jwt.trust import AccountClaims, TrustedOperators, claim_limit
from fakejs.core.options import SYSTEM_ACCOUNT
from fakejs.core.sublimits import apply_limits, tighter
from fakejs.gocompat.gotime import format_duration

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.core.jwt.login import JwtAuthenticator
    from fakejs.core.options import ServerOptions
    from fakejs.core.resolver_directory import ResolverDirectory
    from fakejs.core.session import ClientSession

ERR_REVOKED = "User Authentication Revoked"
CREDENTIALS_REVOKED = "Credentials Revoked"  # nats-server's Revocation close reason
ERR_ACCOUNT_EXPIRED = "Account Authentication Expired"
ACCOUNT_VALIDATION_FAILED = "account validation failed"  # nats-server's ErrAccountValidation
ACCOUNT_MISSING = "account missing"  # nats-server's ErrMissingAccount
EXPIRY_CHECK = 60.0
LATE_JETSTREAM = (
    "JetStream of an account made or changed after the start in a cluster ({}): not supported by fakejs yet"
)


class ResolvedAccounts:
    """The accounts of a server in operator mode, following the JWTs its resolver is given."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        options = broker.options
        self.trusted = TrustedOperators.from_jwts(options.trusted_operators)
        # What makes the accounts' JetStream follow their JWTs (set by the running server; None: not followed).
        self.follow_jetstream: Callable[[], None] | None = None
        # The JWT each account was made from (nats-server's ``claimJWT``: the same one again changes nothing).
        self._tokens = {key: token for key, token in options.resolver_preload.items() if key in self.claims}
        settings = options.resolver_directory
        self.store: DirectoryStore | None = None
        self._expiry_timer: TimerHandle | None = None
        # nats-server checks for expired JWTs every ttl / 2, at most every minute.
        self.expiry_check = EXPIRY_CHECK
        if settings is not None:
            evict = settings.kind == "CACHE"  # a cache forgets the least used JWT
            deletes = _delete_mode(settings)
            self.store = DirectoryStore(settings.directory, settings.limit, evict, deletes, settings.ttl, self._now)
            for key, token in options.resolver_preload.items():
                self.store.save_if_newer(key, token)
            if settings.ttl:
                self.expiry_check = min(settings.ttl / 2, EXPIRY_CHECK)
            self._expiry_timer = broker.clock.call_later(self.expiry_check, self._expire)
        if broker.jwt_logins is not None:
            broker.jwt_logins.lookup = self.lookup
        # Accounts asked of the other servers (needs the system account to ask in).
        self.fetch: ClusterFetch | None = None
        system = broker.accounts.get(options.system_account or SYSTEM_ACCOUNT)
        if settings is not None and system is not None:
            self.fetch = ClusterFetch(
                system,
                broker.clock,
                broker.random,
                broker.log,
                settings.timeout,
                self._store_fetched,
                self._servers,
                broker.name,
            )

    def _now(self) -> float:
        return self.broker.clock.time_ns() / 1e9

    def _expire(self) -> None:
        """The directory's expired JWTs removed (the accounts made from them stay, as on nats-server)."""
        if self.store is not None:
            self.store.expire()
            self._expiry_timer = self.broker.clock.call_later(self.expiry_check, self._expire)

    def stop(self) -> None:
        """No more expiry checks (the server stops)."""
        if self._expiry_timer is not None:
            self._expiry_timer.cancel()
            self._expiry_timer = None
        if self.fetch is not None:
            self.fetch.stop()

    @property
    def claims(self) -> dict[str, AccountClaims]:
        """The accounts the server has made, by public key (what logins are checked against)."""
        return self.broker.jwt_logins.accounts if self.broker.jwt_logins is not None else {}

    def verify(self, token: str) -> AccountClaims:
        """nats-server's ``verifyAccountClaims``: a valid account JWT a trusted operator issued (:class:`JwtError`)."""
        claims = decode_kind(token, ACCOUNT)
        if not self.trusted.issued(claims) or invalid(claims):
            raise JwtError(ACCOUNT_VALIDATION_FAILED)
        return AccountClaims.from_claims(claims)

    def lookup(self, key: str) -> AccountClaims | None:
        """An account not made yet, from the directory: made now when its JWT is there and trusted.

        A JWT the directory does not hold is asked of the cluster first (:class:`AccountFetch`);
        the login tried again after a failed fetch is refused with the reason.
        """
        fetch = self.fetch
        outcome = fetch.outcomes.get(key) if fetch is not None else None
        if outcome:
            raise Refused(f"Account JWT lookup error: {outcome}")
        started = self.broker.clock.monotonic()
        token = self.store.load(key) if self.store is not None else None
        if token is None and fetch is not None and outcome is None:
            raise AccountFetch(key, fetch)
        if outcome is None:  # (a fetch from the cluster said so already)
            took = int((self.broker.clock.monotonic() - started) * 1e9)
            self.broker.log.debug("Account [%s] fetch took %s", key, format_duration(took))
        if token is None:
            self.broker.log.warning("Account fetch failed: %s", ACCOUNT_MISSING)
            return None
        try:
            claims = self.verify(token)
        except JwtError as exc:  # nats-server's fetchAccountClaims error
            raise Refused(f"Account JWT lookup error: {exc}") from None
        if claims.public_key != key:
            raise Refused(f"Account JWT lookup error: {ACCOUNT_VALIDATION_FAILED}")
        self._configure(key, claims)
        self._tokens[key] = token
        for exporter_key in _exporter_keys(claims):  # nats-server fetches an import's account too
            if not self.loaded(exporter_key):
                self.lookup(exporter_key)
        return claims

    def _store_fetched(self, key: str, token: str) -> str:
        """A JWT another server answered with, kept unless the directory holds a newer one ("" or why not)."""
        assert self.store is not None
        try:
            self.store.save_if_newer(key, token)
        except StoreError as exc:
            return str(exc)
        return ""

    def _servers(self) -> int:
        """The other servers connected by a route (nats-server's count of the servers it knows)."""
        cluster = self.broker.cluster
        if cluster is None:
            return 0
        return sum(1 for peer in cluster.peers.values() if any(True for _ in peer.live_links()))

    def loaded(self, key: str) -> bool:
        """Whether the server has made the account (nats-server's ``s.accounts.Load``)."""
        return key in self.claims

    def apply(self, key: str, token: str) -> None:
        """A new JWT for an account in use, applied to it and its clients (:class:`JwtError` when untrusted)."""
        claims = self.verify(token)
        if claims.public_key != key:
            raise JwtError(ACCOUNT_VALIDATION_FAILED)
        previous = self.claims.get(key)
        if self._tokens.get(key) == token:
            self.broker.log.debug("Requested account update for [%s], same claims detected", key)
            return
        self.broker.log.debug("Updating account claims: %s/%s", key, claims.claims.name)
        if previous is not None and previous.jetstream() != claims.jetstream() and self.follow_jetstream is None:
            self.broker.log.error("%s", LATE_JETSTREAM.format(key))
        self._configure(key, claims)
        self._tokens[key] = token
        self._recheck_clients(key, claims)

    def remove(self, key: str) -> None:
        """A deleted account: its clients are told it expired and closed, and it is taken out."""
        if key not in self.claims:
            return
        broker = self.broker
        broker.log.debug("Disable account %s due to remove", key)
        for client in self._clients(key):
            broker.log.debug("%s - %s", client, ERR_ACCOUNT_EXPIRED)
            client.refuse(ERR_ACCOUNT_EXPIRED, AUTH_EXPIRED)
        del self.claims[key]
        kept = [config for config in broker.options.accounts if config.name != key and config.name not in self.claims]
        broker.options.accounts = kept + account_configs(self.claims)
        reconfigure_accounts(broker)
        if self.follow_jetstream is not None:
            self.follow_jetstream()

    def _configure(self, key: str, claims: AccountClaims) -> None:
        """The account (new or changed) configured as its JWT says, through the accounts' reconfiguration."""
        broker = self.broker
        options = broker.options
        is_new = key not in self.claims
        self.claims[key] = claims
        for feature in unserved_features(claims):
            broker.log.error("%s", f"{feature} (account {key}): not supported by fakejs yet")
        # Every JWT account made again: another's imports of this one's exports follow it too.
        kept = [config for config in options.accounts if config.name not in self.claims]
        options.accounts = kept + account_configs(self.claims)
        reconfigure_accounts(broker)
        if self.follow_jetstream is not None:
            self.follow_jetstream()
        elif is_new and claims.jetstream() is not None and broker.jetstream_enabled:
            broker.log.error("%s", LATE_JETSTREAM.format(key))

    def _clients(self, key: str) -> list[ClientSession]:
        account = self.broker.accounts.get(key)
        return [c for c in self.broker.clients.values() if c.account is account and not c.closed]

    def _recheck_clients(self, key: str, claims: AccountClaims) -> None:
        """nats-server's walk of the account's clients after an update, oldest first."""
        broker = self.broker
        count = 0
        for client in self._clients(key):
            if claims.max_connections != NO_LIMIT and count >= claims.max_connections:
                broker.log.error("%s - %s", client, ERR_MAX_ACCOUNT_CONNECTIONS)
                client.refuse(ERR_MAX_ACCOUNT_CONNECTIONS, MAX_ACCOUNT_CONNECTIONS_EXCEEDED)
                continue
            count += 1
            user = _user_claims(client)
            if user is not None and claims.revoked(user.subject, user.issued_at):
                broker.log.debug("%s - %s", client, ERR_REVOKED)
                client.refuse(ERR_REVOKED, CREDENTIALS_REVOKED)
                continue
            user_limits = user.nats if user is not None else {}
            payload = tighter(claim_limit(user_limits, "payload"), claim_limit(claims.limits, "payload"))
            limit_payload(client, broker.options, broker.log, payload)
            apply_limits(client, broker.options, broker.clock, broker.log, claim_limit(user_limits, "subs"))
            follow_account_expiry(client, claims.claims.expires)


def _delete_mode(settings: ResolverDirectory) -> str:
    """How the directory deletes: a cache removes files, a full resolver only with ``allow_delete``."""
    if settings.kind == "CACHE" or (settings.allow_delete and settings.hard_delete):
        return "hard"
    return "rename" if settings.allow_delete else ""


def keep_resolved_accounts(broker: Broker, new: ServerOptions) -> None:
    """A reload keeps the accounts the resolver made after the start (nats-server's resolver keeps them too)."""
    logins = broker.jwt_logins
    if logins is None or not new.trusted_operators:
        return
    named = {config.name for config in new.accounts}
    kept = [c for c in broker.options.accounts if c.name in logins.accounts and c.name not in named]
    new.accounts = [*new.accounts, *kept]


def carry_over_logins(previous: JwtAuthenticator | None, current: JwtAuthenticator | None) -> None:
    """The JWT checks made again by a reload keep the accounts looked up since the start, and the lookup."""
    if previous is None or current is None:
        return
    current.lookup = previous.lookup
    current.pinned_failures = previous.pinned_failures
    for key, claims in previous.accounts.items():
        current.accounts.setdefault(key, claims)


def _user_claims(client: ClientSession) -> Claims | None:
    """The user JWT the client logged in with."""
    token = client.opts.get("jwt")
    if not isinstance(token, str):
        return None
    try:
        return decode_kind(token, USER)
    except JwtError:
        return None


def _exporter_keys(account: AccountClaims) -> list[str]:
    """The accounts the account JWT's imports name, in its order."""
    imports = account.claims.nats.get("imports")
    entries = imports if isinstance(imports, list) else []
    return [i["account"] for i in entries if isinstance(i, dict) and isinstance(i.get("account"), str)]
