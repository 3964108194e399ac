"""Authorization callouts (ADR-26) in configuration mode, on both targets, with one callout service.

Facts pinned (nats-server 2.15.1), with ``authorization { auth_callout {
issuer, auth_users, account } }``:

- a client not among ``auth_users`` has its CONNECT sent to
  ``$SYS.REQ.USER.AUTH`` in the callout's account: an
  ``authorization_request`` JWT issued by the server's nkey (``iss`` is the
  server id), ``sub`` the configured issuer, ``aud``
  ``nats-authorization-request``, with ``server_id`` (``name``, ``host``,
  ``id``, ``version``), a fresh ``user_nkey``, ``client_info`` (``host``,
  ``id``, ``user``, ``name``, ``kind``, ``type``) and ``connect_opts``;
- an answer with a user JWT (signed by the issuer, ``aud`` the account) logs
  the client in there, with the JWT's permissions and its ``name`` as the
  user (``$SYS.REQ.USER.INFO`` tells them, and ``expires``);
- an error, a user JWT from another issuer, an expired response, an empty
  one, an unknown account in the user JWT's ``aud``, or no answer within
  the login time-out: ``-ERR 'Authorization Violation'``,
  the connection closed, ``[ERR] ... authentication error - User "bob"``
  and, except for the time-out, a ``[WRN]`` line saying why;
- with ``xkey`` the request is sealed for the service's curve key (nkeys'
  ``xkv1`` box), the server's own curve key (INFO's ``xkey``) in the
  ``Nats-Server-Xkey`` header and in ``server_id``; the answer may be sealed
  back, and one that does not open is a refusal
  (``Error decrypting auth callout response on account "AUTH": ...``);
- with ``allowed_accounts``, a configured login that lands in another
  account is not sent (one that fails is);
- every refused login is told in the callout's account on
  ``$SYS.ACCOUNT.CLIENT.AUTH.ERR`` (a disconnect event, ``reason`` the
  warning, or ``Authentication Failure``); without a callout, in the
  client's account;
- ``auth_users`` log in as configured, no request sent (a wrong password
  is refused as usual); a user logged in to the callout's account may not
  publish to ``$SYS.REQ.USER.AUTH`` (a publish deny added to its own).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import nkeys
import pytest

from fakejs.testkit.jwt import (
    AUTH_CALLOUT_SUBJECT,
    Allow,
    AuthorizationRequest,
    CalloutService,
    CurveKey,
    Deny,
    Key,
    decode,
)
from tests.harness.callout import answer_callouts
from tests.harness.config_file import option_errors_alike, write
from tests.harness.configured import Start, configured_servers
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT
from tests.harness.warning_lines import Lines, lines_fixture

ISSUER = Key(nkeys.PREFIX_BYTE_ACCOUNT)
STRANGER = Key(nkeys.PREFIX_BYTE_ACCOUNT)
CONFIG = """
accounts {
  AUTH { users: [ {user: auth, password: pwd} ] }
  APP {}
  SYS {}
}
system_account: SYS
authorization {
  timeout: 1
  auth_callout { issuer: ISSUER, auth_users: [auth], account: AUTH }
}
""".replace("ISSUER", ISSUER.public_key)
SERVICE_XKEY = CurveKey()
lines = lines_fixture()
ENCRYPTED = CONFIG.replace("account: AUTH }", f"account: AUTH, xkey: {SERVICE_XKEY.public_key} }}")


def decide(request: AuthorizationRequest) -> Allow | Deny:
    """The service's rules: the password picks the answer."""
    password = request.connect_opts.get("pass")
    if password == "secret":
        return Allow("APP", name="robert", pub_allow=["x.>", "$SYS.REQ.USER.INFO"], sub_allow=["_INBOX.>"], expires=600)
    if password == "stranger":
        return Allow("APP", user_signer=STRANGER)
    if password == "stale":
        return Allow("APP", response_expires=-5)
    if password == "nowhere":
        return Allow("NOPE")
    return Deny("go away")


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False)) as start:
        yield start


request_headers: list[Any] = []  # the headers of the requests the service got, in this test


async def with_service(target: Target, xkey: CurveKey | None = None) -> tuple[Any, CalloutService]:
    """The callout service, connected as the ``auth`` user and answering requests."""
    service = CalloutService(ISSUER, decide, xkey=xkey)
    nc = await nats.connect(target.url, user="auth", password="pwd")
    request_headers.clear()
    await answer_callouts(nc, service, request_headers)
    return nc, service


async def refused(target: Target, password: str, user: str = "bob") -> bytes:
    """What a raw client logging in as ``user`` is sent before the server closes it."""
    client = await RawClient.connect(target.host, target.port)
    connect = {"verbose": False, "pedantic": False, "user": user, "pass": password, "protocol": 1, "name": "cli"}
    await client.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
    assert await client.wait_closed()
    await client.close()
    data = bytes(client.received)
    return data[data.index(b"\r\n") + 2 :]


