"""A stream moved to other servers by an update of its placement, the move cancelled, and a consumer's replicas
changed by its update, on both targets.

Nodes ``n1``..``n3`` of cluster ``C``, tagged ``az:1``..``az:3``.  Facts
pinned (nats-server 2.15.1):

- an update that gives the stream another ``placement`` moves it to servers
  drawn for it: the reply carries the new placement, then the stream runs on
  the new server with every message, and its consumer follows with its
  state (delivered and acknowledged);
- the same update with another ``num_replicas`` too is refused: ``400 10123
  can not move and scale a stream in a single update``;
- ``STREAM.CANCEL_MOVE`` of a stream not moving: ``400 10129 stream
  reconfiguration not in progress`` (nats-server may still take a move for
  under way a moment after the stream runs on its new server); of a missing
  stream 10059; of a move
  under way: the stream goes back to its servers and its placement, the
  stream's leader answering with its info (``stream_cancel_move_response``:
  ``config``, ``created``, ``state``, ``cluster``, ``ts``).  Whether a cancel
  sent right after the update finds the move under way is the server's
  timing: either answer is taken, and the stream ends where that answer says;
- a consumer update with another ``num_replicas`` changes its servers: R3
  to R1 (its ``cluster`` section then ``{name, leader}``) and back to R3,
  its delivered and acknowledged state kept.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from nats.aio.client import Client
from nats.errors import TimeoutError as NatsTimeoutError

from tests.harness.js import api
from tests.harness.js_cluster import ELECTION, Cluster, create, on_node, unique
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster

CANCEL_KEYS = ["type", "config", "created", "state", "cluster", "ts"]
NOT_MOVING = {"code": 400, "err_code": 10129, "description": "stream reconfiguration not in progress"}


def config_of(name: str, placement: dict[str, Any], replicas: int = 1) -> dict[str, Any]:
    return {"name": name, "subjects": [f"{name}.>"], "num_replicas": replicas, "placement": placement}


async def info_once(nc: Client, subject: str) -> dict[str, Any]:
    """An info request's reply, ``{}`` while none comes (a leader changing)."""
    with contextlib.suppress(NatsTimeoutError):
        return await api(nc, subject, timeout=2.0)
    return {}


async def stream_on(nc: Client, name: str, server: str, messages: int) -> dict[str, Any]:
    """The stream's info once it runs on ``server`` alone with ``messages`` messages."""

    def there(info: dict[str, Any]) -> bool:
        cluster = info.get("cluster") or {}
        return cluster.get("leader") == server and not cluster.get("replicas") and info["state"]["messages"] == messages

    return await eventually(
        lambda: info_once(nc, f"$JS.API.STREAM.INFO.{name}"), there, what=f"{name} on {server}", timeout=ELECTION
    )


async def on_n1_with(nc: Client, name: str, count: int) -> None:
    """An R1 stream placed by its tag on ``n1``, holding ``count`` messages."""
    await create(nc, name, num_replicas=1, placement={"tags": ["az:1"]})
    await stream_on(nc, name, "n1", 0)
    for number in range(count):
        await nc.request(f"{name}.m", str(number).encode(), timeout=5)


DURABLE = {"durable_name": "D", "ack_policy": "explicit"}


