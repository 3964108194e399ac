"""The chain of trust of operator mode: trusted operators, the accounts they issued, their signing keys.

:class:`TrustedOperators` reads the ``operator`` JWTs of the configuration
(nats-server's ``TrustedOperators``): an account JWT is trusted when the
operator or one of the operator's ``signing_keys`` issued it.
:class:`AccountClaims` is what a trusted account JWT says that logging in
needs: its own signing keys (a user may be issued by one of them, naming
the account in ``issuer_account``), its ``revocations`` (user key -> a
time: JWTs issued at or before it are revoked; the key ``*`` revokes
every user), its expiry and its ``limits``.  :func:`resolve` builds them
from a MEMORY resolver's preloaded JWTs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.account_config import AccountConfig
from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.jwt.account_validation import invalid
from fakejs.core.jwt.claims import ACCOUNT, OPERATOR, Claims, JwtError, decode_kind

# nats-io/jwt's All: a revocation of every user of the account.
ALL_USERS = "*"


def _keys(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def claim_limit(limits: Mapping[str, Any], key: str) -> int:
    """A claim's limit (``subs``, ``payload``, ``conn``...): 0 when absent, Go's zero value, as nats-server reads it.

    nats-io/jwt writes -1 (``NoLimit``) for each limit not set; one left out
    of a JWT allows none.
    """
    value = limits.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class TrustedOperators:
    """The operators whose accounts the server trusts, with their signing keys."""

    operators: tuple[Claims, ...] = ()

    @classmethod
    def from_jwts(cls, tokens: list[str]) -> TrustedOperators:
        """Decode the operator JWTs (:class:`JwtError` for one that is not an operator's)."""
        return cls(tuple(decode_kind(token, OPERATOR) for token in tokens))

    def issued(self, claims: Claims) -> bool:
        """Whether a trusted operator, or one of its signing keys, issued ``claims``."""
        for operator in self.operators:
            if claims.issuer == operator.subject or claims.issuer in _keys(operator.nats.get("signing_keys")):
                return True
        return False


@dataclass(frozen=True)
class AccountClaims:
    """A trusted account JWT: its key, signing keys, revocations, expiry and limits."""

    claims: Claims
    signing_keys: frozenset[str] = frozenset()
    scoped_keys: frozenset[str] = frozenset()
    revocations: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_claims(cls, claims: Claims) -> AccountClaims:
        """Read the signing keys (plain keys, or ``user_scope`` objects) and revocations of ``claims``."""
        plain: set[str] = set()
        scoped: set[str] = set()
        for entry in _keys(claims.nats.get("signing_keys")):
            if isinstance(entry, str):
                plain.add(entry)
            elif isinstance(entry, dict) and isinstance(entry.get("key"), str):
                scoped.add(entry["key"])
        raw = claims.nats.get("revocations")
        revocations = {str(k): int(v) for k, v in raw.items() if isinstance(v, int)} if isinstance(raw, dict) else {}
        return cls(claims, frozenset(plain), frozenset(scoped), revocations)

    @property
    def public_key(self) -> str:
        return self.claims.subject

    @property
    def limits(self) -> dict[str, Any]:
        """The ``limits`` object (nats-io/jwt's ``OperatorLimits``)."""
        value = self.claims.nats.get("limits")
        return value if isinstance(value, dict) else {}

    @property
    def max_connections(self) -> int:
        """``limits.conn``: clients of the account at once (``NO_LIMIT``: any number)."""
        return claim_limit(self.limits, "conn")

    def revoked(self, user_key: str, issued_at: int) -> bool:
        """nats-server's ``checkUserRevoked``: the user's JWT was issued at or before its revocation."""
        for key in (user_key, ALL_USERS):
            if key in self.revocations and issued_at <= self.revocations[key]:
                return True
        return False

    def jetstream(self) -> JetStreamLimits | None:
        """The account's JetStream limits when its JWT enables JetStream (memory or disk storage not 0)."""
        limits = self.limits
        memory, disk = claim_limit(limits, "mem_storage"), claim_limit(limits, "disk_storage")
        if not limits.get("mem_storage") and not limits.get("disk_storage"):
            return None
        return JetStreamLimits(
            max_memory=memory,
            max_storage=disk,
            max_streams=claim_limit(limits, "streams"),
            max_consumers=claim_limit(limits, "consumer"),
            max_ack_pending=claim_limit(limits, "max_ack_pending"),
            memory_max_stream_bytes=claim_limit(limits, "mem_max_stream_bytes"),
            storage_max_stream_bytes=claim_limit(limits, "disk_max_stream_bytes"),
            max_bytes_required=bool(limits.get("max_bytes_required")),
        )

    def config(self, name: str) -> AccountConfig:
        """The fakejs account this JWT makes, named ``name`` (its public key)."""
        return AccountConfig(
            name,
            jetstream=self.jetstream(),
            max_subscriptions=claim_limit(self.limits, "subs"),
            max_connections=self.max_connections,
            name_tag=self.claims.name,
        )


def resolve(trusted: TrustedOperators, preload: Mapping[str, str]) -> dict[str, AccountClaims]:
    """The preloaded accounts a trusted operator issued, by the key they are stored under.

    An account JWT that does not verify, that no trusted operator issued or
    that does not validate (:func:`~fakejs.core.jwt.account_validation.invalid`)
    is left out, as nats-server's resolver lookup fails for it.
    """
    accounts: dict[str, AccountClaims] = {}
    for key, token in preload.items():
        try:
            claims = decode_kind(token, ACCOUNT)
        except JwtError:
            continue
        if trusted.issued(claims) and not invalid(claims):
            accounts[key] = AccountClaims.from_claims(claims)
    return accounts
