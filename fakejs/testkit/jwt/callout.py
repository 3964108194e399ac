"""An authorization callout service for tests (ADR-26): read the server's request, answer with a user or an error.

::

    issuer = Key(nkeys.PREFIX_BYTE_ACCOUNT)  # the config's auth_callout { issuer }

    def decide(request: AuthorizationRequest) -> Allow | Deny:
        if request.connect_opts.get("pass") == "secret":
            return Allow("APP", pub_allow=["orders.>"])
        return Deny("bad password")

    service = CalloutService(issuer, decide)

    async def on_request(msg):  # subscribed to AUTH_CALLOUT_SUBJECT by a client of auth_users
        await msg.respond(service.answer(msg.data, msg.headers))

:func:`read_request` checks the request JWT's signature (the server's nkey)
and kind; :meth:`CalloutService.answer` mints the ``authorization_response``
JWT, signed by the issuer, for the request's ``user_nkey`` and server, with
a user JWT (``Allow``: its ``aud`` names the account the user goes to, as
configuration mode wants) or an error (``Deny``).  Given a :class:`CurveKey`
(the config's ``xkey``), it opens encrypted requests and seals its answers.  The claims are written as
nats-io/jwt v2 writes them (:mod:`fakejs.testkit.jwt.claims`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.jwt.callout import NONCE_SIZE, open_sealed, seal
from fakejs.gocompat.curvekeys import PREFIX_BYTE_CURVE, encode_key, x25519_public
from fakejs.testkit.jwt.claims import LIBRARY_VERSION, decode, encode, verify
from fakejs.testkit.jwt.issuers import NO_LIMIT, Key, ResponsePermission, ScopedKey, _permissions, _user_limits

AUTH_CALLOUT_SUBJECT = "$SYS.REQ.USER.AUTH"
REQUEST_KIND = "authorization_request"
RESPONSE_KIND = "authorization_response"
XKEY_HEADER = "Nats-Server-Xkey"


class CurveKey:
    """A curve (x25519) key pair, the public key in nkeys' text form (``X...``): the config's ``auth_callout { xkey }``."""

    def __init__(self, private: bytes | None = None) -> None:
        self.private = private if private is not None else os.urandom(32)
        self.public_key = encode_key(PREFIX_BYTE_CURVE, x25519_public(self.private))

    def __repr__(self) -> str:
        return f"CurveKey({self.public_key})"


@dataclass(frozen=True)
class AuthorizationRequest:
    """A server's authorization request (nats-io/jwt's ``AuthorizationRequestClaims``), decoded and verified."""

    token: str
    claims: Mapping[str, Any]

    @property
    def nats(self) -> Mapping[str, Any]:
        return dict(self.claims["nats"])

    @property
    def user_nkey(self) -> str:
        """The user key the answer must be issued for."""
        return str(self.nats["user_nkey"])

    @property
    def server_id(self) -> Mapping[str, Any]:
        """``server_id``: the server's ``name``, ``host``, ``id``, ``version`` (``cluster``, ``tags``, ``xkey``)."""
        return dict(self.nats["server_id"])

    @property
    def client_info(self) -> Mapping[str, Any]:
        """``client_info``: ``host``, ``id``, ``user``, ``name``, ``kind``, ``type`` (``nonce`` with a signature)."""
        return dict(self.nats.get("client_info", {}))

    @property
    def connect_opts(self) -> Mapping[str, Any]:
        """``connect_opts``: what the client's CONNECT said (``user``, ``pass``, ``auth_token``, ``jwt``...)."""
        return dict(self.nats.get("connect_opts", {}))


class RequestError(ValueError):
    """A payload that is not a server's signed authorization request."""


def read_request(payload: bytes) -> AuthorizationRequest:
    """The request in ``payload``, its signature checked (:class:`RequestError` otherwise)."""
    token = payload.decode()
    if not verify(token):
        raise RequestError("the request's signature is not its issuer's")
    claims = decode(token)[1]
    if claims.get("nats", {}).get("type") != REQUEST_KIND:
        raise RequestError("not an authorization request")
    return AuthorizationRequest(token, claims)


