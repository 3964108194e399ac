"""Operator (JWT) mode against hostile input: damaged user JWTs and claims of the wrong types, on both targets.

A spot check of what ``tests/unit/test_core_jwt_hostile.py`` pins without a
server: each CONNECT below is refused (or taken) by nats-server and fakejs
alike, and a preloaded account whose signing keys do not decode is the
same configuration error.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from fakejs.testkit.jwt import Account, Operator, User, encode
from tests.harness.config_file import option_errors_alike, write
from tests.harness.operator import StartOperator, login_connect, operator_start_fixture
from tests.harness.raw import RawClient
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Target
from tests.harness.wait import eventually

start = operator_start_fixture()

REFUSED = b"-ERR 'Authorization Violation'\r\n"


async def answer(target: Target, user: User, token: object, script: bytes = b"") -> bytes:
    """What the server answers a CONNECT carrying ``token`` (signed with ``user``'s key), then ``script`` and a PING."""
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.read_until(b"\r\n")
        nonce = json.loads(bytes(client.received)[5:].split(b"\r\n")[0])["nonce"]
        client.received.clear()
        sig = base64.urlsafe_b64encode(user.sign(nonce.encode())).rstrip(b"=").decode()
        connect = json.dumps({"verbose": False, "jwt": token, "sig": sig})
        await client.send(f"CONNECT {connect}\r\n".encode() + script + b"PING\r\n")
        await client.read_until(b"PONG\r\n")  # a refused client is closed after its -ERR
        return bytes(client.received)
    finally:
        await client.close()


def with_claims(user: User, account: Account, nats: dict[str, Any]) -> str:
    """``user``'s JWT with ``nats`` laid over its claims' ``nats``, signed again by ``account``."""
    return encode({**user.claims, "nats": {**user.claims["nats"], **nats}}, account.keypair)


DAMAGE: dict[str, dict[str, Any]] = {
    "permission_of_the_wrong_type": {"pub": "orders"},
    "limit_as_a_string": {"subs": "5"},
    "limit_with_a_fraction": {"payload": 1.5},
    "bearer_as_a_string": {"bearer_token": "yes"},
    "no_version": {"version": None},
    "newer_version": {"version": 3},
    "consecutive_dots": {"pub": {"allow": ["a..b"]}},
    "queue_in_a_publish_permission": {"pub": {"allow": ["a q"]}},
    "an_address_for_a_network": {"src": ["127.0.0.1"]},
    "a_bad_time_range": {"times": [{"start": "25:00:00", "end": "01:00:00"}]},
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
async def test_damaged_claims_are_refused(name: str, start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("u")
    assert await answer(target, user, with_claims(user, app, DAMAGE[name])) == REFUSED


async def test_damaged_tokens(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("u")
    header, claims, sig = user.jwt.split(".")
    assert await answer(target, user, user.jwt + "\n") == b"PONG\r\n"  # base64 skips new lines
    for token in (user.jwt + " ", f"{header}=.{claims}.{sig}", user.creds(), f"{header}.{claims}"):
        assert await answer(target, user, token) == REFUSED, token
    assert await answer(target, user, 42) == b""  # a CONNECT that does not decode: closed without a word
    assert await answer(target, user, encode(user.claims, operator.keypair)) == REFUSED


async def test_a_field_name_in_another_case_is_read(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("u")
    token = with_claims(user, app, {"PUB": {"Allow": ["mine"]}})
    script = b"PUB mine 0\r\n\r\nPUB other 0\r\n\r\n"
    assert await answer(target, user, token, script) == (
        b"-ERR 'Permissions Violation for Publish to \"other\"'\r\nPONG\r\n"
    )


@pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)
@pytest.mark.parametrize(
    "entry",
    [{"kind": "group_scope", "key": "x"}, {"kind": "user_scope", "key": "x", "template": {"subs": "many"}}],
)
def test_a_preloaded_account_whose_signing_keys_do_not_decode(entry: dict[str, Any], tmp_path: Path) -> None:
    operator = Operator("O")
    app = operator.account("APP")
    claims = app.claims()
    claims["nats"]["signing_keys"] = [entry]
    token = encode(claims, operator.keypair)
    text = f'operator: "{operator.jwt}"\nresolver: MEMORY\nresolver_preload: {{ "{app.public_key}": "{token}" }}\n'
    option_errors_alike(write(tmp_path, text))


async def test_what_nats_io_jwt_reads_leniently(start: StartOperator) -> None:
    """A ``src`` given as one string, field names in another case, the header's names in any case."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("u")
    assert await answer(target, user, with_claims(user, app, {"src": "10.0.0.0/8, 127.0.0.0/8"})) == b"PONG\r\n"
    assert await answer(target, user, with_claims(user, app, {"src": "10.0.0.0/8"})) == REFUSED
    nats = {"Type": "user", "VERSION": 2, "Subs": -1, "PAYLOAD": -1}
    claims = {"ISS": app.public_key, "Sub": user.public_key, "NATS": nats}
    assert await answer(target, user, signed(app, b'{"typ":"JWT","alg":"ed25519-nkey"}', claims)) == b"PONG\r\n"
    nats = {"type": "user", "version": 2, "subs": -1, "payload": -1}
    claims = {"iss": app.public_key, "sub": user.public_key, "nats": nats}
    assert await answer(target, user, signed(app, b'{"typ":"jwt","alg":"ED25519-NKEY"}', claims)) == b"PONG\r\n"


def signed(account: Account, header: bytes, claims: dict[str, Any]) -> str:
    """A JWT of ``header`` and ``claims`` as given (no field added or reordered), signed by ``account``."""
    parts = [base64.urlsafe_b64encode(part).rstrip(b"=").decode() for part in (header, json.dumps(claims).encode())]
    signature = base64.urlsafe_b64encode(account.sign(".".join(parts).encode())).rstrip(b"=").decode()
    return ".".join([*parts, signature])


async def test_a_user_without_limits_may_do_nothing(start: StartOperator) -> None:
    """A user claim's absent ``subs`` and ``payload`` are Go's zero: no subscription, no payload (-1 is no limit)."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    none = app.user("none", limits={"subs": 0, "payload": -1})
    assert await refused_at_once(target, none) == b"-ERR 'maximum subscriptions exceeded'\r\n"
    empty = app.user("empty", limits={"subs": -1, "payload": 0})
    assert await answer(target, empty, empty.jwt, b"PUB a 1\r\nx\r\n") == b"-ERR 'Maximum Payload Violation'\r\n"


async def refused_at_once(target: Target, user: User) -> bytes:
    """What the server tells ``user`` right after its login (no PING sent), until it closes the connection."""
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.send(await login_connect(client, user))
        await client.read_until(b"exceeded'\r\n")
        assert await eventually(client.hung_up)
        return bytes(client.received)
    finally:
        await client.close()
