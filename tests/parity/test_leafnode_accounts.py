"""Leaf nodes with accounts and permissions: a hub and a leaf of the same kind.

The leaf's remote binds its account LA to the hub account A of the user in
its URL: traffic crosses between those two only.  A remote's
``deny_imports``/``deny_exports`` and the hub user's permissions keep
subjects on their side, quietly (the leaf never asks for, or sends, them).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import replace
from pathlib import Path
from typing import Any

import nats
import pytest

from tests.harness.cluster import Inbox, interest_routed
from tests.harness.leafs import (
    BOUND,
    HUB_USER,
    LEAF_ACCOUNTS,
    LeafSetup,
    bound_accounts_isolated,
    hub_and_leaf,
    only_allowed_arrive,
)
from tests.harness.monitoring import monitor
from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

DENIES = 'deny_imports: ["di.>"], deny_exports: ["de.>"]'


async def test_bound_accounts_are_isolated(target_kind: str, tmp_path: Path) -> None:
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=BOUND) as (hub, leaf):
        await bound_accounts_isolated(hub, leaf)


async def test_leaf_port_users_bind_their_account(target_kind: str, tmp_path: Path) -> None:
    """``leafnodes { authorization { users } }``: the leaf's login there names the account it is bound to."""
    users = "authorization { users [ {user: l, password: p, account: A} ] }"
    setup = replace(BOUND, url_auth="l:p@", hub_extra=users)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        await bound_accounts_isolated(hub, leaf)


async def test_deny_imports_and_exports(target_kind: str, tmp_path: Path) -> None:
    """The leaf takes nothing on ``deny_imports`` and sends nothing on ``deny_exports``; other subjects cross.

    As nats-server, ``deny_imports`` also holds back what the leaf sends once
    the hub asked for a wildcard overlapping it (before, it does not).  Without
    JetStream, whose leaf subjects add to the lists.
    """
    setup = LeafSetup(remote_extra=DENIES, jetstream=False)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        tag = secrets.token_hex(4)
        # each list the other way: it does not apply
        inbox = Inbox()
        await leaf_client.subscribe(f"de.{tag}.down", cb=inbox.add)
        await hub_client.subscribe(f"di.{tag}.up", cb=inbox.add)
        await interest_routed(hub_client, leaf_client)
        await interest_routed(leaf_client, hub_client)
        await hub_client.publish(f"de.{tag}.down", b"down")
        await leaf_client.publish(f"di.{tag}.up", b"up")
        await eventually(lambda: asyncio.sleep(0, sorted(inbox.payloads)), lambda got: got == [b"down", b"up"])
        await only_allowed_arrive(hub_client, leaf_client, f"di.{tag}", f"ok.{tag}")
        await only_allowed_arrive(leaf_client, hub_client, f"de.{tag}", f"up.{tag}")
        # the hub's "*.<tag>" overlaps di.>: the leaf no longer sends di.<tag>
        late = Inbox()
        await hub_client.subscribe(f"*.{tag}", cb=late.add)
        await interest_routed(leaf_client, hub_client)
        await leaf_client.publish(f"di.{tag}", b"denied")
        await leaf_client.publish(f"up.{tag}", b"allowed")
        await eventually(lambda: asyncio.sleep(0, late.payloads), what="the allowed message")
        await hub_client.flush()
        assert late.payloads == [b"allowed"]
        await hub_client.close()
        await leaf_client.close()


async def test_hub_user_permissions_bound_the_leaf(target_kind: str, tmp_path: Path) -> None:
    """The hub user's permissions hold for its leaf: what it may not subscribe to never arrives, nor what it may not publish."""
    setup = LeafSetup(url_auth="a:a@", hub_top=HUB_USER, jetstream=False)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url)
        await interest_routed(hub_client, leaf_client)  # the link is up (and the hub's lists known)
        tag = secrets.token_hex(4)
        await only_allowed_arrive(hub_client, leaf_client, f"ns.{tag}", f"ok.{tag}")
        await only_allowed_arrive(leaf_client, hub_client, f"np.{tag}", f"up.{tag}")
        await hub_client.close()
        await leaf_client.close()


