"""Leaf nodes between kinds: a real nats-server hub with a fakejs leaf, and a fakejs hub with a real leaf.

The leaf protocol is the contract: INFO and CONNECT, interest (LS+/LS-,
queue weights, the loop detection subject), messages (LMSG/HMSG).  Not
parametrized over targets: it needs the real binary and fakejs at once.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import nats
import pytest

from tests.harness.cluster import Inbox, group_gets_each_once, interest_routed, requests_answered
from tests.harness.leafs import BOUND, HUB_USER, LeafSetup, bound_accounts_isolated, hub_and_leaf, only_allowed_arrive
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster

PAIRS = [("real", "fake"), ("fake", "real")]


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_core_traffic_both_ways(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        for publisher, subscriber in ((hub_client, leaf_client), (leaf_client, hub_client)):
            subject = f"mix.{secrets.token_hex(4)}"
            inbox, received = Inbox(), []

            async def keep(msg: nats.aio.msg.Msg, inbox: Inbox = inbox, received: list = received) -> None:  # type: ignore[type-arg]
                received.append(msg)
                await inbox.add(msg)

            await subscriber.subscribe(f"{subject}.*", cb=keep)
            await interest_routed(publisher, subscriber)
            await publisher.publish(f"{subject}.a", b"plain")
            await publisher.publish(f"{subject}.b", b"with", headers={"A": "1"})
            await publisher.flush()
            await eventually(lambda inbox=inbox: asyncio.sleep(0, len(inbox.payloads)), lambda n: n >= 2, what="both")
            assert inbox.payloads == [b"plain", b"with"]
            assert received[1].headers == {"A": "1"}
            await requests_answered(publisher, subscriber, f"svc.{secrets.token_hex(4)}")
        members = [Inbox(), Inbox()]
        subject = f"work.{secrets.token_hex(4)}"
        for nc, member in zip((hub_client, leaf_client), members, strict=True):
            await nc.subscribe(subject, queue="q", cb=member.add)
        await interest_routed(hub_client, leaf_client)
        await interest_routed(leaf_client, hub_client)
        await group_gets_each_once(leaf_client, subject, members, count=100)
        await hub_client.close()
        await leaf_client.close()


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_bound_account(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    """The leaf's LA bound to the hub's A (the CONNECT's remote_account, the login's account): nothing else crosses."""
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=BOUND) as (hub, leaf):
        await bound_accounts_isolated(hub, leaf)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_permissions_across_kinds(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    """The hub user's lists (sent in the hub's INFO) and the remote's deny lists (deny_pub in CONNECT) hold both ways."""
    setup = LeafSetup(
        url_auth="a:a@",
        hub_top=HUB_USER,
        remote_extra='deny_imports: ["di.>"], deny_exports: ["de.>"]',
        jetstream=False,
    )
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url)
        await interest_routed(hub_client, leaf_client)
        tag = secrets.token_hex(4)
        await only_allowed_arrive(hub_client, leaf_client, f"ns.{tag}", f"ok.{tag}")
        await only_allowed_arrive(leaf_client, hub_client, f"np.{tag}", f"up.{tag}")
        await only_allowed_arrive(hub_client, leaf_client, f"di.{tag}", f"ok2.{tag}")
        await only_allowed_arrive(leaf_client, hub_client, f"de.{tag}", f"up2.{tag}")
        await hub_client.close()
        await leaf_client.close()
