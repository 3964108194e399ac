"""A counter stream sourcing counter streams (``allow_msg_counter`` on both ends), on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* A sourced counter message is not an increment to apply: the target takes
  the origin's total (``{"val":..}``), adds what changed since the last total
  it saw from that origin and subject, rewrites ``Nats-Incr`` to that change
  and keeps every origin's last total in ``Nats-Counter-Sources``
  (``{"<origin>":{"<subject>":"<total>"}}``, keys sorted), carried on to the
  subject's next messages, local increments included.
* A stream without counters stores a sourced counter message as it came.
"""

from __future__ import annotations

import base64
import json

from tests.harness.feeds import create, get, until
from tests.harness.js import api
from tests.harness.wait import WAIT


def headers(msg: dict) -> dict[str, str]:
    block = base64.b64decode(msg.get("hdrs", "")).decode()
    return dict(line.split(": ", 1) for line in block.split("\r\n")[1:] if ": " in line)


async def incr(nc, subject: str, value: str) -> dict:
    reply = await nc.request(subject, b"", headers={"Nats-Incr": value}, timeout=WAIT)
    return json.loads(reply.data)


async def test_counter_sources_aggregate(nc) -> None:
    await create(nc, "A", subjects=["c.a"], allow_msg_counter=True)
    await create(nc, "B", subjects=["c.b"], allow_msg_counter=True)
    await incr(nc, "c.a", "5")
    await incr(nc, "c.a", "2")
    await incr(nc, "c.b", "10")
    transforms = [{"src": "c.*", "dest": "t"}]
    await create(
        nc,
        "T",
        subjects=["t"],
        allow_msg_counter=True,
        sources=[{"name": "A", "subject_transforms": transforms}, {"name": "B", "subject_transforms": transforms}],
    )
    await until(nc, "T", lambda i: i["state"]["messages"] == 3)
    msgs = [await get(nc, "T", seq) for seq in (1, 2, 3)]  # the two sources' messages interleave freely
    assert [list(headers(m)) for m in msgs] == [["Nats-Incr", "Nats-Stream-Source", "Nats-Counter-Sources"]] * 3
    assert sum(int(headers(m)["Nats-Incr"]) for m in msgs) == 17
    assert value(msgs[2]) == b'{"val":"17"}'
    assert headers(msgs[2])["Nats-Counter-Sources"] == '{"A":{"c.a":"7"},"B":{"c.b":"10"}}'
    assert (await incr(nc, "t", "1"))["val"] == "18"  # a local increment carries the origins' totals on
    assert headers(await get(nc, "T", 4)) == {
        "Nats-Incr": "1",
        "Nats-Counter-Sources": '{"A":{"c.a":"7"},"B":{"c.b":"10"}}',
    }
    await incr(nc, "c.a", "-3")
    await until(nc, "T", lambda i: i["state"]["messages"] == 5)
    fifth = await get(nc, "T", 5)
    assert value(fifth) == b'{"val":"15"}'
    assert headers(fifth)["Nats-Incr"] == "-3"
    assert headers(fifth)["Nats-Stream-Source"].startswith("A 3 c.* t c.a ")
    assert headers(fifth)["Nats-Counter-Sources"] == '{"A":{"c.a":"4"},"B":{"c.b":"10"}}'


async def test_a_plain_stream_stores_sourced_counters_as_they_came(nc) -> None:
    await create(nc, "A", subjects=["c.a"], allow_msg_counter=True)
    await incr(nc, "c.a", "5")
    await incr(nc, "c.a", "-3")
    await create(nc, "P", subjects=["p"], sources=[{"name": "A"}])
    await until(nc, "P", lambda i: i["state"]["messages"] == 2)
    second = await get(nc, "P", 2)
    assert value(second) == b'{"val":"2"}'
    assert list(headers(second)) == ["Nats-Incr", "Nats-Stream-Source"]
    assert headers(second)["Nats-Incr"] == "-3"
    reply = await api(nc, "$JS.API.STREAM.INFO.P")
    assert reply["sources"][0]["seq"] == 2 and "error" not in reply["sources"][0]


def value(msg: dict) -> bytes:
    return base64.b64decode(msg["data"])
