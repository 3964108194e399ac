"""Operators, accounts and users: their keys (nkeys) and their claims, as nats-io/jwt v2 fills them.

Times come from a ``now`` callable (Unix seconds; ``time.time`` unless
given) that accounts and users inherit from their operator, so tests can
fix ``iat``, ``exp`` and ``nbf``.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import nkeys

from fakejs.testkit.jwt.claims import LIBRARY_VERSION, encode, format_user_config

Clock = Callable[[], float]
Expiry = float | datetime.datetime | None

# nats-io/jwt's NoLimit.
NO_LIMIT = -1

# OperatorLimits (NatsLimits, AccountLimits, JetStreamLimits), all omitempty.
ACCOUNT_LIMIT_FIELDS = (
    "subs", "data", "payload",
    "imports", "exports", "wildcards", "disallow_bearer", "conn", "leaf",
    "mem_storage", "disk_storage", "streams", "consumer", "max_ack_pending",
    "mem_max_stream_bytes", "disk_max_stream_bytes", "max_bytes_required",
    "tiered_limits",
)  # fmt: skip
DEFAULT_ACCOUNT_LIMITS: dict[str, Any] = {
    "subs": NO_LIMIT, "data": NO_LIMIT, "payload": NO_LIMIT,
    "imports": NO_LIMIT, "exports": NO_LIMIT, "wildcards": True, "conn": NO_LIMIT, "leaf": NO_LIMIT,
}  # fmt: skip
# JetStream without limits, as ``nsc edit account --js-mem-storage -1 --js-disk-storage -1
# --js-streams -1 --js-consumer -1`` writes it.
JETSTREAM_UNLIMITED = {"mem_storage": NO_LIMIT, "disk_storage": NO_LIMIT, "streams": NO_LIMIT, "consumer": NO_LIMIT}
EXPORT_FIELDS = (
    "name", "subject", "type", "token_req", "revocations", "response_type", "response_threshold",
    "service_latency", "account_token_position", "advertise", "allow_trace", "description", "info_url",
)  # fmt: skip
MAPPING_FIELDS = ("subject", "weight", "cluster")
AUTHORIZATION_FIELDS = ("auth_users", "allowed_accounts", "xkey")
IMPORT_FIELDS = ("name", "subject", "account", "token", "to", "local_subject", "type", "share", "allow_trace")


# -- keys ---------------------------------------------------------------------


class Key:
    """An nkeys key pair: ``seed`` and ``public_key`` as text, made fresh unless a seed is given."""

    def __init__(self, prefix: int, seed: str | None = None) -> None:
        raw = seed.encode() if seed else nkeys.encode_seed(os.urandom(32), prefix)
        self.keypair: nkeys.KeyPair = nkeys.from_seed(bytearray(raw))
        self.seed: str = raw.decode()
        self.public_key: str = self.keypair.public_key.decode()

    def sign(self, data: bytes) -> bytes:
        """``data``'s ed25519 signature, 64 raw bytes (CONNECT's ``sig`` is it in base64)."""
        return bytes(self.keypair.sign(data))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.public_key})"


class ScopedKey(Key):
    """An account's scoped signing key (nats-io/jwt's ``UserScope``): the users it issues get its ``template``.

    The template is a user claim's permissions and limits as the JWT holds
    them (``pub``, ``sub``, ``resp``, ``src``, ``subs``, ``payload``,
    ``bearer_token``, ``allowed_connection_types``...); its ``pub`` and
    ``sub`` subjects may hold nats-server's template tags
    (``{{name()}}``, ``{{tag(x)}}``...).
    """

    def __init__(self, role: str, template: Mapping[str, Any], description: str = "", seed: str | None = None) -> None:
        super().__init__(nkeys.PREFIX_BYTE_ACCOUNT, seed)
        self.role = role
        self.template = dict(template)
        self.description = description

    def claims(self) -> dict[str, Any]:
        """The ``signing_keys`` entry, as nats-io/jwt writes it."""
        return {
            "kind": "user_scope",
            "key": self.public_key,
            "role": self.role,
            "template": self.template,
            "description": self.description,
        }


def user_template(
    *,
    pub_allow: Iterable[str] = (),
    pub_deny: Iterable[str] = (),
    sub_allow: Iterable[str] = (),
    sub_deny: Iterable[str] = (),
    resp: ResponsePermission | None = None,
    src: Iterable[str] = (),
    limits: Mapping[str, int] | None = None,
    bearer: bool = False,
    allowed_connection_types: Iterable[str] = (),
) -> dict[str, Any]:
    """A scoped key's template (nats-io/jwt's ``UserPermissionLimits``) in the JWT's form; limits -1 unless given."""
    return {
        **_permissions(pub_allow, pub_deny, sub_allow, sub_deny, resp),
        **_user_limits(src, limits),
        **_connection_rules(bearer, allowed_connection_types),
    }


