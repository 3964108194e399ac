"""The monitoring endpoints, on both targets.

/healthz and /varz are what harnesses poll; /connz, /subsz and /jsz are what
connection reports and JetStream dashboards read.  Ids, times, RTTs and the
real server's own internal subscriptions differ between any two servers, so
the tests compare key sets, formats and every value a test can pin down:
counts, names, subjects, message and byte counters, orderings and the texts
of rejected options.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any

import nats
import pytest

from tests.harness.monitoring import fetch
from tests.harness.raw import record
from tests.harness.targets import Settings
from tests.harness.wait import WAIT, poll

# /varz fields nats tooling reads, with their JSON types.
VARZ_FIELDS = {
    "server_id": str,
    "server_name": str,
    "version": str,
    "proto": int,
    "host": str,
    "port": int,
    "max_connections": int,
    "ping_interval": int,
    "ping_max": int,
    "http_port": int,
    "auth_timeout": (int, float),
    "max_control_line": int,
    "max_payload": int,
    "max_pending": int,
    "write_deadline": int,
    "start": str,
    "now": str,
    "uptime": str,
    "mem": int,
    "cores": int,
    "connections": int,
    "total_connections": int,
    "in_msgs": int,
    "out_msgs": int,
    "in_bytes": int,
    "out_bytes": int,
    "slow_consumers": int,
    "subscriptions": int,
    "jetstream": dict,
}


async def test_healthz(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    status, ctype, body = await fetch(target.http_port, "/healthz")
    assert (status, ctype, body) == (200, "application/json", b'{"status":"ok"}')


async def test_unknown_path(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    status, _, body = await fetch(target.http_port, "/nope")
    assert status == 404
    assert body == b"404 page not found\n"


async def test_varz_shape_and_counters(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    nc = await nats.connect(target.url)
    sub = await nc.subscribe("v")
    await nc.publish("v", b"12345")
    await sub.next_msg(timeout=WAIT)
    status, ctype, body = await fetch(target.http_port, "/varz")
    assert status == 200 and ctype == "application/json"
    varz = json.loads(body)
    for name, kind in VARZ_FIELDS.items():
        assert isinstance(varz[name], kind), name
    assert varz["version"] == "2.15.1"
    assert varz["port"] == target.port
    assert varz["http_port"] == -1  # configured as "any free port"
    assert varz["max_payload"] == 1048576
    assert varz["ping_interval"] == 120_000_000_000
    assert varz["write_deadline"] == 10_000_000_000
    assert varz["connections"] == 1
    assert varz["in_msgs"] >= 1 and varz["out_msgs"] >= 1
    assert varz["in_bytes"] >= 5
    assert varz["start"].endswith("Z") and "T" in varz["start"]
    await nc.close()


@pytest.mark.fake_only
async def test_fakejs_names_itself_in_varz(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    _, _, body = await fetch(target.http_port, "/varz")
    assert json.loads(body)["fakejs"]["version"]


# -- /connz, /subsz, /jsz --------------------------------------------------------------------

MONITOR = Settings(monitor=True)
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")
GO_DURATION = re.compile(r"^(0s|\d+(\.\d+)?(ns|µs|ms)|(\d+h)?(\d+m)?\d+(\.\d+)?s)$")
UPTIME = re.compile(r"^(\d+y)?(\d+d)?(\d+h)?(\d+m)?\d+s$")

CONNZ_KEYS = {"server_id", "now", "num_connections", "total", "offset", "limit", "connections"}
# ConnInfo fields always present (name, lang, version only when the client sent them).
CONN_KEYS = {
    "cid",
    "kind",
    "type",
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
    "lang",
    "version",
}
SUBSZ_STATS = {
    "num_subscriptions",
    "num_cache",
    "num_inserts",
    "num_removes",
    "num_matches",
    "cache_hit_rate",
    "max_fanout",
    "avg_fanout",
}
JSZ_KEYS = {
    "memory",
    "storage",
    "reserved_memory",
    "reserved_storage",
    "accounts",
    "ha_assets",
    "api",
    "server_id",
    "now",
    "config",
    "limits",
    "streams",
    "consumers",
    "messages",
    "bytes",
    "total",
}
UNLIMITED = 2**64 - 1  # an account without JetStream limits, as a Go uint64


async def get_json(port: int, path: str) -> dict[str, Any]:
    status, ctype, body = await fetch(port, path)
    assert (status, ctype) == (200, "application/json"), (path, status, body)
    return json.loads(body)


async def wait_json(port: int, path: str, ready: Any, timeout: float = WAIT) -> dict[str, Any]:
    """Poll ``path`` until ``ready(doc)`` (nats-server records closed connections asynchronously)."""
    return await poll(lambda: get_json(port, path), ready, timeout=timeout)


def by_cid(doc: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {conn["cid"]: conn for conn in doc["connections"]}


async def test_connz_defaults_shape_and_counters(make_target) -> None:
    target = await make_target(MONITOR)
    listener = await nats.connect(target.url, name="listener")
    talker = await nats.connect(target.url)
    await listener.subscribe("greet")
    await listener.flush()
    await talker.publish("greet", b"hello")
    await talker.publish("nobody.home", b"abc")
    await talker.flush()
    await listener.flush()

    connz = await get_json(target.http_port, "/connz")
    varz = await get_json(target.http_port, "/varz")
    assert set(connz) == CONNZ_KEYS
    assert connz["server_id"] == varz["server_id"]
    assert RFC3339.match(connz["now"])
    assert (connz["num_connections"], connz["total"], connz["offset"], connz["limit"]) == (2, 2, 0, 1024)
    conns = by_cid(connz)
    assert [c["cid"] for c in connz["connections"]] == sorted(conns)  # ascending cid by default
    heard, said = conns[listener.client_id], conns[talker.client_id]
    assert set(heard) == CONN_KEYS | {"name"} and set(said) == CONN_KEYS
    for conn in (heard, said):
        assert (conn["kind"], conn["type"], conn["ip"]) == ("Client", "nats", "127.0.0.1")
        assert conn["port"] > 0 and conn["lang"] == "python3" and conn["version"]
        assert RFC3339.match(conn["start"]) and RFC3339.match(conn["last_activity"])
        assert GO_DURATION.match(conn["rtt"]), conn["rtt"]
        assert UPTIME.match(conn["uptime"]) and UPTIME.match(conn["idle"])
        assert conn["pending_bytes"] == 0
    assert heard["name"] == "listener"
    assert (heard["in_msgs"], heard["in_bytes"], heard["out_msgs"], heard["out_bytes"], heard["subscriptions"]) == (
        0,
        0,
        1,
        5,
        1,
    )
    assert (said["in_msgs"], said["in_bytes"], said["out_msgs"], said["out_bytes"], said["subscriptions"]) == (
        2,
        8,
        0,
        0,
        0,
    )
    await listener.close()
    await talker.close()


async def test_connz_subscription_lists_and_auth_fields(make_target) -> None:
    target = await make_target(MONITOR)
    nc = await nats.connect(target.url)
    await nc.subscribe("orders.*", queue="workers")
    limited = await nc.subscribe("alerts")
    await limited.unsubscribe(limit=5)
    await nc.subscribe("audit.>")
    await nc.flush()
    await nc.publish("orders.new", b"1")
    await nc.publish("alerts", b"22")
    await nc.flush()
    cid = nc.client_id

    plain = by_cid(await get_json(target.http_port, "/connz"))[cid]
    assert "subscriptions_list" not in plain and "subscriptions_list_detail" not in plain
    assert "name_tag" not in plain and "authorized_user" not in plain

    listed = by_cid(await get_json(target.http_port, "/connz?subs=1"))[cid]
    assert sorted(listed["subscriptions_list"]) == ["alerts", "audit.>", "orders.*"]
    assert "subscriptions_list_detail" not in listed

    detailed = by_cid(await get_json(target.http_port, "/connz?subs=detail&auth=true"))[cid]
    assert "subscriptions_list" not in detailed
    assert sorted(detailed["subscriptions_list_detail"], key=lambda d: d["sid"]) == [
        {"subject": "orders.*", "qgroup": "workers", "sid": "1", "msgs": 1, "cid": cid},
        {"subject": "alerts", "sid": "2", "msgs": 1, "max": 5, "cid": cid},
        {"subject": "audit.>", "sid": "3", "msgs": 0, "cid": cid},
    ]
    # Without credentials there is no authorized user; the global account shows as a name tag only.
    assert detailed["name_tag"] == "$G" and "account" not in detailed and "authorized_user" not in detailed
    await nc.close()


async def test_connz_sorting_paging_and_cid(make_target) -> None:
    target = await make_target(MONITOR)
    a, b, c = [await nats.connect(target.url, name=name) for name in ("a", "b", "c")]
    for subject in ("b.1", "b.2"):
        await b.subscribe(subject)
    await c.subscribe("c.1")
    # In messages: a 3, b 1, c 2.  In bytes: a 3, b 10, c 4.  Subscriptions: a 0, b 2, c 1.
    for client, payloads in ((a, [b"x"] * 3), (b, [b"0123456789"]), (c, [b"yy"] * 2)):
        for payload in payloads:
            await client.publish("sink", payload)
        await client.flush()  # last activity: a, then b, then c
        # nats-server stamps the activity after its PONG may already be out; keep the stamps apart.
        await asyncio.sleep(0.05)
    port = target.http_port

    async def order(query: str) -> list[str]:
        doc = await get_json(port, "/connz" + query)
        return [conn["name"] for conn in doc["connections"]]

    assert await order("") == ["a", "b", "c"]
    assert await order("?sort=cid") == ["a", "b", "c"]
    assert await order("?sort=start") == ["a", "b", "c"]
    assert await order("?sort=msgs_from") == ["a", "c", "b"]
    assert await order("?sort=bytes_from") == ["b", "c", "a"]
    assert await order("?sort=subs") == ["b", "c", "a"]
    assert await order("?sort=last") == ["c", "b", "a"]
    assert await order("?sort=idle") == ["a", "b", "c"]
    assert await order("?sort=uptime") == ["c", "b", "a"]

    page = await get_json(port, "/connz?sort=msgs_from&limit=1&offset=1")
    assert (page["num_connections"], page["total"], page["offset"], page["limit"]) == (1, 3, 1, 1)
    assert page["connections"][0]["name"] == "c"
    beyond = await get_json(port, "/connz?offset=5")
    assert (beyond["num_connections"], beyond["total"], beyond["connections"]) == (0, 3, [])
    clamped = await get_json(port, "/connz?limit=-3&offset=-2")
    assert (clamped["offset"], clamped["limit"], clamped["num_connections"]) == (0, 1024, 3)

    one = await get_json(port, f"/connz?cid={b.client_id}")
    assert (one["num_connections"], one["total"], one["limit"]) == (1, 3, 1)
    assert one["connections"][0]["cid"] == b.client_id and one["connections"][0]["in_bytes"] == 10
    missing = await get_json(port, "/connz?cid=999999")
    assert (missing["num_connections"], missing["total"], missing["connections"]) == (0, 3, [])
    for client in (a, b, c):
        await client.close()


async def test_connz_accounts_and_client_filters(make_target) -> None:
    target = await make_target(MONITOR)
    nc = await nats.connect(target.url)
    port = target.http_port
    assert (await get_json(port, "/connz?acc=$G"))["num_connections"] == 1
    system = await get_json(port, "/connz?acc=$SYS")
    assert (system["total"], system["connections"]) == (0, [])
    unknown = await get_json(port, "/connz?acc=nobody")
    assert (unknown["server_id"], unknown["total"], unknown["connections"]) == ("", 0, None)
    mqtt = await get_json(port, "/connz?mqtt_client=device-1")
    assert (mqtt["total"], mqtt["num_connections"]) == (1, 0)
    await nc.close()


async def test_connz_closed_connections(make_target) -> None:
    target = await make_target(Settings(monitor=True, user="bob", password="pw"))
    port = target.http_port
    stays = await nats.connect(target.url, user="bob", password="pw", name="stays")
    leaves = await nats.connect(target.url, user="bob", password="pw", name="leaves")
    await leaves.subscribe("jobs.*", queue="q")
    await leaves.subscribe("news")
    await leaves.flush()
    await stays.publish("jobs.1", b"work")
    await stays.flush()
    await leaves.flush()
    gone = leaves.client_id
    await leaves.close()
    closed = await wait_json(port, "/connz?state=closed", lambda d: d["num_connections"] == 1)
    # A rejected login is recorded too, with its reason.
    refused = await record(
        target.host, target.port, [b'CONNECT {"verbose":false,"user":"bob","pass":"no"}\r\nPING\r\n']
    )
    assert refused.closed
    closed = await wait_json(port, "/connz?state=closed&subs=1&auth=1", lambda d: d["num_connections"] == 2)

    assert (closed["total"], closed["num_connections"]) == (2, 2)
    record_ = by_cid(closed)[gone]
    assert set(record_) == CONN_KEYS | {"name", "stop", "reason", "authorized_user", "subscriptions_list"}
    assert RFC3339.match(record_["stop"]) and record_["stop"] >= record_["start"]
    assert (record_["reason"], record_["name"], record_["authorized_user"]) == ("Client Closed", "leaves", "bob")
    assert (record_["subscriptions"], record_["in_msgs"], record_["out_msgs"], record_["out_bytes"]) == (2, 0, 1, 4)
    assert sorted(record_["subscriptions_list"]) == ["jobs.*", "news"]
    assert "name_tag" not in record_

    detail = by_cid(await get_json(port, "/connz?state=closed&subs=detail"))[gone]["subscriptions_list_detail"]
    assert sorted(detail, key=lambda d: d["sid"]) == [
        {"account": "$G", "account_tag": "$G", "subject": "jobs.*", "qgroup": "q", "sid": "1", "msgs": 1, "cid": gone},
        {"account": "$G", "account_tag": "$G", "subject": "news", "sid": "2", "msgs": 0, "cid": gone},
    ]
    reasons = [c["reason"] for c in (await get_json(port, "/connz?state=closed&sort=reason"))["connections"]]
    assert reasons == ["Authentication Failure", "Client Closed"]
    by_stop = [c["reason"] for c in (await get_json(port, "/connz?state=closed&sort=stop"))["connections"]]
    assert by_stop == ["Authentication Failure", "Client Closed"]  # latest first

    everything = await get_json(port, "/connz?state=all&auth=1")
    assert (everything["total"], everything["num_connections"]) == (3, 3)
    assert by_cid(everything)[stays.client_id]["authorized_user"] == "bob"
    open_only = await get_json(port, "/connz?state=open")
    assert [c["cid"] for c in open_only["connections"]] == [stays.client_id]
    assert (await get_json(port, "/connz?user=bob"))["num_connections"] == 1
    nobody = await get_json(port, "/connz?user=alice")
    assert (nobody["total"], nobody["num_connections"]) == (1, 0)
    # Closed clients of the global account carry no account name, so an account filter drops them.
    assert (await get_json(port, "/connz?state=closed&acc=$G"))["total"] == 0
    await stays.close()


async def test_connz_redacts_tokens(make_target) -> None:
    target = await make_target(Settings(monitor=True, token="s3cret"))
    nc = await nats.connect(target.url, token="s3cret")
    conn = (await get_json(target.http_port, "/connz?auth=1"))["connections"][0]
    assert conn["authorized_user"] == "[REDACTED]"
    await nc.close()


@pytest.mark.parametrize(
    "path,text",
    [
        ("/connz?sort=bogus", "invalid sorting option: bogus"),
        ("/connz?sort=CID", "invalid sorting option: CID"),
        ("/connz?sort=stop", "sort by stop only valid on closed connections"),
        ("/connz?sort=reason&state=all", "sort by reason only valid on closed connections"),
        (
            "/connz?subs=maybe",
            """Error decoding boolean for 'subs': strconv.ParseBool: parsing "maybe": invalid syntax""",
        ),
        ("/connz?auth=yes", """Error decoding boolean for 'auth': strconv.ParseBool: parsing "yes": invalid syntax"""),
        ("/connz?limit=x", """Error decoding int for 'limit': strconv.Atoi: parsing "x": invalid syntax"""),
        ("/connz?offset=1.5", """Error decoding int for 'offset': strconv.Atoi: parsing "1.5": invalid syntax"""),
        (
            "/connz?offset=99999999999999999999",
            """Error decoding int for 'offset': strconv.Atoi: parsing "99999999999999999999": value out of range""",
        ),
        ("/connz?cid=-1", """Error decoding uint64 for 'cid': strconv.ParseUint: parsing "-1": invalid syntax"""),
        ("/connz?state=weird", "Error decoding state for weird"),
        ("/subsz?test=foo.*", "invalid test subject, must be valid publish subject: foo.*"),
        ("/subsz?subs=1&test=a..b", "invalid test subject, must be valid publish subject: a..b"),
        ("/subsz?limit=ten", """Error decoding int for 'limit': strconv.Atoi: parsing "ten": invalid syntax"""),
        (
            "/jsz?accounts=maybe",
            """Error decoding boolean for 'accounts': strconv.ParseBool: parsing "maybe": invalid syntax""",
        ),
        (
            "/jsz?consumers=2",
            """Error decoding boolean for 'consumers': strconv.ParseBool: parsing "2": invalid syntax""",
        ),
    ],
)
async def test_rejected_options(make_target, path: str, text: str) -> None:
    target = await make_target(MONITOR)
    status, ctype, body = await fetch(target.http_port, path)
    assert (status, ctype, body.decode()) == (400, "text/plain; charset=utf-8", text)


async def test_subsz_counts_and_test_filter(make_target) -> None:
    target = await make_target(MONITOR)
    port = target.http_port
    nc = await nats.connect(target.url)
    await nc.flush()
    before = await get_json(port, "/subsz")
    assert set(before) == {"server_id", "now", "total", "offset", "limit"} | SUBSZ_STATS
    assert (before["total"], before["offset"], before["limit"]) == (0, 0, 1024)

    await nc.subscribe("orders.new")
    await nc.subscribe("orders.*", queue="workers")
    gone = await nc.subscribe("inventory.>")
    await nc.flush()
    await nc.publish("orders.new", b"1")
    await nc.flush()
    await gone.unsubscribe()
    await nc.flush()
    after = await get_json(port, "/subsz")
    assert after["num_subscriptions"] == before["num_subscriptions"] + 2
    assert after["num_inserts"] == before["num_inserts"] + 3
    assert after["num_removes"] == before["num_removes"] + 1
    assert "subscriptions_list" not in after and after["total"] == 0

    cid = nc.client_id
    matching = await get_json(port, "/subsz?subs=1&test=orders.new")
    assert matching["total"] == 2
    assert sorted(matching["subscriptions_list"], key=lambda d: d["sid"]) == [
        {"account": "$G", "account_tag": "$G", "subject": "orders.new", "sid": "1", "msgs": 1, "cid": cid},
        {
            "account": "$G",
            "account_tag": "$G",
            "subject": "orders.*",
            "qgroup": "workers",
            "sid": "2",
            "msgs": 1,
            "cid": cid,
        },
    ]
    page = await get_json(port, "/subsz?subs=1&test=orders.new&limit=1&offset=1")
    assert (page["total"], page["offset"], page["limit"], len(page["subscriptions_list"])) == (2, 1, 1, 1)
    past = await get_json(port, "/subsz?subs=1&test=orders.new&offset=9")
    assert past["total"] == 2 and "subscriptions_list" not in past
    assert (await get_json(port, "/subsz?subs=1&test=inventory.x"))["total"] == 0
    # The listing without a test subject covers every subscription counted.
    everything = await get_json(port, "/subsz?subs=1")
    assert everything["total"] == after["num_subscriptions"] == len(everything["subscriptions_list"])
    assert {"orders.new", "orders.*"} <= {d["subject"] for d in everything["subscriptions_list"]}
    unknown = await get_json(port, "/subsz?acc=nobody&subs=1")
    assert unknown["num_subscriptions"] == unknown["total"] == 0 and "subscriptions_list" not in unknown
    await nc.close()


async def test_subsz_lists_stream_subject_capture(make_target) -> None:
    target = await make_target(MONITOR)
    nc = await nats.connect(target.url)
    await nc.jetstream().add_stream(name="ORDERS", subjects=["orders.>"])
    await nc.jetstream().publish("orders.1", b"x")
    doc = await get_json(target.http_port, "/subsz?subs=1&test=orders.1")
    assert doc["total"] == 1
    capture = doc["subscriptions_list"][0]
    assert (capture["account"], capture["subject"], capture["msgs"]) == ("$G", "orders.>", 1)
    await nc.close()


async def test_jsz_totals_and_details(make_target) -> None:
    target = await make_target(MONITOR)
    port = target.http_port
    nc = await nats.connect(target.url)
    js = nc.jetstream()
    await js.add_stream(name="FILES", subjects=["files.>"])
    await js.add_stream(name="CACHE", subjects=["cache"], storage="memory", max_bytes=4096)
    for i in range(3):
        await js.publish("files.a", b"payload-%d" % i)
    await js.publish("cache", b"hot")
    await js.add_consumer("FILES", durable_name="READER")
    with pytest.raises(nats.js.errors.NotFoundError):
        await js.stream_info("MISSING")
    files = await js.stream_info("FILES")
    cache = await js.stream_info("CACHE")
    varz = await get_json(port, "/varz")

    jsz = await get_json(port, "/jsz")
    assert set(jsz) == JSZ_KEYS
    assert jsz["server_id"] == varz["server_id"] and RFC3339.match(jsz["now"])
    assert (jsz["streams"], jsz["consumers"], jsz["messages"], jsz["total"], jsz["accounts"], jsz["ha_assets"]) == (
        2,
        1,
        4,
        1,
        1,
        0,
    )
    assert jsz["bytes"] == files.state.bytes + cache.state.bytes
    assert (jsz["storage"], jsz["memory"]) == (files.state.bytes, cache.state.bytes)
    assert (jsz["reserved_memory"], jsz["reserved_storage"]) == (4096, 0)
    # Six API requests: two stream creates, a consumer create, the failed lookup and two stream infos.
    assert jsz["api"] == {"level": varz["jetstream"]["stats"]["api"]["level"], "total": 6, "errors": 1}
    config = jsz["config"]
    assert set(config) == {"max_memory", "max_storage", "store_dir", "sync_interval", "strict"}
    assert config["store_dir"] == os.path.join(target.store_dir, "jetstream")
    assert (config["sync_interval"], config["strict"]) == (120_000_000_000, True)
    assert config["max_memory"] > 0 and config["max_storage"] > 0
    assert jsz["limits"] == {"default_max_consumers": 1000}

    accounts = await get_json(port, "/jsz?accounts=1")
    [account] = accounts["account_details"]
    assert account == {
        "name": "$G",
        "id": "$G",
        "memory": cache.state.bytes,
        "storage": files.state.bytes,
        "reserved_memory": UNLIMITED,
        "reserved_storage": UNLIMITED,
        "accounts": 0,
        "ha_assets": 0,
        "api": {"level": 0, "total": 6, "errors": 1},
    }
    assert "account_details" not in await get_json(port, "/jsz?accounts=1&offset=1")
    assert "account_details" not in await get_json(port, "/jsz?acc=nobody")
    assert len((await get_json(port, "/jsz?acc=$G"))["account_details"]) == 1
    leaders = await get_json(port, "/jsz?raft=1")
    assert (leaders["streams_leader"], leaders["consumers_leader"]) == (2, 1)

    streams = (await get_json(port, "/jsz?streams=1"))["account_details"][0]["stream_detail"]
    assert sorted(s["name"] for s in streams) == ["CACHE", "FILES"]
    for detail in streams:
        assert set(detail) == {"name", "created", "cluster", "state"}
        assert detail["cluster"] == {"leader": varz["server_name"]}
        assert RFC3339.match(detail["created"])
    state = {s["name"]: s["state"] for s in streams}["FILES"]
    assert (
        state["messages"],
        state["bytes"],
        state["first_seq"],
        state["last_seq"],
        state["num_subjects"],
        state["consumer_count"],
    ) == (
        3,
        files.state.bytes,
        1,
        3,
        1,
        1,
    )

    with_consumers = (await get_json(port, "/jsz?consumers=1"))["account_details"][0]["stream_detail"]
    named = {s["name"]: s for s in with_consumers}
    assert "consumer_detail" not in named["CACHE"]
    [reader] = named["FILES"]["consumer_detail"]
    assert (reader["stream_name"], reader["name"], reader["num_pending"], reader["num_ack_pending"]) == (
        "FILES",
        "READER",
        3,
        0,
    )
    assert "config" not in reader and "config" not in named["FILES"]

    configured = (await get_json(port, "/jsz?consumers=1&config=true"))["account_details"][0]["stream_detail"]
    named = {s["name"]: s for s in configured}
    assert named["CACHE"]["config"]["storage"] == "memory" and named["CACHE"]["config"]["max_bytes"] == 4096
    assert named["FILES"]["config"]["subjects"] == ["files.>"]
    assert named["FILES"]["config"]["metadata"] == {"_nats.req.level": "0"}  # no dynamic metadata
    reader_config = named["FILES"]["consumer_detail"][0]["config"]
    assert (reader_config["durable_name"], reader_config["ack_policy"]) == ("READER", "explicit")
    await nc.close()


async def test_jsz_without_jetstream(make_target) -> None:
    target = await make_target(Settings(monitor=True, jetstream=False))
    jsz = await get_json(target.http_port, "/jsz?accounts=1&streams=1")
    assert jsz["disabled"] is True
    assert jsz["config"] == {"max_memory": 0, "max_storage": 0}
    assert "limits" not in jsz and "account_details" not in jsz
    counts = (jsz["streams"], jsz["consumers"], jsz["messages"], jsz["bytes"], jsz["total"], jsz["accounts"])
    assert counts == (0, 0, 0, 0, 0, 0)
    assert jsz["api"] == {"level": 0, "total": 0, "errors": 0}
    status, _, body = await fetch(target.http_port, "/jsz?leader-only=1")
    assert (status, body) == (400, b"filtered response: not leader")
