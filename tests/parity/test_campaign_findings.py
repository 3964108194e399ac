"""Behaviours the parity campaign found, kept as tests on both targets.

Each case is a shrunk reproduction from ``fakejs-parity`` turned into
assertions that hold on nats-server 2.15.1 and on fakejs.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import nats
import pytest

from tests.harness.configured import configured_servers
from tests.harness.js import api, connect, create_stream, fetch_delivered, fetch_no_wait
from tests.harness.targets import Target
from tests.harness.wait import eventually


async def consumer(nc: nats.NATS, stream: str, config: dict[str, Any]) -> dict:
    reply = await api(
        nc, f"$JS.API.CONSUMER.CREATE.{stream}.{config['durable_name']}", {"stream_name": stream, "config": config}
    )
    assert "error" not in reply, reply
    return reply


async def test_first_seq_one_is_reported(target: Target) -> None:
    nc = await connect(target)
    reply = await create_stream(nc, {"name": "S", "subjects": ["a"], "first_seq": 1})
    assert (reply["state"]["first_seq"], reply["state"]["last_seq"]) == (1, 0)
    await nc.close()


@pytest.mark.parametrize("other", [{"Nats-Expected-Last-Msg-Id": "m1"}, {"Nats-Rollup": "all"}])
async def test_batch_header_is_refused_before_other_checks(target: Target, other: dict[str, str]) -> None:
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["a"]})
    reply = await nc.request("a", b"x", headers={**other, "Nats-Batch-Id": "b1"})
    assert json.loads(reply.data) == {
        "error": {"code": 400, "err_code": 10174, "description": "atomic publish is disabled"},
        "stream": "S",
        "seq": 0,
    }
    await nc.close()


async def test_num_pending_is_zero_past_the_end_of_the_stream(target: Target) -> None:
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["a.>"]})
    await consumer(nc, "S", {"durable_name": "C", "deliver_policy": "by_start_sequence", "opt_start_seq": 2})
    await nc.jetstream().publish("a.2", b"")
    info = await api(nc, "$JS.API.CONSUMER.INFO.S.C")
    assert info["num_pending"] == 0
    await nc.close()


async def test_consumer_whose_filter_was_removed_is_not_told_of_new_messages(target: Target) -> None:
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["a", "b"]})
    await consumer(nc, "S", {"durable_name": "C", "ack_policy": "explicit", "filter_subject": "a"})
    await consumer(nc, "S", {"durable_name": "C", "ack_policy": "explicit"})
    await nc.jetstream().publish("a", b"x")
    assert (await api(nc, "$JS.API.CONSUMER.INFO.S.C"))["num_pending"] == 0
    got = await fetch_no_wait(nc, "S", "C")
    assert [m.headers.get("Status") for m in got] == ["404"]
    await nc.close()


async def test_purge_moves_consumer_floors(target: Target) -> None:
    nc = await connect(target)
    js = nc.jetstream()
    await create_stream(nc, {"name": "S", "subjects": ["a"]})
    await consumer(nc, "S", {"durable_name": "C", "ack_policy": "all"})
    for _ in range(2):
        await js.publish("a", b"")
    got = await fetch_delivered(nc, "S", "C")
    assert got[0].subject == "a"
    await api(nc, "$JS.API.STREAM.PURGE.S", {"seq": 5})
    info = await api(nc, "$JS.API.CONSUMER.INFO.S.C")
    assert (info["delivered"]["stream_seq"], info["ack_floor"]["stream_seq"], info["ack_floor"]["consumer_seq"]) == (
        4,
        4,
        1,
    )
    assert "last_active" in info["ack_floor"] and info["num_ack_pending"] == 0
    await nc.close()


async def test_rollup_all_moves_consumer_floors(target: Target) -> None:
    nc = await connect(target)
    js = nc.jetstream()
    await create_stream(nc, {"name": "S", "subjects": ["b", "c"], "allow_rollup_hdrs": True})
    await consumer(nc, "S", {"durable_name": "C", "ack_policy": "explicit"})
    await js.publish("b", b"")
    await fetch_delivered(nc, "S", "C")  # delivered, not acknowledged
    await js.publish("c", b"", headers={"Nats-Rollup": "all"})

    async def floors() -> tuple[int, int, int]:
        info = await api(nc, "$JS.API.CONSUMER.INFO.S.C")
        return info["ack_floor"]["consumer_seq"], info["ack_floor"]["stream_seq"], info["num_ack_pending"]

    # nats-server moves the consumer's floors after the PubAck, a moment later under load: poll.
    assert await eventually(floors, lambda got: got == (1, 1, 0), what="the floors after the roll-up") == (1, 1, 0)
    await nc.close()


async def test_switching_to_interest_without_consumers_empties_the_stream(target: Target) -> None:
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["a", "b"], "storage": "memory"})
    for subject in ("a", "b", "a"):
        await nc.jetstream().publish(subject, b"x")
    reply = await api(
        nc,
        "$JS.API.STREAM.UPDATE.S",
        {"name": "S", "subjects": ["a", "b"], "storage": "memory", "retention": "interest"},
    )
    assert (reply["state"]["messages"], reply["state"]["first_seq"], reply["state"]["last_seq"]) == (0, 4, 3)
    await nc.close()


async def test_narrowing_a_filter_on_an_interest_stream_drops_what_lost_interest(target: Target) -> None:
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["a.>", "b"], "retention": "interest"})
    await consumer(nc, "S", {"durable_name": "C", "ack_policy": "all"})
    await nc.jetstream().publish("a.1.2", b"x")
    await consumer(nc, "S", {"durable_name": "C", "ack_policy": "all", "filter_subject": "b"})
    info = await api(nc, "$JS.API.STREAM.INFO.S")
    assert info["state"]["messages"] == 0
    await nc.close()


async def test_last_by_subject_wildcard_looks_only_at_the_last_sequence(target: Target) -> None:
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["c.>"]})
    for _ in range(3):
        await nc.jetstream().publish("c.1", b"x")
    await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 3})
    reply = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"last_by_subj": ">"})
    assert reply["error"] == {"code": 404, "err_code": 10037, "description": "no message found"}
    reply = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"last_by_subj": "c.1"})
    assert reply["message"]["seq"] == 2
    await nc.close()


async def test_filtered_purge_leaves_multi_filter_consumers_alone(target: Target) -> None:
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["k.>", "x"], "storage": "memory"})
    await nc.jetstream().publish("k.1", b"x")
    await consumer(nc, "S", {"durable_name": "C", "filter_subjects": ["x", "k.1"]})
    await api(nc, "$JS.API.STREAM.PURGE.S", {"filter": "x"})
    info = await api(nc, "$JS.API.CONSUMER.INFO.S.C")
    assert (info["delivered"]["stream_seq"], info["num_pending"]) == (0, 1)
    await nc.close()


# -- fed streams (mirrors, sources) ------------------------------------------------------------------------------------


async def wait_for_messages(nc: nats.NATS, stream: str, count: int) -> dict[str, Any]:
    """STREAM.INFO once ``stream`` holds ``count`` messages (copies arrive after the publish), or after 3 s."""
    deadline = asyncio.get_running_loop().time() + 3
    while True:
        info = await api(nc, f"$JS.API.STREAM.INFO.{stream}")
        if info["state"]["messages"] >= count or asyncio.get_running_loop().time() > deadline:
            return info
        await asyncio.sleep(0.02)


async def test_mirror_info_in_the_create_reply_leaves_the_filter_out(target: Target) -> None:
    """The create reply's ``mirror`` block has no ``filter_subject`` yet; STREAM.INFO has it."""
    nc = await connect(target)
    await create_stream(nc, {"name": "O", "subjects": ["c.>"]})
    reply = await create_stream(nc, {"name": "M", "mirror": {"name": "O", "filter_subject": "c.>"}})
    assert reply["config"]["mirror"] == {"name": "O", "filter_subject": "c.>"}
    assert reply["mirror"] == {"name": "O", "lag": 0, "active": -1}
    await nc.close()


