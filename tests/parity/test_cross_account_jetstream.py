"""JetStream of another account, used through imports of its API, its acks and its deliveries.

Account JS exports ``$JS.API.>`` (a singleton export, or one with
``response_type: stream``), ``$JS.ACK.>`` and the ``deliver.>`` stream of
push deliveries; APP imports the API under ``JS.acc.API``, the ack subjects
as they are, and the deliveries.  A pull request through the import is one
service request: its reply mapping takes one delivery for a singleton export
(the consumer still counts the rest of the batch as delivered) and every
delivery for a stream export.
"""

from __future__ import annotations

import json

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import ConsumerInfo

from tests.harness.configured import Start, configured_fixture
from tests.harness.targets import Target
from tests.harness.wait import eventually

PREFIX = "JS.acc.API"


def accounts(response_type: str) -> str:
    """The two accounts, the API exported with ``response_type`` (nats-server's default when empty)."""
    api = '{service: "$JS.API.>"' + (f", response_type: {response_type}" if response_type else "") + "}"
    return f"""
accounts {{
  JS {{
    jetstream: enabled
    users: [{{user: js, password: js}}]
    exports: [
      {api}
      {{service: "$JS.ACK.>"}}
      {{stream: "deliver.>"}}
    ]
  }}
  APP {{
    users: [{{user: app, password: app}}]
    imports: [
      {{service: {{account: JS, subject: "$JS.API.>"}}, to: "{PREFIX}.>"}}
      {{service: {{account: JS, subject: "$JS.ACK.>"}}}}
      {{stream: {{account: JS, subject: "deliver.>"}}}}
    ]
  }}
}}
"""


server = configured_fixture()


async def connect(target: Target, user: str) -> Client:
    return await nats.connect(f"nats://{user}:{user}@{target.host}:{target.port}")


async def stream_of_three(target: Target, app: Client) -> None:
    """APP makes stream S and pull consumer C through the prefix; JS stores three messages."""
    js = app.jetstream(prefix=PREFIX)
    await js.add_stream(name="S", subjects=["s.>"])
    await js.add_consumer("S", durable_name="C", ack_policy="explicit")
    owner = await connect(target, "js")
    try:
        for index in range(3):
            await owner.jetstream().publish(f"s.{index}", b"m%d" % index)
    finally:
        await owner.close()


async def pull(app: Client, batch: int) -> list[Msg]:
    """A pull request for ``batch`` through the import; the list its deliveries are gathered in."""
    got: list[Msg] = []

    async def gather(msg: Msg) -> None:
        got.append(msg)

    inbox = app.new_inbox()
    await app.subscribe(inbox, cb=gather)
    request = json.dumps({"batch": batch, "expires": 5_000_000_000}).encode()
    await app.publish(f"{PREFIX}.CONSUMER.MSG.NEXT.S.C", request, reply=inbox)
    return got


async def consumer_state(app: Client, done) -> ConsumerInfo:
    js = app.jetstream(prefix=PREFIX)
    return await eventually(lambda: js.consumer_info("S", "C"), done, what="the consumer's state")


async def test_stream_info_and_consumer_create_through_the_prefix(server: Start) -> None:
    target = await server(accounts(""))
    app = await connect(target, "app")
    try:
        js = app.jetstream(prefix=PREFIX)
        created = await js.add_stream(name="S", subjects=["s.>"])
        assert created.config.name == "S"
        consumer = await js.add_consumer("S", durable_name="C", ack_policy="explicit")
        assert (consumer.stream_name, consumer.name) == ("S", "C")
        owner = await connect(target, "js")
        try:
            ack = await owner.jetstream().publish("s.1", b"one")
        finally:
            await owner.close()
        assert (ack.stream, ack.seq) == ("S", 1)
        info = await js.stream_info("S")
        assert (info.config.name, info.state.messages) == ("S", 1)
        names = [c.name for c in await js.consumers_info("S")]
        assert names == ["C"]
    finally:
        await app.close()


async def test_singleton_import_delivers_the_first_message_of_a_batch(server: Start) -> None:
    target = await server(accounts(""))
    app = await connect(target, "app")
    try:
        await stream_of_three(target, app)
        got = await pull(app, 3)
        # The consumer hands out all three; only the first finds the request's reply mapping.
        state = await consumer_state(app, lambda c: c.delivered.stream_seq == 3 and c.num_ack_pending == 3)
        assert (state.delivered.consumer_seq, state.num_pending) == (3, 0)
        await app.flush()
        assert [(m.subject, m.data) for m in got] == [("s.0", b"m0")]
        assert got[0].reply.startswith("$JS.ACK.S.C.1.1.1.")
    finally:
        await app.close()


async def test_stream_import_delivers_the_whole_batch(server: Start) -> None:
    target = await server(accounts("stream"))
    app = await connect(target, "app")
    try:
        await stream_of_three(target, app)
        got = await pull(app, 3)
        await eventually(lambda: _count(got), lambda n: n == 3, what="three deliveries")
        assert [(m.subject, m.data) for m in got] == [("s.0", b"m0"), ("s.1", b"m1"), ("s.2", b"m2")]
        assert [m.reply.split(".")[4:7] for m in got] == [["1", "1", "1"], ["1", "2", "2"], ["1", "3", "3"]]
        state = await consumer_state(app, lambda c: c.num_ack_pending == 3)
        assert (state.delivered.stream_seq, state.num_pending) == (3, 0)
    finally:
        await app.close()


