"""Credentials minted by fakejs.testkit.jwt, held against JWTs and a .creds file that nats-io/jwt v2 wrote.

The vectors come from nats-server's test configurations (``server/configs/js-op.conf``,
``server/configs/one.creds``, ``server/opts_test.go``, ``test/configs/nkeys/op.jwt``): their claims
are re-serialized and their ``jti`` recomputed byte for byte, and the same claims built through
the kit's API come out as the same bytes.
"""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path

import nkeys
import pytest

from fakejs.gocompat import gojson
from fakejs.testkit.jwt import (
    Key,
    Operator,
    ResponsePermission,
    claims_id,
    decode,
    decorate_seed,
    format_user_config,
    issued_claims,
    verify,
)

JS_OP_SYSTEM_ACCOUNT = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiIyQ1dSRk80MlZVMk1TVlI0QkhIUFBEVjdJNERaTFZHWURZUlNXQ0pIVUM0Q1dRVkhXWjNBIiwiaWF0IjoxNjE2MTg2MzYxLCJpc3MiOiJPRDRNNklBQUtRU000RFFTTFdaSVZCQUNZVFlTMlM2WFFTN1U2N1hYWVhKNDRJTE5FMzVZUEdKSyIsIm5hbWUiOiJzeXMiLCJzdWIiOiJBRDRNMzRPUFJVUFdEWVRJUUxXS01FWlpNNU1LN1BRUURTS05FTENaRFJaWkVWRldPV1BMRlRVRSIsIm5hdHMiOnsibGltaXRzIjp7InN1YnMiOi0xLCJkYXRhIjotMSwicGF5bG9hZCI6LTEsImltcG9ydHMiOi0xLCJleHBvcnRzIjotMSwid2lsZGNhcmRzIjp0cnVlLCJjb25uIjotMSwibGVhZiI6LTF9LCJkZWZhdWx0X3Blcm1pc3Npb25zIjp7InB1YiI6e30sInN1YiI6e319LCJ0eXBlIjoiYWNjb3VudCIsInZlcnNpb24iOjJ9fQ.gExWTSaWWSYh9N_KsrOGPAJk0KJUn1VjVo00yfE6NoMXrmjkATDMoDLpKC19mrBNaMa6RZjhXyTdzJulxzxGBw"
JS_OP_OPERATOR = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiIyUkc0WjJKVzYzSUtBS1czSFg0SkpMQVhRN1ZSM0NKVlRQU1FHUVRCU0ZFQjVKTkNISUpRIiwiaWF0IjoxNjE2MTg2MjAxLCJpc3MiOiJPRDRNNklBQUtRU000RFFTTFdaSVZCQUNZVFlTMlM2WFFTN1U2N1hYWVhKNDRJTE5FMzVZUEdKSyIsIm5hbWUiOiJqcy10ZXN0Iiwic3ViIjoiT0Q0TTZJQUFLUVNNNERRU0xXWklWQkFDWVRZUzJTNlhRUzdVNjdYWFlYSjQ0SUxORTM1WVBHSksiLCJuYXRzIjp7InR5cGUiOiJvcGVyYXRvciIsInZlcnNpb24iOjJ9fQ.VkjSK2BlMmtYfVJSkC9aZEFvjg4BXzbd0oXkQa3Rlkhh8EuSRU7-Tp1zUm1SveBb6dZXsE51vhIQFQY66fO0Bw"
OPERATOR_WITH_SIGNING_KEY = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiIzTVJCS1BRTU1IUjdOQVFQU080NUlWTlkyMzVMRlQyTEs0WkZFVU1KWU9EWUJXU0RXWlRBIiwiaWF0IjoxNzI2NTYwMjAwLCJpc3MiOiJPQkxPR1VCSVVQSkhGVE00RjRaTE9CR1BMSlBJRjRTR0JDWUVERUtFUVNNWVVaTVFTMkRGTUUyWCIsIm5hbWUiOiJvcDIiLCJzdWIiOiJPQkxPR1VCSVVQSkhGVE00RjRaTE9CR1BMSlBJRjRTR0JDWUVERUtFUVNNWVVaTVFTMkRGTUUyWCIsIm5hdHMiOnsic2lnbmluZ19rZXlzIjpbIk9ES0xMSTZWWldWNk03V1RaV0I3MjVITE9MVFFRVERLNE5RR1ZFR0Q0Q083SjJMMlVJWk81U0dXIl0sInN5c3RlbV9hY2NvdW50IjoiQUNRVFdWR1NHSFlWWTNSNkQyV01PM1Y2TFYyTUdLNUI3RzQ3RTQzQkhKQjZGUVZZN0VITlRNTUciLCJ0eXBlIjoib3BlcmF0b3IiLCJ2ZXJzaW9uIjoyfX0.8kUmC6CwGLTJSs1zj_blsMpP5b6n2jZhZFNvMPXvJlRyyR5ZbCsxJ442BimaxaiosS8T-IFcZAIphtiOcqhRCg"
ONE_USER = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJHRUNQVEpISE1TM01DTUtMVFBHWUdBTzQ1R1E2TjZRUFlXUTRHUExBRUIzM1ZDUkpOUlZRIiwiaWF0IjoxNjE2MjQ3MjMyLCJpc3MiOiJBQlZSWktKNlo3TklNUElZSlJDSEVZRlJVTzdFTk42TldPS1FERkxGREZWUFNNMzZVUFgyVUNQUCIsIm5hbWUiOiJvbmUiLCJzdWIiOiJVRENJQkdHR0hDSkJRUE9PNFNDSkpCSFpEUjM3TlFHR0NJV01ORzJEREFLSjZXTUtCTUFLWElNTyIsIm5hdHMiOnsicHViIjp7fSwic3ViIjp7fSwic3VicyI6LTEsImRhdGEiOi0xLCJwYXlsb2FkIjotMSwidHlwZSI6InVzZXIiLCJ2ZXJzaW9uIjoyfX0.VLhSDtGZEF_jdvgmhgkdISXAt5wFMMZxxwm5w8UrsnlM1hkUvtxBlTe4IP0xJIf4xf8JOR2Bmf73xUGJKUZECQ"
JS_OP_ACCOUNT = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJRSVFDRFpRRkRIUU9WQlc3Q0tDNFQzVzJJV0dZV1ZISjZTVTRSTlYzUFo3NUhTUFVQS1ZBIiwiaWF0IjoxNjE2MTg3MjUwLCJpc3MiOiJPRDRNNklBQUtRU000RFFTTFdaSVZCQUNZVFlTMlM2WFFTN1U2N1hYWVhKNDRJTE5FMzVZUEdKSyIsIm5hbWUiOiJvbmUiLCJzdWIiOiJBQlZSWktKNlo3TklNUElZSlJDSEVZRlJVTzdFTk42TldPS1FERkxGREZWUFNNMzZVUFgyVUNQUCIsIm5hdHMiOnsibGltaXRzIjp7InN1YnMiOi0xLCJkYXRhIjotMSwicGF5bG9hZCI6LTEsImltcG9ydHMiOi0xLCJleHBvcnRzIjotMSwid2lsZGNhcmRzIjp0cnVlLCJjb25uIjotMSwibGVhZiI6LTEsIm1lbV9zdG9yYWdlIjoxMDczNzQxODI0LCJkaXNrX3N0b3JhZ2UiOjEwNzM3NDE4MjQwLCJzdHJlYW1zIjoxMDB9LCJkZWZhdWx0X3Blcm1pc3Npb25zIjp7InB1YiI6e30sInN1YiI6e319LCJ0eXBlIjoiYWNjb3VudCIsInZlcnNpb24iOjJ9fQ.yYdE3AjpWMBt_rZVLSNmuxR28FP5-6fO_x6FMQl7xe7hmeEc--bbCBcw4ujEjtVkE62I21asKtu06vmW1fEsAg"
ONE_USER_SEED = "SUAPCDMU5TSHHLWUUZSOUABJXP2GXRCZVEOVWPSVM5XRSXYGQMRRFDYNMY"
V1_OPERATOR = "eyJ0eXAiOiJqd3QiLCJhbGciOiJlZDI1NTE5In0.eyJhdWQiOiJURVNUUyIsImV4cCI6MTg1OTEyMTI3NSwianRpIjoiWE5MWjZYWVBIVE1ESlFSTlFPSFVPSlFHV0NVN01JNVc1SlhDWk5YQllVS0VRVzY3STI1USIsImlhdCI6MTU0Mzc2MTI3NSwiaXNzIjoiT0NBVDMzTVRWVTJWVU9JTUdOR1VOWEo2NkFIMlJMU0RBRjNNVUJDWUFZNVFNSUw2NU5RTTZYUUciLCJuYW1lIjoiU3luYWRpYSBDb21tdW5pY2F0aW9ucyBJbmMuIiwibmJmIjoxNTQzNzYxMjc1LCJzdWIiOiJPQ0FUMzNNVFZVMlZVT0lNR05HVU5YSjY2QUgyUkxTREFGM01VQkNZQVk1UU1JTDY1TlFNNlhRRyIsInR5cGUiOiJvcGVyYXRvciIsIm5hdHMiOnsic2lnbmluZ19rZXlzIjpbIk9EU0tSN01ZRlFaNU1NQUo2RlBNRUVUQ1RFM1JJSE9GTFRZUEpSTUFWVk40T0xWMllZQU1IQ0FDIiwiT0RTS0FDU1JCV1A1MzdEWkRSVko2NTdKT0lHT1BPUTZLRzdUNEhONk9LNEY2SUVDR1hEQUhOUDIiLCJPRFNLSTM2TFpCNDRPWTVJVkNSNlA1MkZaSlpZTVlXWlZXTlVEVExFWjVUSzJQTjNPRU1SVEFCUiJdfX0.hyfz6E39BMUh0GLzovFfk3wT4OfualftjdJ_eYkLfPvu5tZubYQ_Pn9oFYGCV_6yKy3KMGhWGUCyCdHaPhalBw"
# The seed of test/configs/nkeys/op.jwt's issuer (server/jwt_test.go's oSeed).
V1_OPERATOR_SEED = "SOAFYNORQLQFJYBYNUGC5D7SH2MXMUX5BFEWWGHN3EK4VGG5TPT5DZP7QU"

