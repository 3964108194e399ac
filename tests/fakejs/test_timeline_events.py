"""The timeline's lifecycle events as the domain records them, whatever made the change, and the later kinds:
pins, scenario steps, batch publishes, the client of a pull request."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from fakejs import ManualClock, Server, ServerOptions
from fakejs.core.configfile.load import load_text
from fakejs.core.recorder import EVENT_KINDS
from fakejs.testkit.timeline_page import lane_keys

pytestmark = pytest.mark.fake_only

SECOND = 10**9


def kinds(server: Server, **filters: Any) -> list[str]:
    return [event["kind"] for event in server.timeline(**filters)]


def check_fields(events: list[dict[str, Any]]) -> None:
    """Every event carries exactly the fields its kind declares."""
    for event in events:
        declared = set(EVENT_KINDS[event["kind"]][1])
        assert set(event) - {"index", "kind", "time_ns"} == declared, event


def lifecycle(server: Server, **filters: Any) -> list[tuple[str, str | None]]:
    """The stream and consumer events, each with its cause (None for kinds without one)."""
    return [
        (event["kind"], event.get("cause"))
        for event in server.timeline(**filters)
        if event["kind"].startswith(("stream.", "consumer."))
    ]


async def api(nc: nats.NATS, subject: str, body: Any = None) -> dict[str, Any]:
    payload = b"" if body is None else json.dumps(body).encode()
    reply = await nc.request(subject, payload, timeout=5)
    answer: dict[str, Any] = json.loads(reply.data)
    assert "error" not in answer, answer
    return answer


# -- lifecycle, recorded where the change is applied -------------------------------------------


async def test_the_domain_tells_a_create_from_an_update_and_names_why_a_consumer_went() -> None:
    clock = ManualClock()
    async with Server(clock=clock, control=True) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        config = ConsumerConfig(durable_name="C", ack_policy=AckPolicy.EXPLICIT)
        await js.add_consumer("S", config)
        await js.add_consumer("S", config)  # the same config again: applied as an update
        await js.add_consumer("S", ConsumerConfig(durable_name="C", ack_policy=AckPolicy.EXPLICIT, max_deliver=3))
        await js.delete_consumer("S", "C")
        ephemeral = await js.add_consumer("S", ConsumerConfig(inactive_threshold=1.0))
        await js.add_consumer("S", ConsumerConfig(durable_name="D"))
        server.control.delete_consumer("S", "D")
        clock.advance(3)  # the ephemeral consumer's threshold (with its jitter) runs out
        await server.wait_for(lambda: ("consumer.delete", "inactive") in lifecycle(server))
        assert server.timeline(kind="consumer.delete")[-1]["consumer"] == ephemeral.name
        assert lifecycle(server) == [
            ("stream.create", None),
            ("consumer.create", None),
            ("consumer.update", None),
            ("consumer.update", None),
            ("consumer.delete", "api"),
            ("consumer.create", None),
            ("consumer.create", None),
            ("consumer.delete", "control"),
            ("consumer.delete", "inactive"),
        ]
        check_fields(server.timeline())
        await nc.close()


async def test_a_stream_deleted_takes_its_consumers_and_a_purge_and_pause_are_recorded() -> None:
    async with Server(control=True) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        await js.add_consumer("S", ConsumerConfig(durable_name="C"))
        await js.publish("s.1", b"")
        await js.purge_stream("S")
        await api(nc, "$JS.API.CONSUMER.PAUSE.S.C", {"pause_until": "2999-01-01T00:00:00Z"})
        await api(nc, "$JS.API.CONSUMER.PAUSE.S.C")
        await js.delete_stream("S")
        await js.add_stream(name="T", subjects=["t"])
        server.control.delete_stream("T")
        events = server.timeline()
        check_fields(events)
        assert lifecycle(server) == [
            ("stream.create", None),
            ("consumer.create", None),
            ("stream.purge", None),
            ("consumer.pause", None),
            ("consumer.pause", None),
            ("consumer.delete", "stream_delete"),
            ("stream.delete", "api"),
            ("stream.create", None),
            ("stream.delete", "control"),
        ]
        purge = server.timeline(kind="stream.purge")[0]
        assert (purge["purged"], purge["filter"]) == (1, "")
        paused, resumed = server.timeline(kind="consumer.pause")
        assert paused["until"] > 0 and resumed["until"] is None
        await nc.close()


async def test_the_key_value_helpers_streams_and_consumers_are_recorded() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        kv = await js.create_key_value(bucket="config")
        await kv.put("colour", b"blue")
        watcher = await kv.watchall()  # an ordered (ephemeral) consumer under the hood
        await server.wait_for(lambda: server.timeline(kind="consumer.create"))
        assert server.timeline(kind="stream.create")[0]["stream"] == "KV_config"
        assert server.timeline(kind="consumer.create")[0]["stream"] == "KV_config"
        name = server.timeline(kind="consumer.create")[0]["consumer"]
        await watcher.stop()
        await nc.flush()
        await server.wait_for(lambda: not server.jetstream.streams["KV_config"].consumers[name].active)
        clock.advance(301)  # nobody listens: the ordered consumer goes after its inactive threshold (5 minutes)
        await server.wait_for(lambda: server.timeline(kind="consumer.delete"))
        assert server.timeline(kind="consumer.delete")[0]["cause"] == "inactive"
        await nc.close()


async def test_streams_and_consumers_restored_from_the_store_are_recorded(tmp_path: Path) -> None:
    async with Server(store_dir=str(tmp_path)) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"])
        await js.add_consumer("S", ConsumerConfig(durable_name="C"))
        await nc.close()
        server.recorded.clear()
        await server.restart()
        restored = [(e["kind"], e["stream"], e.get("consumer")) for e in server.timeline(kind="stream")]
        restored += [(e["kind"], e["stream"], e.get("consumer")) for e in server.timeline(kind="consumer")]
        assert restored == [("stream.restore", "S", None), ("consumer.restore", "S", "C")]
        check_fields(server.timeline())


SYSTEM_CONFIG = """
accounts { A { jetstream: enabled, users: [{user: a, password: a}] }, SYS { users: [{user: sys, password: sys}] } }
system_account: SYS
"""


async def test_an_account_purge_names_itself_as_the_cause(tmp_path: Path) -> None:
    options = ServerOptions(port=0, jetstream=True, store_dir=str(tmp_path))
    loaded = load_text(SYSTEM_CONFIG, base=options)
    assert not loaded.problem_text()
    async with Server(options) as server:
        account = await nats.connect(server.url, user="a", password="a")
        system = await nats.connect(server.url, user="sys", password="sys")
        await api(account, "$JS.API.STREAM.CREATE.S", {"name": "S"})
        await api(system, "$JS.API.ACCOUNT.PURGE.A")
        await server.wait_for(lambda: server.timeline(kind="stream.delete"))
        assert server.timeline(kind="stream.delete")[0]["cause"] == "account_purge"
        await account.close()
        await system.close()


# -- pins ---------------------------------------------------------------------------------


async def test_pins_and_unpins_with_their_reasons() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        config = {
            "durable_name": "C",
            "ack_policy": "explicit",
            "priority_policy": "pinned_client",
            "priority_groups": ["G"],
            "priority_timeout": 5 * SECOND,
        }
        await api(nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": config})
        inbox = nc.new_inbox()
        await nc.subscribe(inbox)
        pull = json.dumps({"batch": 1, "expires": 60 * SECOND, "group": "G"}).encode()
        await js.publish("s.1", b"")
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", pull, reply=inbox)
        await server.wait_for(lambda: server.timeline(kind="pin"))
        await api(nc, "$JS.API.CONSUMER.UNPIN.S.C", {"group": "G"})
        await js.publish("s.2", b"")
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", pull, reply=inbox)
        await server.wait_for(lambda: len(server.timeline(kind="pin")) == 2)
        clock.advance(6)  # the pinned client pulls nothing more for the priority timeout
        await server.wait_for(lambda: len(server.timeline(kind="unpin")) == 2)
        first, second = server.timeline(kind="pin")
        assert first["pin_id"] != second["pin_id"] and len(first["pin_id"]) == 22
        assert (first["group"], first["reply"]) == ("G", inbox)
        unpins = [(e["pin_id"], e["reason"]) for e in server.timeline(kind="unpin")]
        assert unpins == [(first["pin_id"], "admin"), (second["pin_id"], "timeout")]
        check_fields(server.timeline())
        await nc.close()


# -- scenario steps ------------------------------------------------------------------------------

SCENARIO = """
name = "two-steps"

