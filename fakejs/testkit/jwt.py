"""NATS credentials for tests: operators, accounts and users minted as nats-io/jwt v2 writes them.

::

    op = Operator("O")
    sys_account = op.account("SYS")
    app = op.account("APP", jetstream=True)
    alice = app.user("alice", pub_allow=["orders.>"])
    config = op.server_config(system_account=sys_account, accounts=[sys_account, app])
    await nats.connect(url, user_credentials=alice.write_creds(tmp_path / "alice.creds"))

A JWT is ``header.claims.signature``, each part base64url without padding;
the header is ``{"typ":"JWT","alg":"ed25519-nkey"}`` and the signature is
the issuer's ed25519 signature (through the ``nkeys`` package) of
``header.claims``.  The claims are serialized as Go's ``json.Marshal``
writes nats-io/jwt's structs (:func:`fakejs.gocompat.gojson.dumps`): the
fields in the structs' order, the ``omitempty`` ones left out when empty,
``<``, ``>`` and ``&`` escaped as ``\\u003c``, ``\\u003e``, ``\\u0026``.
The ``jti`` is the base32 (no padding) SHA-512/256 of the ``ClaimsData``
part alone (``aud`` to ``sub``, without ``nats``) serialized with an empty
``jti`` (``ClaimsData.hash``).

Times come from a ``now`` callable (Unix seconds; ``time.time`` unless
given) that accounts and users inherit from their operator, so tests can
fix ``iat``, ``exp`` and ``nbf``.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nkeys

from fakejs.core.auth import verify_signature
from fakejs.gocompat import gojson

Clock = Callable[[], float]
Expiry = float | datetime.datetime | None

HEADER = {"typ": "JWT", "alg": "ed25519-nkey"}
# nats-io/jwt's libVersion: the "version" of every claim it writes.
LIBRARY_VERSION = 2
# nats-io/jwt's NoLimit.
NO_LIMIT = -1

# The fields of nats-io/jwt's ClaimsData, in the struct's order.
CLAIMS_DATA_FIELDS = ("aud", "exp", "jti", "iat", "iss", "name", "nbf", "sub")
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
# What ``nsc edit account --js-enable 1`` sets: JetStream without limits.
JETSTREAM_UNLIMITED = {"mem_storage": NO_LIMIT, "disk_storage": NO_LIMIT, "streams": NO_LIMIT, "consumer": NO_LIMIT}
EXPORT_FIELDS = (
    "name", "subject", "type", "token_req", "revocations", "response_type", "response_threshold",
    "service_latency", "account_token_position", "advertise", "allow_trace", "description", "info_url",
)  # fmt: skip
IMPORT_FIELDS = ("name", "subject", "account", "token", "to", "local_subject", "type", "share", "allow_trace")


# -- encoding -----------------------------------------------------------------


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unbase64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims_id(claims: Mapping[str, Any]) -> str:
    """The ``jti`` of ``claims``: nats-io/jwt's ``ClaimsData.hash`` (of ``aud`` .. ``sub`` with an empty ``jti``)."""
    data = {k: claims[k] for k in CLAIMS_DATA_FIELDS if k != "jti" and claims.get(k)}
    digest = hashlib.new("sha512_256", gojson.dumps(data).encode()).digest()
    return base64.b32encode(digest).decode().rstrip("=")


def issued_claims(claims: Mapping[str, Any], issuer: str) -> dict[str, Any]:
    """``claims`` as ``issuer`` signs them: ``iss`` and ``jti`` set, fields in nats-io/jwt's order, empty ones out."""
    data = {**claims, "iss": issuer, "jti": ""}
    issued: dict[str, Any] = {k: data[k] for k in CLAIMS_DATA_FIELDS if data.get(k) or k == "jti"}
    issued["jti"] = claims_id(issued)
    issued = {k: v for k, v in issued.items() if v}
    if "nats" in claims:
        issued["nats"] = claims["nats"]
    return issued


def encode(claims: Mapping[str, Any], signer: nkeys.KeyPair) -> str:
    """``claims`` signed by ``signer`` (nats-io/jwt's ``Claims.Encode``): ``header.claims.signature``."""
    issued = issued_claims(claims, signer.public_key.decode())
    to_sign = _base64url(gojson.dumps(HEADER).encode()) + "." + _base64url(gojson.dumps(issued).encode())
    return to_sign + "." + _base64url(signer.sign(to_sign.encode()))


