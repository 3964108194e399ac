"""A consumer's pause and pin advisories, on both targets.

Facts pinned (nats-server 2.15.1), on ``$JS.EVENT.ADVISORY.CONSUMER.<kind>.<stream>.<consumer>``:

- ``PAUSE`` (``consumer_pause``: type, id, timestamp, stream, consumer,
  paused, pause_until): after the reply to every create or update of a
  paused consumer (an update keeps the consumer's ``pause_until``), after
  each ``$JS.API.CONSUMER.PAUSE`` (``paused: false`` with Go's zero time for
  a resume), and when the pause runs out (``paused: false`` with the
  deadline that passed);
- ``PINNED`` (``consumer_group_pinned``: type, id, timestamp, account,
  stream, consumer, group, pinned_id -- the ``Nats-Pin-Id`` the client
  got) when a pull of a ``pinned_client`` group is served, and ``UNPINNED``
  (``consumer_group_unpinned``, ``reason: "admin"``) after
  ``$JS.API.CONSUMER.UNPIN``.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from typing import Any

import nats
from nats.aio.msg import Msg

from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually

ADVISORY = "$JS.EVENT.ADVISORY.CONSUMER."
TYPE = "io.nats.jetstream.advisory.v1."
ZERO_TIME = "0001-01-01T00:00:00Z"
FAR = "2099-01-01T00:00:00Z"
_ID = re.compile(r"[0-9A-Za-z]{22}")


class Heard:
    def __init__(self) -> None:
        self.msgs: list[Msg] = []

    async def add(self, msg: Msg) -> None:
        self.msgs.append(msg)

    def on(self, kind: str) -> list[dict[str, Any]]:
        return [json.loads(m.data) for m in self.msgs if m.subject == f"{ADVISORY}{kind}.S.D"]

    async def count(self, kind: str, count: int, timeout: float = WAIT) -> list[dict[str, Any]]:
        return await eventually(
            lambda: asyncio.sleep(0, self.on(kind)), lambda docs: len(docs) >= count, what=kind, timeout=timeout
        )


async def api(nc: nats.NATS, subject: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = json.loads((await nc.request(subject, json.dumps(body).encode(), timeout=WAIT)).data)
    assert "error" not in reply, reply
    return dict(reply)


def pauses(docs: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    for doc in docs:
        assert list(doc) == ["type", "id", "timestamp", "stream", "consumer", "paused", "pause_until"], doc
        assert doc["type"] == TYPE + "consumer_pause" and _ID.fullmatch(doc["id"])
        assert (doc["stream"], doc["consumer"]) == ("S", "D")
    return [(doc["paused"], doc["pause_until"]) for doc in docs]


async def test_pause_advisories(target: Target) -> None:
    nc = await nats.connect(target.url)
    heard = Heard()
    try:
        await nc.subscribe(ADVISORY + ">", cb=heard.add)
        await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        config = {"durable_name": "D", "ack_policy": "explicit", "pause_until": FAR}
        await api(nc, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": config})
        assert pauses(await heard.count("PAUSE", 1)) == [(True, FAR)]
        assert [m.subject.split(".")[4] for m in heard.msgs] == ["CREATED", "PAUSE"]

        update = {"durable_name": "D", "ack_policy": "explicit", "pause_until": "2098-01-01T00:00:00Z"}
        reply = await api(nc, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": update})
        assert reply["config"]["pause_until"] == FAR  # an update keeps the pause
        assert pauses(await heard.count("PAUSE", 2))[1] == (True, FAR)

        await api(nc, "$JS.API.CONSUMER.PAUSE.S.D", {})
        assert pauses(await heard.count("PAUSE", 3))[2] == (False, ZERO_TIME)

        soon = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(math.ceil(time.time()) + 1))
        await api(nc, "$JS.API.CONSUMER.PAUSE.S.D", {"pause_until": soon})
        assert pauses(await heard.count("PAUSE", 4))[3] == (True, soon)
        assert pauses(await heard.count("PAUSE", 5, timeout=WAIT + 2))[4] == (False, soon)
    finally:
        await nc.close()


async def test_pin_and_unpin_advisories(target: Target) -> None:
    nc = await nats.connect(target.url)
    heard = Heard()
    try:
        await nc.subscribe(ADVISORY + ">", cb=heard.add)
        await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        config = {
            "durable_name": "D",
            "ack_policy": "explicit",
            "priority_policy": "pinned_client",
            "priority_groups": ["G"],
            "priority_timeout": 60_000_000_000,
        }
        await api(nc, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": config})
        await nc.publish("s.1", b"x")
        inbox = nc.new_inbox()
        pulled = await nc.subscribe(inbox)
        pull = {"batch": 1, "expires": 5_000_000_000, "group": "G"}
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.D", json.dumps(pull).encode(), reply=inbox)
        msg = await pulled.next_msg(timeout=WAIT)
        assert msg.headers is not None
        pin_id = msg.headers["Nats-Pin-Id"]

        pinned = (await heard.count("PINNED", 1))[0]
        assert list(pinned) == ["type", "id", "timestamp", "account", "stream", "consumer", "group", "pinned_id"]
        assert pinned["type"] == TYPE + "consumer_group_pinned" and _ID.fullmatch(pinned["id"])
        assert (pinned["account"], pinned["stream"], pinned["consumer"]) == ("$G", "S", "D")
        assert (pinned["group"], pinned["pinned_id"]) == ("G", pin_id)

        await api(nc, "$JS.API.CONSUMER.UNPIN.S.D", {"group": "G"})
        unpinned = (await heard.count("UNPINNED", 1))[0]
        assert list(unpinned) == ["type", "id", "timestamp", "account", "stream", "consumer", "group", "reason"]
        assert unpinned["type"] == TYPE + "consumer_group_unpinned"
        assert (unpinned["account"], unpinned["group"], unpinned["reason"]) == ("$G", "G", "admin")
    finally:
        await nc.close()