V2_VECTORS = [JS_OP_OPERATOR, OPERATOR_WITH_SIGNING_KEY, JS_OP_SYSTEM_ACCOUNT, JS_OP_ACCOUNT, ONE_USER]
HEADER_SEGMENT = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ"
FIXED_TIME = 1_700_000_000


def payload_text(token: str) -> str:
    segment = token.split(".")[1]
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)).decode()


def same_bytes_as(vector: str, claims: dict[str, object], issuer: str) -> bool:
    """Whether ``claims`` issued by ``issuer`` serialize to the vector's claims segment."""
    return gojson.dumps(issued_claims(claims, issuer)) == payload_text(vector)


@pytest.fixture
def operator() -> Operator:
    return Operator("O", now=lambda: FIXED_TIME)


@pytest.mark.parametrize("vector", V2_VECTORS)
def test_nats_io_jwt_vectors_reserialize_byte_for_byte(vector: str) -> None:
    header, claims = decode(vector)
    assert vector.split(".")[0] == HEADER_SEGMENT
    assert header == {"typ": "JWT", "alg": "ed25519-nkey"}
    assert gojson.dumps(claims) == payload_text(vector)
    assert claims_id(claims) == claims["jti"]
    assert verify(vector)


def test_another_tokens_signature_does_not_verify() -> None:
    header, claims, _ = JS_OP_SYSTEM_ACCOUNT.split(".")
    assert not verify(f"{header}.{claims}.{JS_OP_ACCOUNT.split('.')[2]}")


