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
import re
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.auth import decode_public_key, verify_signature
from fakejs.core.jwt.shapes import IDENTIFIER, ShapeError, check_claims, json_kind, normalized
from fakejs.gocompat import gojson
from fakejs.gocompat.goquote import quote_text
from fakejs.gocompat.jsonvalue import GoJSONError

ALGORITHMS = frozenset({"ed25519-nkey", "ed25519"})
OLD_ALGORITHM = "ed25519"  # nats-io/jwt's AlgorithmNkeyOld: v1 claims, the claims part signed alone
# nats-io/jwt's MaxTokenSize and libVersion.
MAX_TOKEN_SIZE = 1024 * 1024
LIBRARY_VERSION = 2
# nats-io/jwt's userConfigRE: a JWT (or seed) between two lines of dashes.
DECORATED = re.compile(r"\s*(?:(?:-{3,}.*-{3,}\r?\n)([\w\-.=]+)(?:\r?\n-{3,}.*-{3,}(\r?\n|\Z)))", re.ASCII)
BASE64URL_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
OPERATOR = "operator"
ACCOUNT = "account"
USER = "user"

# nkeys' prefix bytes of operator and account public keys.
PREFIX_BYTE_OPERATOR = 14 << 3
PREFIX_BYTE_ACCOUNT = 0
# The key a claim's issuer must have (nats-io/jwt's ExpectedPrefixes), by kind; nkeys' PrefixByte prints as its name.
ISSUER_PREFIXES = {USER: PREFIX_BYTE_ACCOUNT, ACCOUNT: PREFIX_BYTE_OPERATOR, OPERATOR: PREFIX_BYTE_OPERATOR}
PREFIX_NAMES = {PREFIX_BYTE_ACCOUNT: "account", PREFIX_BYTE_OPERATOR: "operator"}
# The kinds nats-io/jwt loads with a version of their own; the others it reads as generic claims.
KNOWN_KINDS = frozenset({OPERATOR, ACCOUNT, USER, "activation", "authorization_request", "authorization_response"})
UNSUPPORTED_KINDS = {"cluster": "ClusterClaims are not supported", "server": "ServerClaims are not supported"}


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

    def time_problems(self, now: float) -> list[str]:
        """Every time check nats-io/jwt's ``ClaimsData.Validate`` fails: expired, then not yet valid."""
        problems = []
        if self.expires and now > self.expires:
            problems.append("claim is expired")
        if self.not_before and now < self.not_before:
            problems.append("claim is not yet valid")
        return problems

    def time_problem(self, now: float) -> str:
        """nats-io/jwt's time checks: ``"claim is expired"``, ``"claim is not yet valid"``, or ``""``."""
        if self.expires and now > self.expires:
            return "claim is expired"
        if self.not_before and now < self.not_before:
            return "claim is not yet valid"
        return ""


def _unbase64url(text: str) -> bytes:
    """Go's ``base64.RawURLEncoding.DecodeString``: the URL alphabet, no padding, ``\\r`` and ``\\n`` skipped."""
    raw = text.encode("utf-8", "surrogatepass")
    cleaned = bytearray()
    for position, byte in enumerate(raw):
        if byte in b"\r\n":
            continue
        if byte not in BASE64URL_ALPHABET:
            raise JwtError(f"illegal base64 data at input byte {position}")
        cleaned.append(byte)
    if len(cleaned) % 4 == 1:
        raise JwtError(f"illegal base64 data at input byte {len(cleaned) - 1}")
    try:
        return base64.urlsafe_b64decode(bytes(cleaned) + b"=" * (-len(cleaned) % 4))
    except binascii.Error as exc:  # not expected once the alphabet and length are right
        raise JwtError(f"illegal base64 data: {exc}") from None


def _part(text: str, go_type: str) -> dict[str, Any]:
    """One JSON part, read as Go reads it into ``go_type`` (an object; ``null`` is an empty one)."""
    try:
        value = gojson.loads(_unbase64url(text))
    except GoJSONError as exc:
        raise JwtError(str(exc)) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise JwtError(f"json: cannot unmarshal {json_kind(value)} into Go value of type {go_type}")
    return value


def _header(text: str) -> str:
    """nats-io/jwt's ``parseHeaders``: ``typ`` JWT (any case), ``alg`` ed25519-nkey or ed25519 (any case); the ``alg``."""
    header = _part(text, "jwt.Header")
    for name in ("typ", "alg"):
        if not isinstance(header.get(name, ""), str | None):
            value = header[name]
            raise JwtError(
                f"json: cannot unmarshal {json_kind(value)} into Go struct field Header.{name} of type string"
            )
    kind, algorithm = header.get("typ") or "", header.get("alg") or ""
    if kind.upper() != "JWT":
        raise JwtError(f"not supported type {quote_text(kind)}")
    if algorithm.lower() not in ALGORITHMS:
        raise JwtError(f"unexpected {quote_text(algorithm)} algorithm")
    return str(algorithm)


def _version(raw_claims: dict[str, Any]) -> int:
    """nats-io/jwt's claim version: 1 for a top-level ``type`` (v1 claims), else ``nats.version``."""
    nats = raw_claims.get("nats")
    version = nats.get("version") if isinstance(nats, dict) else None
    if isinstance(raw_claims.get("type"), str) and raw_claims["type"]:
        return 1
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


