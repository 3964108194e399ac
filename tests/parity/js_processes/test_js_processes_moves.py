"""Evacuating a server from a stream or consumer, and cancelling a move, in JetStream across server processes.

Three nodes ``n1``..``n3`` started from flags (see
:mod:`tests.parity.js_processes.test_js_processes`), the same nats-py client code against
nats-server and fakejs processes.  Facts pinned (nats-server 2.15.1):

- ``$JS.API.STREAM.PEER.EVACUATE.<stream>`` has ``PEER.REMOVE``'s refusals:
  an empty request, one without a ``peer`` or with an empty one 10003 ``bad
  request``, a server that is not one of the stream's 10040 ``peer not a
  member``, a missing stream 10059, no free server (an R3 stream on three)
  503 10075 ``peer remap failed``;
- an R1 stream's server evacuated (``{"success": true}``): the stream ends
  on another server with its messages (a ``PEER.REMOVE`` would start it
  there empty);
- ``$JS.API.CONSUMER.PEER.EVACUATE.<stream>.<consumer>``: 10003, 10014 for a
  missing consumer, 10075 for an R3 consumer of an R3 stream; an R1
  consumer's server evacuated: it ends on another of its stream's servers
  with its acknowledgements, and delivers what follows;
- ``$JS.API.STREAM.CANCEL_MOVE.<stream>``: 400 10129 ``stream
  reconfiguration not in progress`` when nothing moves (after an evacuation
  too), 10059 for a missing stream.
"""

from __future__ import annotations

from typing import Any

import pytest
from nats.aio.client import Client

from tests.harness.js_processes import NODES, ask, create, durable, fetch_and_ack, refusal, settled

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

EVACUATE = "$JS.API.STREAM.PEER.EVACUATE."
CANCEL_MOVE = "$JS.API.STREAM.CANCEL_MOVE."
CONSUMER_EVACUATE = "$JS.API.CONSUMER.PEER.EVACUATE."
STREAM_TYPE = "io.nats.jetstream.api.v1.stream_evacuate_peer_response"
CANCEL_TYPE = "io.nats.jetstream.api.v1.stream_cancel_move_response"
CONSUMER_TYPE = "io.nats.jetstream.api.v1.consumer_evacuate_peer_response"


def alone_on(section: dict[str, Any], evacuated: str) -> bool:
    """A group led by one server other than ``evacuated``, with no replicas left."""
    return section.get("leader") not in (None, evacuated) and not section.get("replicas")


async def test_the_refusals_of_evacuations_and_move_cancels(client3: Client) -> None:
    await create(client3, "MOVES", 3)
    await durable(client3, "MOVES", "D")
    info = await ask(client3, "$JS.API.STREAM.INFO.MOVES")
    leader = info["cluster"]["leader"]
    subject = EVACUATE + "MOVES"
    bad = refusal(STREAM_TYPE, 400, 10003, "bad request")
    assert [await ask(client3, subject, body) for body in (None, {}, {"peer": ""})] == [bad] * 3
    assert await ask(client3, subject, {"peer": "n9"}) == refusal(STREAM_TYPE, 400, 10040, "peer not a member")
    missing = refusal(STREAM_TYPE, 404, 10059, "stream not found")
    assert await ask(client3, EVACUATE + "MISSING", {"peer": leader}) == missing
    assert await ask(client3, subject, {"peer": leader}) == refusal(STREAM_TYPE, 503, 10075, "peer remap failed")

    assert await ask(client3, CANCEL_MOVE + "MOVES") == refusal(
        CANCEL_TYPE, 400, 10129, "stream reconfiguration not in progress"
    )
    assert await ask(client3, CANCEL_MOVE + "MISSING") == refusal(CANCEL_TYPE, 404, 10059, "stream not found")

    consumer = CONSUMER_EVACUATE + "MOVES.D"
    assert await ask(client3, consumer) == refusal(CONSUMER_TYPE, 400, 10003, "bad request")
    assert await ask(client3, consumer, {"peer": leader}) == refusal(CONSUMER_TYPE, 503, 10075, "peer remap failed")
    assert await ask(client3, CONSUMER_EVACUATE + "MOVES.X", {"peer": leader}) == refusal(
        CONSUMER_TYPE, 404, 10014, "consumer not found"
    )


async def test_an_r1_stream_and_an_r1_consumer_evacuated_keep_what_they_hold(client3: Client) -> None:
    created = await create(client3, "SOLO", 1)
    (evacuated,) = created["servers"]
    js = client3.jetstream(timeout=10.0)
    for index in range(3):
        await js.publish("SOLO.x", b"m%d" % index)
    assert await ask(client3, EVACUATE + "SOLO", {"peer": evacuated}) == {"type": STREAM_TYPE, "success": True}
    moved = await settled(
        client3, "$JS.API.STREAM.INFO.SOLO", lambda info: alone_on(info.get("cluster") or {}, evacuated), "SOLO moved"
    )
    assert moved["cluster"]["leader"] in NODES - {evacuated}
    assert (moved["state"]["messages"], moved["state"]["last_seq"]) == (3, 3)
    assert await ask(client3, CANCEL_MOVE + "SOLO") == refusal(
        CANCEL_TYPE, 400, 10129, "stream reconfiguration not in progress"
    )

    await create(client3, "SHARED", 3)
    for index in range(3):
        await js.publish("SHARED.x", b"m%d" % index)
    await durable(client3, "SHARED", "ONE", replicas=1)
    assert await fetch_and_ack(client3, "SHARED", "ONE", 1) == [b"m0"]
    info = await ask(client3, "$JS.API.CONSUMER.INFO.SHARED.ONE")
    held_by = info["cluster"]["leader"]
    answer = await ask(client3, CONSUMER_EVACUATE + "SHARED.ONE", {"peer": held_by})
    assert answer == {"type": CONSUMER_TYPE, "success": True}
    consumer = await settled(
        client3,
        "$JS.API.CONSUMER.INFO.SHARED.ONE",
        lambda info: alone_on(info.get("cluster") or {}, held_by),
        "ONE moved",
    )
    assert consumer["cluster"]["leader"] in NODES - {held_by}
    assert (consumer["ack_floor"]["stream_seq"], consumer["num_pending"]) == (1, 2)
    assert await fetch_and_ack(client3, "SHARED", "ONE", 1) == [b"m1"]