async def durable_with_two_acked(nc: Client, name: str) -> None:
    """The durable ``D`` of the stream, its first two messages delivered and acknowledged."""
    await api(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": DURABLE})
    pulled = await nc.jetstream().pull_subscribe_bind("D", stream=name)
    for message in await pulled.fetch(2, timeout=5):
        await message.ack_sync()
    await pulled.unsubscribe()


async def test_a_placement_change_moves_the_stream_and_its_consumer(js_cluster: Cluster) -> None:
    name = unique("MV")
    async with on_node(js_cluster, 0) as nc:
        await on_n1_with(nc, name, 5)
        await durable_with_two_acked(nc, name)
        updated = await api(nc, f"$JS.API.STREAM.UPDATE.{name}", config_of(name, {"tags": ["az:2"]}))
        assert "error" not in updated, updated
        assert updated["config"]["placement"] == {"tags": ["az:2"]}
        await stream_on(nc, name, "n2", 5)

        def moved(info: dict[str, Any]) -> bool:
            return (info.get("cluster") or {}).get("leader") == "n2"

        consumer = await eventually(
            lambda: info_once(nc, f"$JS.API.CONSUMER.INFO.{name}.D"), moved, what="the consumer on n2", timeout=ELECTION
        )
        assert (consumer["delivered"]["stream_seq"], consumer["ack_floor"]["stream_seq"]) == (2, 2)
        assert (consumer["num_pending"], consumer["num_ack_pending"]) == (3, 0)


async def test_a_move_and_a_scale_in_one_update_are_refused(js_cluster: Cluster) -> None:
    name = unique("MS")
    async with on_node(js_cluster, 1) as nc:
        await create(nc, name, num_replicas=1, placement={"tags": ["az:1"]})
        refused = await api(nc, f"$JS.API.STREAM.UPDATE.{name}", config_of(name, {"tags": ["az:2"]}, replicas=3))
        assert refused["error"] == {
            "code": 400,
            "err_code": 10123,
            "description": "can not move and scale a stream in a single update",
        }
        missing = await api(nc, f"$JS.API.STREAM.CANCEL_MOVE.{unique('NO')}")
        assert missing["error"]["err_code"] == 10059


async def test_a_move_cancelled_goes_back(js_cluster: Cluster) -> None:
    name = unique("MC")
    async with on_node(js_cluster, 2) as nc:
        await on_n1_with(nc, name, 3)
        await api(nc, f"$JS.API.STREAM.UPDATE.{name}", config_of(name, {"tags": ["az:3"]}))
        cancelled = await api(nc, f"$JS.API.STREAM.CANCEL_MOVE.{name}")
        if "error" in cancelled:  # the move was over before the cancel came
            assert cancelled["error"] == NOT_MOVING
            info = await stream_on(nc, name, "n3", 3)
            assert info["config"]["placement"] == {"tags": ["az:3"]}
            return
        assert list(cancelled) == CANCEL_KEYS, cancelled
        assert cancelled["type"] == "io.nats.jetstream.api.v1.stream_cancel_move_response"
        assert cancelled["config"]["placement"] == {"tags": ["az:1"]}
        assert cancelled["state"]["messages"] == 3
        info = await stream_on(nc, name, "n1", 3)
        assert info["config"]["placement"] == {"tags": ["az:1"]}


async def test_a_consumer_scaled_down_and_up_again_keeps_its_state(js_cluster: Cluster) -> None:
    name = unique("CS")
    async with on_node(js_cluster, 0) as nc:
        await create(nc, name, num_replicas=3)
        for number in range(4):
            await nc.request(f"{name}.m", str(number).encode(), timeout=5)
        await durable_with_two_acked(nc, name)
        for replicas, keys in ((1, ["name", "leader"]), (3, None)):
            body = {"stream_name": name, "action": "update", "config": {**DURABLE, "num_replicas": replicas}}
            updated = await api(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", body)
            assert updated["config"]["num_replicas"] == replicas, updated

            def scaled(info: dict[str, Any], keys: list[str] | None = keys) -> bool:
                section = info.get("cluster") or {}
                if keys is not None:
                    return list(section) == keys
                return bool(section.get("leader")) and len(section.get("replicas") or []) == 2

            info = await eventually(
                lambda: info_once(nc, f"$JS.API.CONSUMER.INFO.{name}.D"), scaled, what=f"R{replicas}", timeout=ELECTION
            )
            assert (info["delivered"]["stream_seq"], info["ack_floor"]["stream_seq"], info["num_pending"]) == (2, 2, 2)