def test_signatures_are_nkeys_ed25519_byte_for_byte() -> None:
    # ed25519 is deterministic: the same key over the same bytes gives nats-io/jwt's signature
    # (its v1 format signed the claims segment alone; v2 signs "header.claims").
    _, claims, signature = V1_OPERATOR.split(".")
    key = Key(nkeys.PREFIX_BYTE_OPERATOR, V1_OPERATOR_SEED)
    assert key.public_key == decode(V1_OPERATOR)[1]["iss"]
    assert base64.urlsafe_b64encode(key.sign(claims.encode())).decode().rstrip("=") == signature


def test_operator_claims_match_nats_io_jwt() -> None:
    vector = decode(JS_OP_OPERATOR)[1]
    operator = Operator("js-test", now=lambda: vector["iat"])
    claims = {**operator.claims(), "sub": vector["sub"]}
    assert same_bytes_as(JS_OP_OPERATOR, claims, vector["iss"])


def test_account_claims_match_nats_io_jwt() -> None:
    for vector_token, limits in (
        (JS_OP_SYSTEM_ACCOUNT, {}),
        (JS_OP_ACCOUNT, {"mem_storage": 1073741824, "disk_storage": 10737418240, "streams": 100}),
    ):
        vector = decode(vector_token)[1]
        operator = Operator("js-test", now=lambda vector=vector: vector["iat"])
        account = operator.account(vector["name"], limits=limits)
        claims = {**account.claims(), "sub": vector["sub"]}
        # nats-io/jwt 2.4.0 added the account's "authorization" (always written); these vectors predate it.
        del claims["nats"]["authorization"]
        assert same_bytes_as(vector_token, claims, vector["iss"])