@dataclass(frozen=True)
class Allow:
    """Let the client in as a user of ``account`` (the user JWT's ``aud``), with these permissions and limits.

    ``name`` replaces the user name the client showed; ``expires`` (seconds
    from now) ends the login; ``user_signer`` signs the user JWT instead of
    the issuer (a wrong issuer, for tests of refusals, or another account in
    operator mode); ``issuer_account`` names the account whose signing key
    ``user_signer`` is (a scoped key's user gets no limits of its own);
    ``response_expires`` is the response JWT's own ``exp`` (seconds from
    now, may be negative).
    """

    account: str
    name: str = ""
    pub_allow: Iterable[str] = ()
    pub_deny: Iterable[str] = ()
    sub_allow: Iterable[str] = ()
    sub_deny: Iterable[str] = ()
    resp: ResponsePermission | None = None
    limits: Mapping[str, int] = field(default_factory=dict)
    expires: float | None = None
    user_signer: Key | None = None
    response_expires: float | None = None
    issuer_account: str = ""


@dataclass(frozen=True)
class Deny:
    """Refuse the client, with the error the server logs."""

    error: str
    response_expires: float | None = None


class CalloutService:
    """Answers authorization requests for one issuer (an account key: the config's ``auth_callout { issuer }``)."""

    def __init__(
        self,
        issuer: Key,
        decide: Callable[[AuthorizationRequest], Allow | Deny],
        now: Callable[[], float] = time.time,
        xkey: CurveKey | None = None,
    ) -> None:
        self.issuer = issuer
        self.decide = decide
        self.now = now
        self.xkey = xkey
        self.requests: list[AuthorizationRequest] = []

    def answer(self, payload: bytes, headers: Mapping[str, str] | None = None) -> bytes:
        """The response to the request in ``payload`` (what the service publishes to the reply subject).

        With an ``xkey``, a request whose ``headers`` name the server's curve key
        (``Nats-Server-Xkey``) is decrypted, and the response encrypted for it.
        """
        server_key = (headers or {}).get(XKEY_HEADER, "")
        if self.xkey is not None and server_key:
            payload = open_sealed(payload, self.xkey.private, server_key)
        request = read_request(payload)
        self.requests.append(request)
        decision = self.decide(request)
        if isinstance(decision, Deny):
            response = self.response(request, {"error": decision.error}, decision.response_expires)
        else:
            response = self.response(request, {"jwt": self.user_jwt(request, decision)}, decision.response_expires)
        if self.xkey is not None and server_key:
            return seal(response, self.xkey.private, server_key, os.urandom(NONCE_SIZE))
        return response

    def user_jwt(self, request: AuthorizationRequest, allow: Allow) -> str:
        """The user JWT ``allow`` describes, for the request's user key."""
        now = self.now()
        scoped = isinstance(allow.user_signer, ScopedKey)
        nats = {
            **_permissions(allow.pub_allow, allow.pub_deny, allow.sub_allow, allow.sub_deny, allow.resp),
            **_user_limits((), allow.limits, 0 if scoped else NO_LIMIT),
        }
        if allow.issuer_account:
            nats["issuer_account"] = allow.issuer_account
        nats.update(type="user", version=LIBRARY_VERSION)
        claims = {
            "aud": allow.account,
            "exp": int(now + allow.expires) if allow.expires is not None else 0,
            "iat": int(now),
            "name": allow.name,
            "sub": request.user_nkey,
            "nats": nats,
        }
        return encode(claims, (allow.user_signer or self.issuer).keypair)

    def response(self, request: AuthorizationRequest, result: Mapping[str, str], expires: float | None) -> bytes:
        """The ``authorization_response`` JWT carrying ``result`` (``jwt`` or ``error``), signed by the issuer."""
        now = self.now()
        claims = {
            "aud": request.server_id["id"],
            "exp": int(now + expires) if expires is not None else 0,
            "iat": int(now),
            "sub": request.user_nkey,
            "nats": {**result, "type": RESPONSE_KIND, "version": LIBRARY_VERSION},
        }
        return encode(claims, self.issuer.keypair).encode()