# nats-server's LeafInfo fields in order (``subscriptions_list`` with ``subs=1``, before ``compression``).
LEAF_KEYS = [
    "id",
    "name",
    "is_spoke",
    "account",
    "ip",
    "port",
    "rtt",
    "in_msgs",
    "out_msgs",
    "in_bytes",
    "out_bytes",
    "subscriptions",
    "compression",
]


def _leafs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    leafs: list[dict[str, Any]] = doc["leafs"]
    assert doc["leafnodes"] == len(leafs)
    return leafs


async def _listed(target: Target, subject: str) -> dict[str, Any]:
    """``/leafz?subs=1``'s only entry once ``subject`` is among the interest the remote told."""
    doc = await eventually(
        lambda: monitor(target, "/leafz?subs=1"),
        lambda doc: any(subject in leaf.get("subscriptions_list", ()) for leaf in doc["leafs"]),
        what=f"{subject} in /leafz",
    )
    (leaf,) = _leafs(doc)
    return leaf


async def test_leafz_and_varz(target_kind: str, tmp_path: Path) -> None:
    """Each side lists its leaf connection: the bound account, who dialled, the remote's interest, traffic."""
    setup = replace(BOUND, remote_extra=f"account: LA, {DENIES}", monitor=True, jetstream=False)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url, user="la", password="la")
        tag = secrets.token_hex(4)
        inbox = Inbox()
        await leaf_client.subscribe(f"mon.{tag}", cb=inbox.add)
        await hub_client.subscribe(f"up.{tag}")
        hub_varz, leaf_varz = await monitor(hub, "/varz"), await monitor(leaf, "/varz")
        at_hub, at_leaf = await _listed(hub, f"mon.{tag}"), await _listed(leaf, f"up.{tag}")
        for entry in (at_hub, at_leaf):
            assert list(entry) == [*LEAF_KEYS[:-1], "subscriptions_list", LEAF_KEYS[-1]]
            assert entry["subscriptions"] == len(entry["subscriptions_list"])
        assert (at_hub["name"], at_hub["is_spoke"], at_hub["account"]) == (leaf_varz["server_name"], False, "A")
        assert (at_leaf["name"], at_leaf["is_spoke"], at_leaf["account"]) == (hub_varz["server_name"], True, "LA")
        hub_port = hub_varz["leaf"]["port"]
        assert (at_leaf["ip"], at_leaf["port"]) == ("127.0.0.1", hub_port)
        # traffic: one message down the link
        await hub_client.publish(f"mon.{tag}", b"counted")
        await eventually(lambda: asyncio.sleep(0, inbox.payloads), what="the message at the leaf")
        (at_hub,) = _leafs(await monitor(hub, "/leafz"))
        (at_leaf,) = _leafs(await monitor(leaf, "/leafz"))
        assert list(at_hub) == LEAF_KEYS and at_hub["out_msgs"] >= 1 and at_hub["out_bytes"] >= len(b"counted")
        assert at_leaf["in_msgs"] >= 1
        # the account filter
        assert _leafs(await monitor(hub, "/leafz?acc=A"))[0]["account"] == "A"
        assert _leafs(await monitor(hub, "/leafz?acc=B")) == []
        assert _leafs(await monitor(leaf, "/leafz?acc=LB")) == []
        # /varz: the leaf port, the remote, the count
        hub_varz, leaf_varz = await monitor(hub, "/varz"), await monitor(leaf, "/varz")
        assert hub_varz["leaf"] == {"host": "0.0.0.0", "port": hub_port, "auth_timeout": 2, "tls_timeout": 2}
        assert list(hub_varz["leaf"]) == ["host", "port", "auth_timeout", "tls_timeout"]
        remote = {
            "local_account": "LA",
            "urls": [f"127.0.0.1:{hub_port}"],
            "deny": {"exports": ["de.>"], "imports": ["di.>"]},
        }
        assert leaf_varz["leaf"] == {"remotes": [remote]}
        assert json.dumps(leaf_varz["leaf"]) == json.dumps({"remotes": [remote]})
        assert (hub_varz["leafnodes"], leaf_varz["leafnodes"]) == (1, 1)
        await hub_client.close()
        await leaf_client.close()


