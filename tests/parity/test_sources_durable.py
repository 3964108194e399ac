"""Mirrors and sources through a durable sourcing consumer (``consumer: {name, deliver_subject}``), on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* The origin's owner makes the consumer beforehand: a push durable with
  ``ack_policy: flow_control`` (flow control, a heartbeat, ``max_ack_pending``).
  The target stream creates no consumer: it sends an empty
  ``$JS.API.CONSUMER.RESET.<origin>.<consumer>`` (a source with the headers
  ``Nats-Required-Api-Level: 5`` and an empty ``Nats-Stream-Identity``, which
  the answer fills in; a mirror with no headers), then subscribes to the
  consumer's deliver subject.
* Each flow control answer (``Nats-Last-Consumer`` / ``Nats-Last-Stream``)
  acks what was stored: the consumer's ack floor follows, so a work-queue or
  interest origin is emptied; a limits origin keeps its messages.  The
  consumer counts in the origin's ``consumer_count`` (it is not ``direct``).
* A sourced message's ``Nats-Stream-Source`` names the origin as
  ``<origin>:C=<hash of the consumer name>``.
* A missing consumer answers nothing: the info shows no error, ``active: -1``.
* A consumer with another ack policy: ``10217 "stream source consumer
  requires flow control ack policy"`` (a mirror: ``10214 "stream mirror
  consumer requires flow control ack policy"``) in the info block, nothing copied.
* After an unanswered reset (5 s), the deliver subject is watched: the
  consumer made then is found at once, not after the 10 s back-off.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest

from fakejs.gocompat.ids import get_hash
from tests.harness.configured import Start, configured_servers
from tests.harness.feeds import create, get, info, shape, until
from tests.harness.js import SEC, api
from tests.harness.wait import WAIT

CONSUMER = {"name": "D", "deliver_subject": "dlv.D"}
FC_ACK_ERRORS = {
    "mirror": {
        "code": 400,
        "err_code": 10214,
        "description": "stream mirror consumer requires flow control ack policy",
    },
    "sources": {
        "code": 400,
        "err_code": 10217,
        "description": "stream source consumer requires flow control ack policy",
    },
}


CONSUMER_CONFIG: dict[str, Any] = {
    "durable_name": "D",
    "deliver_subject": "dlv.D",
    "ack_policy": "flow_control",
    "flow_control": True,
    "idle_heartbeat": SEC // 4,
    "max_ack_pending": 1000,
}


async def durable(nc: nats.NATS, ack_policy: str = "flow_control") -> dict:
    config = {**CONSUMER_CONFIG, "ack_policy": ack_policy}
    if ack_policy != "flow_control":
        del config["max_ack_pending"]
    reply = await api(nc, "$JS.API.CONSUMER.CREATE.O.D", {"stream_name": "O", "config": config})
    assert "error" not in reply, reply
    return reply


async def origin(nc: nats.NATS, retention: str, ack_policy: str = "flow_control") -> None:
    await create(nc, "O", subjects=["o.>"], retention=retention)
    await durable(nc, ack_policy)
    for i in range(3):
        await nc.publish(f"o.{i}", b"x%d" % i)
    await nc.flush()


async def consumer_info(nc: nats.NATS) -> dict:
    return await api(nc, "$JS.API.CONSUMER.INFO.O.D")


async def consumer_until(nc: nats.NATS, check: Any, deadline: float = 6.0) -> dict:
    end = time.monotonic() + deadline
    while True:
        got = await consumer_info(nc)
        if check(got) or time.monotonic() > end:
            return got
        await asyncio.sleep(0.05)


def floor(ci: dict) -> int:
    return int(ci["ack_floor"]["stream_seq"])


@pytest.mark.parametrize("retention", ["workqueue", "interest", "limits"])
async def test_source_through_a_durable_acks_the_origin(nc, retention: str) -> None:
    requests: list[tuple[str, dict[str, str]]] = []

    async def spy(msg: Any) -> None:
        requests.append((msg.subject, dict(msg.headers or {})))

    await nc.subscribe("$JS.API.CONSUMER.RESET.O.D", cb=spy)
    await origin(nc, retention)
    created = await create(nc, "T", sources=[{"name": "O", "consumer": CONSUMER}])
    assert created["config"]["sources"] == [{"name": "O", "consumer": CONSUMER}]
    got = await until(nc, "T", lambda i: i["state"]["messages"] == 3)
    assert [shape(s) for s in got["sources"]] == [{"name": "O", "lag": 0, "seq": 3, "active": 1}]
    assert requests == [("$JS.API.CONSUMER.RESET.O.D", {"Nats-Required-Api-Level": "5", "Nats-Stream-Identity": ""})]
    first = await get(nc, "T", 1)
    assert first["subject"] == "o.0"
    source = _source_header(first["hdrs"])
    assert source.split(" ")[:5] == [f"O:C={get_hash('D')}", "1", ">", ">", "o.0"]
    # The flow control answers ack what was stored.
    ci = await consumer_until(nc, lambda c: floor(c) == 3)
    assert (floor(ci), ci["num_ack_pending"], ci["push_bound"]) == (3, 0, True)
    kept = {"limits": 3, "workqueue": 0, "interest": 0}[retention]
    state = (await until(nc, "O", lambda i: i["state"]["messages"] == kept))["state"]
    assert (state["messages"], state["consumer_count"]) == (kept, 1)
    await nc.publish("o.9", b"late")
    await until(nc, "T", lambda i: i["state"]["messages"] == 4)
    assert floor(await consumer_until(nc, lambda c: floor(c) == 4)) == 4
    kept += retention == "limits"
    assert (await until(nc, "O", lambda i: i["state"]["messages"] == kept))["state"]["messages"] == kept


def _source_header(hdrs_b64: str) -> str:
    for line in base64.b64decode(hdrs_b64).decode().split("\r\n"):
        if line.startswith("Nats-Stream-Source:"):
            return line.split(":", 1)[1].strip()
    return ""


async def test_mirror_through_a_durable_consumes_a_work_queue(nc) -> None:
    requests: list[tuple[str, Any]] = []

    async def spy(msg: Any) -> None:
        requests.append((msg.subject, msg.headers))

    await nc.subscribe("$JS.API.CONSUMER.RESET.O.D", cb=spy)
    await origin(nc, "workqueue")
    await create(nc, "M", mirror={"name": "O", "consumer": CONSUMER})
    got = await until(nc, "M", lambda i: i["state"]["messages"] == 3)
    assert shape(got["mirror"]) == {"name": "O", "lag": 0, "active": 1}
    assert (got["state"]["first_seq"], got["state"]["last_seq"]) == (1, 3)
    assert requests == [("$JS.API.CONSUMER.RESET.O.D", None)]
    assert (await get(nc, "M", 2))["subject"] == "o.1"
    assert (await until(nc, "O", lambda i: i["state"]["messages"] == 0))["state"]["first_seq"] == 4
    await nc.publish("o.9", b"late")
    got = await until(nc, "M", lambda i: i["state"]["messages"] == 4)
    assert (await get(nc, "M", 4))["subject"] == "o.9"
    assert (await until(nc, "O", lambda i: i["state"]["first_seq"] == 5))["state"]["messages"] == 0


@pytest.mark.parametrize("kind", ["mirror", "sources"])
async def test_missing_durable_shows_nothing(nc, kind: str) -> None:
    asked = asyncio.Event()

    async def spy(msg: Any) -> None:
        asked.set()

    await nc.subscribe("$JS.API.CONSUMER.RESET.O.D", cb=spy)
    await create(nc, "O", subjects=["o.>"])
    await nc.publish("o.1", b"x")
    link: Any = {"name": "O", "consumer": CONSUMER}
    await create(nc, "T", **({"mirror": link} if kind == "mirror" else {"sources": [link]}))
    await asyncio.wait_for(asked.wait(), WAIT)
    await asyncio.sleep(0.3)
    got = await info(nc, "T")
    block = got["mirror"] if kind == "mirror" else got["sources"][0]
    assert block == {"name": "O", "lag": 0, "active": -1}
    assert got["state"]["messages"] == 0
    assert (await info(nc, "O"))["state"]["consumer_count"] == 0


@pytest.mark.parametrize("kind", ["mirror", "sources"])
async def test_durable_without_flow_control_acks_is_refused(nc, kind: str) -> None:
    await origin(nc, "limits", ack_policy="explicit")
    link: Any = {"name": "O", "consumer": CONSUMER}
    await create(nc, "T", **({"mirror": link} if kind == "mirror" else {"sources": [link]}))

    def block(i: dict) -> dict:
        return i["mirror"] if kind == "mirror" else i["sources"][0]

    got = await until(nc, "T", lambda i: "error" in block(i))
    assert block(got) == {"name": "O", "lag": 0, "active": -1, "error": FC_ACK_ERRORS[kind]}
    assert got["state"]["messages"] == 0
    ci = await consumer_info(nc)
    assert (ci["delivered"]["stream_seq"], ci["num_pending"]) == (0, 3)


@pytest.mark.slow
async def test_durable_made_after_the_reset_timed_out_is_found_at_once(nc) -> None:
    """The unanswered reset times out after 5 s; the deliver subject is watched during the 10 s back-off."""
    asked: list[float] = []

    async def spy(msg: Any) -> None:
        asked.append(time.monotonic())

    await nc.subscribe("$JS.API.CONSUMER.RESET.O.D", cb=spy)
    await create(nc, "O", subjects=["o.>"], retention="workqueue")
    await nc.publish("o.1", b"x")
    await create(nc, "T", sources=[{"name": "O", "consumer": CONSUMER}])
    end = time.monotonic() + WAIT
    while not asked and time.monotonic() < end:
        await asyncio.sleep(0.02)
    assert asked
    await asyncio.sleep(max(0.0, asked[0] + 5.4 - time.monotonic()))
    await durable(nc)
    got = await until(nc, "T", lambda i: i["state"]["messages"] == 1, deadline=WAIT)
    assert got["state"]["messages"] == 1
    assert len(asked) == 2 and asked[1] - asked[0] < 7.0


ACCOUNTS = """
accounts {
  A {
    jetstream: enabled
    users: [{user: a, password: a}]
    exports: [
      {service: "$JS.API.>"}
      {service: "$JS.FC.>"}
      {stream: "deliver.A.>"}
    ]
  }
  B {
    jetstream: enabled
    users: [{user: b, password: b}]
    imports: [
      {service: {account: A, subject: "$JS.API.>"}, to: "$JS.A.API.>"}
      {service: {account: A, subject: "$JS.FC.>"}}
      {stream: {account: A, subject: "deliver.A.>"}}
    ]
  }
}
"""


@pytest.fixture
async def server(target_kind: str, tmp_path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path) as start:
        yield start


async def test_external_source_through_a_durable_of_another_account(server: Start) -> None:
    """The reset goes through the exporter's API, the deliveries through its stream export, the acks back by ``$JS.FC``."""
    target = await server(ACCOUNTS)
    a = await nats.connect(f"nats://a:a@{target.host}:{target.port}")
    b = await nats.connect(f"nats://b:b@{target.host}:{target.port}")
    try:
        await create(a, "O", subjects=["o.>"], retention="workqueue")
        config = {**CONSUMER_CONFIG, "deliver_subject": "deliver.A.D"}
        assert "error" not in await api(a, "$JS.API.CONSUMER.CREATE.O.D", {"stream_name": "O", "config": config})
        for i in range(3):
            await a.request(f"o.{i}", b"x%d" % i, timeout=WAIT)
        external = {"api": "$JS.A.API", "deliver": ""}
        link = {"name": "O", "external": external, "consumer": {"name": "D", "deliver_subject": "deliver.A.D"}}
        await create(b, "S", sources=[link])
        got = await until(b, "S", lambda i: i["state"]["messages"] == 3)
        assert [shape(x) for x in got["sources"]] == [
            {"name": "O", "external": external, "lag": 0, "seq": 3, "active": 1}
        ]
        header = _source_header((await get(b, "S", 1))["hdrs"]).split(" ")
        assert header[:5] == [f"O:{get_hash('$JS.A.API')}:C={get_hash('D')}", "1", ">", ">", "o.0"]
        state = (await until(a, "O", lambda i: i["state"]["messages"] == 0, deadline=4.0))["state"]
        assert (state["messages"], state["consumer_count"]) == (0, 1)
    finally:
        await a.close()
        await b.close()
