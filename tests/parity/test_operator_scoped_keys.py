"""Operator (JWT) mode: users issued by an account's scoped signing keys get the key's template.

The template's permissions and limits replace the user's, its template
tags expand to the user's and the account's names, keys and tags, and a
scoped user that carries permissions of its own, or whose template does not
expand, is refused.  Each test starts a server of its kind with
:meth:`Operator.server_config` and logs in raw.
"""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

import pytest

from fakejs.testkit.jwt import Operator, User, user_template
from tests.harness.config_file import FAKE, real, run, write
from tests.harness.operator import StartOperator, answer, logged_in, login_connect, operator_start_fixture
from tests.harness.raw import RawClient
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Target

start = operator_start_fixture()

AUTHORIZATION_VIOLATION = b"-ERR 'Authorization Violation'\r\n"


async def refused(target: Target, user: User) -> bytes:
    """What the server answers ``user``'s login when it refuses it."""
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.send(await login_connect(client, user) + b"PING\r\n")
        await asyncio.wait_for(client.read_until(b"Violation'\r\n"), 5)
        return bytes(client.received)
    finally:
        await client.close()


def publish_violation(subject: str) -> bytes:
    return b"-ERR 'Permissions Violation for Publish to \"%s\"'\r\nPONG\r\n" % subject.encode()


def subscribe_violation(subject: str) -> bytes:
    return b"-ERR 'Permissions Violation for Subscription to \"%s\"'\r\nPONG\r\n" % subject.encode()


