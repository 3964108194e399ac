"""Traffic across a leaf link in the server's counters: ``/varz``, ``/leafz``, ``/connz`` and the system account's.

A message that crosses the link counts where it entered and left each
server: on the hub, a client's message sent to the leaf adds to ``in_msgs``
(from the client) and ``out_msgs`` (to the leaf connection), and the leaf
counts it in (from its hub) and out (to its subscriber).  The ``_client_``
counts of ``/varz`` and ``received_from_clients``/``sent_to_clients`` of
``STATSZ`` keep clients only; an account's totals take in its leaf
connections, with their share under ``leafs``.  A link's ``rtt`` is Go's
duration text of its last PING's round trip (``0s`` before the first PONG).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from tests.harness.cluster import Inbox, interest_routed
from tests.harness.leafs import LEAF_ACCOUNTS, LeafSetup, hub_and_leaf
from tests.harness.monitoring import monitor
from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

COUNTS = ("in_msgs", "out_msgs", "in_bytes", "out_bytes")
CLIENT_COUNTS = ("in_client_msgs", "out_client_msgs", "in_client_bytes", "out_client_bytes")
# Go's time.Duration text of a round trip: "283µs", "1.5ms", "1.002s" ("0s" before the first PONG).
GO_DURATION = re.compile(r"^\d+(\.\d+)?(ns|µs|ms|s)$")


async def _counts(target: Target) -> dict[str, Any]:
    """The server's counts and its one leaf connection's."""
    varz, leafz = await monitor(target, "/varz"), await monitor(target, "/leafz")
    (leaf,) = leafz["leafs"]  # type: ignore[index]
    return {"varz": {key: varz[key] for key in COUNTS + CLIENT_COUNTS}, "leaf": {key: leaf[key] for key in COUNTS}}


def _moved(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {part: {key: after[part][key] - before[part][key] for key in after[part]} for part in after}


def _expected(
    client_in: tuple[int, int], client_out: tuple[int, int], leaf_in: tuple[int, int], leaf_out: tuple[int, int]
) -> dict[str, Any]:
    """What a server's counts moved by: (msgs, bytes) from and to its clients, and over its leaf connection."""
    varz = {
        "in_msgs": client_in[0] + leaf_in[0],
        "out_msgs": client_out[0] + leaf_out[0],
        "in_bytes": client_in[1] + leaf_in[1],
        "out_bytes": client_out[1] + leaf_out[1],
        "in_client_msgs": client_in[0],
        "out_client_msgs": client_out[0],
        "in_client_bytes": client_in[1],
        "out_client_bytes": client_out[1],
    }
    leaf = {"in_msgs": leaf_in[0], "out_msgs": leaf_out[0], "in_bytes": leaf_in[1], "out_bytes": leaf_out[1]}
    return {"varz": varz, "leaf": leaf}


async def _counted(target: Target, before: dict[str, Any], expected: dict[str, Any], what: str) -> None:
    """The counts move by ``expected`` (the receiving side adds a message up once it has read it: wait)."""
    await eventually(lambda: _counts(target), lambda now: _moved(before, now) == expected, what=what)


async def _crossing(
    hub: Target, leaf: Target, send: Callable[[], Awaitable[None]], at_hub: dict[str, Any], at_leaf: dict[str, Any]
) -> None:
    before_hub, before_leaf = await _counts(hub), await _counts(leaf)
    await send()
    await _counted(hub, before_hub, at_hub, "the hub's counts")
    await _counted(leaf, before_leaf, at_leaf, "the leaf's counts")


async def test_messages_across_the_link_count_in_varz_and_leafz(target_kind: str, tmp_path: Path) -> None:
    setup = LeafSetup(monitor=True, jetstream=False)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        tag = secrets.token_hex(4)
        inbox = Inbox()
        await leaf_client.subscribe(f"down.{tag}", cb=inbox.add)
        await hub_client.subscribe(f"up.{tag}", cb=inbox.add)
        await interest_routed(hub_client, leaf_client)
        await interest_routed(leaf_client, hub_client)
        none = (0, 0)

        async def down() -> None:
            await hub_client.publish(f"down.{tag}", b"0123456789")  # 10 bytes

        await _crossing(
            hub, leaf, down, _expected((1, 10), none, none, (1, 10)), _expected(none, (1, 10), (1, 10), none)
        )

        async def up() -> None:  # headers count with the payload: 18 bytes of them, and 5 twice
            await leaf_client.publish(f"up.{tag}", b"abcde", headers={"k": "v"})
            await leaf_client.publish(f"up.{tag}", b"abcde")

        await _crossing(hub, leaf, up, _expected(none, (2, 28), (2, 28), none), _expected((2, 28), none, none, (2, 28)))

        async def nobody() -> None:  # no interest across: the hub's client counts only
            await hub_client.publish(f"nobody.{tag}", b"xx")

        await _crossing(hub, leaf, nobody, _expected((1, 2), none, none, none), _expected(none, none, none, none))

        async def answer(msg: Msg) -> None:
            await msg.respond(b"pong!")

        await leaf_client.subscribe(f"svc.{tag}", cb=answer)
        await interest_routed(hub_client, leaf_client)

        async def request() -> None:  # a request of 4 bytes down, a reply of 5 up
            assert (await hub_client.request(f"svc.{tag}", b"ping", timeout=WAIT)).data == b"pong!"

        await _crossing(
            hub,
            leaf,
            request,
            _expected((1, 4), (1, 5), (1, 5), (1, 4)),
            _expected((1, 5), (1, 4), (1, 4), (1, 5)),
        )
        await hub_client.close()
        await leaf_client.close()