@pytest.mark.parametrize("response_type", ["", "stream"])
async def test_acks_through_the_imported_ack_subject(server: Start, response_type: str) -> None:
    target = await server(accounts(response_type))
    app = await connect(target, "app")
    try:
        await stream_of_three(target, app)
        got = await pull(app, 3)
        expected = 3 if response_type else 1
        await consumer_state(app, lambda c: c.delivered.stream_seq == 3 and c.num_ack_pending == 3)
        await eventually(lambda: _count(got), lambda n: n == expected, what="the deliveries")
        for msg in got:
            await msg.ack_sync()
        state = await consumer_state(app, lambda c: c.num_ack_pending == 3 - expected)
        assert state.ack_floor.stream_seq == expected
    finally:
        await app.close()


@pytest.mark.parametrize("response_type", ["", "stream"])
async def test_a_pull_waits_on_the_requesters_own_interest(server: Start, response_type: str) -> None:
    """The consumer sees the ``_R_`` reply, but the request ends when the requester's inbox goes."""
    target = await server(accounts(response_type))
    app = await connect(target, "app")
    try:
        js = app.jetstream(prefix=PREFIX)
        await js.add_stream(name="S", subjects=["s.>"])
        await js.add_consumer("S", durable_name="C", ack_policy="explicit")
        inbox = app.new_inbox()
        sub = await app.subscribe(inbox)
        request = json.dumps({"batch": 1, "expires": 30_000_000_000}).encode()
        await app.publish(f"{PREFIX}.CONSUMER.MSG.NEXT.S.C", request, reply=inbox)
        await consumer_state(app, lambda c: c.num_waiting == 1)
        await sub.unsubscribe()
        await app.flush()
        owner = await connect(target, "js")
        try:
            await owner.jetstream().publish("s.1", b"one")
        finally:
            await owner.close()
        state = await consumer_state(app, lambda c: c.num_pending == 1 and c.num_waiting == 0)
        assert (state.delivered.stream_seq, state.num_ack_pending) == (0, 0)
    finally:
        await app.close()


async def test_push_deliveries_through_the_stream_import(server: Start) -> None:
    target = await server(accounts(""))
    app = await connect(target, "app")
    try:
        got: list[Msg] = []

        async def gather(msg: Msg) -> None:
            got.append(msg)

        await app.subscribe("deliver.app", cb=gather)
        await app.flush()
        js = app.jetstream(prefix=PREFIX)
        await js.add_stream(name="S", subjects=["s.>"])
        await js.add_consumer("S", durable_name="C", ack_policy="explicit", deliver_subject="deliver.app")
        owner = await connect(target, "js")
        try:
            await owner.jetstream().publish("s.1", b"one")
        finally:
            await owner.close()
        await eventually(lambda: _count(got), lambda n: n == 1, what="the push delivery")
        assert (got[0].subject, got[0].data) == ("s.1", b"one")
        await got[0].ack_sync()
        state = await consumer_state(app, lambda c: c.num_ack_pending == 0)
        assert state.ack_floor.stream_seq == 1
    finally:
        await app.close()


async def _count(got: list[Msg]) -> int:
    return len(got)


async def test_ack_subject_pending_of_a_consumer_whose_filter_was_removed(server: Start) -> None:
    """An update that removes the filter leaves the consumer unsignaled: removals no longer lower its pending.

    nats-server then tells the stream's removals (here by the per-subject
    limit) only to the consumers signaled for the subject, so the pending
    count in the ack subject of a pull through the singleton import still
    counts the two messages the limit removed.
    """
    target = await server(accounts(""))
    app = await connect(target, "app")
    owner = await connect(target, "js")
    try:
        js, own = app.jetstream(prefix=PREFIX), owner.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], max_msgs_per_subject=2)
        await own.publish("s.a", b"a")
        await js.add_consumer("S", durable_name="C", filter_subject="s.>", ack_policy="explicit")
        await own.publish("s.b", b"b0")
        config = {"stream_name": "S", "config": {"durable_name": "C", "ack_policy": "explicit"}}
        updated = json.loads((await app.request(f"{PREFIX}.CONSUMER.CREATE.S.C", json.dumps(config).encode())).data)
        assert (updated["config"].get("filter_subject"), updated["num_pending"]) == (None, 2)
        for index in range(1, 4):
            await own.publish("s.b", b"b%d" % index)  # the last two remove b0 and b1
        assert (await js.stream_info("S")).state.messages == 3
        assert (await js.consumer_info("S", "C")).num_pending == 2
        got = await pull(app, 2)
        state = await consumer_state(app, lambda c: c.num_ack_pending == 2)
        await eventually(lambda: _count(got), lambda n: n == 1, what="the first delivery")
        assert [(m.subject, m.reply.split(".")[4:7], m.reply.split(".")[-1]) for m in got] == [
            ("s.a", ["1", "1", "1"], "1")
        ]
        assert (state.delivered.consumer_seq, state.delivered.stream_seq, state.num_pending) == (2, 4, 0)
    finally:
        await owner.close()
        await app.close()
