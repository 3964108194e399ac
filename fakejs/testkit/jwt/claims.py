"""The JWT format of nats-io/jwt v2: claims in Go's order, the ``jti``, the signature, ``.creds`` text.

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
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import nkeys

from fakejs.core.jwt.claims import JwtError
from fakejs.core.jwt.claims import decode as decode_verified
from fakejs.gocompat import gojson

HEADER = {"typ": "JWT", "alg": "ed25519-nkey"}
# nats-io/jwt's libVersion: the "version" of every claim it writes.
LIBRARY_VERSION = 2
# The fields of nats-io/jwt's ClaimsData, in the struct's order.
CLAIMS_DATA_FIELDS = ("aud", "exp", "jti", "iat", "iss", "name", "nbf", "sub")


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
    """Whether ``token``'s signature is its issuer's (``iss``): it decodes as nats-server decodes it."""
    try:
        decode_verified(token)
    except JwtError:
        return False
    return True


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
