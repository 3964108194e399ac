"""A NATS JWT taken apart: header, claims and the issuer's signature (nats-io/jwt v2's ``Decode``).

A JWT is ``header.claims.signature``, each part base64url without padding.
:func:`decode` checks the header (``typ`` JWT, ``alg`` ``ed25519-nkey``, or
the v1 ``ed25519``), reads the claims and verifies the signature of
``header.claims`` with the issuer's public nkey (``iss``), as nats-io/jwt
does before a claim is used.  :class:`Claims` keeps the fields every kind
of claim shares (nats-io/jwt's ``ClaimsData``) and the ``nats`` part as
given; :meth:`Claims.time_problem` is the ``exp``/``nbf`` part of its
``Validate``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.auth import decode_public_key, verify_signature

ALGORITHMS = frozenset({"ed25519-nkey", "ed25519"})
OPERATOR = "operator"
ACCOUNT = "account"
USER = "user"

# nkeys' prefix bytes of operator and account public keys.
PREFIX_BYTE_OPERATOR = 14 << 3
PREFIX_BYTE_ACCOUNT = 0


class JwtError(ValueError):
    """A JWT that does not decode or whose signature is not its issuer's; ``str()`` says why."""


@dataclass(frozen=True)
class Claims:
    """The claims of one JWT: ``ClaimsData`` (``sub``, ``iss``, ``name``, ``iat``, ``exp``, ``nbf``, ``jti``, ``aud``) and ``nats``.

    Times are Unix seconds; 0 means unset (never expires, valid at once).
    """

    subject: str
    issuer: str
    kind: str
    name: str = ""
    issued_at: int = 0
    expires: int = 0
    not_before: int = 0
    jwt_id: str = ""
    nats: dict[str, Any] = field(default_factory=dict)
    audience: str = ""  # ``aud``: an authorization response's server, a callout user's account

    def time_problem(self, now: float) -> str:
        """nats-io/jwt's time checks: ``"claim is expired"``, ``"claim is not yet valid"``, or ``""``."""
        if self.expires and now > self.expires:
            return "claim is expired"
        if self.not_before and now < self.not_before:
            return "claim is not yet valid"
        return ""


def _unbase64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _part(text: str) -> dict[str, Any]:
    try:
        value = json.loads(_unbase64url(text))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise JwtError(f"invalid JWT part: {exc}") from None
    if not isinstance(value, dict):
        raise JwtError("invalid JWT part: not an object")
    return value


def _seconds(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def decode(token: str) -> Claims:
    """The verified claims of ``token``; :class:`JwtError` when it does not decode or verify."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise JwtError("expected 3 chunks")
    header, raw_claims = _part(parts[0]), _part(parts[1])
    if str(header.get("typ", "")).upper() != "JWT":
        raise JwtError("not supported type")
    if header.get("alg") not in ALGORITHMS:
        raise JwtError("unexpected algorithm")
    issuer = raw_claims.get("iss")
    if not isinstance(issuer, str) or decode_public_key(issuer) is None:
        raise JwtError("invalid issuer")
    if not verify_signature(issuer, (parts[0] + "." + parts[1]).encode(), parts[2]):
        raise JwtError("claim failed V2 signature verification")
    nats = raw_claims.get("nats")
    nats = nats if isinstance(nats, dict) else {}
    return Claims(
        subject=str(raw_claims.get("sub", "")),
        issuer=issuer,
        kind=str(nats.get("type", "")),
        name=str(raw_claims.get("name", "")),
        issued_at=_seconds(raw_claims.get("iat")),
        expires=_seconds(raw_claims.get("exp")),
        not_before=_seconds(raw_claims.get("nbf")),
        jwt_id=str(raw_claims.get("jti", "")),
        nats=nats,
        audience=raw_claims["aud"] if isinstance(raw_claims.get("aud"), str) else "",
    )


def decode_kind(token: str, kind: str) -> Claims:
    """:func:`decode`, then the claim must be of ``kind`` (``operator``, ``account``, ``user``)."""
    claims = decode(token)
    if claims.kind != kind:
        raise JwtError(f"not {kind} claim")
    return claims


def is_key_of(key: str, prefix: int) -> bool:
    """Whether ``key`` is a public nkey of the kind ``prefix`` names (operator, account)."""
    return decode_public_key(key, prefix) is not None
