"""The system account on both targets, started from the same configuration text.

A client of the system account asks the server (``$SYS.REQ.SERVER.PING``,
``$SYS.REQ.SERVER.<id>.<KIND>``, ``$SYS.REQ.ACCOUNT.<acc>.<KIND>``) and
sees its events (``$SYS.ACCOUNT.<acc>.CONNECT`` / ``.DISCONNECT``, the
account connection counts); clients of other accounts see none of it.
Ids, times, ports and the figures nats-server's internal clients change
(subscription counts, traffic of the system client) differ between the
targets; field names, their order and the values a client causes do not.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.msg import Msg

from fakejs.testkit.jwt import Operator
from tests.harness.configured import Start, configured_servers
from tests.harness.monitoring import monitor
from tests.harness.system_account import SERVER_INFO_KEYS, SYSTEM, login
from tests.harness.targets import Settings
from tests.harness.wait import WAIT

# Subjects a system client sees that no test here is about (nats-server sends its events
# from a queue: the system client's own login may be announced after it subscribed).
IGNORED = (".STATSZ", "$SYS.REQ.", ".SYS.", ".OPS.")
UNANSWERED = 0.5  # seconds without an answer that show a request is not served


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(monitor=True)) as start:
        yield start


async def ask(nc: nats.NATS, subject: str, body: Any = None, timeout: float = WAIT) -> dict[str, Any] | None:
    """The one answer to a request, or ``None`` when nobody answers within ``timeout`` seconds."""
    data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    try:
        reply = await nc.request(subject, data, timeout=timeout)
    except nats.errors.TimeoutError:
        return None
    doc: dict[str, Any] = json.loads(reply.data)
    return doc


class Events:
    """What a subscriber to a wildcard receives, decoded."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    async def on_msg(self, msg: Msg) -> None:
        if any(part in msg.subject for part in IGNORED):
            return
        self.seen.append((msg.subject, json.loads(msg.data) if msg.data.startswith(b"{") else msg.data))

    async def settle(self, count: int, timeout: float = WAIT) -> list[tuple[str, Any]]:
        for _ in range(int(timeout / 0.05)):
            if len(self.seen) >= count:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # anything more that is coming
        return self.seen


STATSZ_KEYS = [
    "start",
    "mem",
    "cores",
    "cpu",
    "connections",
    "total_connections",
    "active_accounts",
    "subscriptions",
    "sent",
    "sent_to_clients",
    "received",
    "received_from_clients",
    "slow_consumers",
    "active_servers",
    "jetstream",
    "gomaxprocs",
]


async def test_ping_answers_statsz(server: Start) -> None:
    target = await server(SYSTEM)
    sys = await login(target, "sys")
    try:
        doc = await ask(sys, "$SYS.REQ.SERVER.PING")
        assert doc is not None
        assert list(doc) == ["server", "statsz"]
        info = doc["server"]
        assert list(info) == SERVER_INFO_KEYS
        assert (info["host"], info["ver"], info["jetstream"], info["flags"]) == ("127.0.0.1", "2.15.1", True, 7)
        assert info["feature_flags"]["js_raft_delete_range"] is True
        statsz = doc["statsz"]
        assert list(statsz) == STATSZ_KEYS
        assert (statsz["connections"], statsz["total_connections"], statsz["active_accounts"]) == (1, 1, 1)
        assert statsz["active_servers"] == 1 and statsz["slow_consumers"] == 0
        assert list(statsz["sent"]) == ["msgs", "bytes"]
        assert list(statsz["jetstream"]) == ["config", "stats", "limits"]
        assert list(statsz["jetstream"]["config"]) == ["max_memory", "max_storage", "sync_interval", "strict"]
        # The same document under its own kind, and the sequence counts every message.
        again = await ask(sys, "$SYS.REQ.SERVER.PING.STATSZ")
        assert again is not None and list(again) == ["server", "statsz"]
        assert again["server"]["seq"] > info["seq"]
    finally:
        await sys.close()