async def test_mirror_info_in_the_create_reply_shows_the_transforms(target: Target) -> None:
    """Unlike its filter, a mirror's subject transforms are in the create reply, origin or not."""
    nc = await connect(target)
    transforms = [{"src": "a.>", "dest": "m.a.>"}, {"src": "b", "dest": "m.b"}]
    for origin in ("O", "X"):
        if origin == "O":
            await create_stream(nc, {"name": "O", "subjects": ["a.>", "b"]})
        name = f"M{origin}"
        reply = await create_stream(nc, {"name": name, "mirror": {"name": origin, "subject_transforms": transforms}})
        assert reply["mirror"] == {"name": origin, "lag": 0, "active": -1, "subject_transforms": transforms}
    await nc.close()


async def test_a_counter_stream_sources_a_counter_stream(target: Target) -> None:
    """Each sourced increment is stored, with ``Nats-Counter-Sources`` holding the origin's total."""
    nc = await connect(target)
    await create_stream(nc, {"name": "O", "subjects": ["c.>"], "allow_msg_counter": True})
    await create_stream(nc, {"name": "A", "allow_msg_counter": True, "sources": [{"name": "O"}]})
    for step in ("5", "2"):
        await nc.request("c.1", b"", headers={"Nats-Incr": step})
    info = await wait_for_messages(nc, "A", 2)
    assert (info["state"]["messages"], info["state"]["last_seq"]) == (2, 2)
    got = await api(nc, "$JS.API.STREAM.MSG.GET.A", {"last_by_subj": "c.1"})
    assert json.loads(base64.b64decode(got["message"]["data"])) == {"val": "7"}
    assert b'Nats-Counter-Sources: {"O":{"c.1":"7"}}' in base64.b64decode(got["message"]["hdrs"])
    await nc.close()


