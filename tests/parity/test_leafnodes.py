"""Leaf nodes: a hub and a leaf server of the same kind exchange core NATS traffic both ways.

Messages, headers, queue groups (one member gets each message, across the
hub and the leaf) and request/reply cross the leaf connection in both
directions, as between nats-servers.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client

from tests.harness.cluster import Inbox, group_gets_each_once, interest_routed, requests_answered
from tests.harness.leafs import hub_and_leaf
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster


async def _clients(hub_url: str, leaf_url: str) -> tuple[Client, Client]:
    return await nats.connect(hub_url), await nats.connect(leaf_url)


@pytest.mark.parametrize("publisher_index", [0, 1])
async def test_messages_and_headers_cross_both_ways(target_kind: str, tmp_path: Path, publisher_index: int) -> None:
    async with hub_and_leaf(target_kind, target_kind, tmp_path) as (hub, leaf):
        connections = await _clients(hub.url, leaf.url)
        publisher, subscriber = connections[publisher_index], connections[1 - publisher_index]
        subject = f"leaf.{secrets.token_hex(4)}"
        inbox = Inbox()
        received = []

        async def keep(msg: nats.aio.msg.Msg) -> None:
            received.append(msg)
            await inbox.add(msg)

        await subscriber.subscribe(f"{subject}.>", cb=keep)
        await interest_routed(publisher, subscriber)
        await publisher.publish(f"{subject}.a", b"one")
        await publisher.publish(f"{subject}.b", b"two", headers={"K": "v", "Other": "x"})
        await publisher.flush()
        await eventually(lambda: asyncio.sleep(0, len(inbox.payloads)), lambda n: n >= 2, what="both messages")
        assert inbox.payloads == [b"one", b"two"]
        assert received[1].headers == {"K": "v", "Other": "x"}
        for nc in connections:
            await nc.close()


@pytest.mark.parametrize("requester_index", [0, 1])
async def test_request_reply_both_ways(target_kind: str, tmp_path: Path, requester_index: int) -> None:
    async with hub_and_leaf(target_kind, target_kind, tmp_path) as (hub, leaf):
        connections = await _clients(hub.url, leaf.url)
        await requests_answered(
            connections[requester_index], connections[1 - requester_index], f"svc.{secrets.token_hex(4)}"
        )
        for nc in connections:
            await nc.close()


async def test_queue_group_across_hub_and_leaf(target_kind: str, tmp_path: Path) -> None:
    async with hub_and_leaf(target_kind, target_kind, tmp_path) as (hub, leaf):
        connections = await _clients(hub.url, leaf.url)
        subject = f"work.{secrets.token_hex(4)}"
        members = [Inbox(), Inbox()]
        for nc, inbox in zip(connections, members, strict=True):
            await nc.subscribe(subject, queue="workers", cb=inbox.add)
        await interest_routed(connections[0], connections[1])
        await interest_routed(connections[1], connections[0])
        # A server with a member of its own gives it every message: the leaf's member is taken only without one.
        for publisher, inbox in zip(connections, members, strict=True):
            for each in members:
                each.payloads.clear()
            await group_gets_each_once(publisher, subject, members, count=100)
            assert len(inbox.payloads) == 100
        for nc in connections:
            await nc.close()


async def test_wrong_credentials_are_refused(target_kind: str, tmp_path: Path) -> None:
    """A leaf with the wrong password never connects: the hub's clients see no interest from it."""
    extra = "authorization { user: a, password: b }"
    async with hub_and_leaf(target_kind, target_kind, tmp_path, hub_extra=extra, url_auth="a:wrong@") as (hub, leaf):
        hub_client, leaf_client = await _clients(hub.url, leaf.url)
        await leaf_client.subscribe("nobody.here")
        await leaf_client.flush()
        with pytest.raises(nats.errors.NoRespondersError):
            await hub_client.request("nobody.here", b"", timeout=WAIT)
        await hub_client.close()
        await leaf_client.close()
