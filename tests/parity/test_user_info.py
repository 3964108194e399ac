"""``$SYS.REQ.USER.INFO`` on both targets: any connected client asks who it is.

Facts pinned (nats-server 2.15.1), whatever the authentication:

- the answer (no headers) is ``{"server": {...}, "data": {...}}``, the
  ``server`` block of the system account's messages, ``data`` nats-server's
  ``UserInfo``: ``user`` (the name, the nkey, ``[REDACTED]`` for a token,
  ``""`` without authentication), ``account``, ``account_name``;
- a user with permissions also gets ``permissions``: ``publish`` and
  ``subscribe`` (``{}`` when that side has no rule, else ``allow`` /
  ``deny``; a subscribe entry keeps its queue as ``"subject queue"``),
  then ``responses`` (``max``, ``ttl`` in nanoseconds, defaults filled in)
  with ``allow_responses``; a user without permissions has no such key;
- the body of the request does not matter;
- a system account client may ask ``$SYS.REQ.USER.<account>.INFO`` (where
  the imports lead) itself: the answer has an empty ``user`` and
  ``account`` and the asker's own permissions; in another account nobody
  answers that subject.

nats-server lists the subjects of one permission list in the order of its
subject index (random between first tokens); the lists are compared sorted.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import nkeys
import pytest

from tests.harness.configured import Start, configured_servers
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT

SUBJECT = "$SYS.REQ.USER.INFO"
SERVER_KEYS = ["name", "host", "id", "ver", "feature_flags", "jetstream", "flags", "seq", "time"]
USER_SEED = nkeys.encode_seed(bytes(range(32)), nkeys.PREFIX_BYTE_USER).decode()
USER_NKEY = nkeys.from_seed(USER_SEED.encode()).public_key.decode()

USERS = """
authorization { users = [
  {user: a, password: a, permissions: {
    publish: {allow: ["x.>", "$SYS.REQ.USER.INFO"], deny: ["x.y"]},
    subscribe: {allow: ["_INBOX.>"], deny: ["z"]},
    allow_responses: true}}
  {user: b, password: b}
  {user: c, password: c, permissions: {publish: ["$SYS.>", "_INBOX.>"], subscribe: "_INBOX.>"}}
  {user: q, password: q, permissions: {
    publish: ["$SYS.REQ.USER.INFO"],
    subscribe: {allow: ["_INBOX.>", "foo.* grp"], deny: ["bar workers"]},
    allow_responses: {max: 3, expires: "5s"}}}
  {user: p, password: p, permissions: {publish: {deny: ["secret.>"]}}}
  {nkey: NKEY}
]}
""".replace("NKEY", USER_NKEY)
ACCOUNTS = """
accounts {
  A { users: [ {user: u, password: u, permissions: {subscribe: {deny: "q"}}}, {user: v, password: v} ] }
  SYS { users: [ {user: s, password: s} ] }
}
system_account: SYS
no_auth_user: v
"""


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False)) as start:
        yield start


async def ask(target: Target, body: bytes = b"", subject: str = SUBJECT, **credentials: Any) -> dict[str, Any]:
    nc = await nats.connect(target.url, **credentials)
    try:
        reply = await nc.request(subject, body, timeout=WAIT)
    finally:
        await nc.close()
    assert reply.headers is None
    doc: dict[str, Any] = json.loads(reply.data)
    assert list(doc) == ["server", "data"]
    assert list(doc["server"]) == SERVER_KEYS and doc["server"]["ver"] == "2.15.1"
    return doc


def sorted_lists(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every permission list sorted (nats-server's order depends on its subject index)."""
    permissions = data.get("permissions")
    if permissions is None:
        return data
    for side in ("publish", "subscribe"):
        permissions[side] = {kind: sorted(entries) for kind, entries in permissions[side].items()}
    return data


def login(user: str) -> dict[str, str]:
    return {"user": user, "password": user}


async def test_without_authentication(server: Start) -> None:
    target = await server("")
    doc = await ask(target, b'{"anything": true}')
    assert doc["data"] == {"user": "", "account": "$G", "account_name": "$G"}
    client = await RawClient.connect(target.host, target.port)
    try:
        greeting = json.loads((await client.read_until(b"\r\n"))[5:-3])
    finally:
        await client.close()
    assert doc["server"]["id"] == greeting["server_id"] and doc["server"]["jetstream"] is False