async def test_a_sourced_rollup_is_stored_where_rollups_are_off(target: Target) -> None:
    """A sourced message keeps its ``Nats-Rollup`` header and is stored even when the sourcing stream denies rollups."""
    nc = await connect(target)
    await create_stream(nc, {"name": "O", "subjects": ["a"], "allow_rollup_hdrs": True})
    await create_stream(nc, {"name": "A", "sources": [{"name": "O"}]})
    await nc.request("a", b"x", headers={"Nats-Rollup": "sub"})
    info = await wait_for_messages(nc, "A", 1)
    assert info["state"]["messages"] == 1
    await nc.close()


async def test_an_interest_stream_without_consumers_reports_no_source_sequence(target: Target) -> None:
    """The copied message is dropped at once (nobody is interested), and the source info shows no ``seq``."""
    nc = await connect(target)
    await create_stream(nc, {"name": "O", "subjects": ["a"]})
    await nc.jetstream().publish("a", b"x")
    await create_stream(nc, {"name": "A", "retention": "interest", "sources": [{"name": "O"}]})
    deadline = asyncio.get_running_loop().time() + 3
    while (info := await api(nc, "$JS.API.STREAM.INFO.A"))["state"]["last_seq"] < 1:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.02)
    assert [(s["name"], s["lag"], "seq" in s) for s in info["sources"]] == [("O", 0, False)]
    await nc.close()