async def test_the_templates_names_and_keys_are_the_users_and_its_accounts(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    scoped = app.scoped_signing_key(
        "service",
        pub_allow=["{{name()}}.>", "{{account-name()}}.all", "to.{{account-subject()}}"],
        sub_allow=["{{subject()}}", "_INBOX.>"],
    )
    target = await start(operator, system, app)
    user = app.user("alice", signer=scoped)
    client = await logged_in(target, user)
    try:
        for allowed in ("alice.x", "APP.all", f"to.{app.public_key}"):
            assert await answer(client, b"PUB %s 0\r\n\r\n" % allowed.encode()) == b"PONG\r\n"
        assert await answer(client, b"PUB bob.x 0\r\n\r\n") == publish_violation("bob.x")
        assert await answer(client, b"SUB %s 1\r\n" % user.public_key.encode()) == b"PONG\r\n"
        assert await answer(client, b"SUB alice 2\r\n") == subscribe_violation("alice")
    finally:
        await client.close()


async def test_tags_expand_to_one_subject_per_value(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP", tags=["region:eu"])
    scoped = app.scoped_signing_key("team", sub_allow=["{{tag(dept)}}.{{account-tag(region)}}.>"])
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("carol", signer=scoped, tags=["dept:sales", "dept:ops", "level:1"]))
    try:
        assert await answer(client, b"SUB sales.eu.a 1\r\nSUB ops.eu.b 2\r\n") == b"PONG\r\n"
        assert await answer(client, b"SUB dev.eu.a 3\r\n") == subscribe_violation("dev.eu.a")
        assert await answer(client, b"PUB anything 0\r\n\r\n") == b"PONG\r\n"
    finally:
        await client.close()


async def test_an_allow_list_emptied_by_a_missing_tag_denies_everything(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    scoped = app.scoped_signing_key("team", pub_allow=["{{tag(dept)}}.>"])
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("dave", signer=scoped))
    try:
        assert await answer(client, b"PUB x 0\r\n\r\n") == publish_violation("x")
        assert await answer(client, b"SUB x 1\r\n") == b"PONG\r\n"
    finally:
        await client.close()


async def test_the_templates_limits_replace_the_users(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    scoped = app.scoped_signing_key("few", limits={"subs": 1})
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("erin", signer=scoped))
    try:
        assert await answer(client, b"SUB a 1\r\n") == b"PONG\r\n"
        assert await answer(client, b"SUB b 2\r\n") == b"-ERR 'maximum subscriptions exceeded'\r\nPONG\r\n"
    finally:
        await client.close()


async def test_a_bearer_template_logs_its_users_in_without_a_signature(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    scoped = app.scoped_signing_key("bearer", bearer=True)
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("frank", signer=scoped), sign=False)
    await client.close()


async def test_refused_scoped_users(start: StartOperator) -> None:
    """Own permissions or limits, an undefined operation, a deny entry with a missing tag or an invalid subject."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    plain = app.scoped_signing_key("plain", pub_allow=["a"])
    unknown = app.scoped_signing_key("unknown", pub_allow=["{{nickname()}}"])
    missing = app.scoped_signing_key("missing", sub_deny=["{{tag(dept)}}"])
    invalid = app.scoped_signing_key("invalid", pub_deny=["{{name()}}.x"])
    target = await start(operator, system, app)
    users = [
        app.user("own", signer=plain, pub_allow=["b"]),
        app.user("limited", signer=plain, limits={"subs": 5}),
        app.user("bearer", signer=plain, bearer=True),
        app.user("with-src", signer=plain, src=["127.0.0.0/8"]),
        app.user("grace", signer=unknown),
        app.user("heidi", signer=missing),
        app.user("two words", signer=invalid),
    ]
    for user in users:
        assert await refused(target, user) == AUTHORIZATION_VIOLATION, user.name


async def test_the_templates_sources_and_connection_types_apply(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    elsewhere = app.scoped_signing_key("elsewhere", src=["10.0.0.0/8"])
    websocket = app.scoped_signing_key("websocket", allowed_connection_types=["WEBSOCKET"])
    local = app.scoped_signing_key("local", src=["127.0.0.0/8"], allowed_connection_types=["STANDARD"])
    target = await start(operator, system, app)
    for key in (elsewhere, websocket):
        assert await refused(target, app.user("u", signer=key)) == AUTHORIZATION_VIOLATION, key.role
    client = await logged_in(target, app.user("here", signer=local))
    await client.close()


async def test_a_user_issued_by_a_plain_key_keeps_its_own_permissions(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    app.scoped_signing_key("scoped", pub_allow=["nothing"])
    plain = app.signing_key()
    target = await start(operator, system, app)
    client = await logged_in(target, app.user("ivan", signer=plain, pub_allow=["mine"]))
    try:
        assert await answer(client, b"PUB mine 0\r\n\r\n") == b"PONG\r\n"
        assert await answer(client, b"PUB nothing 0\r\n\r\n") == publish_violation("nothing")
    finally:
        await client.close()


async def test_a_templates_connect_times_are_its_users(start: StartOperator) -> None:
    """A scoped key's ``times`` hold for the users it issues: outside them the login is refused."""
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    hour = datetime.datetime.now(datetime.UTC).hour
    later = [{"start": f"{(hour + 2) % 24:02}:00:00", "end": f"{(hour + 3) % 24:02}:00:00"}]  # an hour from now
    always = [{"start": "00:00:00", "end": "23:59:59"}]  # a range holds all day but its end second
    never = app.scoped_signing_key("night", template={**user_template(), "times": later, "times_location": "UTC"})
    day = app.scoped_signing_key("day", template={**user_template(), "times": always, "times_location": "UTC"})
    target = await start(operator, system, app)
    assert await refused(target, app.user("owl", signer=never)) == AUTHORIZATION_VIOLATION
    if datetime.datetime.now(datetime.UTC).strftime("%H:%M:%S") < "23:59:50":
        client = await logged_in(target, app.user("lark", signer=day))
        await client.close()


@pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)
@pytest.mark.parametrize(
    ("template", "feature"),
    [
        ({"proxy_required": True}, "trusted proxies (proxy_required)"),
    ],
)
def test_fakejs_refuses_templates_with_what_it_does_not_serve(
    template: dict[str, object], feature: str, tmp_path: Path
) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    app.scoped_signing_key("timed", template={**user_template(), **template})
    path = write(tmp_path, "port: -1\n" + operator.server_config(system_account=system, accounts=[system, app]))
    assert run(real(), "-t", "-c", path)[0] == 0
    status, stderr = run(FAKE, "-c", path)
    assert status == 1
    assert feature in stderr and "not supported by fakejs yet" in stderr
