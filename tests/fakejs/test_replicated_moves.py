"""A stream's move under way, on a manual clock: it refuses another move or a change of replicas, and a cancel
takes the stream back to its server and placement with every message (fakejs only: on nats-server how long a
move stays under way is its own timing; tests/parity/test_js_cluster_moves.py runs the moves on both)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest

from fakejs import Cluster, ManualClock
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.fake_only]

TAGS = (("az:1",), ("az:2",), ("az:3",))


async def api(nc: Any, subject: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    payload = b"" if body is None else json.dumps(body).encode()
    answer: dict[str, Any] = json.loads((await nc.request(subject, payload, timeout=2)).data)
    return answer


def config(placement: str, replicas: int = 1) -> dict[str, Any]:
    return {"name": "S", "subjects": ["s.>"], "num_replicas": replicas, "placement": {"tags": [placement]}}


async def test_a_move_under_way_refuses_another_and_a_cancel_takes_it_back() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=4, tags=TAGS) as cluster:
        nc = await nats.connect(cluster.url("n1"))
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", config("az:1"))
            assert created["cluster"]["leader"] == "n1", created
            for number in range(3):
                await nc.request("s.x", b"%d" % number, timeout=2)
            moving = await api(nc, "$JS.API.STREAM.UPDATE.S", config("az:2"))
            assert moving["config"]["placement"] == {"tags": ["az:2"]}, moving
            for refused in (config("az:3"), config("az:2", replicas=3)):
                answer = await api(nc, "$JS.API.STREAM.UPDATE.S", refused)
                assert answer["error"] == {
                    "code": 400,
                    "err_code": 10124,
                    "description": "stream move already in progress",
                }

            cancelled = await api(nc, "$JS.API.STREAM.CANCEL_MOVE.S")
            assert cancelled["type"] == "io.nats.jetstream.api.v1.stream_cancel_move_response", cancelled
            assert (cancelled["config"]["placement"], cancelled["state"]["messages"]) == ({"tags": ["az:1"]}, 3)

            async def info() -> dict[str, Any]:
                clock.advance(0.5)
                await asyncio.sleep(0.01)
                return await api(nc, "$JS.API.STREAM.INFO.S")

            def back(doc: dict[str, Any]) -> bool:
                cluster_section = doc.get("cluster") or {}
                return cluster_section.get("leader") == "n1" and not cluster_section.get("replicas")

            settled = await eventually(info, back, what="the stream back on n1")
            assert (settled["state"]["messages"], settled["config"]["placement"]) == (3, {"tags": ["az:1"]})
            again = await api(nc, "$JS.API.STREAM.CANCEL_MOVE.S")
            assert again["error"]["err_code"] == 10129
        finally:
            await nc.close()
        assert cluster.errors == []
