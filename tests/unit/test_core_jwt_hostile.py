"""Hostile input to operator mode: malformed JWTs, ``.creds`` files and CONNECTs, without a server.

Whatever a client sends, the JWT login either accepts it or refuses it
(:class:`Refused`): no other exception escapes; whatever a configuration
holds, the reader either takes it or reports an error.  The refusals nats-io/jwt
gives for each kind of damage are pinned where fakejs reads them the same way
(the parity test ``test_operator_hostile.py`` checks a few against nats-server).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakejs.conf import ConfigError
from fakejs.core.configfile import ConfigFileError, options_from_config
from fakejs.core.jwt.claims import JwtError, decode, decode_kind, parse_decorated_jwt
from fakejs.core.jwt.login import JwtAuthenticator, Refused
from fakejs.core.jwt.trust import TrustedOperators, resolve
from fakejs.testkit.jwt import Operator, encode

NOW = 1_700_000_000.0
NONCE = b"nonce-to-sign"
OPERATOR = Operator("O", now=lambda: NOW)
SYSTEM, APP = OPERATOR.account("SYS"), OPERATOR.account("APP")
AUTHENTICATOR = JwtAuthenticator(
    resolve(TrustedOperators.from_jwts([OPERATOR.jwt]), {a.public_key: a.jwt for a in (SYSTEM, APP)})
)
USER = APP.user("alice")
HOSTILE = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
USER_FIELDS = (
    "pub", "sub", "resp", "src", "times", "times_location", "subs", "data", "payload", "bearer_token",
    "allowed_connection_types", "issuer_account", "tags", "type", "version",
)  # fmt: skip


def signature(nonce: bytes = NONCE) -> str:
    return base64.urlsafe_b64encode(USER.sign(nonce)).rstrip(b"=").decode()


def login(connect: dict[str, Any]) -> object:
    """The login's outcome: a JwtLogin, or the Refused reason; any other exception fails the test."""
    try:
        return AUTHENTICATOR.login(connect, NONCE, "127.0.0.1", "STANDARD", NOW)
    except Refused as refused:
        return str(refused)


def user_jwt(nats: dict[str, Any], top: dict[str, Any] | None = None) -> str:
    """A user JWT of ``USER`` signed by ``APP``, with ``nats`` in place of its claims' ``nats``."""
    claims = {**USER.claims, **(top or {}), "nats": nats}
    return encode(claims, APP.keypair)


@HOSTILE
@given(token=st.text(max_size=300), sig=json_values)
def test_any_text_as_the_jwt_is_refused(token: str, sig: object) -> None:
    outcome = login({"jwt": token, "sig": sig})
    assert isinstance(outcome, str)


@HOSTILE
@given(connect=st.dictionaries(st.sampled_from(["jwt", "sig", "nkey", "user", "pass"]), json_values))
def test_any_connect_is_taken_or_refused(connect: dict[str, Any]) -> None:
    login(connect)


@HOSTILE
@given(position=st.integers(min_value=0), replacement=st.characters(codec="utf-8"))
def test_a_damaged_jwt_is_refused(position: int, replacement: str) -> None:
    token = USER.jwt
    index = position % len(token)
    damaged = token[:index] + replacement + token[index + 1 :]
    outcome = login({"jwt": damaged, "sig": signature()})
    assert isinstance(outcome, str) or same_bytes(damaged, token)


def same_bytes(damaged: str, token: str) -> bool:
    """Whether two JWTs decode to the same bytes (a last character's unused bits are ignored, as Go ignores them)."""
    try:
        decoded = [base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)) for part in damaged.split(".")]
    except ValueError:
        return False
    return decoded == [base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)) for part in token.split(".")]


@HOSTILE
@given(field=st.sampled_from(USER_FIELDS), value=json_values)
def test_a_signed_user_with_any_value_in_a_field_is_taken_or_refused(field: str, value: object) -> None:
    outcome = login({"jwt": user_jwt({**USER.claims["nats"], field: value}), "sig": signature()})
    if field == "version" and value != 2:
        assert isinstance(outcome, str)


@HOSTILE
@given(nats=json_values, top=st.dictionaries(st.sampled_from(["exp", "nbf", "iat", "name", "sub", "jti"]), json_values))
def test_a_signed_claim_of_any_shape_is_taken_or_refused(nats: object, top: dict[str, Any]) -> None:
    claims = {**USER.claims, **top, "nats": nats}
    login({"jwt": encode(claims, APP.keypair), "sig": signature()})


@pytest.mark.parametrize(
    ("nats", "reason"),
    [
        ({"pub": "orders"}, "cannot unmarshal string into Go struct field UserClaims.nats.pub of type jwt.Permission"),
        ({"subs": "5"}, "cannot unmarshal string into Go struct field UserClaims.nats.subs of type int64"),
        ({"subs": 1.5}, "cannot unmarshal number 1.5 into Go struct field UserClaims.nats.subs of type int64"),
        ({"bearer_token": "yes"}, "cannot unmarshal string into Go struct field UserClaims.nats.bearer_token"),
        ({"src": 7}, "cannot unmarshal number into Go struct field UserClaims.nats.src of type []string"),
        ({"version": 3}, "JWT was generated by a newer version"),
        ({"version": None}, "library supports version 2 or less - received 0"),
    ],
)
def test_what_nats_io_jwt_does_not_decode(nats: dict[str, Any], reason: str) -> None:
    """The decoding error says what is wrong; the login (as nats-server's debug line) only that no JWT decoded."""
    token = user_jwt({**USER.claims["nats"], **nats})
    assert reason in _refusal(token)
    assert login({"jwt": token, "sig": signature()}) == "Authentication requires a user JWT"


