"""Authorization callouts on both targets: the no_auth_user, TLS clients and logins that fail in a callout's account.

Facts pinned (nats-server 2.15.1):

- with a ``no_auth_user``, a client that shows no credentials is that user
  for the callout: the request's ``connect_opts`` carry its ``user`` and
  ``pass`` and ``client_info.user`` its name; a ``no_auth_user`` among
  ``auth_users`` logs in as configured, no request sent; a refused one
  is named in the error line (``authentication error - User "guest"``);
- a TLS client's request has ``client_tls`` after ``connect_opts``: the
  TLS ``version`` (``1.3``) and Go's ``cipher`` name, and with ``verify``
  the client certificate's ``verified_chains`` (one chain, PEM, the leaf
  then the CA); a plain client's has none.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import nkeys
import pytest

from fakejs.testkit.certs import TestCertificates
from fakejs.testkit.jwt import Allow, AuthorizationRequest, CalloutService, Deny, Key
from tests.harness.callout import answer_callouts
from tests.harness.configured import Start, configured_servers
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target
from tests.harness.tls import connect as tls_connect
from tests.harness.wait import WAIT
from tests.harness.warning_lines import Lines, lines_fixture

ISSUER = Key(nkeys.PREFIX_BYTE_ACCOUNT)
lines = lines_fixture()
NO_AUTH_CONFIG = """
accounts {
  AUTH { users: [ {user: auth, password: pwd} ] }
  APP { users: [ {user: guest, password: guestpwd} ] }
}
no_auth_user: NOAUTH
authorization {
  timeout: 1
  auth_callout { issuer: ISSUER, auth_users: [auth], account: AUTH }
}
""".replace("ISSUER", ISSUER.public_key)


def decide(request: AuthorizationRequest) -> Allow:
    return Allow("APP", name="placed", pub_allow=["$SYS.REQ.USER.INFO"], sub_allow=["_INBOX.>"])


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False)) as start:
        yield start


async def with_service(target: Target) -> tuple[Any, CalloutService]:
    service = CalloutService(ISSUER, decide)
    nc = await nats.connect(target.url, user="auth", password="pwd")
    await answer_callouts(nc, service)
    return nc, service


@pytest.mark.parametrize("no_auth_user", ["guest", "auth"])
async def test_a_client_without_credentials_is_the_no_auth_user(server: Start, no_auth_user: str) -> None:
    target = await server(NO_AUTH_CONFIG.replace("NOAUTH", no_auth_user))
    service_nc, service = await with_service(target)
    try:
        nc = await nats.connect(target.url, name="anon")
        reply = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
        await nc.close()
    finally:
        await service_nc.close()
    info = json.loads(reply.data)["data"]
    if no_auth_user == "auth":  # one of auth_users: logged in as configured
        assert (info["user"], info["account"], service.requests) == ("auth", "AUTH", [])
        return
    assert (info["user"], info["account"]) == ("placed", "APP")
    [request] = service.requests
    assert (request.client_info["user"], request.client_info["name"]) == ("guest", "anon")
    assert (request.connect_opts["user"], request.connect_opts["pass"]) == ("guest", "guestpwd")


async def test_a_refused_no_auth_user(server: Start, lines: Lines) -> None:
    target = await server(NO_AUTH_CONFIG.replace("NOAUTH", "guest"))
    service = CalloutService(ISSUER, lambda _: Deny("not today"))
    service_nc = await nats.connect(target.url, user="auth", password="pwd")
    await answer_callouts(service_nc, service)
    try:
        client = await RawClient.connect(target.host, target.port)
        await client.send(b'CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n')
        assert await client.wait_closed()
        await client.close()
        assert bytes(client.received).endswith(b"-ERR 'Authorization Violation'\r\n")
        expected = [
            '[ERR] ADDR - authentication error - User "guest"',
            "[WRN] Auth callout service returned an error: not today",
        ]
        await lines.wait_for(target, expected)
    finally:
        await service_nc.close()


TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
TLS_CONFIG = """
accounts {
  AUTH { users: [ {user: auth, password: pwd} ] }
  APP {}
}
authorization {
  auth_callout { issuer: ISSUER, auth_users: [auth], account: AUTH }
}
""".replace("ISSUER", ISSUER.public_key)


@pytest.mark.parametrize("verify", [False, True])
async def test_a_tls_client_is_described(server: Start, tmp_path: Path, verify: bool) -> None:
    certs = TestCertificates(tmp_path / "certs")
    target = await server(TLS_CONFIG + certs.config_block(verify=verify))
    service = CalloutService(ISSUER, decide)
    context = certs.client_ssl_context(client=verify)
    service_nc = await tls_connect(target, context, user="auth", password="pwd")
    await answer_callouts(service_nc, service)
    try:
        nc = await tls_connect(target, context, user="bob", password="x")
        await nc.close()
    finally:
        await service_nc.close()
    [request] = service.requests
    client_tls = dict(request.nats["client_tls"])
    assert list(request.nats)[4] == "client_tls"
    assert client_tls.pop("version") == "1.3"
    assert client_tls.pop("cipher") in TLS13_SUITES  # each side's preferred one
    if not verify:  # no client certificate asked for
        assert client_tls == {}
        return
    leaf = Path(certs.client_cert_file).read_text()
    leaf = leaf[: leaf.index("-----END CERTIFICATE-----\n") + 26]
    assert client_tls == {"verified_chains": [[leaf, Path(certs.ca_file).read_text()]]}