def _unix(value: Expiry, now: float) -> int:
    """An ``exp``/``nbf``: seconds from ``now``, or a datetime; 0 (left out) for None."""
    if value is None:
        return 0
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    return int(now + value)


def _ordered(entry: Mapping[str, Any], fields: Iterable[str]) -> dict[str, Any]:
    """An export's or import's fields in the Go struct's order (unknown ones after), empty ones left out."""
    known = [k for k in fields if entry.get(k)]
    return {k: entry[k] for k in [*known, *(k for k in entry if k not in known)] if entry.get(k)}


@dataclass(frozen=True)
class ResponsePermission:
    """A user's ``resp`` permission (nats-io/jwt's ``ResponsePermission``): replies allowed, for how long."""

    max_msgs: int = 1
    ttl_seconds: float = 0

    def claims(self) -> dict[str, int]:
        """As the JWT holds it: ``max`` and ``ttl`` in nanoseconds (a Go duration)."""
        return {"max": self.max_msgs, "ttl": int(self.ttl_seconds * 1_000_000_000)}


# -- operators, accounts, users -----------------------------------------------


class Operator(Key):
    """A self-signed operator (nats-io/jwt's ``OperatorClaims``) that issues accounts."""

    def __init__(
        self,
        name: str = "O",
        *,
        now: Clock = time.time,
        seed: str | None = None,
        system_account: str | None = None,
        strict_signing_key_usage: bool = False,
    ) -> None:
        super().__init__(nkeys.PREFIX_BYTE_OPERATOR, seed)
        self.name = name
        self.now = now
        self.system_account = system_account
        self.strict_signing_key_usage = strict_signing_key_usage
        self.signing_keys: list[Key] = []

    def signing_key(self, seed: str | None = None) -> Key:
        """A new operator signing key, named in the operator's JWT, to issue accounts with (``signer=``)."""
        key = Key(nkeys.PREFIX_BYTE_OPERATOR, seed)
        self.signing_keys.append(key)
        return key

    def claims(self) -> dict[str, Any]:
        """The operator's claims, before signing."""
        nats: dict[str, Any] = {}
        if self.signing_keys:
            nats["signing_keys"] = [k.public_key for k in self.signing_keys]
        if self.system_account:
            nats["system_account"] = self.system_account
        if self.strict_signing_key_usage:
            nats["strict_signing_key_usage"] = True
        nats.update(type="operator", version=LIBRARY_VERSION)
        return {"iat": int(self.now()), "name": self.name, "sub": self.public_key, "nats": nats}

    @property
    def jwt(self) -> str:
        """The operator's JWT, signed by itself (minted again at each read)."""
        return encode(self.claims(), self.keypair)

    def account(self, name: str, *, signer: Key | None = None, seed: str | None = None, **options: Any) -> Account:
        """A new account issued by this operator or by one of its signing keys; options as :class:`Account`'s."""
        return Account(name, self, signer=signer, seed=seed, **options)

    def server_config(
        self,
        *,
        system_account: Account | None = None,
        accounts: Iterable[Account] = (),
        operator_file: str | os.PathLike[str] | None = None,
        resolver: str = "MEMORY",
        resolver_dir: str | os.PathLike[str] | None = None,
        allow_delete: bool = False,
    ) -> str:
        """nats-server configuration for operator mode: the operator JWT and a resolver, preloaded.

        The JWT is inline, or written to ``operator_file`` and named by its path.
        ``resolver`` is ``"MEMORY"``, or ``"full"`` or ``"cache"`` keeping the account
        JWTs in ``resolver_dir`` (a full one deleting accounts with ``allow_delete``).
        """
        operator = self.jwt
        if operator_file is not None:
            Path(operator_file).write_text(operator)
            operator = str(operator_file)
        lines = [f'operator: "{operator}"']
        if system_account is not None:
            lines.append(f'system_account: "{system_account.public_key}"')
        if resolver.upper() == "MEMORY":
            lines.append("resolver: MEMORY")
        else:
            delete = ", allow_delete: true" if allow_delete else ""
            lines.append(f'resolver: {{ type: {resolver}, dir: "{resolver_dir}"{delete} }}')
        lines.append("resolver_preload: {")
        lines += [f'  "{account.public_key}": "{account.jwt}"' for account in accounts]
        return "\n".join([*lines, "}"]) + "\n"

    def delete_request(self, *accounts: Account | str) -> str:
        """The JWT of a ``$SYS.REQ.CLAIMS.DELETE`` request: generic claims the operator signs, listing ``accounts``."""
        keys = [a if isinstance(a, str) else a.public_key for a in accounts]
        claims = {"iat": int(self.now()), "iss": self.public_key, "sub": self.public_key}
        return encode(
            {**claims, "nats": {"accounts": keys, "type": "generic", "version": LIBRARY_VERSION}}, self.keypair
        )


