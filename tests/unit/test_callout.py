"""Authorization callouts without sockets: the response checks, nkeys' curve boxes, who is called out for."""

from __future__ import annotations

import ssl
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nkeys
import pytest

from fakejs.core.auth import PREFIX_BYTE_USER, Login
from fakejs.core.callout import AuthCallouts, as_no_auth_user, client_tls, jwt_account, raw_auth_user
from fakejs.core.clientio import TransportDetails
from fakejs.core.jwt.callout import (
    PREFIX_BYTE_SERVER,
    CalloutRefused,
    ExternalAuthorization,
    NkeyPair,
    open_sealed,
    read_response,
    seal,
)
from fakejs.core.jwt.claims import ACCOUNT, decode_kind
from fakejs.core.jwt.login import Refused
from fakejs.core.jwt.trust import AccountClaims
from fakejs.core.users import AuthCallout, User
from fakejs.server.tls import verified_chain
from fakejs.testkit.certs import TestCertificates
from fakejs.testkit.jwt import Allow, AuthorizationRequest, CalloutService, CurveKey, Deny, Key, Operator

SERVER = NkeyPair(bytes(32), PREFIX_BYTE_SERVER)
USER_KEY = NkeyPair(bytes([1]) * 32, PREFIX_BYTE_USER).public_key
ISSUER = Key(nkeys.PREFIX_BYTE_ACCOUNT)
REQUEST = AuthorizationRequest("", {"nats": {"user_nkey": USER_KEY, "server_id": {"id": SERVER.public_key}}})


def answer(result: dict[str, str], signer: Key = ISSUER, request: AuthorizationRequest = REQUEST) -> bytes:
    return CalloutService(signer, lambda _: Deny("")).response(request, result, None)


def read(payload: bytes, **changes: Any) -> Any:
    arguments: dict[str, Any] = {
        "user_nkey": USER_KEY,
        "server_id": SERVER.public_key,
        "account": "AUTH",
        "issuer": ISSUER.public_key,
        "now": 0.0,
        **changes,
    }
    return read_response(payload, **arguments)


def user_jwt(**options: Any) -> str:
    return CalloutService(ISSUER, lambda _: Deny("")).user_jwt(REQUEST, Allow("APP", **options))


def test_an_accepted_answer_places_the_user_by_its_audience() -> None:
    accepted = read(answer({"jwt": user_jwt(name="alice", pub_allow=["a.>"])}))
    assert (accepted.user.account, accepted.name, accepted.user.nkey) == ("APP", "alice", USER_KEY)
    assert accepted.user.permissions.publish.allow == ("a.>",)


@pytest.mark.parametrize(
    "payload,text",
    [
        (b"", 'Auth callout violation: "no reason supplied" on account "AUTH"'),
        (b"x.y", "Expected 3 chunks"),
        (
            answer({"jwt": "a", "error": "b"}),
            "Authorization response had validation errors: Only Error or Jwt can be set",
        ),
        (answer({}), "Authorization response had validation errors: Error or Jwt is required"),
        (answer({"error": "no"}), "Auth callout service returned an error: no"),
    ],
)
def test_refused_answers(payload: bytes, text: str) -> None:
    with pytest.raises(CalloutRefused) as refused:
        read(payload)
    assert str(refused.value) == text


def test_an_answer_for_another_user_or_server() -> None:
    with pytest.raises(CalloutRefused, match="not for expected user"):
        read(answer({"error": "x"}), user_nkey=NkeyPair(bytes([2]) * 32, PREFIX_BYTE_USER).public_key)
    with pytest.raises(CalloutRefused, match="not for server"):
        read(answer({"error": "x"}), server_id=NkeyPair(bytes([3]) * 32, PREFIX_BYTE_SERVER).public_key)


def test_operator_mode_wants_the_accounts_signature() -> None:
    external = ExternalAuthorization(("U",), ())
    with pytest.raises(CalloutRefused, match=r"^Auth callout signing key is unknown$"):
        read(answer({"jwt": user_jwt()}), account="ASOMEOTHER", external=external)
    # an error is told before the signature is looked at, as nats-server does
    with pytest.raises(CalloutRefused, match=r"returned an error: x$"):
        read(answer({"error": "x"}), account="ASOMEOTHER", external=external)