def decode(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A JWT's header and claims (the signature is not checked: see :func:`verify`)."""
    header, claims, _ = token.split(".")
    return json.loads(_unbase64url(header)), json.loads(_unbase64url(claims))


def verify(token: str) -> bool:
    """Whether ``token``'s signature is its issuer's (``iss``), as nats-server checks it."""
    header, claims, signature = token.split(".")
    issuer = json.loads(_unbase64url(claims)).get("iss", "")
    return verify_signature(issuer, (header + "." + claims).encode(), signature)


# -- .creds files -------------------------------------------------------------


def decorate_jwt(token: str) -> str:
    """nats-io/jwt's ``DecorateJWT``: the JWT between ``BEGIN``/``END NATS <TYPE> JWT`` lines."""
    kind = str(decode(token)[1]["nats"]["type"]).upper()
    return f"-----BEGIN NATS {kind} JWT-----\n{token}\n------END NATS {kind} JWT------\n\n"


def decorate_seed(seed: str) -> str:
    """nats-io/jwt's ``DecorateSeed``: the seed between the ``IMPORTANT`` banner and ``NKEY SEED`` lines."""
    seed = seed.strip()
    kind = {"SU": "USER", "SA": "ACCOUNT", "SO": "OPERATOR"}[seed[:2]]
    return (
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n"
        "NKEYs are sensitive and should be treated as secrets.\n\n"
        f"-----BEGIN {kind} NKEY SEED-----\n{seed}\n------END {kind} NKEY SEED------\n\n"
        "*************************************************************\n"
    )


def format_user_config(token: str, seed: str) -> str:
    """nats-io/jwt's ``FormatUserConfig``: the text of a ``.creds`` file."""
    return decorate_jwt(token) + decorate_seed(seed)


# -- keys ---------------------------------------------------------------------


class Key:
    """An nkeys key pair: ``seed`` and ``public_key`` as text, made fresh unless a seed is given."""

    def __init__(self, prefix: int, seed: str | None = None) -> None:
        raw = seed.encode() if seed else nkeys.encode_seed(os.urandom(32), prefix)
        self.keypair: nkeys.KeyPair = nkeys.from_seed(bytearray(raw))
        self.seed: str = raw.decode()
        self.public_key: str = self.keypair.public_key.decode()

    def sign(self, data: bytes) -> bytes:
        """``data``'s ed25519 signature (what ``signature_cb`` returns to the client)."""
        return bytes(self.keypair.sign(data))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.public_key})"


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
    ) -> str:
        """nats-server configuration for operator mode: the operator JWT and a preloaded MEMORY resolver.

        The JWT is inline, or written to ``operator_file`` and named by its path.
        """
        operator = self.jwt
        if operator_file is not None:
            Path(operator_file).write_text(operator)
            operator = str(operator_file)
        lines = [f'operator: "{operator}"']
        if system_account is not None:
            lines.append(f'system_account: "{system_account.public_key}"')
        lines += ["resolver: MEMORY", "resolver_preload: {"]
        lines += [f'  "{account.public_key}": "{account.jwt}"' for account in accounts]
        return "\n".join([*lines, "}"]) + "\n"


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

    def signing_key(self, seed: str | None = None) -> Key:
        """A new account signing key, named in the account's JWT, to issue users with (``signer=``)."""
        key = Key(nkeys.PREFIX_BYTE_ACCOUNT, seed)
        self.signing_keys.append(key)
        return key

    def revoke(self, user: User | str, at: float | None = None) -> None:
        """Revoke a user's JWTs issued at or before ``at`` (now unless given): the account's ``revocations``."""
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
            nats["signing_keys"] = sorted(k.public_key for k in self.signing_keys)
        if self.revocations:
            nats["revocations"] = dict(sorted(self.revocations.items()))
        nats["default_permissions"] = {"pub": {}, "sub": {}}
        nats["authorization"] = {}
        if self.description:
            nats["description"] = self.description
        nats.update(type="account", version=LIBRARY_VERSION)
        claims = {"exp": self.expires, "iat": int(self.now()), "name": self.name, "sub": self.public_key}
        return {**claims, "nats": nats}

    @property
    def jwt(self) -> str:
        """The account's JWT, signed by its operator or the signing key given (minted again at each read)."""
        return encode(self.claims(), (self.signer or self.operator).keypair)

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
        limits: Mapping[str, int] | None = None,
        bearer: bool = False,
        allowed_connection_types: Iterable[str] = (),
        expires: Expiry = None,
        not_before: Expiry = None,
    ) -> None:
        super().__init__(nkeys.PREFIX_BYTE_USER, seed)
        self.name = name
        self.account = account
        now = account.now()
        nats: dict[str, Any] = {
            "pub": _permission(pub_allow, pub_deny),
            "sub": _permission(sub_allow, sub_deny),
        }
        if resp is not None:
            nats["resp"] = resp.claims()
        if src:
            nats["src"] = list(src)
        nats.update({"subs": NO_LIMIT, "data": NO_LIMIT, "payload": NO_LIMIT, **(limits or {})})
        if bearer:
            nats["bearer_token"] = True
        if allowed_connection_types:
            nats["allowed_connection_types"] = list(allowed_connection_types)
        if signer is not None:
            nats["issuer_account"] = account.public_key
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