async def test_server_requests_answer_the_monitoring_documents(server: Start) -> None:
    target = await server(SYSTEM)
    sys, a = await login(target, "sys"), await login(target, "a")
    try:
        varz = await monitor(target, "/varz")
        server_id = varz["server_id"]
        for subject in ("$SYS.REQ.SERVER.PING.VARZ", f"$SYS.REQ.SERVER.{server_id}.VARZ"):
            doc = await ask(sys, subject)
            assert doc is not None and list(doc) == ["server", "data"], subject
            assert doc["server"]["id"] == server_id
            assert list(doc["data"]) == list(varz)
            assert doc["data"]["system_account"] == varz["system_account"] == "SYS"
        connz = await ask(sys, "$SYS.REQ.SERVER.PING.CONNZ", {"subscriptions": True})
        http_connz = await monitor(target, "/connz?subs=1")
        assert connz is not None
        assert list(connz["data"]) == list(http_connz)
        assert connz["data"]["num_connections"] == http_connz["num_connections"] == 2
        lists = [c.get("subscriptions_list") for c in connz["data"]["connections"]]
        assert any(subs and any(s.startswith("_INBOX.") for s in subs) for subs in lists)
        jsz = await ask(sys, "$SYS.REQ.SERVER.PING.JSZ")
        http_jsz = await monitor(target, "/jsz")
        assert jsz is not None and list(jsz["data"]) == list(http_jsz)
        assert jsz["data"]["accounts"] == http_jsz["accounts"] == 1
        health = await ask(sys, "$SYS.REQ.SERVER.PING.HEALTHZ")
        assert health is not None and health["data"] == {"status": "ok", "status_code": 200}
        subsz = await ask(sys, "$SYS.REQ.SERVER.PING.SUBSZ")
        assert subsz is not None and list(subsz["data"]) == list(await monitor(target, "/subsz"))
        accountz = await ask(sys, "$SYS.REQ.SERVER.PING.ACCOUNTZ")
        assert accountz is not None
        assert list(accountz["data"]) == ["server_id", "now", "system_account", "accounts"]
        assert accountz["data"]["system_account"] == "SYS"
        assert sorted(accountz["data"]["accounts"]) == ["$G", "A", "SYS"]
        routez = await ask(sys, "$SYS.REQ.SERVER.PING.ROUTEZ")
        assert routez is not None
        assert list(routez["data"]) == ["server_id", "server_name", "now", "num_routes", "routes"]
        http_routez = await monitor(target, "/routez?subs=1")
        assert {**routez["data"], "now": ""} == {**http_routez, "now": ""}
        assert (http_routez["server_id"], http_routez["num_routes"], http_routez["routes"]) == (server_id, 0, [])
        routez = await ask(sys, f"$SYS.REQ.SERVER.{server_id}.ROUTEZ", {"subscriptions_detail": True})
        assert routez is not None and routez["data"]["num_routes"] == 0
        gatewayz = await ask(sys, "$SYS.REQ.SERVER.PING.GATEWAYZ")
        assert gatewayz is not None
        assert list(gatewayz["data"]) == ["server_id", "now", "outbound_gateways", "inbound_gateways"]
        leafz = await ask(sys, "$SYS.REQ.SERVER.PING.LEAFZ")
        assert leafz is not None and (leafz["data"]["leafnodes"], leafz["data"]["leafs"]) == (0, [])
        idz = await ask(sys, "$SYS.REQ.SERVER.PING.IDZ")
        assert idz is not None and list(idz) == ["name", "host", "id"] and idz["id"] == server_id
        # Nobody serves an unknown kind; server filters that leave this server out get no answer.
        with pytest.raises(nats.errors.NoRespondersError):
            await ask(sys, "$SYS.REQ.SERVER.PING.NOSUCHKIND")
        assert await ask(sys, "$SYS.REQ.SERVER.PING.VARZ", {"server_name": "no-such-server"}, UNANSWERED) is None
        assert await ask(sys, "$SYS.REQ.SERVER.PING.VARZ", {"tags": ["absent"]}, UNANSWERED) is None
    finally:
        await sys.close()
        await a.close()