class Requester(Protocol):
    """A connection that can send a request (nats-py's ``Client``)."""

    async def request(self, subject: str, payload: bytes = b"", timeout: float = 0.5) -> Any: ...


async def push_account(connection: Requester, account: Account, timeout: float = 5.0) -> dict[str, Any]:
    """Send the account's JWT to ``$SYS.REQ.CLAIMS.UPDATE`` over a system account user's connection; the reply.

    The reply is nats-server's JSON: ``{"server": ..., "data": {"account", "code": 200, "message"}}``
    (``"error"`` instead of ``"data"`` when refused).
    """
    reply = await connection.request("$SYS.REQ.CLAIMS.UPDATE", account.jwt.encode(), timeout=timeout)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


class Account(Key):
    """An account (nats-io/jwt's ``AccountClaims``) issued by an operator, that issues users."""

    def __init__(
        self,
        name: str,
        operator: Operator,
        *,
        signer: Key | None = None,
        seed: str | None = None,
        jetstream: bool = False,
        limits: Mapping[str, Any] | None = None,
        exports: Iterable[Mapping[str, Any]] = (),
        imports: Iterable[Mapping[str, Any]] = (),
        signing_keys: Iterable[Key] = (),
        expires: Expiry = None,
        description: str = "",
        default_permissions: Mapping[str, Any] | None = None,
        mappings: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
        trace: Mapping[str, Any] | None = None,
        authorization: Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
    ) -> None:
        super().__init__(nkeys.PREFIX_BYTE_ACCOUNT, seed)
        self.name = name
        self.operator = operator
        self.signer = signer
        self.now = operator.now
        self.limits = {**DEFAULT_ACCOUNT_LIMITS, **(JETSTREAM_UNLIMITED if jetstream else {}), **(limits or {})}
        self.exports = [dict(e) for e in exports]
        self.imports = [dict(i) for i in imports]
        self.signing_keys: list[Key] = list(signing_keys)
        self.revocations: dict[str, int] = {}
        self.expires = _unix(expires, self.now())
        self.description = description
        # ``{"pub": {"allow": [...], "deny": [...]}, "sub": {...}, "resp": {"max": n, "ttl": ns}}``: what its
        # users without permissions of their own get.
        self.default_permissions = dict(default_permissions or {})
        # ``{source: [{"subject": destination, "weight": percent, "cluster": name}, ...]}``.
        self.mappings = {k: [dict(d) for d in v] for k, v in (mappings or {}).items()}
        # ``{"dest": subject, "sampling": percent}``: where messages with a sampled ``traceparent`` are traced.
        self.trace = dict(trace) if trace is not None else None
        # ExternalAuthorization: ``auth_users`` (user public keys), ``allowed_accounts``, ``xkey``.
        self.authorization = dict(authorization or {})
        self.tags = list(tags)

    def signing_key(self, seed: str | None = None) -> Key:
        """A new account signing key, named in the account's JWT, to issue users with (``signer=``)."""
        key = Key(nkeys.PREFIX_BYTE_ACCOUNT, seed)
        self.signing_keys.append(key)
        return key

    def scoped_signing_key(
        self,
        role: str = "",
        *,
        template: Mapping[str, Any] | None = None,
        description: str = "",
        seed: str | None = None,
        **permissions: Any,
    ) -> ScopedKey:
        """A new scoped signing key, named in the account's JWT with its ``template``, to issue users with.

        The template is given whole (``template=``) or built by
        :func:`user_template` from ``permissions`` (:class:`User`'s permission
        and limit options).
        """
        key = ScopedKey(role, user_template(**permissions) if template is None else template, description, seed)
        self.signing_keys.append(key)
        return key

    def revoke(self, user: User | str, at: float | None = None) -> None:
        """Revoke a user's JWTs issued at or before ``at`` (now unless given): the account's ``revocations``.

        ``user`` is a :class:`User`, a public key, or ``"*"`` for every user.
        """
        public_key = user if isinstance(user, str) else user.public_key
        self.revocations[public_key] = int(self.now() if at is None else at)

    def claims(self) -> dict[str, Any]:
        """The account's claims, before signing."""
        nats: dict[str, Any] = {}
        if self.imports:
            nats["imports"] = sorted((_ordered(i, IMPORT_FIELDS) for i in self.imports), key=lambda i: i["subject"])
        if self.exports:
            nats["exports"] = sorted((_ordered(e, EXPORT_FIELDS) for e in self.exports), key=lambda e: e["subject"])
        nats["limits"] = {k: self.limits[k] for k in ACCOUNT_LIMIT_FIELDS if self.limits.get(k)}
        if self.signing_keys:
            keys = sorted(self.signing_keys, key=lambda k: k.public_key)
            nats["signing_keys"] = [k.claims() if isinstance(k, ScopedKey) else k.public_key for k in keys]
        if self.revocations:
            nats["revocations"] = dict(sorted(self.revocations.items()))
        nats["default_permissions"] = {"pub": {}, "sub": {}, **self.default_permissions}
        if self.mappings:
            nats["mappings"] = {k: [_ordered(d, MAPPING_FIELDS) for d in v] for k, v in sorted(self.mappings.items())}
        nats["authorization"] = _ordered(self.authorization, AUTHORIZATION_FIELDS)
        if self.trace is not None:
            nats["trace"] = {k: self.trace[k] for k in ("dest", "sampling") if self.trace.get(k)}
        if self.description:
            nats["description"] = self.description
        if self.tags:
            nats["tags"] = self.tags
        nats.update(type="account", version=LIBRARY_VERSION)
        claims = {"exp": self.expires, "iat": int(self.now()), "name": self.name, "sub": self.public_key}
        return {**claims, "nats": nats}

    @property
    def jwt(self) -> str:
        """The account's JWT, signed by its operator or the signing key given (minted again at each read)."""
        return encode(self.claims(), (self.signer or self.operator).keypair)

    def activation(
        self,
        importer: Account | str,
        subject: str,
        *,
        service: bool = False,
        signer: Key | None = None,
        expires: Expiry = None,
        not_before: Expiry = None,
    ) -> str:
        """An activation token (nats-io/jwt's ``ActivationClaims``) letting ``importer`` import ``subject``.

        The import of a ``token_req`` export carries it as its ``token``; it
        is signed by this account, or by one of its signing keys (then naming
        this account in ``issuer_account``).
        """
        now = self.now()
        nats: dict[str, Any] = {"subject": subject, "kind": "service" if service else "stream"}
        if signer is not None:
            nats["issuer_account"] = self.public_key
        nats.update(type="activation", version=LIBRARY_VERSION)
        subject_key = importer if isinstance(importer, str) else importer.public_key
        claims = {"exp": _unix(expires, now), "iat": int(now), "nbf": _unix(not_before, now), "sub": subject_key}
        return encode({**claims, "nats": nats}, (signer or self).keypair)

    def user(self, name: str, *, signer: Key | None = None, seed: str | None = None, **options: Any) -> User:
        """A new user issued by this account or by one of its signing keys; options as :class:`User`'s."""
        return User(name, self, signer=signer, seed=seed, **options)


