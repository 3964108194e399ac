"""Credential checks (fakejs.core.auth) and what a session makes of them."""

from __future__ import annotations

import base64
import json
from typing import Any

import bcrypt
import nkeys
import pytest

from fakejs.core.auth import (
    Authenticator,
    decode_public_key,
    is_bcrypt,
    is_valid_public_user_key,
    validate,
    verify_signature,
)
from fakejs.core.broker import Broker
from fakejs.core.options import ServerOptions
from fakejs.core.session import ClientSession
from fakejs.core.users import Permissions, SubjectPermission, User
from fakejs.testkit.access import ControlAccess
from fakejs.testkit.clock import ManualClock
from tests.harness.session_io import FakeIO

HASH = bcrypt.hashpw(b"secret", bcrypt.gensalt(rounds=4)).decode()


def new_user_key(fill: int = 7) -> tuple[str, str]:
    """(public key, seed) of an nkey user."""
    seed = nkeys.encode_seed(bytes([fill]) * 32, nkeys.PREFIX_BYTE_USER)
    pair = nkeys.from_seed(bytearray(seed))
    return pair.public_key.decode(), seed.decode()


def sign(seed: str, nonce: str) -> str:
    pair = nkeys.from_seed(bytearray(seed.encode()))
    return base64.b64encode(pair.sign(nonce.encode())).decode()


PUBLIC, SEED = new_user_key()


def test_bcrypt_is_recognised_by_its_prefix() -> None:
    assert is_bcrypt(HASH) and is_bcrypt("$2y$10$abc")
    assert not is_bcrypt("$2c$10$abc") and not is_bcrypt("plain") and not is_bcrypt("$2a$1$x")


def test_public_user_keys() -> None:
    assert is_valid_public_user_key(PUBLIC)
    assert decode_public_key(PUBLIC) is not None
    assert not is_valid_public_user_key(SEED)
    assert not is_valid_public_user_key(PUBLIC[:-1] + ("A" if PUBLIC[-1] != "A" else "B"))
    assert not is_valid_public_user_key("UABC")


def test_signatures_base64url_and_standard() -> None:
    pair = nkeys.from_seed(bytearray(SEED.encode()))
    raw = pair.sign(b"nonce")
    assert verify_signature(PUBLIC, b"nonce", base64.b64encode(raw).decode())
    assert verify_signature(PUBLIC, b"nonce", base64.urlsafe_b64encode(raw).rstrip(b"=").decode())
    assert not verify_signature(PUBLIC, b"other", base64.b64encode(raw).decode())
    assert not verify_signature(PUBLIC, b"nonce", "!!!")


def _auth(**settings: Any) -> Authenticator:
    return Authenticator(ServerOptions(**settings))


def test_users_plain_and_bcrypt() -> None:
    auth = _auth(users=[User("a", "pa"), User("b", HASH)])
    assert auth.login({"user": "a", "pass": "pa"}) is not None
    assert auth.login({"user": "a", "pass": "pb"}) is None
    assert auth.login({"user": "b", "pass": "secret"}) is not None
    assert auth.login({"user": "b", "pass": "secret"}) is not None  # remembered
    assert auth.login({"user": "b", "pass": HASH}) is None
    assert auth.login({"user": "c", "pass": "pa"}) is None
    assert auth.login({}) is None


def test_bcrypt_single_user_and_token() -> None:
    assert _auth(user="u", password=HASH).login({"user": "u", "pass": "secret"}) is not None
    assert _auth(token=HASH).login({"auth_token": "secret"}) is not None
    assert _auth(token=HASH).login({"auth_token": HASH}) is None


def test_nkey_user_signs_the_nonce() -> None:
    perms = Permissions(publish=SubjectPermission(allow=("x",)))
    auth = _auth(users=[User(nkey=PUBLIC, permissions=perms)])
    assert auth.nonce_required
    login = auth.login({"nkey": PUBLIC, "sig": sign(SEED, "abc")}, b"abc")
    assert login is not None and login.signed and login.user is not None and login.user.permissions == perms
    assert auth.login({"nkey": PUBLIC, "sig": sign(SEED, "abc")}, b"abd") is None
    assert auth.login({"nkey": PUBLIC}, b"abc") is None
    other, _ = new_user_key(9)
    assert auth.login({"nkey": other, "sig": sign(SEED, "abc")}, b"abc") is None


def test_unknown_nkey_fails_even_with_a_good_password() -> None:
    auth = _auth(users=[User(nkey=PUBLIC), User("a", "pa")])
    other, _ = new_user_key(9)
    assert auth.login({"nkey": other, "user": "a", "pass": "pa"}) is None
    assert auth.login({"user": "a", "pass": "pa"}) is not None