async def test_a_bad_request_body_is_an_error(server: Start) -> None:
    target = await server(SYSTEM)
    sys = await login(target, "sys")
    try:
        doc = await ask(sys, "$SYS.REQ.SERVER.PING.CONNZ", b"bad")
        assert doc is not None and list(doc) == ["server", "error"]
        assert doc["error"] == {"code": 400, "description": "invalid character 'b' looking for beginning of value"}
        doc = await ask(sys, "$SYS.REQ.SERVER.PING.CONNZ", b"[1]")
        assert doc is not None
        assert doc["error"] == {
            "code": 400,
            "description": "json: cannot unmarshal array into Go value of type server.ConnzEventOptions",
        }
    finally:
        await sys.close()


async def test_account_updates_out_of_operator_mode(server: Start) -> None:
    """Without operator mode the account update subjects still answer, as nats-server's accountClaimUpdate."""
    target = await server(SYSTEM)
    sys = await login(target, "sys")
    account = Operator("O").account("APP")
    key = account.public_key
    try:
        for subject in (f"$SYS.REQ.ACCOUNT.{key}.CLAIMS.UPDATE", f"$SYS.ACCOUNT.{key}.CLAIMS.UPDATE"):
            doc = await ask(sys, subject, b"")
            assert doc is not None and list(doc) == ["server", "error"]
            assert doc["error"] == {
                "account": key,
                "code": 500,
                "description": "jwt update error - request body is empty",
            }
            doc = await ask(sys, subject, account.jwt.encode())
            assert doc is not None and list(doc) == ["server", "data"]
            assert doc["data"] == {"account": key, "code": 200, "message": "jwt update skipped"}
        doc = await ask(sys, "$SYS.REQ.ACCOUNT.A.CLAIMS.UPDATE", account.jwt.encode())
        assert doc is not None
        assert doc["error"] == {
            "account": "A",
            "code": 500,
            "description": "jwt update resulted in error - subject does not match jwt content",
        }
    finally:
        await sys.close()


async def test_account_requests_are_about_that_account(server: Start) -> None:
    target = await server(SYSTEM)
    sys, a = await login(target, "sys"), await login(target, "a", name="worker")
    try:
        await a.subscribe("work.>")
        await a.flush()
        connz = await ask(sys, "$SYS.REQ.ACCOUNT.A.CONNZ")
        assert connz is not None
        assert connz["data"]["num_connections"] == 1
        assert [c["name"] for c in connz["data"]["connections"]] == ["worker"]
        unknown = await ask(sys, "$SYS.REQ.ACCOUNT.NOPE.CONNZ")
        assert unknown is not None
        assert (unknown["data"]["server_id"], unknown["data"]["connections"]) == ("", None)
        subsz = await ask(sys, "$SYS.REQ.ACCOUNT.A.SUBSZ")
        assert subsz is not None
        listed = subsz["data"]["subscriptions_list"]
        assert {entry["account"] for entry in listed} == {"A"}
        assert "work.>" in [entry["subject"] for entry in listed]
        jsz = await ask(sys, "$SYS.REQ.ACCOUNT.A.JSZ")
        assert jsz is not None
        assert (jsz["data"]["name"], jsz["data"]["id"]) == ("A", "A")
        assert list(jsz["data"])[:4] == ["name", "id", "memory", "storage"]
        info = await ask(sys, "$SYS.REQ.ACCOUNT.A.INFO")
        assert info is not None
        assert info["data"]["account_name"] == "A" and info["data"]["client_connections"] == 1
        assert info["data"]["jetstream_enabled"] is True
        statz = await ask(sys, "$SYS.REQ.ACCOUNT.A.STATZ")
        assert statz is not None
        [stat] = statz["data"]["account_statz"]
        assert (stat["acc"], stat["conns"], stat["total_conns"]) == ("A", 1, 1)
        with pytest.raises(nats.errors.NoRespondersError):
            await ask(sys, "$SYS.REQ.ACCOUNT.A.NOSUCHKIND")
        # A document that cannot be made: null data, then the error.
        failed = await ask(sys, "$SYS.REQ.ACCOUNT.SYS.JSZ")
        assert failed is not None and list(failed) == ["server", "data", "error"]
        assert failed["data"] is None
        assert failed["error"] == {"code": 500, "description": 'account "SYS" not jetstream enabled'}
        # CONNS answers with the account's connection count event itself.
        conns = await ask(sys, "$SYS.REQ.ACCOUNT.A.CONNS")
        assert conns is not None and conns["type"] == "io.nats.server.advisory.v1.account_connections"
        assert (conns["acc"], conns["conns"]) == ("A", 1)
        assert await ask(sys, "$SYS.REQ.ACCOUNT.NOPE.CONNS", timeout=UNANSWERED) is None
    finally:
        await sys.close()
        await a.close()


