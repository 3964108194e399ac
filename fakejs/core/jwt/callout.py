"""Authorization callouts (ADR-26) without I/O: the request a server signs, the response it accepts.

A client that a callout must vouch for is described in an
``authorization_request`` JWT (nats-io/jwt's ``AuthorizationRequestClaims``)
that the server signs with its own nkey (its id is the public key): ``sub``
the callout's issuer, ``aud`` ``nats-authorization-request``, ``exp`` the
login time-out away, and in ``nats`` the server (``server_id``), a fresh
user key the answer must be for (``user_nkey``), the client
(``client_info``) and its CONNECT (``connect_opts``).
:func:`read_response` checks the ``authorization_response`` JWT that comes
back, in nats-server's order (``processClientOrLeafCallout``), and raises
:class:`CalloutRefused` with nats-server's text (title-cased as its
warning is) or gives the user the embedded user JWT makes: its ``aud``
names the account (configuration mode), its ``pub``/``sub``/``resp`` are
the permissions, its ``exp`` ends the login.

ed25519 signing comes from PyNaCl, loaded with the first callout.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from fakejs.core.auth import PREFIX_BYTE_USER, decode_public_key
from fakejs.core.jwt.claims import PREFIX_BYTE_ACCOUNT, USER, Claims, JwtError, decode
from fakejs.core.jwt.login import permissions
from fakejs.core.jwt.scoped import TemplateError, expand_template, has_empty_permissions, user_scopes
from fakejs.core.jwt.trust import AccountClaims
from fakejs.core.users import User
from fakejs.gocompat import gojson
from fakejs.gocompat.curvekeys import PREFIX_BYTE_CURVE, encode_key

AUTH_CALLOUT_SUBJECT = "$SYS.REQ.USER.AUTH"
REQUEST_AUDIENCE = "nats-authorization-request"
REQUEST_KIND = "authorization_request"
RESPONSE_KIND = "authorization_response"
PREFIX_BYTE_SERVER = 13 << 3
LIBRARY_VERSION = 2
_HEADER = '{"typ":"JWT","alg":"ed25519-nkey"}'
_CLAIMS_DATA_FIELDS = ("aud", "exp", "jti", "iat", "iss", "name", "nbf", "sub")


class CalloutRefused(Exception):
    """A response the server does not accept; ``str()`` is nats-server's warning text."""


class NkeyPair:
    """An ed25519 key pair in nkeys' text form (nats-server's server key ``s.kp``, a callout's user key)."""

    def __init__(self, seed: bytes, prefix: int) -> None:
        # PyNaCl loads with the first callout, not at start
        from nacl.signing import SigningKey

        self._signing = SigningKey(seed)
        self.public_key = encode_key(prefix, bytes(self._signing.verify_key))

    def sign(self, data: bytes) -> bytes:
        """The 64-byte ed25519 signature of ``data``."""
        return bytes(self._signing.sign(data).signature)


XKEY_VERSION = b"xkv1"
NONCE_SIZE = 24


def seal(data: bytes, private: bytes, recipient: str, nonce: bytes) -> bytes:
    """nkeys' curve ``Seal``: ``xkv1``, the nonce, then NaCl's box of ``data`` for ``recipient`` (``X...``)."""
    # PyNaCl loads with the first encrypted callout
    from nacl.public import Box, PrivateKey, PublicKey

    recipient_key = decode_public_key(recipient, PREFIX_BYTE_CURVE)
    assert recipient_key is not None, "the configuration checked the key"
    sealed = Box(PrivateKey(private), PublicKey(recipient_key)).encrypt(data, nonce)
    return XKEY_VERSION + nonce + sealed.ciphertext


