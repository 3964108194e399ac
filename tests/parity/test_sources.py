"""Sources at run time, on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* Each sourced message keeps its subject (or the source's transform of it) and
  headers, and gains ``Nats-Stream-Source: <origin> <seq> <filter> <dest> <subject> <identity>``
  (``>`` for no filter / no transform, the identity being the origin's).
* STREAM.INFO lists ``sources`` in Go map order (so in any order; fakejs keeps
  config order): ``{name, lag, seq?, active,
  filter_subject?, subject_transforms?, error?}``; ``seq`` is the last origin
  sequence taken; a missing origin shows error 10059.
* A limits origin's sourcing consumer is invisible; a work-queue origin's is a
  visible durable (``consumer_count`` 1) that consumes the messages.
* ``Nats-Msg-Id`` dedup applies in the target's duplicate window; the target's
  own subjects still take publishes; sources may be added and removed on update.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest

from tests.harness.feeds import create, get, info, shape, source_header, until
from tests.harness.js import api
from tests.harness.wait import WAIT


def unordered(infos: Iterable[dict]) -> list[str]:
    """Source infos as a sorted list: nats-server lists them in Go map order."""
    return sorted(json.dumps(info, sort_keys=True) for info in infos)


async def test_sources_with_filters_and_transforms(nc) -> None:
    await create(nc, "A", subjects=["a.>"])
    await create(nc, "B", subjects=["b.>"])
    for i in range(3):
        await nc.request(f"a.{i}", b"x%d" % i, timeout=WAIT)
        await nc.request(f"b.{i}", b"y%d" % i, timeout=WAIT)
    created = await create(
        nc,
        "T",
        subjects=["t.>"],
        sources=[
            {"name": "A", "filter_subject": "a.1"},
            {"name": "A", "subject_transforms": [{"src": "a.2", "dest": "x.2"}]},
            {"name": "B"},
        ],
    )
    assert unordered(shape(s) for s in created["sources"]) == unordered(
        [
            {"name": "A", "lag": 0, "active": -1, "filter_subject": "a.1"},
            {"name": "A", "lag": 0, "active": -1, "subject_transforms": [{"src": "a.2", "dest": "x.2"}]},
            {"name": "B", "lag": 0, "active": -1},
        ]
    )
    got = await until(nc, "T", lambda i: i["state"]["messages"] == 5)
    assert unordered(shape(s) for s in got["sources"]) == unordered(
        [
            {"name": "A", "lag": 0, "seq": 2, "active": 1, "filter_subject": "a.1"},
            {"name": "A", "lag": 0, "seq": 3, "active": 1, "subject_transforms": [{"src": "a.2", "dest": "x.2"}]},
            {"name": "B", "lag": 0, "seq": 3, "active": 1},
        ]
    )
    headers = {}
    for seq in range(1, 6):
        msg = await get(nc, "T", seq)
        headers[msg["subject"]] = source_header(msg).rsplit(" ", 1)[0]
    assert headers == {
        "a.1": "A 2 a.1 > a.1",
        "x.2": "A 3 a.2 x.2 a.2",
        "b.0": "B 1 > > b.0",
        "b.1": "B 2 > > b.1",
        "b.2": "B 3 > > b.2",
    }
    assert (await nc.request("t.own", b"z", timeout=WAIT)).data == b'{"stream":"T","seq":6}'
    assert (await api(nc, "$JS.API.CONSUMER.NAMES.A"))["consumers"] == []


@pytest.mark.slow
async def test_source_dedup_and_identity(nc) -> None:
    await create(nc, "A", subjects=["a.>"])
    await create(nc, "B", subjects=["b.>"])
    await nc.request("a.1", b"1", headers={"Nats-Msg-Id": "same"}, timeout=WAIT)
    await nc.request("b.1", b"2", headers={"Nats-Msg-Id": "same"}, timeout=WAIT)
    await nc.request("b.2", b"3", timeout=WAIT)
    await create(nc, "T", sources=[{"name": "A"}, {"name": "B"}], duplicate_window=60_000_000_000)
    got = await until(nc, "T", lambda i: i["state"]["last_seq"] == 2 and all(s.get("seq") for s in i["sources"]))
    assert got["state"]["messages"] == 2
    msg = await get(nc, "T", 1)
    ident = source_header(msg).rsplit(" ", 1)[1]
    assert len(ident) == 8


async def test_work_queue_origin_is_consumed(nc) -> None:
    await create(nc, "W", subjects=["w.>"], retention="workqueue")
    for i in range(3):
        await nc.request(f"w.{i}", b"x", timeout=WAIT)
    await create(nc, "T", subjects=["t.>"], sources=[{"name": "W"}])
    await until(nc, "T", lambda i: i["state"]["messages"] == 3)
    origin = await until(nc, "W", lambda i: i["state"]["messages"] == 0)
    assert origin["state"]["messages"] == 0 and origin["state"]["consumer_count"] == 1
    names = (await api(nc, "$JS.API.CONSUMER.NAMES.W"))["consumers"]
    assert len(names) == 1 and names[0].startswith("JS_SRC_")


async def test_missing_origin_and_update(nc) -> None:
    await create(nc, "A", subjects=["a.>"])
    await nc.request("a.1", b"x", timeout=WAIT)
    await create(nc, "T", subjects=["t.>"], sources=[{"name": "Z"}])
    got = await until(nc, "T", lambda i: "error" in i["sources"][0])
    assert got["sources"] == [
        {
            "name": "Z",
            "lag": 0,
            "active": -1,
            "error": {"code": 404, "err_code": 10059, "description": "stream not found"},
        }
    ]
    reply = await api(
        nc,
        "$JS.API.STREAM.UPDATE.T",
        {"name": "T", "subjects": ["t.>"], "storage": "memory", "sources": [{"name": "A"}]},
    )
    assert "error" not in reply, reply
    got = await until(nc, "T", lambda i: i["state"]["messages"] == 1)
    assert [shape(s) for s in got["sources"]] == [{"name": "A", "lag": 0, "seq": 1, "active": 1}]
    reply = await api(nc, "$JS.API.STREAM.UPDATE.T", {"name": "T", "subjects": ["t.>"], "storage": "memory"})
    assert "sources" not in reply
    await nc.request("a.2", b"y", timeout=WAIT)
    got = await info(nc, "T")
    assert "sources" not in got and got["state"]["messages"] == 1