async def test_connect_and_disconnect_events(server: Start) -> None:
    target = await server(SYSTEM)
    sys = await login(target, "sys")
    events = Events()
    try:
        await sys.subscribe("$SYS.>", cb=events.on_msg)
        await sys.flush()
        a = await login(target, "a", name="pub")
        await a.publish("x", b"hi")
        await a.flush()
        await a.close()
        seen = await events.settle(6)
        subjects = [subject for subject, _ in seen]
        assert sorted(subjects) == sorted(
            ["$SYS.SERVER.ACCOUNT.A.CONNS", "$SYS.ACCOUNT.A.SERVER.CONNS", "$SYS.ACCOUNT.A.CONNECT"]
            + ["$SYS.SERVER.ACCOUNT.A.CONNS", "$SYS.ACCOUNT.A.SERVER.CONNS", "$SYS.ACCOUNT.A.DISCONNECT"]
        )
        # nats-server sends an account's connection counts from another goroutine, so the
        # DISCONNECT may overtake the counts its close sent: each kind keeps its own order
        assert subjects.index("$SYS.ACCOUNT.A.CONNECT") < subjects.index("$SYS.ACCOUNT.A.DISCONNECT")
        conns, gone = (doc for subject, doc in seen if subject == "$SYS.SERVER.ACCOUNT.A.CONNS")
        server_conns = [doc for subject, doc in seen if subject == "$SYS.ACCOUNT.A.SERVER.CONNS"]
        (connect,) = (doc for subject, doc in seen if subject == "$SYS.ACCOUNT.A.CONNECT")
        (disconnect,) = (doc for subject, doc in seen if subject == "$SYS.ACCOUNT.A.DISCONNECT")
        assert list(conns) == ["type", "id", "timestamp", "server", "acc", "name", "conns", "leafnodes"] + [
            "total_conns",
            "num_subscriptions",
            "sent",
            "received",
            "slow_consumers",
        ]
        assert conns["type"] == "io.nats.server.advisory.v1.account_connections"
        assert (conns["acc"], conns["conns"], conns["total_conns"]) == ("A", 1, 1)
        assert (gone["conns"], gone["received"]["msgs"], gone["received"]["bytes"]) == (0, 1, 2)
        assert list(gone["sent"]) == ["msgs", "bytes", "gateways", "routes", "leafs"]
        assert conns["id"] == server_conns[0]["id"]
        assert list(connect) == ["type", "id", "timestamp", "server", "client"]
        assert connect["type"] == "io.nats.server.advisory.v1.client_connect"
        assert list(connect["server"]) == SERVER_INFO_KEYS
        client = connect["client"]
        assert list(client) == ["start", "host", "id", "acc", "user", "name", "lang", "ver", "name_tag"] + [
            "kind",
            "client_type",
        ]
        assert (client["acc"], client["user"], client["name"], client["kind"]) == ("A", "a", "pub", "Client")
        assert (client["name_tag"], client["client_type"]) == ("A", "nats")
        assert list(disconnect) == ["type", "id", "timestamp", "server", "client", "sent", "received", "reason"]
        assert disconnect["type"] == "io.nats.server.advisory.v1.client_disconnect"
        assert disconnect["reason"] == "Client Closed"
        assert disconnect["sent"] == {"msgs": 1, "bytes": 2}
        assert disconnect["received"] == {"msgs": 0, "bytes": 0}
        gone_client = disconnect["client"]
        assert [k for k in gone_client if k not in ("rtt",)] == [
            "start",
            "host",
            "id",
            "acc",
            "user",
            "name",
            "lang",
            "ver",
            "stop",
            "name_tag",
            "kind",
            "client_type",
        ]
        assert gone_client["id"] == client["id"] and gone_client["start"] == client["start"]
        seqs = [doc["server"]["seq"] for _, doc in seen]
        assert seqs == sorted(seqs)
    finally:
        await sys.close()