def test_curve_boxes_open_for_their_recipient_only() -> None:
    service, server = CurveKey(), CurveKey()
    sealed = seal(b"eyJhello", server.private, service.public_key, bytes(24))
    assert sealed.startswith(b"xkv1" + bytes(24))
    assert open_sealed(sealed, service.private, server.public_key) == b"eyJhello"
    with pytest.raises(ValueError, match="could not decrypt input"):
        open_sealed(sealed, CurveKey().private, server.public_key)
    with pytest.raises(ValueError, match="wrong version"):
        open_sealed(b"xkv2" + sealed[4:], service.private, server.public_key)
    with pytest.raises(ValueError, match="not valid"):
        open_sealed(b"xkv1", service.private, server.public_key)


def account(name: str) -> Any:
    return SimpleNamespace(name=name)


def test_who_is_called_out_for() -> None:
    config = AuthCallout(ISSUER.public_key, "AUTH", ("auth",), ("APP",))
    callouts = AuthCallouts(SimpleNamespace(), SERVER, config)
    login = Login(User("u"))
    assert callouts.policy({"user": "bob"}, None) is config
    assert callouts.policy({"user": "auth"}, (account("AUTH"), login)) is None
    assert callouts.policy({"user": "u"}, (account("OTHER"), login)) is None  # not an allowed account
    assert callouts.policy({"user": "u"}, (account("APP"), login)) is config
    assert raw_auth_user({"auth_token": "t"}) == "[REDACTED]" and raw_auth_user({"nkey": "U", "user": "x"}) == "U"


def test_the_no_auth_user_is_who_the_callout_sees() -> None:
    config = AuthCallout(ISSUER.public_key, "AUTH", ("guest",))
    callouts = AuthCallouts(SimpleNamespace(), SERVER, config)
    anonymous = Login(User("guest", password="pwd"), anonymous=True)
    assert as_no_auth_user({"name": "x"}, anonymous) == {"name": "x", "user": "guest", "pass": "pwd"}
    assert as_no_auth_user({"name": "x"}, Login(User("guest"))) == {"name": "x"}  # it showed credentials
    nkey_user = Login(User(nkey="UABC"), anonymous=True)
    assert as_no_auth_user({}, nkey_user) == {"nkey": "UABC"}
    assert callouts.policy({}, (account("APP"), anonymous)) is None  # one of auth_users


def test_client_tls_describes_a_tls_client() -> None:
    assert client_tls(TransportDetails()) is None
    details = TransportDetails(tls_version="1.3", tls_cipher="TLS_AES_128_GCM_SHA256")
    assert client_tls(details) == {"version": "1.3", "cipher": "TLS_AES_128_GCM_SHA256"}
    details.tls_verified_chain = ["leaf", "ca"]
    assert client_tls(details) == {
        "version": "1.3",
        "cipher": "TLS_AES_128_GCM_SHA256",
        "verified_chains": [["leaf", "ca"]],
    }


def test_a_jwt_refused_after_its_account_was_found_is_called_out_to_the_global_account() -> None:
    operator = Operator("O")
    auth = operator.account("AUTH")
    service, sentinel = auth.user("service"), auth.user("sentinel")
    auth.authorization = {"auth_users": [service.public_key]}
    claims = AccountClaims.from_claims(decode_kind(auth.jwt, ACCOUNT))
    callouts = AuthCallouts(SimpleNamespace(), SERVER, claims=lambda: {auth.public_key: claims})
    after, before = Refused("Signature missing"), Refused("Account JWT lookup error: account missing")
    after.account_found = True
    policy = callouts.policy({"jwt": sentinel.jwt}, None, after)
    assert policy is not None and (policy.account, policy.issuer) == ("$G", "$G")
    assert callouts.told_account(policy) == auth.public_key
    assert callouts.policy({"jwt": sentinel.jwt}, None, before) is None
    assert callouts.policy({"jwt": sentinel.jwt}, None) is None
    assert callouts.policy({"jwt": sentinel.jwt, "nkey": service.public_key}, None, after) is None
    assert jwt_account("not a jwt") == "" and jwt_account(sentinel.jwt) == auth.public_key


def test_a_verified_chain_goes_up_to_its_ca(tmp_path: Any) -> None:
    certs = TestCertificates(tmp_path)
    authority = ssl.PEM_cert_to_DER_cert(Path(certs.ca_file).read_text())
    leaf_pem = Path(certs.client_cert_file).read_text()
    leaf = ssl.PEM_cert_to_DER_cert(leaf_pem)
    chain = verified_chain(leaf, [authority])
    assert chain == [ssl.DER_cert_to_PEM_cert(leaf), Path(certs.ca_file).read_text()]
    assert verified_chain(leaf, []) == [ssl.DER_cert_to_PEM_cert(leaf)]