[[steps]]
name = "busy"
on = "pull.request"
do = "reply_status"
args = { code = 503, text = "Busy" }

[[steps]]
name = "later"
at = 2.0
do = "delete_consumer"
args = { stream = "S", consumer = "C" }
"""


async def test_scenario_steps_are_recorded_as_they_fire() -> None:
    clock = ManualClock()
    async with Server(clock=clock, control=True) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        await js.add_consumer("S", ConsumerConfig(durable_name="C"))
        started = server.control.start_scenario(text=SCENARIO)
        inbox = nc.new_inbox()
        await nc.subscribe(inbox)
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", b'{"batch":1}', reply=inbox)
        await server.wait_for(lambda: server.timeline(kind="scenario.step"))
        clock.advance(2)
        await server.wait_for(lambda: len(server.timeline(kind="scenario.step")) == 2)
        steps = [(e["scenario"], e["step"], e["name"], e["do"], e["fault"]) for e in server.timeline(kind="scenario")]
        assert steps == [
            ("two-steps", 0, "busy", "reply_status", started["faults"][0]),
            ("two-steps", 1, "later", "delete_consumer", started["faults"][1]),
        ]
        assert ("consumer.delete", "control") in lifecycle(server)
        check_fields(server.timeline())
        await nc.close()


# -- batch publishes ------------------------------------------------------------------------------


def batch_headers(batch: str, seq: int, commit: str = "") -> dict[str, str]:
    headers = {"Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(seq)}
    if commit:
        headers["Nats-Batch-Commit"] = commit
    return headers


async def test_an_atomic_batch_is_recorded_staged_then_committed_or_abandoned() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "allow_atomic": True})
        cid = server.timeline(kind="client.connect")[0]["client"]
        await nc.publish("s.1", b"one", headers=batch_headers("b1", 1))
        await nc.publish("s.2", b"two", headers=batch_headers("b1", 2))
        reply = await nc.request("s.3", b"three", headers=batch_headers("b1", 3, commit="1"), timeout=5)
        assert json.loads(reply.data)["count"] == 3
        await nc.publish("s.4", b"", headers=batch_headers("b2", 1))
        with pytest.raises(nats.js.errors.APIError):
            await js.publish("s.5", b"", headers=batch_headers("b2", 3))  # a gap: the batch is abandoned
        staged = [(e["batch"], e["batch_seq"], e["seq"], e["subject"]) for e in server.timeline(kind="batch.message")]
        assert staged == [("b1", 1, 0, "s.1"), ("b1", 2, 0, "s.2"), ("b1", 3, 0, "s.3"), ("b2", 1, 0, "s.4")]
        commit = server.timeline(kind="batch.commit")[0]
        assert (commit["batch"], commit["count"], commit["seq"], commit["mode"]) == ("b1", 3, 3, "atomic")
        abandoned = server.timeline(kind="batch.abandon")[0]
        assert (abandoned["batch"], abandoned["reason"]) == ("b2", "incomplete")
        assert {e["client"] for e in server.timeline(kind="batch")} == {cid}
        check_fields(server.timeline())
        await nc.close()


def fast(inbox: str, batch: str, seq: int, op: int) -> str:
    return f"{inbox}.{batch}.10.ok.{seq}.{op}.$FI"


async def test_a_fast_batch_is_recorded_message_by_message_then_its_commit() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "allow_batched": True})
        inbox = nc.new_inbox()
        await nc.subscribe(inbox + ".>")
        for seq, op in ((1, 0), (2, 1), (3, 2)):
            await nc.publish(f"s.{seq}", b"x" * seq, reply=fast(inbox, "f1", seq, op))
        await nc.publish("s.9", b"", reply=fast(inbox, "f2", 1, 0))
        await server.wait_for(lambda: server.timeline(kind="batch.commit"))
        await server.wait_for(lambda: len(server.timeline(kind="batch.message")) == 4)
        clock.advance(11)  # nobody publishes to f2 any more
        await server.wait_for(lambda: server.timeline(kind="batch.abandon"))
        stored = [(e["batch"], e["batch_seq"], e["seq"], e["size"]) for e in server.timeline(kind="batch.message")]
        assert stored == [("f1", 1, 1, 1), ("f1", 2, 2, 2), ("f1", 3, 3, 3), ("f2", 1, 4, 0)]
        commit = server.timeline(kind="batch.commit")[0]
        assert (commit["batch"], commit["count"], commit["seq"], commit["mode"]) == ("f1", 3, 3, "fast")
        abandoned = server.timeline(kind="batch.abandon")[0]
        assert (abandoned["batch"], abandoned["reason"]) == ("f2", "timeout")
        check_fields(server.timeline())
        await nc.close()


# -- the client of a pull request ---------------------------------------------------------------


async def test_a_pull_request_names_its_client_and_is_drawn_on_its_lane_too() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        await js.add_consumer("S", ConsumerConfig(durable_name="C", ack_policy=AckPolicy.EXPLICIT))
        await js.publish("s.1", b"")
        sub = await js.pull_subscribe_bind("C", stream="S")
        [msg] = await sub.fetch(1, timeout=5)
        await msg.ack()  # an ack asking for more (+NXT) has no client to name
        await nc.publish(msg.reply, b"+NXT {}", reply=nc.new_inbox())
        await server.wait_for(lambda: len(server.timeline(kind="pull.request")) == 2)
        cid = server.timeline(kind="client.connect")[0]["client"]
        fetched, more = server.timeline(kind="pull.request")
        assert (fetched["client"], more["client"]) == (cid, None)
        assert lane_keys(fetched) == ["consumer:S/C", f"client:{cid}"]
        assert lane_keys(more) == ["consumer:S/C"]
        assert [e["kind"] for e in server.timeline(client=cid) if e["kind"].startswith("pull")] == ["pull.request"]
        check_fields(server.timeline())
        await nc.close()


def test_the_guide_lists_every_kind_and_its_fields() -> None:
    guide = Path(__file__).resolve().parents[2] / "docs" / "guide" / "timeline.md"
    listed: dict[str, str] = {}
    for line in guide.read_text().splitlines():
        if line.startswith("| `"):
            cells = line.strip("| ").split(" | ")
            for kind in re.findall(r"`([a-z_.]+)`", cells[0]):
                listed[kind] = cells[2]
    assert set(listed) == set(EVENT_KINDS)
    for kind, (_, fields) in EVENT_KINDS.items():
        missing = [name for name in fields if f"`{name}`" not in listed[kind]]
        assert not missing, (kind, missing)