def open_sealed(data: bytes, private: bytes, sender: str) -> bytes:
    """nkeys' curve ``Open`` of what ``sender`` sealed; :class:`ValueError` with nkeys' error text otherwise."""
    # PyNaCl loads with the first encrypted callout
    from nacl.exceptions import CryptoError
    from nacl.public import Box, PrivateKey, PublicKey

    if len(data) <= len(XKEY_VERSION) + NONCE_SIZE:
        raise ValueError("nkeys: encrypted input is not valid")
    if not data.startswith(XKEY_VERSION):
        raise ValueError("nkeys: encrypted input wrong version")
    sender_key = decode_public_key(sender, PREFIX_BYTE_CURVE)
    if sender_key is None:
        raise ValueError("nkeys: not a valid sender public curve key")
    start = len(XKEY_VERSION)
    nonce, box = data[start : start + NONCE_SIZE], data[start + NONCE_SIZE :]
    try:
        return bytes(Box(PrivateKey(private), PublicKey(sender_key)).decrypt(box, nonce))
    except CryptoError:
        raise ValueError("nkeys: could not decrypt input") from None


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def encode(claims: Mapping[str, Any], key: NkeyPair) -> str:
    """``claims`` signed by ``key`` as nats-io/jwt encodes them: ``iss``, ``jti``, Go's field order."""
    data = {**claims, "iss": key.public_key}
    ordered = {k: data[k] for k in _CLAIMS_DATA_FIELDS if k != "jti" and data.get(k)}
    digest = hashlib.new("sha512_256", gojson.dumps(ordered).encode()).digest()
    issued = {k: data.get(k) for k in _CLAIMS_DATA_FIELDS if k == "jti" or data.get(k)}
    issued["jti"] = base64.b32encode(digest).decode().rstrip("=")
    issued["nats"] = claims["nats"]
    to_sign = _base64url(_HEADER.encode()) + "." + _base64url(gojson.dumps(issued).encode())
    return to_sign + "." + _base64url(key.sign(to_sign.encode()))


def connect_options(connect: Mapping[str, Any]) -> dict[str, Any]:
    """nats-io/jwt's ``ConnectOptions`` of a CONNECT (``fillConnectOpts``): empty fields left out but ``protocol``."""
    fields = ("jwt", "nkey", "sig", "auth_token", "user", "pass", "name", "lang", "version")
    options: dict[str, Any] = {k: v for k in fields if isinstance(v := connect.get(k), str) and v}
    protocol = connect.get("protocol", 0)
    options["protocol"] = protocol if isinstance(protocol, int) and not isinstance(protocol, bool) else 0
    return options


