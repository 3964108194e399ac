"""Whether a refused user JWT came before or after its account was found (``Refused.account_found``).

nats-server still calls out to an account with external authorization when
a login fails once the account is found; the checks of the user JWT itself
and the account's lookup come before.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from fakejs.core.jwt.login import JwtAuthenticator, Refused
from fakejs.core.jwt.trust import TrustedOperators, resolve
from fakejs.testkit.jwt import Account, Operator, User

NOW = 1_700_000_000.0
NONCE = b"nonce-to-sign"


def authenticator(op: Operator, *accounts: Account) -> JwtAuthenticator:
    trusted = TrustedOperators.from_jwts([op.jwt])
    return JwtAuthenticator(resolve(trusted, {account.public_key: account.jwt for account in accounts}))


def connect(user: User, nonce: bytes = NONCE, sign: bool = True, sig: str = "") -> dict[str, Any]:
    options: dict[str, Any] = {"jwt": user.jwt}
    if sign:
        options["sig"] = sig or base64.urlsafe_b64encode(user.sign(nonce)).rstrip(b"=").decode()
    return options


def refused(auth: JwtAuthenticator, options: dict[str, Any], connection_type: str = "STANDARD") -> tuple[str, bool]:
    """The refusal's reason and whether the account was found first."""
    with pytest.raises(Refused) as refusal:
        auth.login(options, NONCE, "127.0.0.1", connection_type, NOW)
    return str(refusal.value), refusal.value.account_found


def test_the_user_jwts_own_checks_and_the_lookup_come_before_the_account() -> None:
    op = Operator("O", now=lambda: NOW)
    app = op.account("APP")
    auth = authenticator(op, app)
    assert refused(auth, {}) == ("Authentication requires a user JWT", False)
    assert refused(auth, {"jwt": "not a jwt"}) == ("Authentication requires a user JWT", False)
    reason, found = refused(auth, connect(app.user("e", expires=-5)))
    assert reason.startswith("User JWT no longer valid") and not found
    assert refused(auth, connect(Operator("X").account("APP").user("eve"))) == (
        "Account JWT lookup error: account missing",
        False,
    )


def test_the_checks_once_the_account_is_found_say_so() -> None:
    op = Operator("O", now=lambda: NOW)
    app = op.account("APP", limits={"disallow_bearer": True})
    revoked = app.user("revoked")
    app.revoke(revoked)
    auth = authenticator(op, app)
    assert refused(auth, connect(app.user("m", signer=op.account("OTHER")))) == ("User JWT issuer is not known", True)
    assert refused(auth, connect(app.user("b", bearer=True), sign=False)) == (
        "Account does not allow bearer tokens",
        True,
    )
    websocket_only = app.user("w", allowed_connection_types=["WEBSOCKET"])
    assert refused(auth, connect(websocket_only)) == ("Connection type not allowed", True)
    assert refused(auth, connect(app.user("u"), sign=False)) == ("Signature missing", True)
    assert refused(auth, connect(app.user("u"), sig="!!")) == ("Signature not valid base64", True)
    assert refused(auth, connect(app.user("u"), nonce=b"other")) == ("Signature not verified", True)
    assert refused(auth, connect(revoked)) == ("User authentication revoked", True)


def test_the_error_line_refusals_come_after_the_account() -> None:
    op = Operator("O", now=lambda: NOW)
    app = op.account("APP")
    auth = authenticator(op, app)
    with pytest.raises(Refused) as source:
        auth.login(connect(app.user("s", src=["10.0.0.0/8"])), NONCE, "127.0.0.1", "STANDARD", NOW)
    assert (str(source.value), source.value.error_line, source.value.account_found) == (
        "Bad src Ip 127.0.0.1",
        True,
        True,
    )


def test_an_expired_account_is_found_first() -> None:
    op = Operator("O", now=lambda: NOW)
    app = op.account("APP", expires=60)
    user = app.user("u")
    auth = authenticator(op, app)
    with pytest.raises(Refused) as expired:
        auth.login(connect(user), NONCE, "127.0.0.1", "STANDARD", NOW + 120)
    assert (str(expired.value), expired.value.account_found) == ("Account JWT has expired", True)


def test_a_refusal_made_elsewhere_is_before_the_account() -> None:
    assert not Refused("Account JWT lookup error: fetching failed").account_found