async def test_a_link_reports_its_round_trip_as_a_go_duration(target_kind: str, tmp_path: Path) -> None:
    """``/leafz`` and ``/connz`` show ``rtt`` once the link's first PING (within a second of it coming up) was answered."""
    setup = LeafSetup(monitor=True, jetstream=False)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        for target in (hub, leaf):

            async def leaf_rtt(server: Target = target) -> str:
                leafs: list[dict[str, Any]] = (await monitor(server, "/leafz"))["leafs"]  # type: ignore[assignment]
                return str(leafs[0]["rtt"]) if leafs else "0s"

            rtt = await eventually(leaf_rtt, lambda text: text != "0s", what="a measured round trip")
            assert GO_DURATION.match(rtt), rtt
            connections: list[dict[str, Any]] = (await monitor(target, "/connz"))["connections"]  # type: ignore[assignment]
            (entry,) = [entry for entry in connections if entry["kind"] == "Leafnode"]
            assert GO_DURATION.match(entry["rtt"]) and entry["rtt"] != "0s", entry["rtt"]


SYSTEM = (
    "accounts { A { users [ {user: a, password: a} ] }, SYS { users [ {user: sys, password: sys} ] } }\n"
    "system_account: SYS"
)


async def _system_counts(system: Client) -> dict[str, Any]:
    """Account A's traffic (its CONNS event) and the server's (STATZ), as (msgs, bytes) pairs."""
    conns = json.loads((await system.request("$SYS.REQ.ACCOUNT.A.CONNS", b"", timeout=WAIT)).data)
    statsz = json.loads((await system.request("$SYS.REQ.SERVER.PING.STATSZ", b"", timeout=WAIT)).data)["statsz"]
    pairs: dict[str, Any] = {}
    for way in ("sent", "received"):
        pairs[f"account {way}"] = (conns[way]["msgs"], conns[way]["bytes"])
        pairs[f"account {way} leafs"] = (conns[way]["leafs"]["msgs"], conns[way]["leafs"]["bytes"])
        pairs[f"account {way} routes"] = (conns[way]["routes"]["msgs"], conns[way]["routes"]["bytes"])
    for key in ("sent", "received", "sent_to_clients", "received_from_clients"):
        pairs[f"server {key}"] = (statsz[key]["msgs"], statsz[key]["bytes"])
    return pairs


async def test_the_system_account_counts_leaf_traffic(target_kind: str, tmp_path: Path) -> None:
    """An account's CONNS event counts its leaf connections' messages (with a ``leafs`` share); STATZ the server's."""
    setup = LeafSetup(
        url_auth="a:a@", hub_top=SYSTEM, leaf_top=LEAF_ACCOUNTS, remote_extra="account: LA", jetstream=False
    )
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        system = await nats.connect(hub.url, user="sys", password="sys")
        hub_client = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url, user="la", password="la")
        tag = secrets.token_hex(4)
        inbox = Inbox()
        await leaf_client.subscribe(f"down.{tag}", cb=inbox.add)
        await hub_client.subscribe(f"up.{tag}", cb=inbox.add)
        await interest_routed(hub_client, leaf_client)
        await interest_routed(leaf_client, hub_client)
        before = await _system_counts(system)
        await hub_client.publish(f"down.{tag}", b"0123456789")
        await leaf_client.publish(f"up.{tag}", b"abcde")
        await eventually(lambda: asyncio.sleep(0, len(inbox.payloads)), lambda n: n == 2, what="both messages")

        def moved(after: dict[str, Any]) -> dict[str, Any]:
            return {key: (after[key][0] - before[key][0], after[key][1] - before[key][1]) for key in after}

        # A's client sent 10 bytes to the leaf and was sent 5 from it; the leaf connection the other way.
        account = {
            "account sent": (2, 15),
            "account sent leafs": (1, 10),
            "account sent routes": (0, 0),
            "account received": (2, 15),
            "account received leafs": (1, 5),
            "account received routes": (0, 0),
        }
        counts = await eventually(
            lambda: _system_counts(system),
            lambda now: {k: moved(now)[k] for k in account} == account,
            what="A's counts",
        )
        server = moved(counts)
        # The server's totals take in the leaf connection's messages (and the requests above: clients' only).
        assert server["server sent"][0] - server["server sent_to_clients"][0] == 1
        assert server["server received"][0] - server["server received_from_clients"][0] == 1
        for nc in (system, hub_client, leaf_client):
            await nc.close()