async def test_an_interest_mirror_without_consumers_keeps_nothing(target: Target) -> None:
    """A mirrored message nobody would see is dropped at once: its sequence is used, nothing is stored."""
    nc = await connect(target)
    await create_stream(nc, {"name": "O", "subjects": ["a"]})
    await nc.jetstream().publish("a", b"x")
    await create_stream(nc, {"name": "M", "retention": "interest", "mirror": {"name": "O"}})

    async def state() -> dict[str, Any]:
        return dict((await api(nc, "$JS.API.STREAM.INFO.M"))["state"])

    found = await eventually(state, lambda found: found["last_seq"] >= 1, what="the mirrored sequence")
    assert (found["messages"], found["bytes"], found["first_seq"], found["last_seq"]) == (0, 0, 2, 1)
    await nc.close()


async def test_dropping_a_source_costs_one_failed_api_request(target: Target) -> None:
    """An update that removes a stream's sources is followed by one more API request, which fails."""
    nc = await connect(target)
    await create_stream(nc, {"name": "O", "subjects": ["a"]})
    await create_stream(nc, {"name": "A", "sources": [{"name": "O"}]})
    before = (await api(nc, "$JS.API.INFO"))["api"]
    await api(nc, "$JS.API.STREAM.UPDATE.A", {"name": "A", "subjects": ["c.>"]})
    deadline = asyncio.get_running_loop().time() + 3
    polls = 1
    while (after := (await api(nc, "$JS.API.INFO"))["api"])["errors"] == before["errors"]:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
        polls += 1
    # the update and the INFO polls were made by this client; the one request more is the server's own
    assert (after["total"] - before["total"], after["errors"] - before["errors"]) == (polls + 2, 1)
    await nc.close()


async def test_a_source_starting_past_an_empty_origin_reports_no_sequence(target: Target) -> None:
    """``opt_start_seq`` is not shown as ``seq - 1`` in the source info: nothing was received yet."""
    nc = await connect(target)
    await create_stream(nc, {"name": "O", "subjects": ["a"]})
    await create_stream(nc, {"name": "A", "sources": [{"name": "O", "opt_start_seq": 3}]})
    deadline = asyncio.get_running_loop().time() + 3
    while (info := await api(nc, "$JS.API.STREAM.INFO.A"))["sources"][0].get("active", -1) < 0:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.02)
    assert [(s["name"], s["lag"], "seq" in s) for s in info["sources"]] == [("O", 0, False)]
    await nc.close()


@pytest.mark.parametrize(("storage", "stream_seq"), [("file", 0), ("memory", 2)])
async def test_a_waiting_pull_matching_nothing_moves_only_a_memory_consumer(
    target: Target, storage: str, stream_seq: int
) -> None:
    """A pull that waits on a filter nothing in the stream matches: the file store leaves the consumer before
    the stream (delivered 0), the memory store moves it past the last message."""
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["a.*"], "storage": storage})
    for _ in range(2):
        await nc.jetstream().publish("a.1", b"")
    await consumer(nc, "S", {"durable_name": "C", "filter_subject": "a.2"})
    ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def on_reply(msg: nats.aio.msg.Msg) -> None:
        if not ended.done():
            ended.set_result((msg.headers or {}).get("Status", ""))

    inbox = nc.new_inbox()
    await nc.subscribe(inbox, cb=on_reply)
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", json.dumps({"batch": 2, "expires": 300_000_000}).encode(), inbox)
    assert await asyncio.wait_for(ended, 10) == "408"
    info = await api(nc, "$JS.API.CONSUMER.INFO.S.C")
    assert (info["delivered"]["consumer_seq"], info["delivered"]["stream_seq"]) == (0, stream_seq)
    await nc.close()


