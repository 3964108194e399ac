"""Leader step-downs in JetStream across three server processes, on both targets.

Three nodes ``n1``..``n3`` started from flags (see
:mod:`tests.parity.js_processes.test_js_processes`), the same nats-py client code
against nats-server and fakejs processes.  Facts pinned (nats-server
2.15.1):

- ``$JS.API.STREAM.LEADER.STEPDOWN.<stream>`` is answered
  ``{"success": true}`` by the stream's leader, and another node leads; a
  ``placement.preferred`` node becomes the leader; a preferred node that
  already leads, or that is not one of the stream's servers, is 10005 with
  nats-server's text; a stream that does not exist is 10059;
- ``$JS.API.CONSUMER.LEADER.STEPDOWN.<stream>.<consumer>`` moves the consumer's
  leader the same way, and a pull waiting on the old leader is answered
  ``409 Leadership Change``; the consumer goes on delivering from the new
  leader;
- ``/jsz`` on every node shows the ``meta_cluster`` (nats-server's fields,
  the cluster's name, its leader, the two other servers) and ``ha_assets``
  counting the meta group and the R3 stream;
- a consumer update (``action`` update, or none) changes what may change and
  is seen by the consumer's leader at once (a wider filter: more pending);
  ``create`` of a different configuration is 10148, an update of what may not
  change 10012 with nats-server's text, of a missing consumer 10149;
- ``CONSUMER.PAUSE`` (answered by the meta leader) holds a consumer's
  deliveries back until its time, and an empty one resumes it; a missing
  consumer is 10014 (with ``paused`` and ``pause_until`` still in the reply);
- a pinned-client priority group: the consumer's leader pins the first
  puller (``Nats-Pin-Id``), ``CONSUMER.UNPIN`` drops the pin (10160 for a
  group the consumer does not have) and the next pull is pinned anew;
- ``CONSUMER.RESET`` (the consumer's leader) delivers again from the
  sequence asked for;
- a create that cannot be placed (more replicas than servers, tags no server
  has, another cluster) is 10005 with nats-server's texts;
- each replica of a stream's and a consumer's ``cluster`` section has
  ``active``: the nanoseconds since it last answered the leader (within the
  heartbeats' second or so, never 0 once heard).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request

import nats
import pytest
from nats.aio.client import Client

from tests.harness.js_processes import (
    CONSUMER_STEPDOWN,
    CONSUMER_STEPDOWN_TYPE,
    STREAM_STEPDOWN,
    STREAM_STEPDOWN_TYPE,
    ask,
    create_r3,
    process_cluster,
    quietly,
    stream_leader,
)
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

META_CLUSTER_KEYS = [  # nats-server 2.15.1's /jsz meta_cluster
    "name",
    "leader",
    "peer",
    "replicas",
    "cluster_size",
    "quorum_needed",
    "pending",
    "pending_requests",
    "pending_infos",
    "snapshot",
]
EXPECTED_PLACEMENT_ERRORS = [  # nats-server 2.15.1: five replicas on three servers, unknown tags, another cluster
    {"code": 400, "err_code": 10005, "description": "no suitable peers for placement"},
    {"code": 400, "err_code": 10005, "description": "no suitable peers for placement, tags not matched ['nowhere']"},
    {"code": 400, "err_code": 10005, "description": "no suitable peers for placement"},
]


async def consumer_leader(client: Client, stream: str, consumer: str, other_than: str = "") -> str:
    info = await eventually(
        lambda: quietly(client.jetstream(timeout=3.0).consumer_info(stream, consumer)),
        lambda reply: (
            not isinstance(reply, Exception) and reply.as_dict()["cluster"].get("leader") not in ("", None, other_than)
        ),
        what="a consumer leader",
        timeout=30,
    )
    return str(info.as_dict()["cluster"]["leader"])


def no_peers(description: str, kind: str = STREAM_STEPDOWN_TYPE) -> dict:
    return {"type": kind, "error": {"code": 400, "err_code": 10005, "description": description}}


async def test_stream_leader_step_downs(client: Client) -> None:
    await create_r3(client, "LEAD")
    leader = await stream_leader(client, "LEAD")
    subject = STREAM_STEPDOWN + "LEAD"
    assert await ask(client, subject, {"placement": {"preferred": leader}}) == no_peers(
        f'preferred server "{leader}" is already leader'
    )
    assert await ask(client, subject, {"placement": {"preferred": "nowhere"}}) == no_peers(
        'preferred server "nowhere" not known'
    )
    other = sorted({"n1", "n2", "n3"} - {leader})[0]
    assert await ask(client, subject, {"placement": {"preferred": other}}) == {
        "type": STREAM_STEPDOWN_TYPE,
        "success": True,
    }
    assert await stream_leader(client, "LEAD", other_than=leader) == other
    assert await ask(client, subject) == {"type": STREAM_STEPDOWN_TYPE, "success": True}
    assert await stream_leader(client, "LEAD", other_than=other) != other
    missing = await ask(client, STREAM_STEPDOWN + "MISSING")
    assert missing == {
        "type": STREAM_STEPDOWN_TYPE,
        "error": {"code": 404, "err_code": 10059, "description": "stream not found"},
    }
    js = client.jetstream(timeout=10.0)
    ack = await js.publish("LEAD.after", b"after")
    assert (ack.stream, ack.seq) == ("LEAD", 1)


async def test_replicas_are_active_since_they_last_answered_the_leader(client: Client) -> None:
    await create_r3(client, "ACT")
    await client.jetstream(timeout=10.0).publish("ACT.a", b"a")
    await ask(client, "$JS.API.CONSUMER.CREATE.ACT.D", {"stream_name": "ACT", "config": {"durable_name": "D"}})

    def heard(info: dict) -> bool:
        replicas = info.get("cluster", {}).get("replicas", [])
        return len(replicas) == 2 and all(replica["current"] and replica["active"] > 0 for replica in replicas)

    for subject in ("$JS.API.STREAM.INFO.ACT", "$JS.API.CONSUMER.INFO.ACT.D"):
        info = await eventually(lambda subject=subject: ask(client, subject), heard, what=f"replicas heard ({subject})")
        assert all(replica["active"] < 10_000_000_000 for replica in info["cluster"]["replicas"])


async def test_consumer_leader_step_down_answers_a_waiting_pull(client: Client) -> None:
    await create_r3(client, "WORK")
    js = client.jetstream(timeout=10.0)
    await js.pull_subscribe("WORK.>", durable="D")
    leader = await consumer_leader(client, "WORK", "D")
    inbox = client.new_inbox()
    waiting = await client.subscribe(inbox)
    request = {"batch": 1, "expires": 20_000_000_000}
    await client.publish("$JS.API.CONSUMER.MSG.NEXT.WORK.D", json.dumps(request).encode(), reply=inbox)
    await client.flush()
    subject = CONSUMER_STEPDOWN + "WORK.D"
    assert await ask(client, subject, {"placement": {"preferred": leader}}) == no_peers(
        f'preferred server "{leader}" is already leader', CONSUMER_STEPDOWN_TYPE
    )
    assert await ask(client, subject) == {"type": CONSUMER_STEPDOWN_TYPE, "success": True}
    answer = await waiting.next_msg(timeout=15)
    assert (answer.headers or {}).get("Status") == "409"
    assert (answer.headers or {}).get("Description") == "Leadership Change"
    assert await consumer_leader(client, "WORK", "D", other_than=leader) != leader
    await js.publish("WORK.1", b"one")
    subscription = await js.pull_subscribe("WORK.>", durable="D")
    fetched = await subscription.fetch(1, timeout=10)
    assert [message.data for message in fetched] == [b"one"]
    missing = await ask(client, CONSUMER_STEPDOWN + "WORK.MISSING")
    assert missing == {
        "type": CONSUMER_STEPDOWN_TYPE,
        "error": {"code": 404, "err_code": 10014, "description": "consumer not found"},
    }


async def test_placement_errors(client: Client) -> None:
    create = "$JS.API.STREAM.CREATE."
    kind = "io.nats.jetstream.api.v1.stream_create_response"
    await create_r3(client, "READY")  # the meta group knows every server
    five = await ask(client, create + "FIVE", {"name": "FIVE", "subjects": ["five"], "num_replicas": 5})
    tagged = {"name": "TAGGED", "subjects": ["tagged"], "num_replicas": 1, "placement": {"tags": ["nowhere"]}}
    elsewhere = {"name": "AWAY", "subjects": ["away"], "placement": {"cluster": "other"}}
    answers = [five, await ask(client, create + "TAGGED", tagged), await ask(client, create + "AWAY", elsewhere)]
    assert [answer["type"] for answer in answers] == [kind] * 3
    assert [answer["error"] for answer in answers] == EXPECTED_PLACEMENT_ERRORS


async def test_jsz_shows_the_meta_cluster_and_the_replicated_assets(target_kind: str) -> None:
    with process_cluster(target_kind, monitor=True).start() as cluster:
        client = await nats.connect(cluster.urls[0], allow_reconnect=False)
        try:
            await create_r3(client, "WATCHED")
        finally:
            await client.close()
        for node in cluster.nodes:
            jsz = await eventually(
                lambda node=node: asyncio.to_thread(monitor, node.http_port, "/jsz"),
                lambda doc: doc.get("ha_assets") == 2 and "leader" in doc.get("meta_cluster", {}),
                what="the meta cluster in /jsz",
            )
            meta = jsz["meta_cluster"]
            assert list(meta) == META_CLUSTER_KEYS
            assert meta["name"] == cluster.name and meta["leader"] in {"n1", "n2", "n3"}
            assert (meta["cluster_size"], meta["quorum_needed"], meta["pending"]) == (3, 2, 0)
            names = {replica["name"] for replica in meta["replicas"]}
            assert len(names) == 2 and names <= {"n1", "n2", "n3"}
            assert list(meta["snapshot"]) == ["pending_entries", "pending_size", "last_time"]
            assert jsz["streams"] == 1


def monitor(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        return json.loads(response.read())


async def test_consumer_updates(client: Client) -> None:
    await create_r3(client, "UPD")
    create = "$JS.API.CONSUMER.CREATE.UPD.D"
    config = {"durable_name": "D", "ack_policy": "explicit", "filter_subject": "UPD.a", "max_ack_pending": 10}
    created = await ask(client, create, {"stream_name": "UPD", "config": config})
    assert created["config"]["max_ack_pending"] == 10
    js = client.jetstream(timeout=10.0)
    for subject in ("UPD.a", "UPD.b", "UPD.a"):
        await js.publish(subject, subject.encode())
    changed = {**config, "max_ack_pending": 20, "description": "wider", "filter_subject": "UPD.>"}
    updated = await ask(client, create, {"stream_name": "UPD", "config": changed, "action": "update"})
    assert (updated["config"]["max_ack_pending"], updated["config"]["description"]) == (20, "wider")
    assert updated["config"]["filter_subject"] == "UPD.>"  # its num_pending may still count the old filter
    exists = await ask(client, create, {"stream_name": "UPD", "config": config, "action": "create"})
    assert exists["error"] == {"code": 400, "err_code": 10148, "description": "consumer already exists"}
    fixed = await ask(client, create, {"stream_name": "UPD", "config": {**changed, "ack_policy": "all"}})
    assert fixed["error"] == {"code": 500, "err_code": 10012, "description": "ack policy can not be updated"}
    missing = {"durable_name": "E", "ack_policy": "explicit"}
    unknown = await ask(
        client, "$JS.API.CONSUMER.CREATE.UPD.E", {"stream_name": "UPD", "config": missing, "action": "update"}
    )
    assert unknown["error"] == {"code": 400, "err_code": 10149, "description": "consumer does not exist"}
    info = await eventually(
        lambda: quietly(client.jetstream(timeout=3.0).consumer_info("UPD", "D")),
        lambda reply: not isinstance(reply, Exception) and (reply.config.max_ack_pending, reply.num_pending) == (20, 3),
        what="the updated consumer counting the wider filter's messages",
    )
    assert info.config.description == "wider"
    subscription = await js.pull_subscribe_bind("D", stream="UPD")
    fetched = await subscription.fetch(3, timeout=10)
    assert [message.subject for message in fetched] == ["UPD.a", "UPD.b", "UPD.a"]


async def test_a_consumer_paused_and_resumed(client: Client) -> None:
    await create_r3(client, "NAP")
    js = client.jetstream(timeout=10.0)
    await js.add_consumer("NAP", durable_name="D", ack_policy="explicit")
    await js.publish("NAP.1", b"one")
    pause = "$JS.API.CONSUMER.PAUSE.NAP.D"
    kind = "io.nats.jetstream.api.v1.consumer_pause_response"
    paused = await ask(client, pause, {"pause_until": "2100-01-01T00:00:00Z"})
    assert (paused["type"], paused["paused"], paused["pause_until"]) == (kind, True, "2100-01-01T00:00:00Z")
    assert paused["pause_remaining"] > 0
    info = await eventually(
        lambda: quietly(js.consumer_info("NAP", "D")),
        lambda reply: not isinstance(reply, Exception) and reply.as_dict().get("paused") is True,
        what="a paused consumer",
    )
    assert info.as_dict()["config"]["pause_until"] == "2100-01-01T00:00:00Z"
    inbox = client.new_inbox()
    held = await client.subscribe(inbox)
    request = json.dumps({"batch": 1, "expires": 1_000_000_000}).encode()
    await client.publish("$JS.API.CONSUMER.MSG.NEXT.NAP.D", request, reply=inbox)
    expired = await held.next_msg(timeout=15)  # the pull ends unanswered by a message: paused
    assert (expired.headers or {}).get("Status") == "408" and expired.data == b""
    resumed = await ask(client, pause, {})
    assert resumed == {"type": kind, "paused": False, "pause_until": "0001-01-01T00:00:00Z"}
    await eventually(  # the meta leader answers once it proposed: the consumer's leader resumes a moment later
        lambda: quietly(js.consumer_info("NAP", "D")),
        lambda reply: not isinstance(reply, Exception) and not reply.as_dict().get("paused"),
        what="a resumed consumer",
    )
    subscription = await js.pull_subscribe_bind("D", stream="NAP")
    fetched = await subscription.fetch(1, timeout=10)
    assert [message.data for message in fetched] == [b"one"]
    missing = await ask(client, "$JS.API.CONSUMER.PAUSE.NAP.NONE", {})
    not_found = {"code": 404, "err_code": 10014, "description": "consumer not found"}
    assert missing == {"type": kind, "error": not_found, "paused": False, "pause_until": "0001-01-01T00:00:00Z"}


async def test_a_pinned_client_priority_group_and_unpin(client: Client) -> None:
    await create_r3(client, "PRI")
    config = {
        "durable_name": "D",
        "ack_policy": "explicit",
        "priority_groups": ["A"],
        "priority_policy": "pinned_client",
    }
    created = await ask(client, "$JS.API.CONSUMER.CREATE.PRI.D", {"stream_name": "PRI", "config": config})
    assert created["config"]["priority_policy"] == "pinned_client"
    js = client.jetstream(timeout=10.0)
    for index in range(2):
        await js.publish("PRI.x", b"m%d" % index)

    async def pull() -> tuple[bytes, str]:
        inbox = client.new_inbox()
        waiting = await client.subscribe(inbox)
        body = {"batch": 1, "group": "A", "expires": 10_000_000_000}
        await client.publish("$JS.API.CONSUMER.MSG.NEXT.PRI.D", json.dumps(body).encode(), reply=inbox)
        message = await waiting.next_msg(timeout=15)
        await waiting.unsubscribe()
        return message.data, (message.headers or {}).get("Nats-Pin-Id", "")

    first, pin = await pull()
    assert first == b"m0" and pin
    unpinned = await ask(client, "$JS.API.CONSUMER.UNPIN.PRI.D", {"group": "A"})
    assert unpinned == {"type": "io.nats.jetstream.api.v1.consumer_unpin_response"}
    unknown = await ask(client, "$JS.API.CONSUMER.UNPIN.PRI.D", {"group": "B"})
    assert unknown["error"] == {
        "code": 400,
        "err_code": 10160,
        "description": "Provided priority group does not exist for this consumer",
    }
    second, other_pin = await pull()
    assert second == b"m1" and other_pin and other_pin != pin
    info = await ask(client, "$JS.API.CONSUMER.INFO.PRI.D")
    assert [group["pinned_client_id"] for group in info["priority_groups"]] == [other_pin]


async def test_a_consumer_reset_delivers_again(client: Client) -> None:
    await create_r3(client, "AGAIN")
    js = client.jetstream(timeout=10.0)
    for index in range(3):
        await js.publish("AGAIN.x", b"m%d" % index)
    subscription = await js.pull_subscribe("AGAIN.>", durable="D", stream="AGAIN")
    fetched = await subscription.fetch(3, timeout=10)
    for message in fetched:
        await message.ack_sync()
    reset = await ask(client, "$JS.API.CONSUMER.RESET.AGAIN.D", {"seq": 2})
    assert reset["type"] == "io.nats.jetstream.api.v1.consumer_reset_response" and reset["reset_seq"] == 2
    again = await subscription.fetch(2, timeout=10)
    assert [message.data for message in again] == [b"m1", b"m2"]
    info = await ask(client, "$JS.API.CONSUMER.INFO.AGAIN.D")  # the leader shows its deliveries at once
    assert info["delivered"]["stream_seq"] == 3 and info["num_ack_pending"] == 2
