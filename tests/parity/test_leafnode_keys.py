"""Leaf logins with keys: a remote's ``credentials`` (a user JWT) or ``nkey`` signing the hub's nonce.

A hub in operator mode takes the leaf's user JWT and binds the link to the
user's account; a hub's ``leafnodes { authorization { nkey } }`` (or an
nkey user of its ``authorization``) takes a remote's ``nkey``.  Each runs
with a hub and a leaf of the same kind, and of mixed kinds (the CONNECT's
``jwt``, ``nkey`` and ``sig`` are the contract).
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
from pathlib import Path

import nats
import nkeys
import pytest

from fakejs.targets.cluster import free_port
from fakejs.testkit.jwt import Operator
from fakejs.testkit.jwt.issuers import Key
from tests.harness.cluster import Inbox, interest_routed, requests_answered
from tests.harness.configured import configured_servers
from tests.harness.leafs import LeafSetup, hub_and_leaf
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

PAIRS = [("real", "fake"), ("fake", "real")]


async def _traffic_both_ways(hub_client: nats.aio.client.Client, leaf_client: nats.aio.client.Client) -> None:
    """Messages cross each way, requests are answered each way."""
    for publisher, subscriber in ((hub_client, leaf_client), (leaf_client, hub_client)):
        subject, inbox = f"keys.{secrets.token_hex(4)}", Inbox()
        await subscriber.subscribe(subject, cb=inbox.add)
        await interest_routed(publisher, subscriber)
        await publisher.publish(subject, b"across")
        await publisher.flush()
        await eventually(lambda inbox=inbox: asyncio.sleep(0, inbox.payloads), what=subject)
        assert inbox.payloads == [b"across"]
        await requests_answered(publisher, subscriber, f"svc.{secrets.token_hex(4)}")


async def test_credentials_bind_the_users_account(target_kind: str, tmp_path: Path) -> None:
    await _credentials_bind_the_users_account(target_kind, target_kind, tmp_path)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_credentials_bind_the_users_account_mixed(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    await _credentials_bind_the_users_account(hub_kind, leaf_kind, tmp_path)


async def _credentials_bind_the_users_account(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    """An operator-mode hub: the leaf's user JWT binds its link to the user's account A, not B."""
    operator = Operator()
    system, account_a, account_b = operator.account("SYS"), operator.account("A"), operator.account("B")
    leaf_user = account_a.user("leaf")
    creds = leaf_user.write_creds(tmp_path / "leaf.creds")
    client_a = account_a.user("client").write_creds(tmp_path / "a.creds")
    client_b = account_b.user("client").write_creds(tmp_path / "b.creds")
    setup = LeafSetup(
        hub_top=operator.server_config(system_account=system, accounts=[system, account_a, account_b]),
        remote_extra=f'credentials: "{creds}"',
        jetstream=False,
    )
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_a = await nats.connect(hub.url, user_credentials=client_a)
        hub_b = await nats.connect(hub.url, user_credentials=client_b)
        leaf_client = await nats.connect(leaf.url)
        try:
            await _traffic_both_ways(hub_a, leaf_client)
            await hub_b.subscribe("only.b")
            await hub_b.flush()
            with pytest.raises(nats.errors.NoRespondersError):
                await leaf_client.request("only.b", b"", timeout=WAIT)
        finally:
            for nc in (hub_a, hub_b, leaf_client):
                await nc.close()


async def test_nkey_remote(target_kind: str, tmp_path: Path) -> None:
    await _nkey_remote(target_kind, target_kind, tmp_path)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_nkey_remote_mixed(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    await _nkey_remote(hub_kind, leaf_kind, tmp_path)


async def _nkey_remote(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    """``leafnodes { authorization { nkey, account } }`` takes the remote's ``nkey`` and binds the account."""
    key = Key(nkeys.PREFIX_BYTE_USER)
    setup = LeafSetup(
        hub_top="accounts { A { users [ {user: a, password: a} ] } }",
        hub_extra=f'authorization {{ nkey: "{key.public_key}", account: A }}',
        remote_extra=f'nkey: "{key.seed}"',
        jetstream=False,
    )
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_a = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url)
        try:
            await _traffic_both_ways(hub_a, leaf_client)
        finally:
            await hub_a.close()
            await leaf_client.close()


