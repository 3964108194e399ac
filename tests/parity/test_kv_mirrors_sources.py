"""Key-Value and object store buckets fed by streams, through nats-py 2.16, on both targets.

nats-py has no mirror or sources option on ``create_key_value``; it does what
the other clients' KV code does: the bucket's stream is created with
``add_stream`` in the KV shape, with ``mirror`` (a read replica) or
``sources`` (an aggregate), and nats-py's own ``KeyValue`` reads it.
Expectations were read off nats-server 2.15.1.  Facts pinned here:

* A sourced bucket (``KV_ALL`` with ``sources`` from ``KV_EAST`` and ``KV_WEST``,
  each with a ``$KV.<origin>.>`` -> ``$KV.ALL.>`` transform) serves every key put
  into either origin through nats-py's ``get``, ``keys`` and ``history``;
  deletes and purges (``KV-Operation`` headers) arrive as they were written.
  Each sourced message carries ``Nats-Stream-Source``.
* A mirrored bucket (``KV_REPLICA`` mirroring ``KV_EAST`` with ``mirror_direct``)
  keeps the origin's sequences (revisions), so nats-py's ``KeyValue`` bound to the
  replica stream with the origin's ``$KV.EAST.`` prefix reads the same entries
  and revisions; with ``mirror_direct`` the replica also answers Direct Gets
  addressed to itself.
* KV republish (nats-py's ``republish=RePublish(...)``) sends each put to the
  republish destination with the ``Nats-Stream``/``Nats-Subject``/... headers,
  and ``headers_only`` sends the size instead of the value.
* An object store bucket mirrored by another stream holds the same chunk and
  meta messages under the same sequences.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import nats
import nats.js.api as jsapi
import nats.js.errors as jserrors
import pytest
from nats.js.kv import KeyValue

from tests.harness.js import api
from tests.harness.wait import WAIT

DEADLINE = 5.0


async def eventually(check: Callable[[], Awaitable[bool]], deadline: float = DEADLINE) -> None:
    """Poll until ``check`` holds: stream feeding is asynchronous on nats-server."""
    end = time.monotonic() + deadline
    while not await check():
        assert time.monotonic() < end, "timed out waiting for the streams to catch up"
        await asyncio.sleep(0.02)


async def last_seq(nc: nats.NATS, stream: str) -> int:
    info = await api(nc, f"$JS.API.STREAM.INFO.{stream}")
    assert "error" not in info, info
    return int(info["state"]["last_seq"])


async def caught_up(nc: nats.NATS, stream: str, seq: int) -> None:
    async def done() -> bool:
        return await last_seq(nc, stream) >= seq

    await eventually(done)


def kv_stream(name: str, **extra: object) -> jsapi.StreamConfig:
    """A bucket's stream in the shape nats-py's ``create_key_value`` gives it."""
    return jsapi.StreamConfig(
        name=name,
        allow_rollup_hdrs=True,
        allow_direct=True,
        deny_delete=True,
        discard=jsapi.DiscardPolicy.NEW,
        duplicate_window=120,
        max_consumers=-1,
        max_msgs=-1,
        max_msgs_per_subject=5,
        max_msg_size=-1,
        num_replicas=1,
        storage=jsapi.StorageType.MEMORY,
        **extra,  # type: ignore[arg-type]
    )


def origin_source(bucket: str, into: str) -> jsapi.StreamSource:
    transform = jsapi.SubjectTransform(src=f"$KV.{bucket}.>", dest=f"$KV.{into}.>")
    return jsapi.StreamSource(name=f"KV_{bucket}", subject_transforms=[transform])


async def test_sourced_bucket_aggregates_two_buckets(nc: nats.NATS) -> None:
    js = nc.jetstream()
    east = await js.create_key_value(bucket="EAST", history=5, direct=True)
    west = await js.create_key_value(bucket="WEST", history=5, direct=True)
    await js.add_stream(
        kv_stream(
            "KV_ALL", subjects=["$KV.ALL.>"], sources=[origin_source("EAST", "ALL"), origin_source("WEST", "ALL")]
        )
    )
    aggregate = await js.key_value("ALL")
    await east.put("e1", b"one")
    await west.put("w1", b"two")
    await east.put("e1", b"three")
    await west.delete("w1")
    await caught_up(nc, "KV_ALL", 4)
    assert (await aggregate.get("e1")).value == b"three"
    with pytest.raises(jserrors.KeyNotFoundError) as deleted:
        await aggregate.get("w1")
    assert deleted.value.op == "DEL"
    assert sorted(await aggregate.keys()) == ["e1"]
    assert [entry.value for entry in await aggregate.history("e1")] == [b"one", b"three"]
    # The aggregate's own subjects still take writes.
    await aggregate.put("local", b"mine")
    assert (await aggregate.get("local")).value == b"mine"
    raw = await nc.request("$JS.API.DIRECT.GET.KV_ALL.$KV.ALL.e1", b"")
    assert raw.headers is not None
    assert raw.headers["Nats-Stream-Source"].startswith("KV_EAST ")
    assert raw.headers["Nats-Subject"] == "$KV.ALL.e1"


async def test_mirrored_bucket_is_a_read_replica(nc: nats.NATS) -> None:
    js = nc.jetstream()
    east = await js.create_key_value(bucket="EAST", history=5, direct=True)
    await east.put("k", b"v1")
    await east.put("k", b"v2")
    await east.put("other", b"x")
    await js.add_stream(kv_stream("KV_REPLICA", mirror=jsapi.StreamSource(name="KV_EAST"), mirror_direct=True))
    await caught_up(nc, "KV_REPLICA", 3)
    info = await api(nc, "$JS.API.STREAM.INFO.KV_REPLICA")
    assert info["config"]["mirror"] == {"name": "KV_EAST"}
    assert info["config"]["mirror_direct"] is True
    assert "subjects" not in info["config"]
    replica = KeyValue(name="EAST", stream="KV_REPLICA", pre="$KV.EAST.", js=js, direct=True)
    entry = await replica.get("k")
    assert (entry.key, entry.value, entry.revision) == ("k", b"v2", 2)
    assert (await replica.get("k", revision=1)).value == b"v1"
    assert sorted(await replica.keys()) == ["k", "other"]
    # Direct Get addressed to the replica itself.
    raw = await nc.request("$JS.API.DIRECT.GET.KV_REPLICA.$KV.EAST.k", b"")
    assert raw.data == b"v2"
    assert raw.headers is not None and raw.headers["Nats-Stream"] == "KV_REPLICA"
    # Later writes reach the replica, deletes included.
    await east.delete("other")
    await caught_up(nc, "KV_REPLICA", 4)
    with pytest.raises(jserrors.KeyNotFoundError) as deleted:
        await replica.get("other")
    assert (deleted.value.op, deleted.value.entry.revision) == ("DEL", 4)


async def test_kv_republish(nc: nats.NATS) -> None:
    js = nc.jetstream()
    full = await nc.subscribe("repub.>")
    sizes = await nc.subscribe("sizes.>")
    kv = await js.create_key_value(
        bucket="RP", history=2, republish=jsapi.RePublish(src="$KV.RP.>", dest="repub.$KV.RP.>")
    )
    await js.add_stream(
        kv_stream(
            "KV_RH",
            subjects=["$KV.RH.>"],
            republish=jsapi.RePublish(src="$KV.RH.>", dest="sizes.>", headers_only=True),
        )
    )
    headers_only = await js.key_value("RH")
    await nc.flush()
    await nc.flush()
    await kv.put("k", b"value")
    await headers_only.put("k", b"sized")
    msg = await full.next_msg(timeout=WAIT)
    assert (msg.subject, msg.data) == ("repub.$KV.RP.k", b"value")
    assert msg.headers is not None
    assert (msg.headers["Nats-Stream"], msg.headers["Nats-Subject"], msg.headers["Nats-Sequence"]) == (
        "KV_RP",
        "$KV.RP.k",
        "1",
    )
    assert msg.headers["Nats-Last-Sequence"] == "0"
    sized = await sizes.next_msg(timeout=WAIT)
    assert (sized.subject, sized.data) == ("sizes.k", b"")
    assert sized.headers is not None and sized.headers["Nats-Msg-Size"] == "5"


async def test_object_store_mirror_holds_the_same_messages(nc: nats.NATS) -> None:
    js = nc.jetstream()
    store = await js.create_object_store(bucket="FILES")
    await store.put("a.txt", b"a" * 300_000)
    await store.put("b.txt", b"b")
    origin = await api(nc, "$JS.API.STREAM.INFO.OBJ_FILES")
    await js.add_stream(jsapi.StreamConfig(name="OBJ_COPY", mirror=jsapi.StreamSource(name="OBJ_FILES")))
    await caught_up(nc, "OBJ_COPY", origin["state"]["last_seq"])
    copy = await api(nc, "$JS.API.STREAM.INFO.OBJ_COPY")
    for key in ("messages", "bytes", "first_seq", "last_seq", "num_subjects"):
        assert copy["state"][key] == origin["state"][key], key
    meta_subject = "$O.FILES.M.YS50eHQ="
    original = await api(nc, "$JS.API.STREAM.MSG.GET.OBJ_FILES", {"last_by_subj": meta_subject})
    mirrored = await api(nc, "$JS.API.STREAM.MSG.GET.OBJ_COPY", {"last_by_subj": meta_subject})
    assert mirrored["message"]["seq"] == original["message"]["seq"]
    assert mirrored["message"]["data"] == original["message"]["data"]