def _seconds(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def decode(token: str) -> Claims:
    """The verified claims of ``token``; :class:`JwtError` when it does not decode or verify.

    nats-io/jwt's ``Decode``, in its order: the size, three chunks, the
    header, the claims (JSON of the right types, a known version), the
    signature, the issuer's kind of key.
    """
    size = len(token.encode("utf-8", "surrogatepass"))
    if size > MAX_TOKEN_SIZE:
        raise JwtError(f"token size {size} exceeds maximum of {MAX_TOKEN_SIZE} bytes: token too large")
    parts = token.split(".")
    if len(parts) != 3:
        raise JwtError("expected 3 chunks")
    _header(parts[0])
    raw_claims = _part(parts[1], "jwt.identifier")
    try:
        check_claims(raw_claims, IDENTIFIER)
    except ShapeError as exc:
        raise JwtError(str(exc)) from None
    identified = normalized(raw_claims, IDENTIFIER)  # "NATS": {"Type": ...} is read as nats.type
    raw_kind, version = _kind(identified), _version(identified)
    _check_version(raw_kind, version)
    try:
        check_claims(raw_claims, raw_kind)
    except ShapeError as exc:
        raise JwtError(str(exc)) from None
    raw_claims = normalized(raw_claims, raw_kind)
    signature = _unbase64url(parts[2])
    issuer = raw_claims.get("iss") or ""
    if raw_kind in KNOWN_KINDS and version == LIBRARY_VERSION:
        signed, scheme = (parts[0] + "." + parts[1]).encode(), "V2"
    else:  # nats-io/jwt's other claims (version -1) and v1 ones: the claims part alone
        signed, scheme = parts[1].encode(), "V1"
    if decode_public_key(issuer) is None or not _verified(issuer, signed, signature):
        raise JwtError(f"claim failed {scheme} signature verification")
    if raw_kind in ISSUER_PREFIXES and decode_public_key(issuer, ISSUER_PREFIXES[raw_kind]) is None:
        raise JwtError(f"unable to validate expected prefixes - [{PREFIX_NAMES[ISSUER_PREFIXES[raw_kind]]}]")
    nats = raw_claims.get("nats")
    nats = nats if isinstance(nats, dict) else {}
    return Claims(
        subject=raw_claims.get("sub") or "",
        issuer=issuer,
        kind=nats.get("type") or "",
        name=raw_claims.get("name") or "",
        issued_at=_seconds(raw_claims.get("iat")),
        expires=_seconds(raw_claims.get("exp")),
        not_before=_seconds(raw_claims.get("nbf")),
        jwt_id=raw_claims.get("jti") or "",
        nats=nats,
        audience=raw_claims["aud"] if isinstance(raw_claims.get("aud"), str) else "",
    )


def decode_generic(token: str) -> Claims:
    """nats-io/jwt's ``DecodeGeneric``: claims of any kind, signed as their header's ``alg`` says.

    The v1 algorithm (exactly ``ed25519``) signs the claims part alone, any
    other the header and the claims; no size, version or kind checks.
    nats-server reads ``$SYS.REQ.CLAIMS.DELETE`` requests this way.
    """
    parts = token.split(".")
    if len(parts) != 3:
        raise JwtError("expected 3 chunks")
    algorithm = _header(parts[0])
    raw_claims = _part(parts[1], "jwt.GenericClaims")
    signature = _unbase64url(parts[2])
    found = raw_claims.get("iss")
    issuer = found if isinstance(found, str) else ""
    if algorithm == OLD_ALGORITHM:
        signed, scheme = parts[1].encode(), "V1"
    else:
        signed, scheme = (parts[0] + "." + parts[1]).encode(), "V2"
    if decode_public_key(issuer) is None or not _verified(issuer, signed, signature):
        raise JwtError(f"claim failed {scheme} signature verification")
    nats = raw_claims.get("nats")
    nats = nats if isinstance(nats, dict) else {}
    subject = raw_claims.get("sub")
    return Claims(
        subject=subject if isinstance(subject, str) else "",
        issuer=issuer,
        kind=str(nats.get("type") or ""),
        nats=nats,
    )


def _check_version(kind: str, version: int) -> None:
    """nats-io/jwt's ``loadClaims``: no newer version, and the version the kind's loader knows."""
    if version > LIBRARY_VERSION:
        raise JwtError("JWT was generated by a newer version ")
    if kind in UNSUPPORTED_KINDS:
        raise JwtError(UNSUPPORTED_KINDS[kind])
    if kind in KNOWN_KINDS and version != LIBRARY_VERSION:
        if version != 1:
            raise JwtError(f"library supports version {LIBRARY_VERSION} or less - received {version}")
        raise JwtError("v1 claims (nats-io/jwt v1) are not supported by fakejs yet")


def _kind(raw_claims: dict[str, Any]) -> str:
    """The claim's kind: a v1 claim's top-level ``type``, else ``nats.type`` (nats-io/jwt's ``identifier.Kind``)."""
    top = raw_claims.get("type")
    if isinstance(top, str) and top:
        return top
    nats = raw_claims.get("nats")
    kind = nats.get("type") if isinstance(nats, dict) else None
    return kind if isinstance(kind, str) else ""


def _verified(issuer: str, data: bytes, signature: bytes) -> bool:
    """The ed25519 signature of ``data`` by ``issuer``'s key."""
    return verify_signature(issuer, data, base64.b64encode(signature).decode())


def parse_decorated_jwt(contents: str) -> str:
    """nats-io/jwt's ``ParseDecoratedJWT``: the first block between ``---...---`` lines (a ``.creds`` file's JWT),
    else the text as it is."""
    found = DECORATED.search(contents)
    return found.group(1) if found else contents


def decode_kind(token: str, kind: str) -> Claims:
    """:func:`decode`, then the claim must be of ``kind`` (``operator``, ``account``, ``user``)."""
    claims = decode(token)
    if claims.kind != kind:
        raise JwtError(f"not {kind} claim")
    return claims


def is_key_of(key: str, prefix: int) -> bool:
    """Whether ``key`` is a public nkey of the kind ``prefix`` names (operator, account)."""
    return decode_public_key(key, prefix) is not None