class User(Key):
    """A user (nats-io/jwt's ``UserClaims``), its JWT minted once, at creation, with its account's clock."""

    def __init__(
        self,
        name: str,
        account: Account,
        *,
        signer: Key | None = None,
        seed: str | None = None,
        pub_allow: Iterable[str] = (),
        pub_deny: Iterable[str] = (),
        sub_allow: Iterable[str] = (),
        sub_deny: Iterable[str] = (),
        resp: ResponsePermission | None = None,
        src: Iterable[str] = (),
        times: Iterable[tuple[str, str]] = (),
        times_location: str = "",
        limits: Mapping[str, int] | None = None,
        bearer: bool = False,
        allowed_connection_types: Iterable[str] = (),
        expires: Expiry = None,
        not_before: Expiry = None,
        tags: Iterable[str] = (),
    ) -> None:
        super().__init__(nkeys.PREFIX_BYTE_USER, seed)
        self.name = name
        self.account = account
        now = account.now()
        # A scoped key's user has no limits of its own (nats-io/jwt's SetScoped): 0, left out, unless given.
        unlimited = 0 if isinstance(signer, ScopedKey) else NO_LIMIT
        nats = {
            **_permissions(pub_allow, pub_deny, sub_allow, sub_deny, resp),
            **_user_limits(src, limits, unlimited, times, times_location),
            **_connection_rules(bearer, allowed_connection_types),
        }
        if signer is not None:
            nats["issuer_account"] = account.public_key
        if tags:
            nats["tags"] = list(tags)
        nats.update(type="user", version=LIBRARY_VERSION)
        self.claims: dict[str, Any] = {
            "exp": _unix(expires, now),
            "iat": int(now),
            "name": name,
            "nbf": _unix(not_before, now),
            "sub": self.public_key,
            "nats": nats,
        }
        self.jwt: str = encode(self.claims, (signer or account).keypair)

    def creds(self) -> str:
        """The text of the user's ``.creds`` file, as ``nsc`` and nats-io/jwt's ``FormatUserConfig`` write it."""
        return format_user_config(self.jwt, self.seed)

    def write_creds(self, path: str | os.PathLike[str]) -> str:
        """Write the user's ``.creds`` file at ``path``; returns the path."""
        Path(path).write_text(self.creds())
        return str(path)

    def jwt_callback(self) -> Callable[[], bytes]:
        """nats-py's ``user_jwt_cb``: the user's JWT."""
        return lambda: self.jwt.encode()

    def signature_callback(self) -> Callable[[str], bytes]:
        """nats-py's ``signature_cb``: the server's nonce signed, in base64 as nats-py's own ``nkeys_seed`` sends it."""
        return lambda nonce: base64.b64encode(self.sign(nonce.encode()))