def test_no_auth_user() -> None:
    auth = _auth(users=[User("a", "pa"), User("guest", "pg")], no_auth_user="guest")
    login = auth.login({})
    assert login is not None and login.user is not None and login.user.name == "guest" and not login.signed
    assert auth.login({"user": "a", "pass": "pa"}) is not None
    assert auth.login({"user": "a", "pass": "no"}) is None
    # As nats-server: the stored hash is compared with itself.
    assert _auth(users=[User("guest", HASH)], no_auth_user="guest").login({}) is None
    nkey_guest = _auth(users=[User(nkey=PUBLIC)], no_auth_user=PUBLIC).login({})
    assert nkey_guest is not None and nkey_guest.user is not None and nkey_guest.user.nkey == PUBLIC


def test_connection_types_without_standard_refuse() -> None:
    auth = _auth(
        users=[User("a", "pa", connection_types=("WEBSOCKET",)), User("b", "pb", connection_types=("STANDARD",))]
    )
    assert auth.login({"user": "a", "pass": "pa"}) is None
    assert auth.login({"user": "b", "pass": "pb"}) is not None


def test_validate_no_auth_user_and_nkeys() -> None:
    assert validate(ServerOptions(no_auth_user="x")) == 'no_auth_user: "x" present, but users/nkeys are not defined'
    assert validate(ServerOptions(users=[User("a")], no_auth_user="x")) == (
        'no_auth_user: "x" not present as user or nkey in authorization block or account configuration'
    )
    assert validate(ServerOptions(users=[User("a")], no_auth_user="a")) is None
    assert validate(ServerOptions(users=[User(nkey="UBAD")])) == "Not a valid public nkey for a user"
    with pytest.raises(ValueError, match="no_auth_user"):
        Broker(ServerOptions(no_auth_user="x"), ManualClock(start_ns=0))


def test_control_access_takes_any_users_credentials() -> None:
    access = ControlAccess(ServerOptions(users=[User("a", "pa"), User("b", HASH)]))
    assert access.guarded
    assert access.user_ok("a", "pa") and access.user_ok("b", "secret")
    assert not access.user_ok("b", HASH) and not access.user_ok("c", "pa")
    basic = base64.b64encode(b"b:secret").decode()
    assert access.allows_http("Basic " + basic)


def _session(broker: Broker) -> ClientSession:
    session = ClientSession(broker, FakeIO())
    session.start()
    return session


def test_session_info_nonce_and_signed_login() -> None:
    broker = Broker(ServerOptions(users=[User(nkey=PUBLIC)], seed=1), ManualClock(start_ns=0))
    session = _session(broker)
    info = json.loads(session.take_output()[5:])
    assert info["auth_required"] is True and len(info["nonce"]) == 15
    assert list(info).index("nonce") == list(info).index("client_ip" if "client_ip" in info else "client_id") + 1
    connect = {"verbose": False, "nkey": PUBLIC, "sig": sign(SEED, info["nonce"])}
    session.data_received(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
    assert session.take_output() == b"PONG\r\n"
    assert session.login is not None and session.login.signed


def test_no_nonce_without_nkey_users_and_no_auth_required_with_no_auth_user() -> None:
    broker = Broker(ServerOptions(users=[User("a", "pa")], no_auth_user="a", seed=1), ManualClock(start_ns=0))
    session = _session(broker)
    info = json.loads(session.take_output()[5:])
    assert "nonce" not in info and "auth_required" not in info
    session.data_received(b"PUB x 0\r\n\r\n")  # no CONNECT: the first operation logs in as "a"
    assert session.take_output() == b"+OK\r\n"
    assert session.login is not None and session.login.anonymous and session.opts["user"] == "a"


def test_session_permissions_violations_keep_the_connection() -> None:
    perms = Permissions(
        publish=SubjectPermission(allow=("ok.>",)), subscribe=SubjectPermission(allow=("in.>",), deny=("in.secret",))
    )
    broker = Broker(ServerOptions(users=[User("a", "pa", permissions=perms)], seed=1), ManualClock(start_ns=0))
    session = _session(broker)
    session.take_output()
    session.data_received(b'CONNECT {"verbose":true,"user":"a","pass":"pa"}\r\n')
    assert session.take_output() == b"+OK\r\n"
    session.data_received(b"PUB no 0\r\n\r\nPUB ok.1 0\r\n\r\nSUB out 1\r\nSUB in.* q 2\r\nSUB in.> 3\r\n")
    assert session.take_output() == (
        b"-ERR 'Permissions Violation for Publish to \"no\"'\r\n"
        b"+OK\r\n"
        b"-ERR 'Permissions Violation for Subscription to \"out\"'\r\n"
        b"+OK\r\n+OK\r\n"
    )
    assert not session.closed and sorted(session.subs) == ["2", "3"]
    session.data_received(b"SUB in.secret 4\r\nSUB x _sys_ 5\r\n")
    assert session.take_output() == (
        b"-ERR 'Permissions Violation for Subscription to \"in.secret\"'\r\n"
        b'-ERR \'Permissions Violation for Subscription to "x" using queue "_sys_"\'\r\n'
    )
    assert session.denies is not None
    broker.router.publish("in.secret", "", None, b"x", None)
    assert session.take_output() == b""
    broker.router.publish("in.open", "", None, b"x", None)
    assert session.take_output().count(b"MSG in.open") == 2