async def test_users_with_and_without_permissions(server: Start) -> None:
    target = await server(USERS)
    everything = {"user": "a", "account": "$G", "account_name": "$G"}
    everything["permissions"] = {
        "publish": {"allow": ["$SYS.REQ.USER.INFO", "x.>"], "deny": ["x.y"]},
        "subscribe": {"allow": ["_INBOX.>"], "deny": ["z"]},
        "responses": {"max": 1, "ttl": 120_000_000_000},
    }
    answered = (await ask(target, **login("a")))["data"]
    assert list(answered) == ["user", "account", "account_name", "permissions"]
    assert list(answered["permissions"]) == ["publish", "subscribe", "responses"]
    assert sorted_lists(answered) == everything
    assert (await ask(target, **login("b")))["data"] == {"user": "b", "account": "$G", "account_name": "$G"}
    lists = sorted_lists((await ask(target, **login("c")))["data"])
    assert lists["permissions"] == {
        "publish": {"allow": ["$SYS.>", "_INBOX.>"]},
        "subscribe": {"allow": ["_INBOX.>"]},
    }


async def test_queue_entries_response_limits_and_a_missing_side(server: Start) -> None:
    target = await server(USERS)
    queued = sorted_lists((await ask(target, **login("q")))["data"])
    assert queued["permissions"] == {
        "publish": {"allow": ["$SYS.REQ.USER.INFO"]},
        "subscribe": {"allow": ["_INBOX.>", "foo.* grp"], "deny": ["bar workers"]},
        "responses": {"max": 3, "ttl": 5_000_000_000},
    }
    denied = (await ask(target, **login("p")))["data"]
    assert denied["permissions"] == {"publish": {"deny": ["secret.>"]}, "subscribe": {}}


async def test_an_nkey_user_is_named_by_its_key(server: Start) -> None:
    target = await server(USERS)
    doc = await ask(target, nkeys_seed_str=USER_SEED)
    assert doc["data"] == {"user": USER_NKEY, "account": "$G", "account_name": "$G"}


async def test_accounts_the_system_account_and_the_no_auth_user(server: Start) -> None:
    target = await server(ACCOUNTS)
    member = await ask(target, **login("u"))
    assert member["data"] == {
        "user": "u",
        "account": "A",
        "account_name": "A",
        "permissions": {"publish": {}, "subscribe": {"deny": ["q"]}},
    }
    assert (await ask(target, **login("s")))["data"] == {"user": "s", "account": "SYS", "account_name": "SYS"}
    assert (await ask(target))["data"] == {"user": "v", "account": "A", "account_name": "A"}


@pytest.mark.parametrize(
    "config,credentials,user",
    [
        ("authorization { token: secret }", {"token": "secret"}, "[REDACTED]"),
        ("authorization { user: solo, password: pw }", {"user": "solo", "password": "pw"}, "solo"),
    ],
    ids=["token", "single-user"],
)
async def test_a_token_is_redacted_and_a_single_user_named(
    server: Start, config: str, credentials: dict[str, str], user: str
) -> None:
    target = await server(config)
    assert (await ask(target, **credentials))["data"] == {"user": user, "account": "$G", "account_name": "$G"}


DIRECT = """
accounts {
  A { users: [ {user: u, password: u} ] }
  SYS { users: [ {user: s, password: s, permissions: {subscribe: {deny: "zz"}}}, {user: t, password: t} ] }
}
system_account: SYS
"""


async def test_the_system_account_may_ask_the_imports_subject_itself(server: Start) -> None:
    target = await server(DIRECT)
    direct = await ask(target, subject="$SYS.REQ.USER.A.INFO", **login("s"))
    assert direct["data"] == {"user": "", "account": "", "permissions": {"publish": {}, "subscribe": {"deny": ["zz"]}}}
    plain = await ask(target, subject="$SYS.REQ.USER.SYS.INFO", **login("t"))
    assert plain["data"] == {"user": "", "account": ""}
    nc = await nats.connect(target.url, **login("u"))
    try:
        with pytest.raises(nats.errors.NoRespondersError):
            await nc.request("$SYS.REQ.USER.A.INFO", b"", timeout=WAIT)
    finally:
        await nc.close()