SYSTEM = "accounts { A { users [ {user: a, password: a} ] }, SYS { users [ {user: sys, password: sys} ] } }\nsystem_account: SYS"
# nats-server's ClientInfo of a leaf connection, in order; ``rtt`` (after ``ver``) only once the link measured one.
LEAF_CLIENT_KEYS = ["start", "host", "id", "acc", "user", "name", "ver", "name_tag", "kind"]


async def test_system_account_events(target_kind: str, tmp_path: Path) -> None:
    """The hub's system account hears the leaf connection close and come back, as a ``Leafnode`` client of A."""
    setup = LeafSetup(
        url_auth="a:a@", hub_top=SYSTEM, leaf_top=LEAF_ACCOUNTS, remote_extra="account: LA", jetstream=False
    )
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        system = await nats.connect(hub.url, user="sys", password="sys")
        events: dict[str, list[dict[str, Any]]] = {}

        async def keep(msg: nats.aio.msg.Msg) -> None:
            event = json.loads(msg.data)
            if event.get("client", {}).get("kind", "Leafnode") == "Leafnode":  # the test's own clients aside
                events.setdefault(msg.subject, []).append(event)

        await system.subscribe("$SYS.ACCOUNT.A.>", cb=keep)
        await system.flush()
        hub_client = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url, user="la", password="la")
        await interest_routed(hub_client, leaf_client)  # the link is up
        await leaf_client.close()
        await leaf.restart()
        await eventually(
            lambda: asyncio.sleep(0, events),
            lambda seen: "$SYS.ACCOUNT.A.DISCONNECT" in seen and "$SYS.ACCOUNT.A.CONNECT" in seen,
            what="the leaf's DISCONNECT and CONNECT",
        )
        # The restarted leaf may dial more than once before its link holds (a real hub has been seen to tell two
        # connections): the first that closed and the last that came up are the ones this test is about.
        gone = events["$SYS.ACCOUNT.A.DISCONNECT"][0]
        back = events["$SYS.ACCOUNT.A.CONNECT"][-1]
        assert list(back) == ["type", "id", "timestamp", "server", "client"]
        assert list(gone) == ["type", "id", "timestamp", "server", "client", "sent", "received", "reason"]
        assert list(back["client"]) == LEAF_CLIENT_KEYS
        assert [key for key in gone["client"] if key != "rtt"] == [*LEAF_CLIENT_KEYS[:-2], "stop", "name_tag", "kind"]
        if "rtt" in gone["client"]:  # the link lived past its first PING
            keys = list(gone["client"])
            assert keys[keys.index("ver") + 1] == "rtt" and gone["client"]["rtt"] > 0
        for event in (gone, back):
            client = event["client"]
            assert (client["acc"], client["user"], client["kind"], client["name_tag"]) == ("A", "a", "Leafnode", "A")
        assert gone["reason"] in ("Client Closed", "Read Error")  # the leaf's server stopped: EOF or a reset
        counts = await eventually(
            lambda: asyncio.sleep(0, [e["leafnodes"] for e in events.get("$SYS.ACCOUNT.A.SERVER.CONNS", [])]),
            lambda seen: seen[-1:] == [1],
            what="the account's count with the leaf back",
        )
        assert 0 in counts
        await system.close()
        await hub_client.close()


EXPORTS = """accounts {
  X { users [ {user: x, password: x} ], exports [ {stream: "ev.>"}, {service: "svc.>"} ] }
  A {
    users [ {user: a, password: a} ]
    imports [ {stream: {account: X, subject: "ev.>"}}, {service: {account: X, subject: "svc.>"}} ]
  }
}"""


