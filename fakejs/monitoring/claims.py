"""The account resolver's requests in the system account, answered as nats-server 2.15.1 does.

With a full resolver (``resolver { type: full }``, nats-server's
``DirAccResolver``) the server answers:

* ``$SYS.REQ.ACCOUNT.<account>.CLAIMS.UPDATE`` (and the older
  ``$SYS.ACCOUNT.<account>.CLAIMS.UPDATE``) and ``$SYS.REQ.CLAIMS.UPDATE``:
  the account JWT is stored in the directory (``jwt updated``; one nats-io/jwt
  finds invalid is refused, ``jwt validation failed``), and applied
  to the account when the server made it
  (:class:`~fakejs.core.account_claims.ResolvedAccounts`);
* ``$SYS.REQ.ACCOUNT.<account>.CLAIMS.LOOKUP``: the stored JWT itself, or
  an empty message when there is none;
* ``$SYS.REQ.CLAIMS.LIST``: the keys of the stored JWTs;
* ``$SYS.REQ.CLAIMS.DELETE``: a generic JWT the operator signed, listing
  ``accounts`` to delete (only with ``allow_delete``);
* ``$SYS.REQ.CLAIMS.PACK`` (in the ``responder`` queue group: one full
  resolver of a cluster answers): the stored JWTs, one ``<key>|<jwt>``
  message each and an empty one to end, unless the request carries the
  same hash; the server sends one itself every ``interval`` and merges
  the answers (:mod:`fakejs.monitoring.claims_pack`).

A cache resolver (``type: cache``) answers the updates (``jwt updated
cache`` for an account in use, ``jwt update cache skipped`` otherwise),
LIST and DELETE.  With a MEMORY resolver, or without operator mode, the
account update subjects apply a JWT to an account in use, as nats-server's
``accountClaimUpdate``.  Replies are nats-server's
``ServerAPIClaimUpdateResponse``: ``{"server": ..., "data": {"account",
"code": 200, "message"}}`` or ``"error": {"account", "code": 500,
"description"}``, with its log lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.core.accounts import Account
from fakejs.core.jwt.account_validation import account_issues
from fakejs.core.jwt.claims import (
    ACCOUNT,
    PREFIX_BYTE_ACCOUNT,
    Claims,
    JwtError,
    decode_generic,
    decode_kind,
    is_key_of,
)
from fakejs.core.jwt.directory import StoreError
from fakejs.core.router import InternalHandler, Subscription
from fakejs.gocompat import gojson
from fakejs.monitoring.claims_pack import PackSync, directory_hash
from fakejs.protocol.writer import go_quote

if TYPE_CHECKING:
    from fakejs.core.account_claims import ResolvedAccounts
    from fakejs.core.broker import Broker
    from fakejs.core.sysevents import SystemEvents

CLAIMS_UPDATE = "$SYS.REQ.CLAIMS.UPDATE"
LOOKUP = "$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP"
LIST = "$SYS.REQ.CLAIMS.LIST"
DELETE = "$SYS.REQ.CLAIMS.DELETE"
PACK = "$SYS.REQ.CLAIMS.PACK"
PACK_QUEUE = "responder"  # one full resolver of the cluster answers a pack request
NOT_APPLICABLE = "n/a"


class UpdateError(Exception):
    """An update answered with an error: the message, the account named, and why."""

    def __init__(self, message: str, account: str, reason: str) -> None:
        super().__init__(reason)
        self.message, self.account = message, account


def _validate(claims: Claims, suffix: str) -> None:
    """nats-server's ``claimValidate``: an update nats-io/jwt finds invalid (its times aside) is refused."""
    errors = [issue.text for issue in account_issues(claims) if issue.blocking]
    if errors:
        message = "jwt update cache validation failed" if suffix else "jwt validation failed"
        raise UpdateError(message, claims.subject, f"validation errors: [{' '.join(errors)}]")


def _account_key(subject: str) -> str:
    """The account an update subject names (``$SYS.REQ.ACCOUNT.<acc>...`` or ``$SYS.ACCOUNT.<acc>...``)."""
    tokens = subject.split(".")
    return tokens[3] if len(tokens) == 6 else tokens[2]