def request_claims(
    issuer: str,
    server: dict[str, Any],
    user_nkey: str,
    client_info: dict[str, Any],
    connect: Mapping[str, Any],
    client_tls: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``authorization_request`` claims (before ``iat``, ``exp`` and the signature).

    ``client_tls`` (nats-io/jwt's ``ClientTLS``) describes a TLS client's connection.
    """
    nats: dict[str, Any] = {
        "server_id": server,
        "user_nkey": user_nkey,
        "client_info": client_info,
        "connect_opts": connect_options(connect),
    }
    if client_tls is not None:
        nats["client_tls"] = client_tls
    nats.update(type=REQUEST_KIND, version=LIBRARY_VERSION)
    return {"aud": REQUEST_AUDIENCE, "sub": issuer, "nats": nats}


@dataclass(frozen=True)
class CalloutUser:
    """What an accepted response makes: the user (in ``user.account``), its name, when it expires, its JWT's issuer."""

    user: User
    name: str
    expires: int
    issuer: str = ""
    claims: Claims | None = None


ANY_ACCOUNT = "*"


@dataclass(frozen=True)
class ExternalAuthorization:
    """An operator-mode account JWT's ``authorization`` (nats-io/jwt's ``ExternalAuthorization``), with its keys.

    ``signing_keys`` are the account's own signing keys (a response may be
    signed by one); ``allowed_accounts`` the other accounts a user may be
    placed in (``*``: any).
    """

    auth_users: tuple[str, ...]
    allowed_accounts: tuple[str, ...] = ()
    xkey: str = ""
    signing_keys: frozenset[str] = frozenset()

    def allows(self, account: str) -> bool:
        """nats-server's ``isAllowedAcount``."""
        allowed = self.allowed_accounts
        return allowed == (ANY_ACCOUNT,) or account in allowed


def external_authorization(nats: Mapping[str, Any], signing_keys: frozenset[str]) -> ExternalAuthorization | None:
    """An account claim's external authorization, or None when it names no ``auth_users``."""
    block = nats.get("authorization")
    if not isinstance(block, dict):
        return None
    users = tuple(u for u in block.get("auth_users") or () if isinstance(u, str))
    if not users:
        return None
    allowed = tuple(a for a in block.get("allowed_accounts") or () if isinstance(a, str))
    xkey = block.get("xkey")
    return ExternalAuthorization(users, allowed, xkey if isinstance(xkey, str) else "", signing_keys)


def _title(text: str) -> str:
    """nats-server's ``titleCase``: the first letter in upper case."""
    return text[:1].upper() + text[1:]


def _decoded(token: str, kind: str, wrong_kind: str) -> Claims:
    try:
        claims = decode(token)
    except JwtError as exc:
        raise CalloutRefused(_title(str(exc))) from None
    if claims.kind != kind:
        raise CalloutRefused(_title(wrong_kind))
    if decode_public_key(claims.issuer, PREFIX_BYTE_ACCOUNT) is None:
        raise CalloutRefused("Unable to validate expected prefixes - [account]")
    return claims


def _response_problem(claims: Claims, now: float) -> str:
    """nats-io/jwt's ``AuthorizationResponseClaims.Validate``: its first issue, or ``""``."""
    nats = claims.nats
    audience = claims.audience
    issuer_account = nats.get("issuer_account")
    if decode_public_key(claims.subject, PREFIX_BYTE_USER) is None:
        return "Subject must be a user public key"
    if decode_public_key(audience, PREFIX_BYTE_SERVER) is None:
        return "Audience must be a server public key"
    error, token = nats.get("error"), nats.get("jwt")
    if not error and not token:
        return "Error or Jwt is required"
    if error and token:
        return "Only Error or Jwt can be set"
    if issuer_account and decode_public_key(str(issuer_account), PREFIX_BYTE_ACCOUNT) is None:
        return "issuer_account is not an account public key"
    return claims.time_problem(now)


@dataclass(frozen=True)
class Encryption:
    """An encrypted callout (``xkey``): the server's curve private key and the service's public key."""

    private: bytes
    service_key: str


def read_response(
    payload: bytes,
    *,
    user_nkey: str,
    server_id: str,
    account: str,
    issuer: str,
    now: float,
    encryption: Encryption | None = None,
    external: ExternalAuthorization | None = None,
) -> CalloutUser:
    """The user a callout's answer logs in, or :class:`CalloutRefused` with nats-server's text.

    With ``encryption`` an answer that is not a JWT (``eyJ...``) is decrypted
    first.  ``external`` is an operator-mode account's authorization: then
    the response must be signed by the account or one of its signing keys
    (unless it was encrypted), and the user is placed in the account that
    issued it, which must be the callout's or one it allows.
    """
    payload, encrypted = _decrypted(payload, encryption, account)
    response = _checked_response(payload, user_nkey, server_id, now)
    if external is not None and not encrypted:
        signer = str(response.nats.get("issuer_account") or response.issuer)
        if signer != account and signer not in external.signing_keys:
            raise CalloutRefused("Auth callout signing key is unknown")
    user = _decoded(str(response.nats.get("jwt", "")), USER, "not user claim")
    if problem := user.time_problem(now):
        raise CalloutRefused(f"Error validating user JWT: {problem}")
    if user.subject != user_nkey:
        raise CalloutRefused(
            f"Expected authorized user of {_quoted(user_nkey)} but got {_quoted(user.subject)} "
            f"on account {_quoted(account)}"
        )
    return _callout_user(user, _placement(user, account, issuer, external))


def _decrypted(payload: bytes, encryption: Encryption | None, account: str) -> tuple[bytes, bool]:
    """The answer in the clear, and whether it was encrypted (an empty one is refused first)."""
    if not payload:
        raise CalloutRefused(f'Auth callout violation: "no reason supplied" on account {_quoted(account)}')
    if encryption is None or payload.startswith(b"eyJ"):
        return payload, False
    try:
        return open_sealed(payload, encryption.private, encryption.service_key), True
    except ValueError as exc:
        raise CalloutRefused(f"Error decrypting auth callout response on account {_quoted(account)}: {exc}") from None


def _checked_response(payload: bytes, user_nkey: str, server_id: str, now: float) -> Claims:
    """The ``authorization_response`` claims, valid, for the user key and server asked, not an error."""
    response = _decoded(payload.decode("utf-8", "replace").strip(), RESPONSE_KIND, "not an authorization request claim")
    if problem := _response_problem(response, now):
        raise CalloutRefused(f"Authorization response had validation errors: {problem}")
    if response.subject != user_nkey:
        raise CalloutRefused("Auth callout violation: auth callout response is not for expected user")
    if response.audience != server_id:
        raise CalloutRefused("Auth callout violation: auth callout response is not for server")
    if error := response.nats.get("error"):
        raise CalloutRefused(f"Auth callout service returned an error: {error}")
    return response


def _placement(user: Claims, account: str, issuer: str, external: ExternalAuthorization | None) -> str:
    """The account the user goes to: the user JWT's ``aud`` (configuration mode) or its issuing account."""
    if external is not None:
        placement = str(user.nats.get("issuer_account") or user.issuer)
        if placement != account and not external.allows(placement):
            raise CalloutRefused(
                f"Account {_quoted(user.issuer)} not permitted as valid account option for auth callout "
                f"for account {_quoted(account)}"
            )
        return placement
    if user.nats.get("issuer_account"):
        raise CalloutRefused(f"Error non operator mode account {_quoted(account)}: attempted to use issuer_account")
    if user.issuer != issuer:
        raise CalloutRefused(
            f"Wrong issuer for auth callout response on account {_quoted(account)}, "
            f"expected {_quoted(issuer)} got {_quoted(user.issuer)}"
        )
    return user.audience


def _callout_user(claims: Claims, placement: str) -> CalloutUser:
    nats = claims.nats
    # As nats-server's buildInternalNkeyUser: the permissions only, not the JWT's limits.
    user = User(name=claims.name, nkey=claims.subject, permissions=permissions(nats), account=placement)
    return CalloutUser(user, claims.name, claims.expires, claims.issuer, claims)


def scoped_callout_user(accepted: CalloutUser, account: AccountClaims) -> User:
    """The user of a JWT issued by a scoped signing key of ``account``: the scope's template as its permissions.

    :class:`CalloutRefused` with nats-server's text when the JWT has
    permissions of its own or the template does not expand.
    """
    scope = user_scopes(account.claims.nats).get(accepted.issuer)
    claims = accepted.claims
    if scope is None or claims is None:
        raise CalloutRefused("User JWT is not a valid scoped user")
    if not has_empty_permissions(claims.nats):
        raise CalloutRefused("User JWT is not valid: scoped users require no permissions or limits set")
    try:
        expanded = expand_template(scope.template, claims, account.claims)
    except TemplateError as exc:
        raise CalloutRefused(f"User JWT generated invalid permissions: {exc}") from None
    return replace(accepted.user, permissions=permissions({**claims.nats, **expanded}))


def _quoted(text: str) -> str:
    """Go's ``%q`` of a plain string."""
    return gojson.dumps(text)
