"""Mirrors at run time, on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* A mirror keeps the origin's sequences, subjects, headers and timestamps;
  a deleted origin message is a deleted sequence in the mirror too
  (``first_seq``, ``last_seq``, ``num_deleted`` match).
* ``filter_subject``, ``subject_transforms`` and ``opt_start_seq`` shape what is copied.
* STREAM.INFO has ``mirror: {name, lag, active[, filter_subject][, subject_transforms][, error]}``
  (no ``seq``); ``active`` is -1 before any contact, nanoseconds since the last one after.
  A missing origin shows ``error`` 10059 "stream not found".
* The mirror's consumer on a limits origin is direct: not in CONSUMER.NAMES, not in ``consumer_count``.
* A mirror has no subjects: a publish on its name reaches nobody (no responders).
* ``mirror_direct``: the mirror answers Direct Get for its origin once caught up.
* A mirror of a mirror carries the same messages; promoting a mirror (update
  without ``mirror``) stops the copying and its own subject accepts publishes.
"""

from __future__ import annotations

import asyncio
import base64

import nats
import pytest

from tests.harness.feeds import create, get, info, shape, until
from tests.harness.js import api
from tests.harness.wait import WAIT


def without_time(state: dict) -> dict:
    return {k: v for k, v in state.items() if not k.endswith("_ts")}


async def test_mirror_copies_sequences_headers_and_times(nc) -> None:
    await create(nc, "O", subjects=["o.>"])
    for i in range(5):
        await nc.request(f"o.{i}", b"x%d" % i, headers={"H": "v"}, timeout=WAIT)
    await api(nc, "$JS.API.STREAM.MSG.DELETE.O", {"seq": 2})
    created = await create(nc, "M", mirror={"name": "O"})
    assert created["mirror"] == {"name": "O", "lag": 0, "active": -1}
    got = await until(nc, "M", lambda i: i["state"]["last_seq"] == 5)
    origin = await info(nc, "O")
    assert got["state"] == {**origin["state"], "consumer_count": 0}
    assert shape(got["mirror"]) == {"name": "O", "lag": 0, "active": 1}
    assert list(got)[-2:] == ["mirror", "ts"]
    for seq in (1, 3, 5):
        assert await get(nc, "M", seq) == await get(nc, "O", seq)
    names = await api(nc, "$JS.API.CONSUMER.NAMES.O")
    assert names["consumers"] == [] and origin["state"]["consumer_count"] == 0
    # Later publishes follow.
    await nc.request("o.9", b"late", timeout=WAIT)
    got = await until(nc, "M", lambda i: i["state"]["last_seq"] == 6)
    assert (await get(nc, "M", 6))["data"] == base64.b64encode(b"late").decode()
    with pytest.raises(nats.errors.NoRespondersError):
        await nc.request("M", b"x", timeout=1)


async def test_mirror_filter_transforms_and_start(nc) -> None:
    await create(nc, "O", subjects=["o.>"])
    for subject in ("o.a", "o.b", "o.a", "o.c", "o.a"):
        await nc.request(subject, b"x", timeout=WAIT)
    await create(nc, "F", mirror={"name": "O", "filter_subject": "o.a"})
    await create(nc, "T", mirror={"name": "O", "subject_transforms": [{"src": "o.b", "dest": "t.b"}]})
    await create(nc, "S", mirror={"name": "O", "opt_start_seq": 3})
    f = await until(nc, "F", lambda i: i["state"]["last_seq"] == 5)
    assert without_time(f["state"]) == {
        "messages": 3,
        "bytes": f["state"]["bytes"],
        "first_seq": 1,
        "last_seq": 5,
        "num_subjects": 1,
        "num_deleted": 2,
        "consumer_count": 0,
    }
    assert shape(f["mirror"]) == {"name": "O", "lag": 0, "active": 1, "filter_subject": "o.a"}
    t = await until(nc, "T", lambda i: i["state"]["last_seq"] == 2)
    assert t["state"]["messages"] == 1 and (await get(nc, "T", 2))["subject"] == "t.b"
    assert shape(t["mirror"]) == {
        "name": "O",
        "lag": 0,
        "active": 1,
        "subject_transforms": [{"src": "o.b", "dest": "t.b"}],
    }
    s = await until(nc, "S", lambda i: i["state"]["last_seq"] == 5)
    assert (s["state"]["first_seq"], s["state"]["messages"]) == (3, 3)


async def test_mirror_of_missing_origin_shows_the_error(nc) -> None:
    await create(nc, "M", mirror={"name": "NOPE"})
    got = await until(nc, "M", lambda i: "error" in i["mirror"])
    assert got["mirror"] == {
        "name": "NOPE",
        "lag": 0,
        "active": -1,
        "error": {"code": 404, "err_code": 10059, "description": "stream not found"},
    }


async def test_mirror_direct_and_mirror_of_mirror(nc) -> None:
    await create(nc, "O", subjects=["o.>"], allow_direct=True)
    for i in range(3):
        await nc.request(f"o.{i}", b"x%d" % i, timeout=WAIT)
    await create(nc, "M", mirror={"name": "O"}, mirror_direct=True)
    await create(nc, "MM", mirror={"name": "M"})
    mm = await until(nc, "MM", lambda i: i["state"]["last_seq"] == 3)
    assert mm["state"]["messages"] == 3
    await until(nc, "M", lambda i: i["state"]["last_seq"] == 3)
    # Delete the origin's Direct Get responder: the mirror still answers for it.
    await api(nc, "$JS.API.STREAM.UPDATE.O", {"name": "O", "subjects": ["o.>"], "storage": "memory"})
    reply = await nc.request("$JS.API.DIRECT.GET.O", b'{"seq":2}', timeout=WAIT)
    assert reply.data == b"x1" and reply.headers["Nats-Stream"] == "M"


async def test_promoting_a_mirror_stops_the_copy(nc) -> None:
    await create(nc, "O", subjects=["o.>"])
    await nc.request("o.1", b"x", timeout=WAIT)
    await create(nc, "M", mirror={"name": "O"})
    await until(nc, "M", lambda i: i["state"]["last_seq"] == 1)
    reply = await api(nc, "$JS.API.STREAM.UPDATE.M", {"name": "M", "storage": "memory"})
    assert "error" not in reply, reply
    assert "mirror" not in reply
    await nc.request("o.2", b"y", timeout=WAIT)
    ack = await nc.request("M", b"own", timeout=WAIT)
    assert ack.data == b'{"stream":"M","seq":2}'
    await asyncio.sleep(0.3)
    got = await info(nc, "M")
    assert got["state"]["last_seq"] == 2 and "mirror" not in got