async def test_an_allowed_user_is_placed_with_the_jwts_permissions(server: Start, lines: Lines) -> None:
    target = await server(CONFIG)
    service_nc, service = await with_service(target)
    nc = await nats.connect(target.url, user="bob", password="secret", name="cli")
    try:
        reply = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
        info = json.loads(reply.data)["data"]
        expires = info.pop("expires")
        publish = info["permissions"]["publish"]  # nats-server lists them in its subject index's order
        publish["allow"] = sorted(publish["allow"])
        assert info == {
            "user": "robert",
            "account": "APP",
            "account_name": "APP",
            "permissions": {"publish": {"allow": ["$SYS.REQ.USER.INFO", "x.>"]}, "subscribe": {"allow": ["_INBOX.>"]}},
        }
        assert 590 * 10**9 <= expires <= 600 * 10**9 and expires % 10**9 == 0
    finally:
        await nc.close()
        await service_nc.close()
    [request] = service.requests
    header, claims = decode(request.token)
    server_id = request.server_id["id"]
    assert header == {"typ": "JWT", "alg": "ed25519-nkey"}
    assert list(claims) == ["aud", "exp", "jti", "iat", "iss", "sub", "nats"]
    assert claims["aud"] == "nats-authorization-request" and claims["sub"] == ISSUER.public_key
    assert claims["iss"] == server_id and claims["exp"] - claims["iat"] in (1, 2)
    assert list(request.nats) == ["server_id", "user_nkey", "client_info", "connect_opts", "type", "version"]
    assert list(request.server_id) == ["name", "host", "id", "version"]
    assert request.server_id["host"] == "127.0.0.1" and request.server_id["version"] == "2.15.1"
    assert request.user_nkey.startswith("U") and len(request.user_nkey) == 56
    client_info = dict(request.client_info)
    assert isinstance(client_info.pop("id"), int)
    assert client_info == {"host": "127.0.0.1", "user": "bob", "name": "cli", "kind": "Client", "type": "nats"}
    connect_opts = dict(request.connect_opts)
    assert connect_opts.pop("version") and connect_opts.pop("lang") == "python3"
    assert connect_opts == {"user": "bob", "pass": "secret", "name": "cli", "protocol": 1}
    assert lines.of(target) == []


@pytest.mark.parametrize(
    "password,warning",
    [
        ("nope", "Auth callout service returned an error: go away"),
        (
            "stranger",
            f'Wrong issuer for auth callout response on account "AUTH", expected "{ISSUER.public_key}" '
            f'got "{STRANGER.public_key}"',
        ),
        ("stale", "Authorization response had validation errors: claim is expired"),
        ("nowhere", 'No valid account "NOPE" for auth callout response on account "AUTH": account missing'),
    ],
)
async def test_a_refusal_closes_the_client_and_says_why(
    server: Start, lines: Lines, password: str, warning: str
) -> None:
    target = await server(CONFIG)
    service_nc, service = await with_service(target)
    try:
        assert await refused(target, password) == b"-ERR 'Authorization Violation'\r\n"
        expected = ['[ERR] ADDR - authentication error - User "bob"', f"[WRN] {warning}"]
        await lines.wait_for(target, expected)
    finally:
        await service_nc.close()
    assert len(service.requests) == 1


async def test_without_an_answer_the_login_times_out(server: Start, lines: Lines) -> None:
    target = await server(CONFIG)
    assert await refused(target, "secret") == b"-ERR 'Authorization Violation'\r\n"
    assert lines.of(target) == ['[ERR] ADDR - authentication error - User "bob"']


async def test_auth_users_log_in_as_configured(server: Start, lines: Lines) -> None:
    target = await server(CONFIG)
    service_nc, service = await with_service(target)
    try:
        reply = await service_nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
        assert json.loads(reply.data)["data"] == {
            "user": "auth",
            "account": "AUTH",
            "account_name": "AUTH",
            "permissions": {"publish": {"deny": ["$SYS.REQ.USER.AUTH"]}, "subscribe": {}},
        }
        assert await refused(target, "wrong", user="auth") == b"-ERR 'Authorization Violation'\r\n"
    finally:
        await service_nc.close()
    assert service.requests == []
    assert lines.of(target) == ['[ERR] ADDR - authentication error - User "auth"']


async def test_an_encrypted_callout(server: Start, lines: Lines) -> None:
    target = await server(ENCRYPTED)
    service_nc, service = await with_service(target, SERVICE_XKEY)
    nc = await nats.connect(target.url, user="bob", password="secret")
    try:
        reply = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
        assert json.loads(reply.data)["data"]["account"] == "APP"
        server_xkey = service_nc._server_info["xkey"]
    finally:
        await nc.close()
        await service_nc.close()
    [request] = service.requests
    assert request_headers == [{"Nats-Server-Xkey": server_xkey}]
    assert list(request.server_id) == ["name", "host", "id", "version", "xkey"]
    assert request.server_id["xkey"] == server_xkey
    assert lines.of(target) == []