async def test_nkey_user_of_the_server(target_kind: str, tmp_path: Path) -> None:
    await _nkey_user_of_the_server(target_kind, target_kind, tmp_path)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_nkey_user_of_the_server_mixed(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    await _nkey_user_of_the_server(hub_kind, leaf_kind, tmp_path)


async def _nkey_user_of_the_server(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    """Without leaf users the leaf logs in as a client would: an nkey user of ``authorization { users }``."""
    key = Key(nkeys.PREFIX_BYTE_USER)
    setup = LeafSetup(
        hub_top=f'authorization {{ users [ {{user: c, password: c}}, {{nkey: "{key.public_key}"}} ] }}',
        remote_extra=f'nkey: "{key.seed}"',
        jetstream=False,
    )
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client = await nats.connect(hub.url, user="c", password="c")
        leaf_client = await nats.connect(leaf.url)
        try:
            await _traffic_both_ways(hub_client, leaf_client)
        finally:
            await hub_client.close()
            await leaf_client.close()


@pytest.mark.parametrize("signed", ["nonce", "other"])
async def test_the_nonce_must_be_signed(target_kind: str, signed: str, tmp_path: Path) -> None:
    """The leaf nkey's CONNECT signs the INFO's nonce: anything else is an Authorization Violation."""
    key, port = Key(nkeys.PREFIX_BYTE_USER), free_port()
    async with configured_servers(target_kind, tmp_path) as start:
        await start(f'leafnodes {{ port: {port}, authorization {{ nkey: "{key.public_key}" }} }}\n')
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            info = json.loads((await asyncio.wait_for(reader.readline(), WAIT))[5:])
            data = info["nonce"].encode() if signed == "nonce" else b"something else"
            signature = base64.urlsafe_b64encode(key.sign(data)).rstrip(b"=").decode()
            connect = {"nkey": key.public_key, "sig": signature, "server_id": "NRAWLEAF", "name": "raw", "protocol": 3}
            writer.write(b"CONNECT " + json.dumps(connect).encode() + b"\r\n")
            answer = await asyncio.wait_for(reader.readline(), WAIT)
        finally:
            writer.close()
    if signed == "nonce":
        assert answer.startswith(b"INFO ") and json.loads(answer[5:])["connect_info"] is True
    else:
        assert answer == b"-ERR 'Authorization Violation'\r\n"


@pytest.mark.parametrize("signed", ["nonce", "other"])
async def test_an_operator_hub_checks_the_jwt_signature(target_kind: str, signed: str, tmp_path: Path) -> None:
    """In operator mode the leaf's user JWT must come with the INFO's nonce signed by the user's key."""
    operator, port = Operator(), free_port()
    system, account = operator.account("SYS"), operator.account("A")
    user = account.user("leaf")
    async with configured_servers(target_kind, tmp_path) as start:
        config = operator.server_config(system_account=system, accounts=[system, account])
        await start(f"{config}leafnodes {{ port: {port} }}\n")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            info = json.loads((await asyncio.wait_for(reader.readline(), WAIT))[5:])
            data = info["nonce"].encode() if signed == "nonce" else b"something else"
            signature = base64.urlsafe_b64encode(user.sign(data)).rstrip(b"=").decode()
            connect = {"jwt": user.jwt, "sig": signature, "server_id": "NRAWLEAF", "name": "raw", "protocol": 3}
            writer.write(b"CONNECT " + json.dumps(connect).encode() + b"\r\n")
            answer = await asyncio.wait_for(reader.readline(), WAIT)
        finally:
            writer.close()
    if signed == "nonce":
        assert answer.startswith(b"INFO ") and json.loads(answer[5:])["remote_account"] == account.public_key
    else:
        assert answer == b"-ERR 'Authorization Violation'\r\n"
