"""An account's configured ``mappings`` over a leaf connection, as nats-server tells and applies them.

Each side tells the other of every mapping's source (an ``LS+`` without a
subscriber behind it), so a message published there on the source crosses
the link; the side with the mapping maps what arrives from the link before
delivering it, as it maps what its clients publish (its queue groups take
it too, though the link named none).
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import nats
import pytest

from tests.harness.cluster import Inbox, interest_routed
from tests.harness.leafs import LeafSetup, hub_and_leaf
from tests.harness.monitoring import monitor
from tests.harness.targets import Target
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster

SETUP = LeafSetup(
    hub_top='mappings { "hsrc.>": "hdst.>" }',
    leaf_top='mappings { "lsrc.*": "ldst.$1" }',
    monitor=True,
    jetstream=False,
)


async def _told(target: Target, subject: str) -> list[str]:
    """The subjects the remote told ``target`` once ``subject`` is among them."""
    doc: dict[str, Any] = await eventually(
        lambda: monitor(target, "/leafz?subs=1"),
        lambda doc: any(subject in leaf.get("subscriptions_list", ()) for leaf in doc["leafs"]),
        what=f"{subject} in /leafz",
    )
    subjects: list[str] = doc["leafs"][0]["subscriptions_list"]
    return subjects


async def _mapped_across(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=SETUP) as (hub, leaf):
        assert "lsrc.*" in await _told(hub, "lsrc.*")
        assert "hsrc.>" in await _told(leaf, "hsrc.>")
        at_hub, at_leaf = await nats.connect(hub.url), await nats.connect(leaf.url)
        try:
            tag = secrets.token_hex(4)
            for publisher, subscriber, source, destination in (
                (at_hub, at_leaf, f"lsrc.{tag}", f"ldst.{tag}"),
                (at_leaf, at_hub, f"hsrc.{tag}.x", f"hdst.{tag}.x"),
            ):
                inbox, subjects = Inbox(), []

                async def keep(msg: nats.aio.msg.Msg, inbox: Inbox = inbox, subjects: list = subjects) -> None:  # type: ignore[type-arg]
                    subjects.append(msg.subject)
                    await inbox.add(msg)

                await subscriber.subscribe(destination, cb=keep)
                # A queue group of the destination takes a mapped message though the link named no queue.
                await subscriber.subscribe(destination, queue="workers", cb=keep)
                await interest_routed(publisher, subscriber)
                await publisher.publish(source, b"mapped")
                await publisher.flush()
                await eventually(
                    lambda inbox=inbox: asyncio.sleep(0, len(inbox.payloads)), lambda n: n >= 2, what=f"{destination}"
                )
                await subscriber.flush()
                assert (subjects, inbox.payloads) == ([destination] * 2, [b"mapped"] * 2)
        finally:
            await at_hub.close()
            await at_leaf.close()


async def test_mappings_are_told_and_applied_across(target_kind: str, tmp_path: Path) -> None:
    await _mapped_across(target_kind, target_kind, tmp_path)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), [("real", "fake"), ("fake", "real")])
async def test_mappings_across_kinds(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    await _mapped_across(hub_kind, leaf_kind, tmp_path)