@pytest.mark.parametrize(
    ("config", "answer", "warning"),
    [
        (
            ENCRYPTED,
            b"xkv1 not sealed",
            'Error decrypting auth callout response on account "AUTH": nkeys: encrypted input is not valid',
        ),
        (CONFIG, b"", 'Auth callout violation: "no reason supplied" on account "AUTH"'),
    ],
    ids=["not_decrypting", "empty"],
)
async def test_an_answer_the_server_cannot_read(
    server: Start, lines: Lines, config: str, answer: bytes, warning: str
) -> None:
    target = await server(config)
    nc = await nats.connect(target.url, user="auth", password="pwd")

    async def on_request(msg: Any) -> None:
        await msg.respond(answer)

    await nc.subscribe(AUTH_CALLOUT_SUBJECT, cb=on_request)
    await nc.flush()
    try:
        assert await refused(target, "secret") == b"-ERR 'Authorization Violation'\r\n"
        await lines.wait_for(target, ['[ERR] ADDR - authentication error - User "bob"', f"[WRN] {warning}"])
    finally:
        await nc.close()


ALLOWED = CONFIG.replace("  SYS {}", "  A { users: [ {user: a, password: a} ] }\n  SYS {}").replace(
    "account: AUTH }", "account: AUTH, allowed_accounts: [APP] }"
)


async def test_logins_to_accounts_not_allowed_are_not_sent(server: Start) -> None:
    target = await server(ALLOWED)
    service_nc, service = await with_service(target)
    try:
        nc = await nats.connect(target.url, user="a", password="a")
        reply = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
        await nc.close()
        assert json.loads(reply.data)["data"] == {"user": "a", "account": "A", "account_name": "A"}
        assert service.requests == []
        nc = await nats.connect(target.url, user="bob", password="secret")
        await nc.close()
        assert [request.connect_opts["user"] for request in service.requests] == ["bob"]
    finally:
        await service_nc.close()


AUTH_ERROR = "$SYS.ACCOUNT.CLIENT.AUTH.ERR"


def told(data: bytes) -> dict[str, Any]:
    """An auth error event with what differs from run to run left out."""
    event: dict[str, Any] = json.loads(data)
    assert event["type"] == "io.nats.server.advisory.v1.client_disconnect"
    client = {k: v for k, v in event["client"].items() if k not in ("start", "stop", "rtt", "id", "ver")}
    return {"client": client, "sent": event["sent"], "received": event["received"], "reason": event["reason"]}


async def test_refusals_are_told_in_the_callout_account(server: Start) -> None:
    target = await server(CONFIG)
    service_nc, _ = await with_service(target)
    events = await service_nc.subscribe(AUTH_ERROR)
    await service_nc.flush()
    try:
        await refused(target, "nope")
        await refused(target, "wrong", user="auth")
        first, second = [told((await events.next_msg(timeout=WAIT)).data) for _ in range(2)]
    finally:
        await service_nc.close()
    client = {"host": "127.0.0.1", "acc": "AUTH", "user": "bob", "name": "cli", "name_tag": "$G"}
    client |= {"kind": "Client", "client_type": "nats"}
    nothing = {"msgs": 0, "bytes": 0}
    assert first == {
        "client": client,
        "sent": nothing,
        "received": nothing,
        "reason": "Auth callout service returned an error: go away",
    }
    assert second == {
        "client": {**client, "user": "auth"},
        "sent": nothing,
        "received": nothing,
        "reason": "Authentication Failure",
    }


async def test_without_a_callout_the_clients_account_is_told(server: Start) -> None:
    target = await server("authorization { users: [ {user: a, password: a} ] }\n")
    nc = await nats.connect(target.url, user="a", password="a")
    events = await nc.subscribe(AUTH_ERROR)
    await nc.flush()
    try:
        await refused(target, "nope")
        event = told((await events.next_msg(timeout=WAIT)).data)
    finally:
        await nc.close()
    assert event["client"]["acc"] == "$G" and event["reason"] == "Authentication Failure"


CONFIG_ERRORS = {
    "no_issuer": "auth_callout { auth_users: [a] }",
    "no_users": "auth_callout { issuer: ISSUER }",
    "bad_issuer": "auth_callout { issuer: xx, auth_users: [a] }",
    "unknown_field": "auth_callout { issuer: ISSUER, auth_users: [a], foo: 1 }",
    "users_not_an_array": "auth_callout { issuer: ISSUER, auth_users: a }",
    "not_a_map": "auth_callout: 3",
    "bad_xkey": "auth_callout { issuer: ISSUER, auth_users: [a], xkey: nope }",
    "allowed_account_missing": "auth_callout { issuer: ISSUER, auth_users: [a], allowed_accounts: [B] }",
}


@pytest.mark.real_only
@pytest.mark.parametrize("name", sorted(CONFIG_ERRORS))
def test_config_errors(name: str, tmp_path: Path) -> None:
    block = CONFIG_ERRORS[name].replace("ISSUER", ISSUER.public_key)
    option_errors_alike(write(tmp_path, f"authorization {{\n  {block}\n}}\n"))