@pytest.mark.parametrize(
    ("config", "headers", "error"),
    [
        ({"allow_msg_counter": True}, {}, "message counter increment is missing (10169)"),
        ({}, {"Nats-Expected-Last-Sequence": "5"}, "last sequence mismatch: 5 vs 0"),
        ({}, {"Nats-Expected-Last-Subject-Sequence": "2"}, "last sequence by subject mismatch: 2 vs 0"),
        ({}, {"Nats-Expected-Last-Msg-Id": "m1"}, 'last msgid mismatch: "m1" vs ""'),
        ({}, {"Nats-Expected-Stream": "X"}, "expected stream does not match"),
        ({}, {"Nats-TTL": "1h"}, "message TTL disabled"),
        ({}, {"Nats-Rollup": "all"}, "rollup not permitted"),
        ({"max_msgs_per_subject": 1, "discard": "new", "discard_new_per_subject": True}, {}, None),
        ({"max_msg_size": 1}, {}, "maximum payload exceeded"),
    ],
)
async def test_a_traced_publish_the_stream_refuses_names_the_error_with_its_code(
    target: Target, config: dict[str, Any], headers: dict[str, str], error: str | None
) -> None:
    """The trace's ``js`` event shows the refusal as nats-server's error: an API error's description and
    code, or the plain error its checks return (a store failure's own text)."""
    nc = await connect(target)
    await create_stream(nc, {"name": "S", "subjects": ["a"], **config})
    if error is None:
        await nc.jetstream().publish("a", b"first")
    traces = await nc.subscribe("traces")
    reply = await nc.request("a", b"x", headers={"Nats-Trace-Dest": "traces", **headers}, timeout=10)
    refusal = json.loads(reply.data)["error"]
    event = json.loads((await traces.next_msg(timeout=10)).data)
    jetstream = [step for step in event["events"] if step["type"] == "js"]
    assert jetstream[0]["error"] == (error or refusal["description"])
    await nc.close()


IMPORTED_API = """
accounts {
  JS {
    jetstream: enabled
    users: [{user: js, password: js}]
    exports: [{service: "$JS.API.>"}]
  }
  APP {
    users: [{user: app, password: app}]
    imports: [{service: {account: JS, subject: "$JS.API.>"}, to: "JS.acc.API.>"}]
  }
}
"""


async def test_the_audit_of_a_request_through_an_import_names_both_accounts(target_kind: str, tmp_path) -> None:
    """``client`` of the API audit: the requesting account, the service's account (``svc``), rtt and server."""
    async with configured_servers(target_kind, tmp_path) as start:
        server = await start(IMPORTED_API)
        owner = await nats.connect(f"nats://js:js@{server.host}:{server.port}")
        app = await nats.connect(f"nats://app:app@{server.host}:{server.port}")
        audits = await owner.subscribe("$JS.EVENT.ADVISORY.API")
        await owner.flush()
        await app.request("JS.acc.API.INFO", b"", timeout=10)
        client = json.loads((await audits.next_msg(timeout=10)).data)["client"]
        assert (client["acc"], client["svc"], sorted(client)) == ("APP", "JS", ["acc", "rtt", "server", "svc"])
        await app.close()
        await owner.close()