def _permission(allow: Iterable[str], deny: Iterable[str]) -> dict[str, list[str]]:
    """nats-io/jwt's ``Permission``: ``allow`` and ``deny``, each left out when empty."""
    permission = {"allow": list(allow), "deny": list(deny)}
    return {k: v for k, v in permission.items() if v}


def _permissions(
    pub_allow: Iterable[str],
    pub_deny: Iterable[str],
    sub_allow: Iterable[str],
    sub_deny: Iterable[str],
    resp: ResponsePermission | None,
) -> dict[str, Any]:
    """nats-io/jwt's ``Permissions``: ``pub`` and ``sub`` (always written), ``resp`` when given."""
    permissions: dict[str, Any] = {"pub": _permission(pub_allow, pub_deny), "sub": _permission(sub_allow, sub_deny)}
    if resp is not None:
        permissions["resp"] = resp.claims()
    return permissions


def _user_limits(
    src: Iterable[str],
    limits: Mapping[str, int] | None,
    unlimited: int = NO_LIMIT,
    times: Iterable[tuple[str, str]] = (),
    location: str = "",
) -> dict[str, Any]:
    """nats-io/jwt's ``Limits`` of a user: ``src`` CIDRs, connect ``times`` (``HH:MM:SS`` start and end) and their
    ``times_location``, then ``subs``, ``data``, ``payload`` (``unlimited`` unless given)."""
    counts = {"subs": unlimited, "data": unlimited, "payload": unlimited, **(limits or {})}
    ranges = [{"start": start, "end": end} for start, end in times]
    user_limits = {"src": list(src), "times": ranges, "times_location": location}
    return {k: v for k, v in {**user_limits, **counts}.items() if v}  # omitempty: 0 and [] are left out


def _connection_rules(bearer: bool, allowed_connection_types: Iterable[str]) -> dict[str, Any]:
    """``bearer_token`` and ``allowed_connection_types``, each left out when not set."""
    rules = {"bearer_token": bearer, "allowed_connection_types": list(allowed_connection_types)}
    return {k: v for k, v in rules.items() if v}