async def test_bound_account_imports(target_kind: str, tmp_path: Path) -> None:
    """The hub account A's imports serve its leaf: X's stream reaches the leaf's LA, LA's requests X's service."""
    setup = LeafSetup(
        url_auth="a:a@", remote_extra="account: LA", hub_top=EXPORTS, leaf_top=LEAF_ACCOUNTS, jetstream=False
    )
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        exporter = await nats.connect(hub.url, user="x", password="x")
        importer = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url, user="la", password="la")
        inbox = Inbox()
        await leaf_client.subscribe("ev.one", cb=inbox.add)
        await interest_routed(importer, leaf_client)
        await exporter.publish("ev.one", b"streamed")
        await eventually(lambda: asyncio.sleep(0, inbox.payloads), what="the stream import at the leaf")
        assert inbox.payloads == [b"streamed"]

        async def respond(msg: nats.aio.msg.Msg) -> None:
            await msg.respond(b"served by X")

        await exporter.subscribe("svc.q", cb=respond)
        await exporter.flush()
        reply = await leaf_client.request("svc.q", b"", timeout=WAIT)
        assert reply.data == b"served by X"
        for nc in (exporter, importer, leaf_client):
            await nc.close()


# nats-server's ConnInfo of a leaf connection, in order (without ``subs`` and ``auth``).
CONN_KEYS = [
    "cid",
    "kind",
    "ip",
    "port",
    "start",
    "last_activity",
    "rtt",
    "uptime",
    "idle",
    "pending_bytes",
    "in_msgs",
    "out_msgs",
    "in_bytes",
    "out_bytes",
    "subscriptions",
]


def _leaf_entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [entry for entry in doc["connections"] if entry["kind"] == "Leafnode"]


async def test_connz_lists_leaf_connections(target_kind: str, tmp_path: Path) -> None:
    """``/connz`` lists each side's leaf connection (the hub naming the leaf, its user and version), then the closed one."""
    setup = replace(BOUND, monitor=True, jetstream=False)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client = await nats.connect(hub.url, user="a", password="a")
        leaf_client = await nats.connect(leaf.url, user="la", password="la")
        await interest_routed(hub_client, leaf_client)
        leaf_name = (await monitor(leaf, "/varz"))["server_name"]
        hub_doc = await monitor(hub, "/connz?auth=1&subs=1")
        (at_hub,) = _leaf_entries(hub_doc)
        user_keys = ["authorized_user", "account", "subscriptions_list", "name_tag"]
        assert list(at_hub) == [*CONN_KEYS, "name", "version", *user_keys]
        assert (at_hub["name"], at_hub["authorized_user"], at_hub["account"]) == (leaf_name, "a", "A")
        assert at_hub["subscriptions"] == len(at_hub["subscriptions_list"])
        cids = [entry["cid"] for entry in hub_doc["connections"]]
        assert len(set(cids)) == len(cids) == hub_doc["num_connections"]
        (at_leaf,) = _leaf_entries(await monitor(leaf, "/connz?auth=1"))
        assert list(at_leaf) == [*CONN_KEYS, "account", "name_tag"]
        assert (at_leaf["account"], at_leaf["name_tag"]) == ("LA", "LA")
        assert _leaf_entries(await monitor(hub, "/connz?acc=B")) == []
        await leaf_client.close()
        await leaf.restart()
        closed = await eventually(
            lambda: monitor(hub, "/connz?state=closed"), lambda doc: _leaf_entries(doc), what="the closed leaf"
        )
        (gone,) = _leaf_entries(closed)
        assert list(gone) == [*CONN_KEYS[:6], "stop", "reason", *CONN_KEYS[6:], "name", "version"]
        assert gone["cid"] == at_hub["cid"] and gone["reason"] in ("Client Closed", "Read Error")
        await hub_client.close()