@pytest.mark.parametrize(
    ("nats", "issues"),
    [
        ({"pub": {"allow": ["a..b"]}}, 'subject "a..b" cannot contain consecutive `.`'),
        ({"sub": {"allow": ["a b c"]}}, 'Permission Subject "a b c" contains too many spaces'),
        ({"pub": {"allow": ["a q"]}}, 'Permission Subject "a q" is not allowed to contain queue'),
        ({"src": ["10.0.0.1"]}, 'invalid cidr "10.0.0.1" in user src limits'),
        ({"src": "10.0.0.0/8, nope"}, 'invalid cidr "nope" in user src limits'),
        (
            {"times": [{"start": "25:00:00", "end": ""}]},
            'start in time range is invalid "25:00:00" time ranges end must contain an end',
        ),
        ({"times_location": "Mars/Base"}, "could not parse iana time zone by name: unknown time zone Mars/Base"),
        ({"issuer_account": USER.public_key}, "account_id is not an account public key"),
    ],
)
def test_what_nats_io_jwt_does_not_validate(nats: dict[str, Any], issues: str) -> None:
    outcome = login({"jwt": user_jwt({**USER.claims["nats"], **nats}), "sig": signature()})
    assert outcome == f"User JWT no longer valid: &{{Issues:[{issues}]}}"


def test_decoding_refusals_name_the_damage() -> None:
    token = USER.jwt
    header, claims, sig = token.split(".")
    assert _refusal(token + " ") == "illegal base64 data at input byte 86"
    assert decode(token + "\n").subject == USER.public_key  # Go's base64 skips new lines
    assert _refusal(header + "=." + claims + "." + sig).startswith("illegal base64 data")
    assert _refusal("a." * 3) == "expected 3 chunks"
    assert _refusal("x" * (1024 * 1024 + 1)).endswith("token too large")
    not_json = base64.urlsafe_b64encode(b"{nope").rstrip(b"=").decode()
    assert _refusal(f"{header}.{not_json}.{sig}").startswith("invalid character 'n'")
    array = base64.urlsafe_b64encode(b"[]").rstrip(b"=").decode()
    assert _refusal(f"{header}.{array}.{sig}") == "json: cannot unmarshal array into Go value of type jwt.identifier"
    kinds = base64.urlsafe_b64encode(json.dumps({"typ": "JWS", "alg": "ed25519-nkey"}).encode()).rstrip(b"=")
    assert _refusal(f"{kinds.decode()}.{claims}.{sig}") == 'not supported type "JWS"'
    other_signer = encode(USER.claims, OPERATOR.account("X").keypair)
    assert decode(other_signer).issuer != APP.public_key
    by_operator = encode(USER.claims, OPERATOR.keypair)
    assert _refusal(by_operator) == "unable to validate expected prefixes - [account]"
    tampered = ("B" if sig.startswith("A") else "A") + sig[1:]  # always another signature
    assert _refusal(f"{header}.{claims}.{tampered}") == "claim failed V2 signature verification"


def _refusal(token: str) -> str:
    with pytest.raises(JwtError) as refused:
        decode(token)
    return str(refused.value)


def test_a_creds_file_is_no_jwt_but_its_jwt_is() -> None:
    creds = USER.creds()
    assert _refusal(creds) == "expected 3 chunks" or _refusal(creds).startswith("illegal base64")
    assert decode_kind(parse_decorated_jwt(creds), "user").subject == USER.public_key
    with pytest.raises(JwtError, match="not operator claim"):
        decode_kind(parse_decorated_jwt(creds), "operator")


@HOSTILE
@given(value=st.text(max_size=200) | st.sampled_from([USER.jwt, USER.creds(), APP.jwt + "x", OPERATOR.jwt]))
def test_the_configuration_reader_takes_or_refuses_any_operator_and_preload(value: str) -> None:
    quoted = json.dumps(value)
    for config in (
        f"operator: {quoted}\nresolver: MEMORY\n",
        f'operator: "{OPERATOR.jwt}"\nresolver: MEMORY\nresolver_preload: {{ "{APP.public_key}": {quoted} }}\n',
    ):
        try:
            options_from_config(config)
        except (ConfigError, ConfigFileError):
            pass


def test_an_operator_file_may_be_decorated(tmp_path: Any) -> None:
    path = tmp_path / "operator.jwt"
    path.write_text(f"-----BEGIN NATS OPERATOR JWT-----\n{OPERATOR.jwt}\n------END NATS OPERATOR JWT------\n")
    options = options_from_config(f'operator: "{path}"\nresolver: MEMORY\n')
    assert options.trusted_operators == [OPERATOR.jwt]