async def _audits_of(nc: nats.NATS, seen: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    await nc.flush()
    return [audit for audit in seen if audit["subject"].startswith(prefix)]


async def test_a_sources_consumer_requests_are_audited_as_the_servers_own(target: Target) -> None:
    """The sourcing consumer's create is sent by the stream's own client (kind JetStream), its delete by the
    account's (kind Account): each audit names that client, not the one that changed the stream."""
    nc = await connect(target)
    seen: list[dict[str, Any]] = []

    async def heard(msg: Any) -> None:
        seen.append(json.loads(msg.data))

    await nc.subscribe("$JS.EVENT.ADVISORY.API", cb=heard)
    await create_stream(nc, {"name": "S3", "subjects": ["a.*"]})
    transform = {"src": "a.*", "dest": "m.{{wildcard(1)}}"}
    await create_stream(
        nc, {"name": "KV_b", "subjects": ["e"], "sources": [{"name": "S3", "subject_transforms": [transform]}]}
    )
    server = nc._server_info["server_name"]
    created = await eventually(lambda: _audits_of(nc, seen, "$JS.API.CONSUMER.CREATE.S3."), what="the create audit")
    audit = created[0]
    assert audit["subject"] == "$JS.API.CONSUMER.CREATE.S3.JS_SRC_OAJ728iH.a.*"
    client = audit["client"]
    assert list(client) == ["start", "id", "acc", "server", "kind"]
    assert (client["acc"], client["server"], client["kind"]) == ("$G", server, "JetStream")
    assert client["id"] != nc._client_id
    assert json.loads(audit["request"])["config"]["metadata"] == {"_nats.src.acc": "$G", "_nats.src.stream": "KV_b"}
    assert json.loads(audit["response"])["name"].startswith("JS_SRC_OAJ728iH-")

    await api(nc, "$JS.API.STREAM.UPDATE.KV_b", {"name": "KV_b", "subjects": ["e"]})
    deleted = await eventually(lambda: _audits_of(nc, seen, "$JS.API.CONSUMER.DELETE."), what="the delete audit")
    audit = deleted[0]
    assert audit["subject"] == "$JS.API.CONSUMER.DELETE.S3.JS_SRC_OAJ728iH"
    assert "request" not in audit
    client = audit["client"]
    assert list(client) == ["start", "id", "acc", "server", "kind"]
    assert (client["acc"], client["server"], client["kind"]) == ("$G", server, "Account")
    assert json.loads(audit["response"])["error"]["err_code"] == 10014
    await nc.close()


async def test_a_mirrors_consumer_create_is_audited_as_the_streams_own(target: Target) -> None:
    nc = await connect(target)
    seen: list[dict[str, Any]] = []

    async def heard(msg: Any) -> None:
        seen.append(json.loads(msg.data))

    await nc.subscribe("$JS.EVENT.ADVISORY.API", cb=heard)
    await create_stream(nc, {"name": "S3", "subjects": ["a.*"]})
    await create_stream(nc, {"name": "M", "mirror": {"name": "S3"}})
    created = await eventually(lambda: _audits_of(nc, seen, "$JS.API.CONSUMER.CREATE.S3"), what="the create audit")
    audit = created[0]
    assert audit["subject"] == "$JS.API.CONSUMER.CREATE.S3"
    assert json.loads(audit["request"])["config"]["name"] == "JS_MIRROR_ih8eMwqr"
    client = audit["client"]
    assert list(client) == ["start", "id", "acc", "server", "kind"]
    assert (client["acc"], client["kind"]) == ("$G", "JetStream")
    await nc.close()


@pytest.mark.parametrize("link", ["mirror", "sources"])
async def test_a_feeds_consumer_is_push_bound_only_after_its_create_reply(target: Target, link: str) -> None:
    """The mirror or source subscribes to its deliver subject once the create reply is in: the reply (in the
    API audit) has no ``push_bound``, the consumer's info has it."""
    nc = await connect(target)
    seen: list[dict[str, Any]] = []

    async def heard(msg: Any) -> None:
        seen.append(json.loads(msg.data))

    await nc.subscribe("$JS.EVENT.ADVISORY.API", cb=heard)
    await create_stream(nc, {"name": "S3", "subjects": ["a.*"]})
    await nc.publish("a.1", b"one")
    feed = {"mirror": {"name": "S3"}} if link == "mirror" else {"subjects": ["e"], "sources": [{"name": "S3"}]}
    await create_stream(nc, {"name": "F", **feed})
    created = await eventually(lambda: _audits_of(nc, seen, "$JS.API.CONSUMER.CREATE.S3"), what="the create audit")
    reply = json.loads(created[0]["response"])
    assert (reply["type"], "push_bound" in reply) == ("io.nats.jetstream.api.v1.consumer_create_response", False)
    info = await api(nc, f"$JS.API.CONSUMER.INFO.S3.{reply['name']}", {})
    assert info["push_bound"] is True
    stored = await eventually(lambda: api(nc, "$JS.API.STREAM.INFO.F", {}), lambda s: s["state"]["messages"] == 1)
    assert stored["state"]["last_seq"] == 1
    await nc.close()
