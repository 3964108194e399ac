"""Accounts: the registry starts with ``$G``; a session's subscriptions live in its account's router."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from fakejs.core.accounts import GLOBAL_ACCOUNT, Accounts
from fakejs.core.broker import Broker
from fakejs.core.options import ServerOptions
from fakejs.core.session import ClientSession
from fakejs.jetstream import JetStreamWithApi
from fakejs.testkit.clock import ManualClock
from tests.harness.session_io import FakeIO


def _ignore(where: str, exc: BaseException) -> None:
    raise AssertionError(where) from exc


def test_registry_starts_with_the_global_account() -> None:
    accounts = Accounts(random.Random(1), _ignore)
    assert accounts.default.name == GLOBAL_ACCOUNT == "$G"
    assert accounts.get("$G") is accounts.default and accounts.get("NOPE") is None
    other = accounts.add("A")
    assert [a.name for a in accounts] == ["$G", "A"] and len(accounts) == 2
    assert other.router is not accounts.default.router
    with pytest.raises(ValueError, match="already exists"):
        accounts.add("A")


def test_users_say_which_account_they_log_in_to() -> None:
    accounts = Accounts(random.Random(1), _ignore)
    accounts.default.users["ann"] = "pw"
    other = accounts.add("A")
    other.users["bob"] = "pw2"
    assert accounts.with_user("ann") is accounts.default
    assert accounts.with_user("bob") is other
    assert accounts.with_user("eve") is None


def test_the_broker_router_is_the_global_accounts() -> None:
    broker = Broker(ServerOptions(user="ann", password="pw"), ManualClock(start_ns=0))
    assert broker.router is broker.accounts.default.router
    assert broker.accounts.default.users == {"ann": "pw"}
    assert broker.accounts.default.jetstream is None


def _login(broker: Broker, user: str, password: str) -> ClientSession:
    session = ClientSession(broker, FakeIO())
    session.start()
    connect = {"verbose": False, "protocol": 1, "user": user, "pass": password}
    session.data_received(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
    return session


def test_sessions_of_different_accounts_do_not_see_each_other() -> None:
    broker = Broker(ServerOptions(user="ann", password="pw", seed=1), ManualClock(start_ns=0))
    other = broker.accounts.add("A")
    other.users["bob"] = "pw2"
    ann, bob, bob2 = _login(broker, "ann", "pw"), _login(broker, "bob", "pw2"), _login(broker, "bob", "pw2")
    assert (ann.account, bob.account) == (broker.accounts.default, other)
    for session in (ann, bob, bob2):
        info = session.take_output().split(b"INFO ")[-1]
        assert json.loads(info)["remote_account"] == session.account.name
    for session in (ann, bob):
        session.data_received(b"SUB s 1\r\n")
    bob2.data_received(b"PUB s 2\r\nhi\r\n")
    assert bob.take_output() == b"MSG s 1 2\r\nhi\r\n"
    assert ann.take_output() == b""
    assert other.router.index.count == 1 and broker.router.index.count == 1


def test_jetstream_hangs_off_its_account(tmp_path: Path) -> None:
    """A JetStream serves one account: its API, streams and advisories live on that account's router."""
    broker = Broker(ServerOptions(), ManualClock(start_ns=0))
    other = broker.accounts.add("A")
    js = JetStreamWithApi(broker, str(tmp_path), own_store=False, account=other)
    js.start()
    try:
        assert js.account is other and js.account_name == "A"
        assert other.router.has_interest("$JS.API.INFO")
        assert not broker.accounts.default.router.has_interest("$JS.API.INFO")
    finally:
        js.stop()
    assert not other.router.has_interest("$JS.API.INFO")
