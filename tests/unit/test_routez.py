"""The ``/routez`` entry builder on stand-in route connections: times, RTT, subscriptions, dedicated routes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.router import Subscription
from fakejs.gocompat.gotime import NS
from fakejs.monitoring.routez import route_info

NOW_NS = 1_700_000_000 * NS  # 2023-11-14T22:13:20Z
MONO_NOW = 500.0


@dataclass
class Address:
    remote_address: tuple[str, int] = ("127.0.0.1", 6222)


@dataclass
class RTT:
    rtt: float = 0.0


@dataclass
class Link:
    rid: int = 7
    remote_id: str = "NREMOTE"
    remote_name: str = "A"
    solicited: bool = True
    explicit: bool = True
    started: float = MONO_NOW - 3725.5  # 1h2m5.5s ago
    last_in: float = MONO_NOW - 2.0
    in_msgs: int = 1
    out_msgs: int = 2
    in_bytes: int = 3
    out_bytes: int = 4
    io: Address = field(default_factory=Address)
    keepalive: RTT = field(default_factory=RTT)
    account: str = ""
    pending_size: int = 0


@dataclass
class Cluster:
    subs: list[tuple[str, Subscription]] = field(default_factory=list)

    def route_links(self) -> list[Link]:
        return []

    def remote_subscriptions(self, link: Any) -> Iterator[tuple[str, Subscription]]:
        return iter(self.subs)


def test_an_entry_without_subscriptions() -> None:
    link = Link(keepalive=RTT(0.000116789), pending_size=12)
    doc = route_info(link, Cluster(), NOW_NS, MONO_NOW, "list")
    assert doc == {
        "rid": 7,
        "remote_id": "NREMOTE",
        "remote_name": "A",
        "did_solicit": True,
        "is_configured": True,
        "ip": "127.0.0.1",
        "port": 6222,
        "start": "2023-11-14T21:11:14.5Z",
        "last_activity": "2023-11-14T22:13:18Z",
        "rtt": "116µs",
        "uptime": "1h2m5s",
        "idle": "2s",
        "pending_size": 12,
        "in_msgs": 1,
        "out_msgs": 2,
        "in_bytes": 3,
        "out_bytes": 4,
        "subscriptions": 0,
        "compression": "off",
    }


def test_subscriptions_as_subjects_or_details() -> None:
    plain, queue = Subscription("foo.>", "", "", None), Subscription("bar", "q1", "", None)
    cluster = Cluster([("$G", plain), ("$G", queue)])
    listed = route_info(Link(), cluster, NOW_NS, MONO_NOW, "list")
    assert listed["subscriptions"] == 2 and listed["subscriptions_list"] == ["foo.>", "bar"]
    assert list(listed)[-2:] == ["subscriptions_list", "compression"]
    detail = route_info(Link(), cluster, NOW_NS, MONO_NOW, "detail")["subscriptions_list_detail"]
    assert detail == [
        {"subject": "foo.>", "sid": "R $G foo.>", "msgs": 0, "cid": 7},
        {"subject": "bar", "qgroup": "q1", "sid": "R $G bar q1", "msgs": 0, "cid": 7},
    ]
    assert "subscriptions_list" not in route_info(Link(), cluster, NOW_NS, MONO_NOW, "")


def test_a_dedicated_route_names_its_account_and_leaves_it_out_of_sids() -> None:
    cluster = Cluster([("$SYS", Subscription("$SYS.REQ.>", "", "", None))])
    doc = route_info(Link(account="$SYS", solicited=False, explicit=False), cluster, NOW_NS, MONO_NOW, "detail")
    assert list(doc)[-3:] == ["subscriptions_list_detail", "account", "compression"]
    assert doc["account"] == "$SYS" and (doc["did_solicit"], doc["is_configured"]) == (False, False)
    assert doc["subscriptions_list_detail"][0]["sid"] == "R $SYS.REQ.>"
