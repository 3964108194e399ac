"""A leaf in operator mode: its remote's ``account`` is the public key of one of its own accounts.

The leaf trusts an operator of its own (accounts LA and LB, preloaded in a
MEMORY resolver) and dials an operator-mode hub (accounts A and B) with the
credentials of a user of A.  Traffic crosses between A and LA only, both
ways; B and LB see none of it; ``/leafz`` on each side names the account
bound there by its public key.  Each runs with a hub and a leaf of the same
kind, and of mixed kinds.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs.testkit.jwt import Operator
from tests.harness.cluster import requests_answered
from tests.harness.leafs import LeafSetup, hub_and_leaf, stays_within
from tests.harness.monitoring import monitor
from tests.harness.targets import Target
from tests.harness.wait import WAIT

pytestmark = pytest.mark.cluster

PAIRS = [("real", "fake"), ("fake", "real")]


@dataclass(frozen=True)
class Clients:
    """A client of each account: the hub's A and B, the leaf's LA and LB."""

    hub_a: Client
    hub_b: Client
    leaf_la: Client
    leaf_lb: Client


@dataclass(frozen=True)
class Keys:
    """The public keys of the two accounts the link binds: the hub's A, the leaf's LA."""

    hub_account: str
    leaf_account: str


@asynccontextmanager
async def _operator_leaf(
    hub_kind: str, leaf_kind: str, tmp_path: Path
) -> AsyncIterator[tuple[Target, Target, Clients, Keys]]:
    """An operator-mode hub and an operator-mode leaf binding its LA to the hub's A; a client of each account."""
    hub_operator, leaf_operator = Operator("HUB"), Operator("LEAF")
    system, account_a, account_b = (hub_operator.account(name) for name in ("SYS", "A", "B"))
    leaf_system, account_la, account_lb = (leaf_operator.account(name) for name in ("LSYS", "LA", "LB"))
    creds = {
        name: account.user(name).write_creds(tmp_path / f"{name}.creds")
        for name, account in (("a", account_a), ("b", account_b), ("la", account_la), ("lb", account_lb))
    }
    link = account_a.user("leaf").write_creds(tmp_path / "link.creds")
    setup = LeafSetup(
        hub_top=hub_operator.server_config(system_account=system, accounts=[system, account_a, account_b]),
        leaf_top=leaf_operator.server_config(
            system_account=leaf_system, accounts=[leaf_system, account_la, account_lb]
        ),
        remote_extra=f'account: "{account_la.public_key}"\ncredentials: "{link}"',
        monitor=True,
        jetstream=False,
    )
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=setup) as (hub, leaf):
        connected: list[Client] = []
        try:
            for name in ("a", "b", "la", "lb"):
                url = hub.url if name in ("a", "b") else leaf.url
                connected.append(await nats.connect(url, user_credentials=str(creds[name])))
            keys = Keys(account_a.public_key, account_la.public_key)
            yield hub, leaf, Clients(*connected), keys
        finally:
            for client in connected:
                await client.close()


async def test_operator_leaf(target_kind: str, tmp_path: Path) -> None:
    await _bound_account_crosses(target_kind, target_kind, tmp_path)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_operator_leaf_mixed(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    await _bound_account_crosses(hub_kind, leaf_kind, tmp_path)


async def _bound_account_crosses(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    """Messages and requests cross between A and LA each way, never to B or LB; ``/leafz`` names the keys."""
    async with _operator_leaf(hub_kind, leaf_kind, tmp_path) as (hub, leaf, clients, keys):
        outsiders = [clients.hub_b, clients.leaf_lb]
        await stays_within(clients.hub_a, clients.leaf_la, outsiders, f"op.down.{secrets.token_hex(4)}")
        await stays_within(clients.leaf_la, clients.hub_a, outsiders, f"op.up.{secrets.token_hex(4)}")
        service = f"svc.{secrets.token_hex(4)}"
        await requests_answered(clients.leaf_la, clients.hub_a, service)
        await requests_answered(clients.hub_a, clients.leaf_la, f"{service}.down")
        with pytest.raises(nats.errors.NoRespondersError):
            await clients.leaf_lb.request(service, b"", timeout=WAIT)
        (at_hub,) = _leafs(await monitor(hub, "/leafz"))
        (at_leaf,) = _leafs(await monitor(leaf, "/leafz"))
        assert (at_hub["account"], at_hub["is_spoke"]) == (keys.hub_account, False)
        assert (at_leaf["account"], at_leaf["is_spoke"]) == (keys.leaf_account, True)
        filtered = _leafs(await monitor(leaf, f"/leafz?acc={keys.leaf_account}"))
        assert [entry["account"] for entry in filtered] == [keys.leaf_account]
        (remote,) = (await monitor(leaf, "/varz"))["leaf"]["remotes"]
        assert remote["local_account"] == keys.leaf_account


def _leafs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    leafs: list[dict[str, Any]] = doc["leafs"]
    assert doc["leafnodes"] == len(leafs)
    return leafs
