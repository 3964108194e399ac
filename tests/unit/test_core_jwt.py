"""fakejs.core.jwt without a server: JWTs decoded and verified, the chain of trust, and user logins.

Credentials come from :mod:`fakejs.testkit.jwt` with a fixed clock, so
``iat``, ``exp`` and ``nbf`` are known.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from fakejs.core.jetstream_limits import NO_LIMIT
from fakejs.core.jwt.claims import ACCOUNT, OPERATOR, JwtError, decode, decode_kind
from fakejs.core.jwt.login import JwtAuthenticator, Refused, permissions, source_allowed
from fakejs.core.jwt.trust import AccountClaims, TrustedOperators, resolve
from fakejs.testkit.jwt import Account, Operator, User

NOW = 1_700_000_000.0
NONCE = b"nonce-to-sign"


def operator() -> Operator:
    return Operator("O", now=lambda: NOW)


def authenticator(op: Operator, *accounts: Account) -> JwtAuthenticator:
    trusted = TrustedOperators.from_jwts([op.jwt])
    return JwtAuthenticator(resolve(trusted, {account.public_key: account.jwt for account in accounts}))


def connect(user: User, nonce: bytes = NONCE, sign: bool = True) -> dict[str, Any]:
    options: dict[str, Any] = {"jwt": user.jwt}
    if sign:
        options["sig"] = base64.urlsafe_b64encode(user.sign(nonce)).rstrip(b"=").decode()
    return options


def refusal(auth: JwtAuthenticator, options: dict[str, Any], host: str = "127.0.0.1", now: float = NOW) -> str:
    with pytest.raises(Refused) as refused:
        auth.login(options, NONCE, host, "STANDARD", now)
    return str(refused.value)


def test_decode_verifies_the_issuers_signature() -> None:
    op = operator()
    claims = decode(op.jwt)
    assert (claims.kind, claims.subject, claims.issuer, claims.name, claims.issued_at) == (
        OPERATOR,
        op.public_key,
        op.public_key,
        "O",
        int(NOW),
    )
    header, body, _ = op.jwt.split(".")
    forged = Operator("O").jwt.split(".")[2]
    with pytest.raises(JwtError, match="signature"):
        decode(f"{header}.{body}.{forged}")
    with pytest.raises(JwtError, match="expected 3 chunks"):
        decode("a.b")
    with pytest.raises(JwtError, match="not account claim"):
        decode_kind(op.jwt, ACCOUNT)


def test_time_problems() -> None:
    app = operator().account("APP")
    expired, early = decode(app.user("e", expires=-5).jwt), decode(app.user("n", not_before=60).jwt)
    assert expired.time_problem(NOW) == "claim is expired"
    assert early.time_problem(NOW) == "claim is not yet valid"
    assert early.time_problem(NOW + 61) == ""


def test_only_accounts_of_trusted_operators_and_their_signing_keys_resolve() -> None:
    op = operator()
    key = op.signing_key()
    direct, signed = op.account("A"), op.account("B", signer=key)
    foreign = Operator("X").account("C")
    resolved = resolve(TrustedOperators.from_jwts([op.jwt]), {a.public_key: a.jwt for a in (direct, signed, foreign)})
    assert set(resolved) == {direct.public_key, signed.public_key}


def test_account_claims_make_an_account_config() -> None:
    op = operator()
    app = op.account("APP", jetstream=True, limits={"conn": 3, "subs": 7})
    config = AccountClaims.from_claims(decode(app.jwt)).config(app.public_key)
    assert (config.name, config.name_tag, config.max_connections, config.max_subscriptions) == (
        app.public_key,
        "APP",
        3,
        7,
    )
    assert config.jetstream is not None and config.jetstream.max_streams == NO_LIMIT
    assert AccountClaims.from_claims(decode(op.account("PLAIN").jwt)).config("P").jetstream is None


def test_revocations_cover_jwts_issued_at_or_before() -> None:
    app = operator().account("APP")
    app.revoke("UKEY", at=NOW)
    app.revoke("*", at=NOW - 100)
    account = AccountClaims.from_claims(decode(app.jwt))
    assert account.revoked("UKEY", int(NOW)) and not account.revoked("UKEY", int(NOW) + 1)
    assert account.revoked("UOTHER", int(NOW) - 100) and not account.revoked("UOTHER", int(NOW))


def test_a_signed_login_lands_in_its_account_with_its_permissions() -> None:
    op = operator()
    app = op.account("APP")
    user = app.user("alice", pub_allow=["orders.>"], sub_deny=["secret"], limits={"subs": 4}, expires=30)
    login = authenticator(op, app).login(connect(user), NONCE, "127.0.0.1", "STANDARD", NOW)
    assert (login.user.account, login.user.nkey, login.user.name) == (app.public_key, user.public_key, "alice")
    assert login.user.permissions is not None and login.user.permissions.publish is not None
    assert login.user.permissions.publish.allow == ("orders.>",)
    assert login.user.max_subscriptions == 4
    assert login.expires == int(NOW) + 30


def test_refusals_say_why() -> None:
    op = operator()
    app = op.account("APP")
    revoked = app.user("revoked")
    app.revoke(revoked)
    auth = authenticator(op, app)
    assert refusal(auth, {}) == "Authentication requires a user JWT"
    assert refusal(auth, connect(app.user("u"), sign=False)) == "Signature missing"
    assert refusal(auth, connect(app.user("u"), nonce=b"other")) == "Signature not verified"
    assert refusal(auth, connect(app.user("e", expires=-5))).endswith("&{Issues:[claim is expired]}")
    assert refusal(auth, connect(revoked)) == "User authentication revoked"
    assert refusal(auth, connect(app.user("s", src=["10.0.0.0/8"]))) == "Bad src Ip 127.0.0.1"
    assert refusal(auth, connect(app.user("w", allowed_connection_types=["WEBSOCKET"]))).startswith("Connection type")
    assert (
        refusal(auth, connect(Operator("X").account("APP").user("eve"))) == "Account JWT lookup error: account missing"
    )
    assert refusal(auth, connect(app.user("m", signer=op.account("OTHER")))) == "User JWT issuer is not known"


def test_bearer_users_and_account_signing_keys() -> None:
    op = operator()
    app = op.account("APP")
    key = app.signing_key()
    auth = authenticator(op, app)
    assert auth.login(connect(app.user("b", bearer=True), sign=False), NONCE, "::1", "STANDARD", NOW)
    login = auth.login(connect(app.user("k", signer=key)), NONCE, "127.0.0.1", "STANDARD", NOW)
    assert login.user.account == app.public_key


def test_permissions_and_sources() -> None:
    assert permissions({"pub": {}, "sub": {}}) is None
    response = permissions({"resp": {"max": 2, "ttl": 5_000_000_000}})
    assert response is not None and response.response is not None
    assert (response.response.max_msgs, response.response.expires) == (2, 5.0)
    assert source_allowed((), "anything")
    assert source_allowed(("10.0.0.0/8, 127.0.0.1/32",), "127.0.0.1")
    assert not source_allowed(("10.0.0.0/8",), "127.0.0.1")


def test_payload_limits_and_bearer_users_of_an_account_that_disallows_them() -> None:
    op = operator()
    app = op.account("APP", limits={"payload": 8, "disallow_bearer": True})
    auth = authenticator(op, app)
    assert refusal(auth, connect(app.user("b", bearer=True), sign=False)) == "Account does not allow bearer tokens"
    small = auth.login(connect(app.user("s", limits={"payload": 4})), NONCE, "127.0.0.1", "STANDARD", NOW)
    large = auth.login(connect(app.user("l", limits={"payload": 100})), NONCE, "127.0.0.1", "STANDARD", NOW)
    assert (small.user.max_payload, large.user.max_payload) == (4, 8)
