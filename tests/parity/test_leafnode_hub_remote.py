"""A leaf remote with ``hub: true``: the server that dials plays the hub of the link, the one that accepts the spoke.

The roles decide what each side tells: a spoke tells its hub only what its
own clients want (and what the links it is the hub of want), so a server
that dials two servers as their spoke relays nothing between them.  When one
of its remotes says ``hub: true`` it is that link's hub: it tells the server
it dialled everything, the other server's interest among it, and messages,
requests and queue groups cross between the two servers through it.
``/leafz`` names the roles (``is_spoke``) on both sides.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs.targets.cluster import free_port
from tests.harness.cluster import Inbox, group_gets_each_once, interest_routed, requests_answered
from tests.harness.configured import ConfiguredFake, ConfiguredReal
from tests.harness.leafs import LeafSetup, hub_and_leaf
from tests.harness.monitoring import monitor
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Settings, Target, stop_target
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

# The kinds of (the first server dialled, the second server dialled, the server that dials both), mixed.
MIXED = [("real", "real", "fake"), ("fake", "fake", "real"), ("real", "fake", "fake")]


@asynccontextmanager
async def dialling_two(kinds: tuple[str, str, str], tmp_path: Path, hub: bool) -> AsyncIterator[list[Client]]:
    """Servers A and E with leaf ports, and B dialling both (its remote to A with ``hub: hub``): a client on each."""
    if "real" in kinds and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    ports = free_port(), free_port()
    remotes = (
        f'{{ url: "nats://127.0.0.1:{ports[0]}", hub: {str(hub).lower()} }}, {{ url: "nats://127.0.0.1:{ports[1]}" }}'
    )
    configs = (
        f"leafnodes {{ port: {ports[0]} }}\n",
        f"leafnodes {{ port: {ports[1]} }}\n",
        f'leafnodes {{ reconnect: "100ms", remotes [ {remotes} ] }}\n',
    )
    started: list[Target] = []
    clients: list[Client] = []
    try:
        for index, (kind, config) in enumerate(zip(kinds, configs, strict=True)):
            store = tmp_path / f"server{index}"
            store.mkdir()
            target: Target = (ConfiguredFake if kind == "fake" else ConfiguredReal)(config, str(store), Settings())
            await target.start()
            started.append(target)
        clients = [await nats.connect(target.url) for target in started]
        yield clients
    finally:
        for nc in clients:
            await nc.close()
        for target in started:
            await stop_target(target)


async def _relays_between_its_hubs(kinds: tuple[str, str, str], tmp_path: Path) -> None:
    async with dialling_two(kinds, tmp_path, hub=True) as (at_a, at_e, at_b):
        for publisher, subscriber in ((at_a, at_e), (at_e, at_a)):
            subject = f"across.{secrets.token_hex(4)}"
            inbox = Inbox()
            await subscriber.subscribe(subject, cb=inbox.add)
            await interest_routed(publisher, subscriber)
            await publisher.publish(subject, b"through B", headers={"K": "v"})
            await publisher.flush()
            await eventually(lambda inbox=inbox: asyncio.sleep(0, inbox.payloads), what=f"{subject} across B")
            assert inbox.payloads == [b"through B"]
        await requests_answered(at_a, at_e, f"svc.{secrets.token_hex(4)}")
        await requests_answered(at_e, at_a, f"svc.{secrets.token_hex(4)}")
        # A queue group with a member on A and one on E: from B each message once, from either server its own member.
        subject = f"work.{secrets.token_hex(4)}"
        members = [Inbox(), Inbox()]
        for nc, inbox in zip((at_a, at_e), members, strict=True):
            await nc.subscribe(subject, queue="workers", cb=inbox.add)
        await interest_routed(at_b, at_a, at_e)
        await interest_routed(at_a, at_e)
        await interest_routed(at_e, at_a)
        await group_gets_each_once(at_b, subject, members, count=100)
        for publisher, inbox in zip((at_a, at_e), members, strict=True):
            for each in members:
                each.payloads.clear()
            await group_gets_each_once(publisher, subject, members, count=50)
            assert len(inbox.payloads) == 50


async def test_a_server_that_is_the_hub_of_one_remote_relays_between_the_two(target_kind: str, tmp_path: Path) -> None:
    await _relays_between_its_hubs((target_kind,) * 3, tmp_path)


@pytest.mark.parametrize("kinds", MIXED, ids="-".join)
async def test_relays_between_kinds(kinds: tuple[str, str, str], tmp_path: Path) -> None:
    await _relays_between_its_hubs(kinds, tmp_path)


async def test_a_spoke_of_both_relays_nothing_between_them(target_kind: str, tmp_path: Path) -> None:
    """Without ``hub: true`` B is the spoke of both links: neither server hears of the other's interest."""
    async with dialling_two((target_kind,) * 3, tmp_path, hub=False) as (at_a, at_e, at_b):
        subject = f"svc.{secrets.token_hex(4)}"
        await requests_answered(at_b, at_e, subject)  # B knows E's responder (and A knows B's clients)
        await requests_answered(at_b, at_a, f"svc.{secrets.token_hex(4)}")
        with pytest.raises(nats.errors.NoRespondersError):
            await at_a.request(subject, b"", timeout=WAIT)


def _only_leaf(doc: dict[str, Any]) -> dict[str, Any]:
    leafs: list[dict[str, Any]] = doc["leafs"]
    assert doc["leafnodes"] == len(leafs) == 1
    return leafs[0]


async def _roles_named(accepting_kind: str, dialling_kind: str, tmp_path: Path) -> None:
    setup = LeafSetup(remote_extra="hub: true", monitor=True)
    async with hub_and_leaf(accepting_kind, dialling_kind, tmp_path, setup=setup) as (accepting, dialling):
        at_accepting, at_dialling = await nats.connect(accepting.url), await nats.connect(dialling.url)
        try:
            await requests_answered(at_accepting, at_dialling, f"svc.{secrets.token_hex(4)}")
            await requests_answered(at_dialling, at_accepting, f"svc.{secrets.token_hex(4)}")
            accepting_view = _only_leaf(await monitor(accepting, "/leafz"))
            dialling_view = _only_leaf(await monitor(dialling, "/leafz"))
            assert (accepting_view["is_spoke"], dialling_view["is_spoke"]) == (True, False)
        finally:
            await at_accepting.close()
            await at_dialling.close()


async def test_leafz_names_the_roles(target_kind: str, tmp_path: Path) -> None:
    """The server that accepted is the spoke (``is_spoke``), the one that dialled with ``hub: true`` the hub."""
    await _roles_named(target_kind, target_kind, tmp_path)


@pytest.mark.parametrize(("accepting_kind", "dialling_kind"), [("real", "fake"), ("fake", "real")])
async def test_roles_between_kinds(accepting_kind: str, dialling_kind: str, tmp_path: Path) -> None:
    await _roles_named(accepting_kind, dialling_kind, tmp_path)