async def test_a_refused_login_is_reported(server: Start) -> None:
    target = await server(SYSTEM)
    sys = await login(target, "sys")
    events = Events()
    try:
        await sys.subscribe("$SYS.>", cb=events.on_msg)
        await sys.flush()
        reader, writer = await asyncio.open_connection("127.0.0.1", target.port)
        await reader.readline()
        writer.write(b'CONNECT {"user":"a","pass":"wrong","verbose":false}\r\nPING\r\n')
        assert b"Authorization Violation" in await asyncio.wait_for(reader.read(1000), 5)
        writer.close()
        seen = await events.settle(2)
        # nats-server sends the two from different goroutines: either may come first
        disconnect, auth_error = sorted(subject for subject, _ in seen)
        assert disconnect == "$SYS.ACCOUNT.$G.DISCONNECT" and auth_error.endswith(".CLIENT.AUTH.ERR")
        for _, doc in seen:
            assert doc["type"] == "io.nats.server.advisory.v1.client_disconnect"
            assert doc["reason"] == "Authentication Failure"
            assert (doc["client"]["acc"], doc["client"]["user"], doc["client"]["name_tag"]) == ("$G", "a", "$G")
    finally:
        await sys.close()


async def test_other_accounts_see_no_system_traffic(server: Start) -> None:
    target = await server(SYSTEM)
    sys, a = await login(target, "sys"), await login(target, "a")
    sys_events, a_events = Events(), Events()
    try:
        await sys.subscribe("$SYS.>", cb=sys_events.on_msg)
        await a.subscribe("$SYS.>", cb=a_events.on_msg)
        await sys.flush()
        await a.flush()
        other = await login(target, "a")
        await other.close()
        # A's own $SYS subjects are its own: it hears itself, the system account does not.
        await a.publish("$SYS.ACCOUNT.A.CONNECT", b"mine")
        await a.flush()
        await sys_events.settle(6)
        assert [subject for subject, _ in a_events.seen] == ["$SYS.ACCOUNT.A.CONNECT"]
        assert a_events.seen[0][1] == b"mine"
        assert b"mine" not in [doc for _, doc in sys_events.seen]
        assert len(sys_events.seen) == 6
    finally:
        await sys.close()
        await a.close()


async def test_system_account_named_by_system_account(server: Start) -> None:
    target = await server(
        """
        accounts {
          OPS { users: [ {user: ops, password: ops} ] }
          A { users: [ {user: a, password: a} ] }
        }
        system_account: OPS
        """
    )
    ops = await login(target, "ops")
    events = Events()
    try:
        await ops.subscribe("$SYS.ACCOUNT.>", cb=events.on_msg)
        await ops.flush()
        accountz = await ask(ops, "$SYS.REQ.SERVER.PING.ACCOUNTZ")
        assert accountz is not None and accountz["data"]["system_account"] == "OPS"
        a = await login(target, "a")
        await a.close()
        seen = await events.settle(4)
        assert [subject for subject, _ in seen if not subject.endswith(".CONNS")] == [
            "$SYS.ACCOUNT.A.CONNECT",
            "$SYS.ACCOUNT.A.DISCONNECT",
        ]
        assert (await monitor(target, "/varz"))["system_account"] == "OPS"
    finally:
        await ops.close()