def test_user_claims_match_nats_io_jwt() -> None:
    vector = decode(ONE_USER)[1]
    account = Operator(now=lambda: vector["iat"]).account("one")
    user = account.user("one", seed=ONE_USER_SEED)
    assert user.public_key == vector["sub"]
    assert same_bytes_as(ONE_USER, user.claims, vector["iss"])


def test_creds_file_matches_nats_io_jwt_byte_for_byte() -> None:
    expected = (
        "-----BEGIN NATS USER JWT-----\n"
        f"{ONE_USER}\n"
        "------END NATS USER JWT------\n"
        "\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n"
        "NKEYs are sensitive and should be treated as secrets.\n"
        "\n"
        "-----BEGIN USER NKEY SEED-----\n"
        f"{ONE_USER_SEED}\n"
        "------END USER NKEY SEED------\n"
        "\n"
        "*************************************************************\n"
    )
    assert format_user_config(ONE_USER, ONE_USER_SEED) == expected


def test_decorated_seed_names_its_kind() -> None:
    assert "-----BEGIN OPERATOR NKEY SEED-----\n" in decorate_seed(V1_OPERATOR_SEED)


def test_minted_chain_verifies_and_names_its_issuers(operator: Operator) -> None:
    app = operator.account("APP")
    alice = app.user("alice")
    for token, issuer in ((operator.jwt, operator), (app.jwt, operator), (alice.jwt, app)):
        assert verify(token)
        assert decode(token)[1]["iss"] == issuer.public_key
        header, claims, signature = token.split(".")
        raw_signature = base64.urlsafe_b64decode(signature + "==")
        assert issuer.keypair.verify(f"{header}.{claims}".encode(), raw_signature)
    assert decode(alice.jwt)[1] == {
        "jti": claims_id(decode(alice.jwt)[1]),
        "iat": FIXED_TIME,
        "iss": app.public_key,
        "name": "alice",
        "sub": alice.public_key,
        "nats": {"pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1, "type": "user", "version": 2},
    }
    assert alice.public_key.startswith("U") and alice.seed.startswith("SU")
    assert app.public_key.startswith("A") and operator.public_key.startswith("O")


def test_user_permissions_and_times(operator: Operator) -> None:
    app = operator.account("APP")
    user = app.user(
        "bob",
        pub_allow=["orders.>"],
        pub_deny=["orders.secret"],
        sub_allow=["_INBOX.>"],
        resp=ResponsePermission(max_msgs=1, ttl_seconds=2),
        src=["127.0.0.1/32"],
        bearer=True,
        allowed_connection_types=["STANDARD"],
        expires=60,
        not_before=datetime.datetime.fromtimestamp(FIXED_TIME - 5, datetime.UTC),
    )
    claims = decode(user.jwt)[1]
    assert list(claims) == ["exp", "jti", "iat", "iss", "name", "nbf", "sub", "nats"]
    assert (claims["exp"], claims["iat"], claims["nbf"]) == (FIXED_TIME + 60, FIXED_TIME, FIXED_TIME - 5)
    assert claims["nats"] == {
        "pub": {"allow": ["orders.>"], "deny": ["orders.secret"]},
        "sub": {"allow": ["_INBOX.>"]},
        "resp": {"max": 1, "ttl": 2_000_000_000},
        "src": ["127.0.0.1/32"],
        "subs": -1,
        "data": -1,
        "payload": -1,
        "bearer_token": True,
        "allowed_connection_types": ["STANDARD"],
        "type": "user",
        "version": 2,
    }
    # Go's json.Marshal escapes '>' in the subject.
    assert '"allow":["orders.\\u003e"]' in payload_text(user.jwt)


def test_signing_keys_issue_and_are_named(operator: Operator) -> None:
    operator_key = operator.signing_key()
    app = operator.account("APP", signer=operator_key, jetstream=True)
    account_key = app.signing_key()
    user = app.user("carol", signer=account_key)
    assert decode(operator.jwt)[1]["nats"]["signing_keys"] == [operator_key.public_key]
    account = decode(app.jwt)[1]
    assert account["iss"] == operator_key.public_key
    assert account["nats"]["signing_keys"] == [account_key.public_key]
    assert account["nats"]["limits"] == {
        "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True, "conn": -1,
        "leaf": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1,
    }  # fmt: skip
    claims = decode(user.jwt)[1]
    assert claims["iss"] == account_key.public_key
    assert claims["nats"]["issuer_account"] == app.public_key
    assert verify(user.jwt)


def test_exports_imports_and_revocations_in_nats_io_jwt_order(operator: Operator) -> None:
    other = operator.account(
        "OTHER", exports=[{"subject": "svc.b", "type": "service"}, {"type": "stream", "subject": "feed.a"}]
    )
    app = operator.account("APP", imports=[{"type": "service", "subject": "svc.b", "account": other.public_key}])
    user = app.user("dave")
    app.revoke(user)
    exports = decode(other.jwt)[1]["nats"]["exports"]
    assert exports == [{"subject": "feed.a", "type": "stream"}, {"subject": "svc.b", "type": "service"}]
    assert [list(e) for e in exports] == [["subject", "type"], ["subject", "type"]]
    nats = decode(app.jwt)[1]["nats"]
    assert list(nats["imports"][0]) == ["subject", "account", "type"]
    assert nats["revocations"] == {user.public_key: FIXED_TIME}
    assert list(nats) == ["imports", "limits", "revocations", "default_permissions", "authorization", "type", "version"]


def test_server_config_preloads_the_accounts(operator: Operator) -> None:
    system = operator.account("SYS")
    app = operator.account("APP")
    config = operator.server_config(system_account=system, accounts=[system, app])
    assert config.splitlines()[1:4] == [
        f'system_account: "{system.public_key}"',
        "resolver: MEMORY",
        "resolver_preload: {",
    ]
    assert f'  "{app.public_key}": "{app.jwt}"' in config
    assert config.startswith(f'operator: "{operator.jwt}"\n')


def test_write_creds(tmp_path: Path, operator: Operator) -> None:
    user = operator.account("APP").user("erin")
    path = user.write_creds(tmp_path / "erin.creds")
    assert Path(path).read_text() == user.creds() == format_user_config(user.jwt, user.seed)
    assert user.jwt_callback()() == user.jwt.encode()
    nonce = "abc"
    signature = base64.b64decode(user.signature_callback()(nonce))
    assert user.keypair.verify(nonce.encode(), signature)
    assert json.loads(base64.urlsafe_b64decode(user.jwt.split(".")[1] + "=="))["sub"] == user.public_key


def test_server_config_may_name_an_operator_file(tmp_path: Path, operator: Operator) -> None:
    path = tmp_path / "operator.jwt"
    config = operator.server_config(accounts=[operator.account("SYS")], operator_file=path)
    assert config.startswith(f'operator: "{path}"\nresolver: MEMORY\n')
    assert path.read_text() == operator.jwt


def test_activation_tokens_as_nats_io_jwt_writes_them(operator: Operator) -> None:
    exporter, importer = operator.account("EXP"), operator.account("IMP")
    token = exporter.activation(importer, "orders.>", expires=60)
    claims = decode(token)[1]
    assert list(claims) == ["exp", "jti", "iat", "iss", "sub", "nats"]
    assert (claims["iss"], claims["sub"], claims["exp"]) == (exporter.public_key, importer.public_key, FIXED_TIME + 60)
    assert claims["nats"] == {"subject": "orders.>", "kind": "stream", "type": "activation", "version": 2}
    key = exporter.signing_key()
    signed = decode(exporter.activation(importer.public_key, "help", service=True, signer=key))[1]
    assert signed["iss"] == key.public_key
    assert signed["nats"] == {
        "subject": "help", "kind": "service", "issuer_account": exporter.public_key, "type": "activation", "version": 2,
    }  # fmt: skip
    assert verify(token)