class ClaimsRequests:
    """The resolver's subscriptions in the system account, for one running server.

    ``updates`` are the account update subjects it listens on; with none (out of operator mode)
    their owner (:class:`~fakejs.monitoring.resolver.AccountResolver`) hands each update to
    :meth:`on_memory_update`.
    """

    def __init__(
        self, broker: Broker, events: SystemEvents, resolved: ResolvedAccounts, updates: tuple[str, ...]
    ) -> None:
        self.broker, self.events, self.resolved = broker, events, resolved
        self.account: Account | None = events.account
        self._subs: list[Subscription] = []
        self.sync: PackSync | None = None
        if self.account is None:
            return
        kind = broker.options.resolver_directory.kind if broker.options.resolver_directory is not None else ""
        handlers: list[tuple[str, InternalHandler]] = []
        if kind:
            handlers += [(subject, self._on_account_update) for subject in updates]
            handlers += [(CLAIMS_UPDATE, self._on_update), (LIST, self._on_list), (DELETE, self._on_delete)]
            if kind == "FULL":
                handlers.append((LOOKUP, self._on_lookup))
        else:
            handlers += [(subject, self.on_memory_update) for subject in updates]
        router = self.account.router
        for subject, handler in handlers:
            self._subs.append(router.subscribe_internal(subject, handler))
        settings, store = broker.options.resolver_directory, resolved.store
        if kind == "FULL" and settings is not None and store is not None:
            self._subs.append(router.subscribe_internal(PACK, self._on_pack, queue=PACK_QUEUE))
            interval = settings.interval
            self.sync = PackSync(
                self.account, store, broker.clock, broker.random, broker.log, interval, self._apply, broker.name
            )

    def stop(self) -> None:
        self.resolved.stop()
        if self.sync is not None:
            self.sync.stop()
        if self.account is not None:
            for sub in self._subs:
                self.account.router.unsubscribe(sub)
        self._subs.clear()

    # -- replies ---------------------------------------------------------------------

    def _publish(self, reply: str, payload: bytes) -> None:
        if reply and self.account is not None:
            self.account.router.publish(reply, "", None, payload)

    def _respond(self, reply: str, account: str, message: str, error: str = "") -> None:
        """nats-server's ``respondToUpdate``: the log line, then the reply (when asked for)."""
        log = self.broker.log
        if not error:
            log.debug("%s - %s", message, account) if account else log.debug("%s", message)
        else:
            log.error("%s - %s - %s", message, account, error) if account else log.error("%s - %s", message, error)
        if not reply:
            return
        response: dict[str, Any] = {"server": self.events.server_info()}
        body: dict[str, Any] = {"account": account} if account else {}
        if error:
            response["error"] = {**body, "code": 500, "description": f"{message} - {error}"}
        else:
            response["data"] = {**body, "code": 200, "message": message}
        self._publish(reply, gojson.dumps(response).encode())

    # -- updates ---------------------------------------------------------------------

    @property
    def _cache(self) -> bool:
        settings = self.broker.options.resolver_directory
        return settings is not None and settings.kind == "CACHE"

    def _on_account_update(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        self._update(reply, payload, _account_key(subject))

    def _on_update(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        self._update(reply, payload, None)

    def _update(self, reply: str, payload: bytes, named: str | None) -> None:
        """A full or cache resolver's update: checked, stored, applied to the account if in use."""
        suffix = " cache" if self._cache else ""
        try:
            key, stored = self._store(payload, named, suffix)
        except UpdateError as exc:
            self._respond(reply, exc.account, exc.message, str(exc))
            return
        if not stored:
            self._respond(reply, key, f"jwt update{suffix} skipped")
            return
        self._respond(reply, key, "jwt updated cache" if suffix else "jwt updated")

    def _store(self, payload: bytes, named: str | None, suffix: str) -> tuple[str, bool]:
        """The key the JWT is for and whether it was stored (a cache skips accounts not in use)."""
        failed = f"jwt update{suffix} resulted in error"
        try:
            claims = decode_kind(payload.decode(errors="replace"), ACCOUNT)
        except JwtError as exc:
            raise UpdateError(failed, named if named and suffix else NOT_APPLICABLE, str(exc)) from None
        key = named or claims.subject
        if named is not None and not suffix:
            _validate(claims, suffix)  # nats-server validates a full resolver's per-account update first
        if named is not None and claims.subject != named:
            raise UpdateError(failed, named, "subject does not match jwt content")
        if self._strict_issuer(claims):
            raise UpdateError(failed, key, "operator requires issuer to be a signing key")
        if suffix and not self.resolved.loaded(key):
            return key, False
        if named is None or suffix:
            _validate(claims, suffix)
        store = self.resolved.store
        assert store is not None
        try:
            changed = store.save(key, payload.decode())
        except StoreError as exc:
            raise UpdateError(failed, key, str(exc)) from None
        if changed and self.resolved.loaded(key):
            self._apply(key, payload.decode())
        return key, True

    def _strict_issuer(self, claims: Claims) -> bool:
        operators = self.resolved.trusted.operators
        if not operators or not operators[0].nats.get("strict_signing_key_usage"):
            return False
        return claims.issuer == operators[0].subject

    def _apply(self, key: str, token: str) -> None:
        """nats-server's store ``changed`` callback: the account in use follows its new JWT."""
        try:
            self.resolved.apply(key, token)
        except JwtError as exc:
            prefix = "DirResolver - Update resulted in error" if self._cache else "DirResolver - Update for account"
            if self._cache:
                self.broker.log.error("%s %s", prefix, exc)
            else:
                self.broker.log.error("%s %s resulted in error %s", prefix, go_quote(key), exc)

    def on_memory_update(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        """nats-server's ``accountClaimUpdate`` (a MEMORY resolver, or no operator mode)."""
        key = _account_key(subject)
        failed = "jwt update resulted in error"
        if not payload:
            self._respond(reply, key, "jwt update error", "request body is empty")
            return
        try:
            claims = decode_kind(payload.decode(errors="replace"), ACCOUNT)
        except JwtError as exc:
            self._respond(reply, key, failed, str(exc))
            return
        if claims.subject != key:
            self._respond(reply, key, failed, "subject does not match jwt content")
        elif self.broker.accounts.get(key) is None:
            self._respond(reply, key, "jwt update skipped")
        else:
            try:
                self.resolved.apply(key, payload.decode())
            except JwtError as exc:
                self._respond(reply, key, failed, str(exc))
                return
            self._respond(reply, key, "jwt updated")

    # -- lookups, lists, deletes, packs ----------------------------------------------------

    def _on_lookup(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> bool:
        fetch = self.resolved.fetch
        if fetch is not None and fetch.asked(reply):  # the server's own request (nats-server: no echo)
            return False
        key = subject.split(".")[3]
        store = self.resolved.store
        token = store.load(key) if store is not None else None
        if not reply:
            return True
        if token is None:
            self.broker.log.debug("DirResolver - Could not find account %s", go_quote(key))
        self._publish(reply, (token or "").encode())
        return True

    def _on_list(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        store = self.resolved.store
        if not reply or store is None:
            return
        keys = store.public_keys()
        self.broker.log.debug("list request responded with %d account ids", len(keys))
        response = {"data": keys, "server": self.events.server_info()}
        self._publish(reply, gojson.dumps(response).encode())

    def _on_pack(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> bool:
        """One full resolver's answer to a pack request; the server's own request goes to another (no echo)."""
        store = self.resolved.store
        if self.sync is not None and reply == self.sync.inbox:
            return False
        if not reply or store is None:
            return True
        ours = directory_hash(store)
        if payload == ours:
            self._publish(reply, b"")
            self.broker.log.debug("DirResolver - Pack request matches hash %s", ours.hex())
            return True
        for key in store.public_keys():
            self._publish(reply, f"{key}|{store.load(key) or ''}".encode())
        self.broker.log.debug(
            "DirResolver - Pack request hash %s - finished responding with hash %s", payload.hex(), ours.hex()
        )
        self._publish(reply, b"")
        return True

    def _on_delete(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        """nats-server's ``handleDeleteRequest``: the operator's own generic JWT listing the accounts."""
        try:
            keys = self._deletable(payload)
        except UpdateError as exc:
            self._respond(reply, "", f"delete accounts request by {exc.account} failed", str(exc))
            return
        store = self.resolved.store
        assert store is not None
        for key in keys:
            store.delete(key)
            self.resolved.remove(key)
        self._respond(reply, "", f"deleted {len(keys)} accounts")

    def _deletable(self, payload: bytes) -> list[str]:
        try:
            claims = decode_generic(payload.decode(errors="replace"))
        except JwtError as exc:
            raise UpdateError("", "", str(exc)) from None
        store, who = self.resolved.store, claims.subject
        problem = self._delete_problem(claims, store is not None and bool(store.delete_mode))
        if problem:
            raise UpdateError("", who, problem)
        return list(claims.nats["accounts"])

    def _delete_problem(self, claims: Claims, allowed: bool) -> str:
        if not allowed:
            return "delete must be enabled in server config"
        if claims.subject != claims.issuer:
            return "not self signed"
        if claims.issuer not in self._operator_keys():
            return "not trusted"
        accounts = claims.nats.get("accounts")
        if not isinstance(accounts, list):
            return "malformed request"
        for entry in accounts:
            if not isinstance(entry, str) or not entry or not is_key_of(entry, PREFIX_BYTE_ACCOUNT):
                return "malformed request"
            if entry == self.broker.options.system_account:
                return "not allowed to delete system account"
        return ""

    def _operator_keys(self) -> set[str]:
        """nats-server's ``getOperatorKeys``: the first operator (unless strict) and its signing keys."""
        operators = self.resolved.trusted.operators
        if not operators:
            return set()
        first = operators[0]
        keys = {key for key in first.nats.get("signing_keys") or [] if isinstance(key, str)}
        if not first.nats.get("strict_signing_key_usage"):
            keys.add(first.subject)
        return keys
